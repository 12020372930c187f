"""The Decision section, right under the question, made to fit a first screen (1280x800): the
answer, the judge's trust verdict as a badge, every `compare.gates` gate with PASS or FAIL,
the canaries in one line, and the ranking (`ranking_section`, given by the caller); then,
below the fold, the ranking's neighbouring pairs in words, what the trust verdict rests on
and what would change it."""

from __future__ import annotations

from collections.abc import Sequence

from judge.report.blocks import Block, Bullets, Callout, Heading, Mark, Para, Table, Tone
from judge.report.canary_section import canary_line
from judge.report.format import counted, estimate, interval, num, pvalue
from judge.summary.gate import NonInferiority
from judge.summary.run_summary import Analysis, RankedNeighbour, RunSummary, SameFamily, TrustGate

_ANSWER_TONE: dict[str, Tone] = {
    "yes": "good",
    "ranked": "good",
    "no": "bad",
    "not settled": "warn",
}
_TRUST_TONE: dict[str, Tone] = {"trusted": "good", "untrusted": "bad"}


def decision_section(
    summary: RunSummary, analysis: Analysis, ranking: Sequence[Block] = ()
) -> list[Block]:
    """The section; `ranking` goes under the gates and the canaries' line, on the first
    screen (the caller builds it: it reads the comparison, which the Decision does not)."""
    decision = analysis.decision
    blocks: list[Block] = [
        Heading("Decision"),
        *decision_callouts(analysis),
        *gates_table(analysis),
    ]
    # The canaries' gates in one line: their table (one row per canary and judge) is long.
    canaries = canary_line(analysis)
    if canaries is not None:
        blocks.append(canaries)
    blocks += ranking
    # Below the first screen: the pairs in words, what the trust verdict rests on, caveats.
    blocks.append(Heading("What the answer rests on", 3))
    items = []
    if decision.leader:
        tied = decision.leader_tied_with
        lead = f"{decision.leader} ranks first"
        lead += f", not told apart from {', '.join(tied)}" if tied else ""
        if decision.ordered_by == "win rate":
            lead += (
                " (ordered by mean paired win rate: the Bradley-Terry ranking has no finite "
                "fit, as when a system never lost)"
            )
        items.append(lead + ".")
    items += [_neighbour(n) for n in decision.neighbours]
    blocks.append(Bullets(items))
    needed = [n for n in decision.neighbours if n.items_needed is not None]
    if needed:
        blocks.append(Para(_needed_assumes(needed)))
    blocks.append(Para(_gate_sentence(summary, analysis)))
    caveats = _self_preference_items(summary, analysis.same_family, analysis)
    if caveats:
        blocks.append(Bullets(caveats))
    return blocks


def decision_callouts(analysis: Analysis) -> list[Block]:
    """The answer, and the judge's trust verdict as a badge: the Decision's first two lines
    (the pull-request comment's too)."""
    decision = analysis.decision
    answer = decision.answer
    return [
        Callout(answer.text, _ANSWER_TONE[answer.outcome], id="answer", strong=True),
        Callout(
            f"Judge: {decision.trust_reason}.",
            _TRUST_TONE.get(decision.gate, "warn"),
            id="trust",
            mark=Mark(decision.gate.upper(), _TRUST_TONE.get(decision.gate, "warn")),
        ),
    ]


def gates_table(analysis: Analysis) -> list[Block]:
    """Every `compare.gates` gate, PASS or FAIL, with the value it compared and that
    statistic's interval (the canaries' gates: `canary_line`, and the Canaries section)."""
    gates = [g for kind, g in analysis.gates() if kind == "compare"]
    if not gates:
        return [Para("No gate is configured (compare.gates in the run config).", id="gates")]
    rows: list[list[str | Mark]] = [
        [
            g.expression,
            Mark("PASS", "good") if g.passed else Mark("FAIL", "bad"),
            num(g.value) if g.value is not None else "undefined",
            f"[{num(g.ci_low)}, {num(g.ci_high)}]"
            if g.ci_low is not None and g.ci_high is not None
            else "none",
        ]
        for g in gates
    ]
    return [Table(["gate (compare.gates)", "result", "value", "interval"], rows, id="gates")]


def _neighbour(n: RankedNeighbour) -> str:
    """A neighbouring pair of the ranking in words: the upper one first, told apart or not,
    and the items that would (still) tell them apart."""
    shown = f"{interval(n.diff, n.ci_low, n.ci_high)} on {counted(n.n, 'item')}"
    if n.told_apart:
        ahead = f"{n.upper} over {n.lower}" if n.diff > 0 else f"{n.upper} vs {n.lower}"
        text = f"{ahead}: {shown}, told apart"
        if n.items_needed is not None:
            text += f" (about {counted(n.items_needed, 'item')} would still tell them apart)"
    else:
        text = f"{n.upper} vs {n.lower}: {shown}, not told apart"
        text += (
            f" (about {counted(n.items_needed, 'item')} would tell them apart)"
            if n.items_needed is not None
            else " (no number of items would, if the difference held)"
        )
    return text + "."


