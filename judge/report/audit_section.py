"""The Audit section: verdicts a reader can inspect (for each neighbouring pair of the ranking,
a few items with the question, both candidates and every judge's verdicts and reasoning in
both orders), the judge's largest disagreements with the human majority, and a panel's
agreement between its judges (`summary.json` `audit`, built by `judge.run.analyse_audit`).

Texts nobody vetted (questions, outputs, reasoning, replies) are `Quote` blocks: verbatim and
inert on both pages. Each item is collapsed in HTML, whole in Markdown."""

from __future__ import annotations

import re

from judge.report.blocks import Block, Details, Heading, Para, Quote
from judge.report.format import count, estimate, label, level
from judge.summary.audit import (
    Audit,
    Disagreement,
    Disagreements,
    Example,
    Excerpt,
    JudgeVerdicts,
    NeighbourExamples,
    OrderVerdict,
    PanelAgreement,
)
from judge.summary.run_summary import Analysis, RunSummary


def audit_section(summary: RunSummary, analysis: Analysis) -> list[Block]:
    audit = analysis.audit
    blocks: list[Block] = [Heading("Audit")]
    if audit.examples_note is not None:
        blocks.append(Para(audit.examples_note))
    if audit.examples:
        blocks.append(Para(_intro(audit)))
        replayed = [j.model for j in summary.run.judges if j.recorded]
        if replayed:
            blocks.append(
                Para(
                    f"{', '.join(replayed)} replays recorded verdicts: a recording of winners "
                    'alone has no reasoning to replay, and its replies say only "recorded '
                    'verdict".'
                )
            )
        for pair in audit.examples:
            blocks += _neighbour(pair)
    if audit.disagreements is not None:
        blocks += _disagreements(audit.disagreements)
    blocks += _panel(audit.panel)
    return blocks


def family_cell(analysis: Analysis, judge: str) -> str:
    """A judge's family for the Setup table, and whether the config gave it."""
    found = next((f for f in analysis.audit.judges if f.judge == judge), None)
    if found is None:
        return "n/a"
    return f"{found.family} (inferred from the name)" if found.inferred else found.family


def _intro(audit: Audit) -> str:
    return (
        "For each neighbouring pair of the ranking, items drawn in a fixed order (a hash of the "
        "item and the two systems' names: the same for every run on these data, blind to the "
        "texts and the verdicts): one on which every verdict chose the higher-ranked system, "
        "one on which every verdict chose the lower, one on which the verdicts differed. The "
        "candidates are what the judge saw (identity markers scrubbed), named now that the "
        f"judging is over; texts are cut near {count(audit.excerpt_chars)} characters. Each "
        "example names its line in judgments.jsonl and its requests' ids in store.sqlite; "
        "`judge show RUN_DIR ITEM_ID` prints them whole."
    )


def _panel(panel: PanelAgreement | None) -> list[Block]:
    if panel is None:
        return []
    alpha = panel.alpha
    what = "pairs" if panel.level == "nominal" else "responses"
    value = (
        f"{estimate(alpha)} ({level(alpha.confidence)} interval, {count(alpha.resamples)} "
        f"resamples over {what})"
        if alpha.value is not None
        else f"undefined ({alpha.reason})"
    )
    text = (
        f"Agreement between the judges ({', '.join(panel.judges)}): Krippendorff's alpha "
        f"({panel.level}) {value}, over the {count(panel.units)} {what} graded by two judges or "
        f"more; unanimous on {count(panel.unanimous)}."
    )
    if panel.split is not None:
        text += (
            f" The panel's majority was split on {count(panel.split)} of "
            f"{count(panel.panel_judgments)} pairs with a verdict: their panel verdict is a tie."
        )
    return [Heading("Agreement between the judges", 3), Para(text)]


