"""The Decision section, right under the question: the leader, each neighbouring pair of the
ranking with whether it is told apart, the gate's verdict and what would change it."""

from __future__ import annotations

from judge.report.blocks import Block, Bullets, Heading, Para
from judge.report.canary_section import fooled_sentence
from judge.report.format import count, estimate, interval, num, pvalue
from judge.summary import Analysis, RankedNeighbour, RunSummary, SameFamily, TrustGate
from judge.summary_gate import NonInferiority


def decision_section(summary: RunSummary, analysis: Analysis) -> list[Block]:
    decision = analysis.decision
    items = []
    if decision.leader:
        tied = decision.leader_tied_with
        lead = f"{decision.leader} ranks first"
        lead += f", tied with {', '.join(tied)}" if tied else ""
        items.append(lead + ".")
    for n in decision.neighbours:
        shown = f"{interval(n.diff, n.ci_low, n.ci_high)} on {count(n.n)} items"
        if n.told_apart:
            ahead = f"{n.upper} over {n.lower}" if n.diff > 0 else f"{n.upper} vs {n.lower}"
            text = f"{ahead}: {shown}, told apart"
            if n.items_needed is not None:
                text += (
                    f"; at this difference about {count(n.items_needed)} items would still "
                    f"tell them apart {_needed_assumes(n)}"
                )
        else:
            text = f"{n.upper} vs {n.lower}: {shown}, not told apart; "
            text += (
                f"about {count(n.items_needed)} items would tell them apart {_needed_assumes(n)}"
                if n.items_needed is not None
                else "no number of items would tell them apart if the difference held"
            )
        items.append(text + ".")
    items += _self_preference_items(summary, analysis.same_family, analysis)
    fooled = fooled_sentence(analysis)
    if fooled is not None:
        items.insert(0, fooled)
    return [Heading("Decision"), Para(_gate_sentence(analysis)), Bullets(items)]


def _needed_assumes(n: RankedNeighbour) -> str:
    """What an item count assumes, said where it is given."""
    test = "sign test" if n.items_needed_test == "sign" else "normal approximation"
    return (
        f"(the same difference and spread per item; {test} at p < "
        f"{pvalue(n.items_needed_level)}, Holm's strictest step)"
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


def _gate_sentence(analysis: Analysis) -> str:
    decision = analysis.decision
    calibration = analysis.calibration
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
            f"about {count(ni.items_needed)} keys labelled by two annotators are needed."
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
            f"about {count(ni.items_needed)} keys with two human labels would show it "
            "human-level if the gap held"
        )
    if gap.value < -ni.margin:
        return (
            "the gap lies beyond the margin, so more human labels would show it below the "
            "humans if the gap held"
        )
    return "the gap sits on the margin, so more human labels alone would not settle it"