def _needed_assumes(needed: list[RankedNeighbour]) -> str:
    """What the item counts assume, said once under them."""
    tests = sorted(
        {
            "the sign test" if n.items_needed_test == "sign" else "the normal approximation"
            for n in needed
        }
    )
    return (
        "Item counts: if the difference and its spread per item held, sized for p < "
        f"{pvalue(needed[0].items_needed_level)} (Holm's strictest step) by "
        f"{' or '.join(tests)}, as each pair's p-value was computed."
    )


def _self_preference_items(
    summary: RunSummary, same: SameFamily | None, analysis: Analysis
) -> list[str]:
    if same is None:
        return []
    judges = ", ".join(j.model for j in summary.run.judges)
    text = (
        f"{', '.join(same.systems)} are judged by their own family ({judges}): every "
        "verdict on their pairs is flagged, so their places rest on a judge that may favour "
        "them."
    )
    check = analysis.decision.self_preference_check
    if check is not None:
        text += (
            f" Largest gap on such a pair, {check.target}: the judge {num(check.judge)}, "
            f"the humans alone {num(check.humans)} (corrected {num(check.corrected)}; "
            "see Corrected estimates)."
        )
    return [text]


def _gate_sentence(summary: RunSummary, analysis: Analysis) -> str:
    decision = analysis.decision
    calibration = analysis.calibration
    if calibration is None and any(j.stand_in == "simulated" for j in summary.run.judges):
        return (
            "The judges are simulated and not calibrated against humans: the ranking tests the "
            "pipeline, and says nothing about the systems."
        )
    if calibration is None:
        return (
            "The judge was not calibrated against humans: treat the ranking as the judge's "
            "opinion, not as a measurement."
        )
    gate = calibration.gate
    if decision.trusted:
        return (
            "The judge passed the calibration gate: it agrees with the humans as well as they "
            "agree with each other, on reliable labels; these results can be relied on."
        )
    sentence = (
        f"The judge is {decision.gate.upper()} by the calibration gate: the ranking below is "
        "flagged, not trusted."
    )
    return " ".join([sentence, *_gate_explanation(gate)])


def _gate_explanation(gate: TrustGate) -> list[str]:
    """What the gate found, in the order a reader acts on it: no signal, the judge against the
    humans, then the labels themselves."""
    failed = {c.name for c in gate.checks if c.status == "failed"}
    ni = gate.stand_in.non_inferiority
    out = []
    if failed & {"signal", "control"}:
        out.append("Its agreement with the humans is not above chance.")
    outcome = gate.stand_in.outcome
    annotators = gate.stand_in.annotators
    if outcome == "below humans":
        out.append(
            f"It agrees with the humans less than they agree with each other: alpha gap "
            f"{estimate(ni.gap)}, below the margin -{num(ni.margin, 2)}."
        )
    elif outcome == "human-level":
        out.append("It agrees with the humans as well as they agree with each other.")
    elif outcome == "better than humans":
        out.append(
            f"It agrees with the human consensus better than the humans agree with each other: "
            f"alpha gap {estimate(ni.gap)}, above the margin +{num(ni.margin, 2)} (noisy labels; "
            "a judge copying one annotator would look the same)."
        )
    elif ni.outcome == "human-level" and annotators is not None and annotators.status == "failed":
        out.append(
            f"It agrees with the humans as well as they agree with each other (alpha gap "
            f"{estimate(ni.gap)}, margin {num(ni.margin, 2)}), but the alternative annotator "
            f"test does not show that it could replace an annotator (winning rate "
            f"{num(annotators.winning_rate, 2)}; more keys per annotator give that test its "
            "power)."
        )
    elif outcome == "inconclusive":
        out.append(
            "Whether it agrees with the humans as well as they agree with each other is not "
            f"settled (alpha gap {estimate(ni.gap)}, margin {num(ni.margin, 2)}); "
            f"{_what_settles(ni)}."
        )
    elif ni.items_needed is not None:
        out.append(
            "There are too few human labels to compare it with the humans: "
            f"about {counted(ni.items_needed, 'key')} labelled by two annotators are needed."
        )
    else:
        out.append(f"It could not be compared with the humans: {ni.message}.")
    labels = gate.labels
    if labels.outcome in ("tentative", "unreliable"):
        out.append(
            f"The humans themselves agree only to alpha {estimate(labels.human_alpha)}, "
            f"below the {num(gate.thresholds.labels_reliable)} needed to rely on the labels: "
            "a clearer rubric or more consistent labels come first; no judge can be shown to "
            "agree with labels better than they agree with each other."
        )
    return out


def _what_settles(ni: NonInferiority) -> str:
    """What more human labels would do to an unsettled comparison, if the gap held: the
    interval narrows around it, so a gap above -margin ends human-level, one below it ends
    below the humans, one exactly on it stays unsettled."""
    gap = ni.gap
    if ni.outcome == "not enough evidence" or gap is None or gap.value is None:
        return ni.message
    if ni.items_needed is not None:
        return (
            f"about {counted(ni.items_needed, 'key')} with two human labels would show it "
            "human-level if the gap held"
        )
    if gap.value < -ni.margin:
        return (
            "the gap lies beyond the margin, so more human labels would show it below the "
            "humans if the gap held"
        )
    return "the gap sits on the margin, so more human labels alone would not settle it"
