"""The report's figures: reference lines where each metric's ideal is (issue 14, item 2); the
ranking chart's rows in the ranking's order, the leader on top (issue 31, item 7)."""

from __future__ import annotations

from typing import Any

from judge.report.plots import Placed, judge_bias_figure, ranking_figure
from judge.summary.run_summary import JudgeBehaviour


def _behaviour(
    judge: str, consistency: float | None, first_slot: float, longer: float
) -> JudgeBehaviour:
    return JudgeBehaviour(
        judge=judge,
        requests=100,
        verdicts=100,
        parse_failures=0,
        errors=0,
        pending=0,
        cached=0,
        cost_usd=None,
        latency_median_s=None,
        parse_failure_rate=0.0,
        position_consistency=consistency,
        first_slot_win_rate=first_slot,
        tie_rate=0.1,
        verbosity_preference=longer,
        same_family_requests=0,
    )


def test_judge_behaviour_draws_each_metric_against_its_own_ideal() -> None:
    # A judge without bias gives the same verdict in both orders (consistency 1.0), and wins
    # by slot and by length half the time each (0.5): the dashed line of each panel.
    import matplotlib.pyplot as plt

    judges = {
        "j1": _behaviour("j1", 0.84, 0.59, 0.75),
        "j2": _behaviour("j2", 0.62, 0.41, 0.52),
    }
    fig = judge_bias_figure(judges)
    try:
        panels = {}
        for ax in fig.axes:
            dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
            (line,) = dashed
            x0, x1 = line.get_xdata()
            assert x0 == x1
            bars = sorted(round(p.get_width(), 6) for p in ax.patches)
            panels[ax.get_title().split("\n")[0]] = (x0, bars)
    finally:
        plt.close(fig)
    assert panels == {
        "position consistency": (1.0, [0.62, 0.84]),
        "first-slot win rate": (0.5, [0.41, 0.59]),
        "longer answer wins": (0.5, [0.52, 0.75]),
    }
    # Judged in one order only: nothing to show.
    assert judge_bias_figure({"j": _behaviour("j", None, 0.5, 0.5)}) is None


def rows_top_to_bottom(ax: Any) -> list[str]:
    """The y tick labels of `ax` as drawn, top of the figure first (display coordinates: the
    order a reader sees, whatever the axis' direction)."""
    ax.figure.canvas.draw()  # a secondary axis takes its limits from its parent's at drawing
    labels = [(t.get_position()[1], t.get_text()) for t in ax.get_yticklabels()]
    drawn = [(ax.transData.transform((0, y))[1], text) for y, text in labels]
    return [text for _, text in sorted(drawn, reverse=True)]


def test_the_ranking_chart_draws_rows_in_the_order_given_the_first_on_top() -> None:
    import matplotlib.pyplot as plt

    # Out of value order on purpose: the chart keeps the order it is given (the ranking's),
    # it does not sort; a shared rank and an interval that is not estimable.
    rows = [
        Placed("top", 0.40, 0.10, 0.70, 1),
        Placed("mid", 0.55, 0.30, 0.80, 1),
        Placed("low", -0.60, None, None, 3),
    ]
    fig = ranking_figure(rows, "strength", 0.0)
    try:
        ax = fig.axes[0]
        assert rows_top_to_bottom(ax) == ["top", "mid", "low"]
        ys = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
        dots = {}
        bars = {}
        dashed = []
        for line in ax.get_lines():
            xs, yv = list(line.get_xdata()), list(line.get_ydata())
            if line.get_linestyle() == "--":
                dashed.append(xs)
            elif line.get_marker() == "o":
                dots[yv[0]] = xs[0]
            else:
                bars[yv[0]] = xs
        assert dots == {ys["top"]: 0.40, ys["mid"]: 0.55, ys["low"]: -0.60}
        assert bars == {ys["top"]: [0.10, 0.70], ys["mid"]: [0.30, 0.80]}  # none for "low"
        assert dashed == [[0.0, 0.0]]
        # The ranks on the right, beside their rows.
        (right,) = ax.child_axes
        assert rows_top_to_bottom(right) == ["rank 1", "rank 1", "rank 3"]
    finally:
        plt.close(fig)
    assert ranking_figure([], "strength", 0.0) is None
