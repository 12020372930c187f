"""The report's figures: reference lines where each metric's ideal is (issue 14, item 2)."""

from __future__ import annotations

from judge.report.plots import judge_bias_figure
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