def _neighbour(pair: NeighbourExamples) -> list[Block]:
    judged = {e.judge for e in pair.examples}
    by = f"{', '.join(sorted(judged))}: " if judged else ""
    blocks: list[Block] = [
        Heading(f"{pair.upper} vs {pair.lower}", 3),
        Para(
            f"{by}{count(pair.pairs)} items judged; every verdict (both orders, every judge) "
            f"chose {pair.upper} on {count(pair.agreed_upper)}, {pair.lower} on "
            f"{count(pair.agreed_lower)}; the verdicts differed on {count(pair.disputed)}."
        ),
    ]
    for example in pair.examples:
        why = {
            "upper": f"every verdict chose {pair.upper}",
            "lower": f"every verdict chose {pair.lower}",
            "disputed": "the verdicts differed",
        }.get(example.why, "no system chosen by every verdict")
        blocks += _example(example, why)
    return blocks


def _disagreements(found: Disagreements) -> list[Block]:
    blocks: list[Block] = [
        Heading("Largest disagreements with the humans", 3),
        Para(
            f"{found.judge}'s verdict is opposite to the human majority on "
            f"{count(found.opposite)} of the {count(found.keys)} labelled pairs on which the "
            "judge and a strict majority of the humans each chose a system. Shown: the pairs "
            "with the most human votes against the judge's choice, net of those for it."
        ),
    ]
    for d in found.shown:
        blocks += _example(d.example, f"{found.judge} chose {d.judge_winner}", _votes(d))
    return blocks


def _votes(d: Disagreement) -> str:
    votes = ", ".join(f"{count(v.votes)} for {v.choice}" for v in d.votes)
    return f"The humans: {votes} (majority: {d.human_winner})."


def _example(example: Example, why: str, extra: str | None = None) -> list[Block]:
    """One item, collapsed in HTML (its texts run to a screen or more each)."""
    strata = ", ".join(f"{k} {label(v)}" for k, v in example.strata.items())
    blocks: list[Block] = [
        Para(
            f"{strata + '; ' if strata else ''}judgment: {example.judge}, "
            f"{_winner(example.winner)}, judgments.jsonl line {count(example.line)}."
            + (f" {extra}" if extra else "")
        ),
    ]
    earlier = example.candidates[0].earlier_turns if example.candidates else 0
    context = (
        f" (the last turn; the {count(earlier)} earlier messages are in the store)"
        if earlier
        else ""
    )
    blocks += _text(f"Question{context}", example.question)
    for c in example.candidates:
        blocks += _text(f"{c.system} (response {c.blind_id})", c.output)
    for verdicts in example.judges:
        blocks += _verdicts(verdicts)
    heading = f"Item {_name(example.item_id)}: {why}"
    return [Details(heading, "", blocks, level=4)]


def _verdicts(v: JudgeVerdicts) -> list[Block]:
    blocks: list[Block] = [
        Para(f"{v.judge}: {_winner(v.winner)} (judgments.jsonl line {count(v.line)}).")
    ]
    for order in v.orders:
        blocks += _order(order)
    return blocks


def _order(o: OrderVerdict) -> list[Block]:
    head = f"Order {o.order} ({o.first} shown first), request {o.request_id}: "
    if o.winner is not None:
        return _text(head + f"chose {o.winner}; its reasoning", o.reasoning)
    if o.failure is None:
        return [Para(head + "no reply yet.")]
    blocks: list[Block] = [Para(head + "no verdict:"), Quote(o.failure)]
    if o.reply is not None:
        blocks += _text("The reply as received", o.reply)
    return blocks


def _text(caption: str, text: Excerpt | None) -> list[Block]:
    if text is None or not text.text.strip():
        return [Para(f"{caption}: (empty)")]
    cut = f", cut from {count(text.chars)} characters" if text.cut else ""
    return [Para(f"{caption}{cut}:"), Quote(text.text)]


def _winner(winner: str | None) -> str:
    if winner is None:
        return "no verdict"
    return "a tie" if winner == "tie" else f"{winner} won"


def _name(text: str) -> str:
    # An id with letters is quoted as it is (the page's number check finds it verbatim in
    # summary.json); one of digits alone is a number to the eye, so it is traced like one.
    return text if re.search(r"[^\W\d_]", text) else label(text)
