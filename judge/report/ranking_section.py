"""The ranking on the first screen, under the Decision's gates: a chart of the estimate the
ranking orders by, with its interval, the leader on the top row, beside the ranking table;
and two sentences on where the intervals and ranks come from (the method in full is in
Results)."""

from __future__ import annotations

from typing import NamedTuple

from judge.report import plots
from judge.report.blocks import Block, Figure, Para, Row, Table
from judge.report.format import count, interval, level, num, pct
from judge.summary.run_summary import Analysis


class Chart(NamedTuple):
    """What the ranking chart shows: its rows top to bottom, its x-axis label, where its
    dashed reference line goes, and the caption's words for the estimate."""

    rows: list[plots.Placed]
    unit: str
    reference: float | None
    what: str
    ci: float
    resamples: int
    """The intervals' level and bootstrap resamples (Bradley-Terry's are its own)."""


def ranking_section(analysis: Analysis) -> list[Block]:
    """The chart and the table side by side, and the sentences under them."""
    comparison = analysis.comparison
    chart = ranking_chart(analysis)
    png = plots.ranking(chart.rows, chart.unit, chart.reference)
    shown: list[Block] = []
    if png:
        shown.append(Figure("ranking", png, "Ranking: each system's estimate and interval"))
    shown.append(_table(analysis, [r.system for r in chart.rows]))
    blocks: list[Block] = [
        Row(shown, id="ranking"),
        Para(
            f"The chart: {chart.what}, with its {level(chart.ci)} interval from "
            f"{count(chart.resamples)} bootstrap resamples over items. "
            + (
                "Ranks come from the Holm-adjusted paired tests, so systems sharing a rank are "
                "not told apart (the method: Results)."
                if comparison.ranking
                else "The ranking has no fit (as when a system never lost): the systems are in "
                "the Decision's order, by mean paired win rate."
            ),
            id="ranking-note",
        ),
    ]
    bt = comparison.bradley_terry
    if bt is not None and bt.not_estimable is not None:
        blocks.append(Para(f"Bradley-Terry intervals: not estimable ({bt.not_estimable})."))
    return blocks


def ranking_chart(analysis: Analysis) -> Chart:
    """The estimate the run's ranking orders by, in the Decision's order (the leader on the
    top row): the ranking's own (Bradley-Terry strength, or mean score); or, when the
    ranking has no fit and the Decision orders by win rate, each system's win rate against
    all the others."""
    comparison = analysis.comparison
    order = _order(analysis)
    ranked = {r.system: r for r in comparison.ranking}
    if len(ranked) < 2 and comparison.kind == "pairwise":
        win = {w.system: w for w in analysis.win_rates or []}
        rows = [
            plots.Placed(s, win[s].win_rate, win[s].ci_low, win[s].ci_high, None)
            for s in order
            if s in win
        ]
        what = "each system's win rate against all the others (ties half)"
        unit = "win rate against all others (ties half)"
        return Chart(rows, unit, 0.5, what, comparison.ci, comparison.resamples)
    rows = [
        plots.Placed(s, ranked[s].estimate, ranked[s].ci_low, ranked[s].ci_high, ranked[s].rank)
        for s in order
        if s in ranked
    ]
    if comparison.kind == "scores":
        what = "each system's mean score"
        return Chart(rows, "mean score", None, what, comparison.ci, comparison.resamples)
    bt = comparison.bradley_terry
    zero = f"0: {bt.anchor}" if bt is not None and bt.anchor else "0: their mean"
    what = (
        "each system's Bradley-Terry strength (the difference of two is the log-odds that the "
        "first wins)"
    )
    unit = f"Bradley-Terry strength (log-odds; {zero})"
    if bt is None:
        return Chart(rows, unit, 0.0, what, comparison.ci, comparison.resamples)
    return Chart(rows, unit, 0.0, what, bt.ci, bt.resamples)


def _order(analysis: Analysis) -> list[str]:
    """The systems as the Decision ranks them: the ranking's order; without a fit (the
    Decision then orders by mean paired win rate), the chain of its neighbouring pairs from
    the leader, then any system the chain misses in the summary's win-rate order."""
    ranked = [r.system for r in analysis.comparison.ranking]
    decision = analysis.decision
    if len(ranked) >= 2 or decision.leader is None:
        return ranked
    chain = [decision.leader]
    for n in decision.neighbours:
        if n.upper != chain[-1]:
            break
        chain.append(n.lower)
    rest = [w.system for w in analysis.win_rates or [] if w.system not in chain]
    return chain + rest


def _table(analysis: Analysis, order: list[str]) -> Table:
    """The ranking's rows; without a fit, each system's win rate in the Decision's order."""
    comparison = analysis.comparison
    win = {w.system: w for w in analysis.win_rates or []}
    if not comparison.ranking and win:
        rows = [
            [s, interval(win[s].win_rate, win[s].ci_low, win[s].ci_high, pct), count(win[s].items)]
            for s in order
            if s in win
        ]
        return Table(["system", "win rate vs all others", "items"], rows)
    strength = "Bradley-Terry strength" if comparison.kind == "pairwise" else "mean score"
    rows = []
    for r in comparison.ranking:
        w = win.get(r.system)
        rows.append(
            [
                count(r.rank),
                r.system,
                _strength(r.estimate, r.ci_low, r.ci_high),
                interval(w.win_rate, w.ci_low, w.ci_high, pct) if w else "n/a",
                count(r.n_items),
            ]
        )
    return Table(["rank", "system", strength, "win rate vs all others", "items"], rows)


def _strength(value: float, low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return f"{num(value)} (interval not estimable)"
    return interval(value, low, high)
