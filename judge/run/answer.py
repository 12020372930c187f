"""The run's answer to its question in one sentence, and the judge's trust verdict in one line:
what the report's first screen says, the service's run status carries and the console prints.

The answer's rule, first match wins:

1. **not settled** — a canary's gate failed: the judge was fooled by an answer that says
   nothing, so its verdicts cannot decide, whatever they say;
2. **not settled** — the calibration gate found the judge UNTRUSTED: the same;
3. **no** — a `compare.gates` expression failed;
4. **yes** — `compare.gates` are configured and every one passed: the gates are the
   question's criteria (the leader is named, told apart or not);
5. without `compare.gates` the run cannot know what "yes" means for its question (replace a
   model? pick the best?): **ranked** when the leader is told apart from the system ranked next
   (the Holm-adjusted paired test, the one meaning of "told apart"), and ahead of it head to
   head; else **not settled**.

A PROVISIONAL or uncalibrated judge does not change the answer: the trust badge beside it says
how far to rely on it. A leader judged only by a judge of its own family is said so in the
answer itself.
"""

from __future__ import annotations

from judge.report.format import counted, interval, num
from judge.summary.canary import Canaries
from judge.summary.run_summary import (
    Answer,
    Calibration,
    GateOutcome,
    RankedNeighbour,
    RunComparison,
    SameFamily,
)


def answer(
    comparison: RunComparison,
    canaries: Canaries | None,
    calibration: Calibration | None,
    order: list[str],
    leader_tied_with: list[str],
    neighbours: list[RankedNeighbour],
    same_family: SameFamily | None = None,
) -> Answer:
    """The answer by the module's rule; `order`: the systems as the Decision ranks them."""
    ranked = _ranked(comparison, order, leader_tied_with, neighbours, same_family)
    fooled = [g for g in (canaries.gates if canaries is not None else []) if not g.passed]
    if fooled:
        return Answer(
            outcome="not settled",
            text=f"Not settled: the judge was fooled by a canary ({_gates(fooled)}), so its "
            f"verdicts cannot decide; on them, {ranked.text}.",
        )
    if calibration is not None and calibration.gate.verdict == "untrusted":
        return Answer(
            outcome="not settled",
            text="Not settled: the calibration gate found the judge UNTRUSTED, so its verdicts "
            f"cannot decide; on them, {ranked.text}.",
        )
    failed = [g for g in comparison.gates if not g.passed]
    if failed:
        return Answer(outcome="no", text=f"No: {_gates(failed, len(comparison.gates))}.")
    if comparison.gates:
        n = len(comparison.gates)
        passed = "the gate passed" if n == 1 else f"all {counted(n, 'gate')} passed"
        return Answer(outcome="yes", text=f"Yes: {passed}; {ranked.text}.")
    if not ranked.apart:
        return Answer(outcome="not settled", text=f"Not settled: {ranked.text}.")
    return Answer(
        outcome="ranked",
        text=f"Ranked: {ranked.text}; no compare.gates say what would "
        "answer the question yes or no.",
    )


_SHOWN_GATES = 2
"""Failed gates the answer names; more are counted: with a dozen failed canary gates spelt
out, the answer alone filled a screen and pushed the ranking below the fold."""


def _gates(failed: list[GateOutcome], of: int | None = None) -> str:
    if len(failed) == 1:
        return f"the gate {failed[0].expression} failed ({_value(failed[0])})"
    total = f" of {counted(of, 'gate')}" if of is not None else " gates"
    shown = "; ".join(f"{g.expression} ({_value(g)})" for g in failed[:_SHOWN_GATES])
    rest = len(failed) - _SHOWN_GATES
    more = f"; and {rest} more" if rest > 0 else ""
    return f"{len(failed)}{total} failed: {shown}{more}"


def _value(g: GateOutcome) -> str:
    if g.value is None:
        return "value undefined"
    shown = f"value {num(g.value)}"
    if g.ci_low is not None and g.ci_high is not None:
        shown += f", interval [{num(g.ci_low)}, {num(g.ci_high)}]"
    return shown


class _Ranked:
    def __init__(self, text: str, apart: bool) -> None:
        self.text, self.apart = text, apart


