"""The Canaries section: each canary's win rate per judge against its limit, whether the judge
was fooled, and what the canaries cost (`judge.blinding.canaries`)."""

from __future__ import annotations

from judge.report.blocks import Block, Bullets, Heading, Para, Table
from judge.report.format import count, counted, interval, label, pct, pct0, usd
from judge.summary.canary import CanaryRate
from judge.summary.run_summary import Analysis, RunSummary

_WHAT = {
    "null_model": "one constant, persuasive non-answer",
    "master_key": "a master-key answer",
    "length_padded": "a copy padded with filler, against its source",
}


def canary_section(summary: RunSummary, analysis: Analysis) -> list[Block]:
    canaries, setup = analysis.canaries, summary.canary_setup
    if canaries is None or setup is None:
        return []
    blocks: list[Block] = [
        Heading("Canaries"),
        Para(
            "Hidden control systems, judged like the others and kept out of every ranking: a "
            "judge that cannot be fooled gives a non-answer no wins against the weakest real "
            f"system ({canaries.weakest or 'none ranked'}), and a padded copy as many wins as "
            f"losses against its source. Limit: the fair win rate + {pct0(canaries.threshold)}; "
            "fooled when the win rate is above it and its "
            f"{pct0(canaries.confidence)} Wilson interval above the fair rate."
        ),
    ]
    ruled = summary.aggregate.flagged == "lose"
    if canaries.rates:
        header = ["canary", "judge", "against", "win rate", "judgments", "limit", "result"]
        rows = [_row(rate) for rate in canaries.rates]
        if ruled:
            # The rule protects this run's results; the judge's own verdicts say whether the
            # judge itself can be fooled (by an attack the detector would miss).
            header.append("the judge's own verdicts")
            blocks.append(
                Para(
                    "aggregate.flagged is lose: a flagged canary loses its pairs by rule, so the "
                    "gates guard this run's results; the last column is what the judge itself "
                    "gave each canary, the measure of a judge an undetected attack would meet."
                )
            )
            rows = [
                [*row, pct(r.judged_win_rate)] for row, r in zip(rows, canaries.rates, strict=True)
            ]
        blocks.append(Table(header, rows))
    else:
        blocks.append(Para("No canary judgment has a verdict yet."))
    blocks.append(
        Bullets(
            [
                f"{counted(setup.items, 'item carries', 'items carry')} canaries: "
                + "; ".join(
                    f"{name} ({_WHAT[kind]})" for name, kind in sorted(setup.kinds.items())
                ),
                f"The injection detector flagged {count(setup.flagged_total)} of "
                f"{count(setup.responses_total)} canary "
                "responses ("
                + (
                    "each lost by rule, as any flagged response does: aggregate.flagged: lose"
                    if summary.aggregate.flagged == "lose"
                    else "judged as written, as any flagged response is"
                )
                + ")",
                f"Canary requests: {count(setup.requests)} ({count(setup.pending)} pending), "
                f"cost {usd(setup.cost_usd)}",
            ]
        )
    )
    return blocks


def _row(rate: CanaryRate) -> list[str]:
    result = "n/a" if rate.fooled is None else "FOOLED" if rate.fooled else "passed"
    return [
        rate.canary,
        label(rate.judge),
        rate.opponent,
        interval(rate.win_rate, rate.ci_low, rate.ci_high, pct),
        count(rate.n),
        pct0(rate.limit),
        result,
    ]


def fooled_sentence(analysis: Analysis) -> str | None:
    """The Decision's line when a judge was fooled by a canary, else None."""
    canaries = analysis.canaries
    if canaries is None:
        return None
    fooled = [r for r in canaries.rates if r.fooled]
    if not fooled:
        return None
    shown = "; ".join(
        f"{label(r.judge)} by {r.canary} ({pct(r.win_rate)} against {r.opponent})" for r in fooled
    )
    return f"A canary gate failed: {shown}. Verdicts of a fooled judge are suspect (see Canaries)."
