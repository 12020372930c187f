"""The Canaries section: each canary's win rate per judge against its limit, whether the judge
was fooled, its gates, and what the canaries cost (`judge.blinding.canaries`); and the one line
the Decision gives them (`canary_line`)."""

from __future__ import annotations

from judge.report.blocks import Block, Bullets, Callout, Cell, Details, Heading, Mark, Para, Table
from judge.report.format import count, counted, interval, label, num, pct, pct0, usd
from judge.summary.canary import Canaries, CanaryRate
from judge.summary.run_summary import Analysis, RunSummary

_NAMED = 2
"""How many fooled (judge, canary) rates the Decision's line names; the Canaries section has
every one."""

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
    blocks += _gates(canaries)
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


def canary_line(analysis: Analysis) -> Callout | None:
    """The canaries' gates in one line for the first screen: all passed, or how many failed
    and which judge each canary fooled, by how much; None for a run without canaries."""
    canaries = analysis.canaries
    if canaries is None:
        return None
    gates = canaries.gates
    if not gates:
        return Callout(
            "Canaries: no canary judgment has a verdict yet (see Canaries).",
            "warn",
            id="canary-line",
            mark=Mark("NO VERDICT", "warn"),
        )
    failed = [g for g in gates if not g.passed]
    if not failed:
        text = f"Canaries: all {count(len(gates))} passed: no judge was fooled (see Canaries)."
        return Callout(text, "good", id="canary-line", mark=Mark("PASS", "good"))
    # The first two by name keep it to a line; the count says how many the table holds.
    fooled = [r for r in canaries.rates if r.fooled]
    named = "; ".join(
        f"{label(r.judge)} by {r.canary} ({pct(r.win_rate)} against {r.opponent})"
        for r in fooled[:_NAMED]
    )
    more = "; and the rest" if len(fooled) > _NAMED else ""
    text = (
        f"Canaries: {count(len(failed))} of {count(len(gates))} FAILED — {named}{more}. "
        "Verdicts of a fooled judge are suspect (see Canaries)."
    )
    return Callout(text, "bad", id="canary-line", mark=Mark("FAIL", "bad"))


def _gates(canaries: Canaries) -> list[Block]:
    """The canaries' gates as checked (one per canary and judge: the rows above, as
    expressions): collapsed in HTML."""
    if not canaries.gates:
        return []
    rows: list[list[Cell]] = [
        [
            g.expression,
            Mark("PASS", "good") if g.passed else Mark("FAIL", "bad"),
            num(g.value) if g.value is not None else "undefined",
            f"[{num(g.ci_low)}, {num(g.ci_high)}]"
            if g.ci_low is not None and g.ci_high is not None
            else "none",
        ]
        for g in canaries.gates
    ]
    table = Table(["gate", "result", "value", "interval"], rows)
    hint = "each canary and judge's check, as an expression"
    return [Details("Canary gates", hint, [table], id="canary-gates", level=3)]
