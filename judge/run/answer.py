"""The run's answer to its question in one sentence, and the judge's trust verdict in one line:
what the report's first screen says, the service's run status carries and the console prints.

The answer's rule, first match wins:

1. **no** — a configured gate failed: a `compare.gates` expression, or a canary's;
2. **not settled** — the calibration gate found the judge UNTRUSTED: its verdicts cannot
   decide, whatever they say;
3. **yes** — `compare.gates` are configured and every one passed: the gates are the question's
   criteria (the leader is named, told apart or not);
4. without `compare.gates`: **yes** when the leader is told apart from the system ranked next
   (the Holm-adjusted paired test, the one meaning of "told apart", from which the ranks come),
   else **not settled**.

A PROVISIONAL or uncalibrated judge does not change the answer: the trust badge beside it says
how far to rely on it.
"""

from __future__ import annotations

from judge.report.format import counted, interval, num
from judge.summary import Answer, Calibration, GateOutcome, RankedNeighbour, RunComparison
from judge.summary_canary import Canaries


def answer(
    comparison: RunComparison,
    canaries: Canaries | None,
    calibration: Calibration | None,
    leader_tied_with: list[str],
    neighbours: list[RankedNeighbour],
) -> Answer:
    """The answer by the module's rule."""
    gates = [*comparison.gates, *(canaries.gates if canaries is not None else [])]
    failed = [g for g in gates if not g.passed]
    ranked = _ranked(comparison, leader_tied_with, neighbours)
    if failed:
        if len(failed) == 1:
            shown = f"the gate {failed[0].expression} failed ({_value(failed[0])})"
        else:
            shown = f"{len(failed)} of {counted(len(gates), 'gate')} failed: " + "; ".join(
                f"{g.expression} ({_value(g)})" for g in failed
            )
        return Answer(outcome="no", text=f"No: {shown}.")
    if calibration is not None and calibration.gate.verdict == "untrusted":
        return Answer(
            outcome="not settled",
            text="Not settled: the calibration gate found the judge UNTRUSTED, so its verdicts "
            f"cannot decide; on them, {ranked}.",
        )
    if comparison.gates:
        n = len(comparison.gates)
        passed = "the gate passed" if n == 1 else f"all {counted(n, 'gate')} passed"
        return Answer(outcome="yes", text=f"Yes: {passed}; {ranked}.")
    apart = bool(comparison.ranking) and len(comparison.ranking) > 1 and not leader_tied_with
    return Answer(outcome="yes" if apart else "not settled", text=f"{_OUTCOME[apart]}: {ranked}.")


_OUTCOME = {True: "Yes", False: "Not settled"}


def _value(g: GateOutcome) -> str:
    if g.value is None:
        return "value undefined"
    shown = f"value {num(g.value)}"
    if g.ci_low is not None and g.ci_high is not None:
        shown += f", interval [{num(g.ci_low)}, {num(g.ci_high)}]"
    return shown


def _ranked(
    comparison: RunComparison, leader_tied_with: list[str], neighbours: list[RankedNeighbour]
) -> str:
    """The leader and the system ranked next, in words consistent with the ranks."""
    ranking = comparison.ranking
    if len(ranking) < 2:
        return "fewer than two systems were ranked"
    leader, runner_up = ranking[0].system, ranking[1].system
    first = next((n for n in neighbours if (n.upper, n.lower) == (leader, runner_up)), None)
    unit = "net win rate" if comparison.kind == "pairwise" else "mean score difference"
    if not leader_tied_with:
        if first is None:
            return f"{leader} ranks first, alone"
        shown = interval(first.diff, first.ci_low, first.ci_high)
        items = counted(first.n, "item")
        return f"{leader} leads {runner_up} by {shown} ({unit}, {items}), told apart"
    text = f"{leader} ranks first but is not told apart from {', '.join(leader_tied_with)}"
    if first is not None:
        shown = interval(first.diff, first.ci_low, first.ci_high)
        text += f" ({leader} over {runner_up} by {shown}, {unit}, {counted(first.n, 'item')}"
        if first.items_needed is not None:
            text += (
                f"; about {counted(first.items_needed, 'item')} would tell them apart if the "
                "difference held"
            )
        text += ")"
    return text


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
        return "it agrees with the humans as well as they agree with each other, on reliable labels"
    parts = []
    if {c.name for c in gate.checks if c.status == "failed"} & {"signal", "control"}:
        parts.append("its agreement with the humans is not above chance")
    stand_in = gate.stand_in
    annotators = stand_in.annotators
    if stand_in.outcome in ("below humans", "human-level"):
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