def _ranked(
    comparison: RunComparison,
    order: list[str],
    leader_tied_with: list[str],
    neighbours: list[RankedNeighbour],
    same_family: SameFamily | None,
) -> _Ranked:
    """The leader and the system ranked next, in words consistent with the ranks; `apart`:
    the leader is told apart from it and ahead of it head to head."""
    if len(order) < 2:
        return _Ranked("fewer than two systems have verdicts to rank", False)
    leader, runner_up = order[0], order[1]
    first = next((n for n in neighbours if (n.upper, n.lower) == (leader, runner_up)), None)
    unit = "net win rate" if comparison.kind == "pairwise" else "mean score difference"
    own = (
        f"; {leader}'s verdicts come from a judge of its own family"
        if same_family is not None and leader in same_family.systems
        else ""
    )
    if first is None:
        return _Ranked(f"{leader} ranks first; it was not compared with {runner_up}{own}", False)
    items = counted(first.n, "item")
    if first.diff < 0:
        # The overall ranking (Bradley-Terry) and the pair's own test can disagree when
        # preferences are not transitive: the head-to-head result is stated as it is.
        low, high = first.ci_low, first.ci_high
        shown = interval(
            -first.diff, None if high is None else -high, None if low is None else -low
        )
        return _Ranked(
            f"{leader} ranks first overall, but {runner_up} is ahead of it head to head by "
            f"{shown} ({unit}, {items})" + (", told apart" if first.told_apart else "") + own,
            False,
        )
    shown = interval(first.diff, first.ci_low, first.ci_high)
    if not leader_tied_with and first.told_apart:
        return _Ranked(
            f"{leader} ranks first, ahead of {runner_up} by {shown} ({unit}, {items}), told "
            f"apart{own}",
            True,
        )
    tied = ", ".join(leader_tied_with) or runner_up
    text = f"{leader} ranks first but is not told apart from {tied}"
    text += f" ({leader} over {runner_up} by {shown}, {unit}, {items}"
    if first.items_needed is not None:
        text += (
            f"; about {counted(first.items_needed, 'item')} would tell them apart if the "
            "difference held"
        )
    return _Ranked(text + ")" + own, False)


def trust_reason(calibration: Calibration | None) -> str:
    """Why the judge got its trust verdict, in one line without numbers (the report's Judge
    section has them)."""
    if calibration is None:
        return (
            "no human labels were given (calibration.human): the results are the judge's "
            "opinion, not a measurement"
        )
    gate = calibration.gate
    if gate.verdict == "trusted":
        if gate.stand_in.outcome == "better than humans":
            return f"{_STAND_IN['better than humans']}, on reliable labels"
        return "it agrees with the humans as well as they agree with each other, on reliable labels"
    parts = []
    if {c.name for c in gate.checks if c.status == "failed"} & {"signal", "control"}:
        parts.append("its agreement with the humans is not above chance")
    stand_in = gate.stand_in
    annotators = stand_in.annotators
    if stand_in.outcome in ("below humans", "human-level", "better than humans"):
        parts.append(_STAND_IN[stand_in.outcome])
    elif (
        stand_in.non_inferiority.outcome == "human-level"
        and annotators is not None
        and annotators.status == "failed"
    ):
        parts.append(
            "it agrees with the humans as well as they agree with each other, but the "
            "alternative annotator test does not show that it could replace an annotator"
        )
    else:
        parts.append(_STAND_IN[stand_in.outcome])
    labels = _LABELS.get(gate.labels.outcome)
    if labels:
        parts.append(labels)
    return "; ".join(parts)


_STAND_IN = {
    "better than humans": "it agrees with the human consensus better than the humans agree "
    "with each other, by more than the margin (noisy labels, or a judge copying one annotator)",
    "human-level": "it agrees with the humans as well as they agree with each other",
    "below humans": "it agrees with the humans less than they agree with each other",
    "inconclusive": "whether it agrees with the humans as well as they agree with each other "
    "is not settled",
    "not enough evidence": "there are too few human labels to compare it with the humans",
}
_LABELS = {
    "tentative": "the human labels themselves are only tentatively reliable",
    "unreliable": "the human labels themselves are unreliable",
}
