"""The Decision section, right under the question: the leader, each neighbouring pair of the
ranking with whether it is told apart, the gate's verdict and what would change it."""

from __future__ import annotations

from judge.report.blocks import Block, Bullets, Heading, Para
from judge.report.format import count, estimate, interval, num
from judge.summary import Analysis, RunSummary, SameFamily


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
        need = n.items_needed
        if n.told_apart:
            ahead = f"{n.upper} over {n.lower}" if n.diff > 0 else f"{n.upper} vs {n.lower}"
            items.append(
                f"{ahead}: {shown}, told apart; at this difference about "
                f"{count(need)} items would still tell them apart."  # type: ignore[arg-type]
            )
        else:
            more = f"about {count(need)} items would" if need else "no number of items would"
            items.append(
                f"{n.upper} vs {n.lower}: {shown}, not told apart; {more} tell them apart "
                "if the difference held."
            )
    items += _self_preference_items(summary, analysis.same_family, analysis)
    return [Heading("Decision"), Para(_gate_sentence(analysis)), Bullets(items)]


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
    if decision.trusted:
        return "The judge passed the calibration gate: these results can be relied on."
    calibration = analysis.calibration
    if calibration is None:
        return (
            "The judge was not calibrated against humans: treat the ranking as the judge's "
            "opinion, not as a measurement."
        )
    use = calibration.gate.thresholds.alpha_use
    sentence = (
        f"The judge is {decision.gate.upper()} by the calibration gate: the ranking below is "
        "flagged, not trusted."
    )
    ceiling = calibration.overall.ceiling
    human = ceiling.human_alpha if ceiling is not None else None
    if human is not None and human.ci_high is not None and human.ci_high < use:
        return sentence + (
            f" The humans themselves agree only to alpha {estimate(human)}, below the "
            f"{num(use)} the gate asks of the judge: more or clearer human labels come first; "
            "no judge can be shown to agree with labels better than they agree with each other."
        )
    return sentence + (
        f" A judge-human alpha whose lower bound reaches {num(use)} would change that."
    )
