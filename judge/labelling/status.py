"""Where a labelling task stands, and whether more labels would change the run's decision.

The stopping rule looks at the two things labels decide: the trust gate (can the judge stand
in for a human: its non-inferiority test against the human ceiling) and the ranking (each pair
of neighbouring systems: does the corrected win rate's interval exclude 1/2, on at least
`MIN_PAIR_LABELS` labels of that pair). Both settled:
more labels will not change the decision. Otherwise the labels still needed are estimated as
the run's other "items needed" counts are, by letting the interval's half-width shrink as
1 / sqrt(n) at the present estimate.
"""

from __future__ import annotations

import math
from dataclasses import asdict

from pydantic import BaseModel

from judge.labelling.label_store import open_labelling
from judge.labelling.sample import SampleState, sample
from judge.labelling.task import TaskSpec
from judge.store.rundir import RunDir
from judge.summary.decision import Decision
from judge.summary.run_summary import Calibration, Corrected

MIN_PAIR_LABELS = 10
"""Labels on a pair before its interval may settle it: below about 10 labels per pair the
weighted intervals covered 89-93% (scripts/active_labels.py, MT-Bench), from 10 on 95%."""


class StopPart(BaseModel):
    name: str
    """`gate`, or `upper > lower` for a pair of neighbouring systems."""
    settled: bool
    labels_needed: int | None
    """More labels that would settle it at its present estimate; None: settled, or no number
    of labels would (an estimate at the boundary, or a task that cannot label what it needs)."""
    message: str


class Stopping(BaseModel):
    settled: bool
    """More labels will not change the gate or the order of neighbouring systems."""
    labels_remaining: int | None
    """Labels still needed for every part to settle (None: settled, or out of reach)."""
    parts: list[StopPart]
    message: str


class AnnotatorCount(BaseModel):
    name: str
    labels: int
    """Standing labels (not undone, not skips), in the sample or ahead of it."""
    skips: int
    undone: int
    last_label_at: str | None
    """When the annotator's latest label (or skip) was given; null before the first."""


class TaskStatus(BaseModel):
    """The task and its `SampleState` counts (see there), with the stopping rule."""

    task_id: str
    created_at: str
    spec: TaskSpec
    pool: int
    settled: int
    labelled: int
    labels: int
    skipped: int
    waiting: int
    ahead: int
    annotators: int
    by_annotator: list[AnnotatorCount]
    """Every annotator served a pair, by name: what each has given so far."""
    stopping: Stopping


def task_status(rundir: RunDir) -> TaskStatus:
    """The task's counts and stopping rule, from its store and the run's latest analysis."""
    with open_labelling(rundir) as store:
        task = store.task()
        if task is None:
            raise LookupError("the run has no labelling task")
        task_id, raw, _pool, created = task
        spec = TaskSpec.model_validate(raw)
        state, _labels = sample(store, spec.max_skips)
        tallies = store.tallies()
    analysis = rundir.read_summary().analysis if rundir.has_summary() else None
    calibration = analysis.calibration if analysis is not None else None
    decision = analysis.decision if analysis is not None else None
    if state.labels == 0:
        calibration = None  # the summary's calibration is not from this task's labels
    counts = {k: v for k, v in asdict(state).items() if k != "threshold"}
    return TaskStatus(
        task_id=task_id,
        created_at=created,
        spec=spec,
        by_annotator=[
            AnnotatorCount(
                name=t.annotator,
                labels=t.labels,
                skips=t.skips,
                undone=t.undone,
                last_label_at=t.last_at,
            )
            for t in tallies
        ],
        stopping=stopping(calibration, decision, state, spec),
        **counts,
    )


def stopping(
    calibration: Calibration | None, decision: Decision | None, state: SampleState, spec: TaskSpec
) -> Stopping:
    if calibration is None or decision is None:
        return Stopping(
            settled=False,
            labels_remaining=None,
            parts=[],
            message="no labels yet: the judge is not calibrated",
        )
    parts = [_gate_part(calibration, spec)]
    by_pair = {frozenset(c.systems): c for c in calibration.corrected if len(c.systems) == 2}
    for n in decision.neighbours:
        parts.append(
            _pair_part(n.upper, n.lower, by_pair.get(frozenset((n.upper, n.lower))), state)
        )
    open_parts = [p for p in parts if not p.settled]
    left = state.pool - state.settled
    if not open_parts:
        return Stopping(
            settled=True,
            labels_remaining=None,
            parts=parts,
            message="settled: more labels will not change the gate or the order of "
            "neighbouring systems",
        )
    needs = [p.labels_needed for p in open_parts]
    remaining = None if any(n is None for n in needs) else max(n for n in needs if n is not None)
    if remaining is None:
        message = (
            f"not settled ({', '.join(p.name for p in open_parts)}), and no number of labels "
            "would settle every part at the present estimates"
        )
    elif remaining > left:
        message = (
            f"not settled: about {remaining} more labels would be needed, more than the "
            f"{left} pairs left in the queue"
        )
    else:
        message = f"not settled: about {remaining} more labels would settle it"
    return Stopping(settled=False, labels_remaining=remaining, parts=parts, message=message)


def _gate_part(calibration: Calibration, spec: TaskSpec) -> StopPart:
    ni = calibration.gate.stand_in.non_inferiority
    if ni.outcome in ("better than humans", "human-level", "below humans"):
        return StopPart(name="gate", settled=True, labels_needed=None, message=ni.message)
    if spec.overlap < 2:
        return StopPart(
            name="gate",
            settled=False,
            labels_needed=None,
            message="the gate compares the judge with the human ceiling, which needs pairs "
            "labelled by two or more annotators: this task has overlap 1 (create one with "
            "overlap 2 to settle it)",
        )
    needed = None
    if ni.items_needed is not None:
        needed = max(0, ni.items_needed - ni.keys) * spec.overlap
    return StopPart(name="gate", settled=False, labels_needed=needed, message=ni.message)


def _share(state: SampleState, c: Corrected) -> float:
    """Labels of the task per label on this pair: labels overall scale with it."""
    return state.labels / c.n if c.n else 1.0


def _pair_part(upper: str, lower: str, c: Corrected | None, state: SampleState) -> StopPart:
    name = f"{upper} > {lower}"
    if c is None or c.value is None or c.ci_low is None or c.ci_high is None or c.n == 0:
        return StopPart(
            name=name,
            settled=False,
            labels_needed=None,
            message="no corrected estimate yet (too few labels on this pair)",
        )
    value, low, high = c.value, c.ci_low, c.ci_high
    if c.systems and c.systems[0] != upper:  # computed for the pair in name order
        value, low, high = 1 - value, 1 - high, 1 - low
    shown = f"corrected win rate of {upper} {value:.3f} [{low:.3f}, {high:.3f}] on {c.n} labels"
    if c.ci_low > 0.5 or c.ci_high < 0.5:
        if c.n < MIN_PAIR_LABELS:
            return StopPart(
                name=name,
                settled=False,
                labels_needed=math.ceil((MIN_PAIR_LABELS - c.n) * _share(state, c)),
                message=f"apart from 1/2 on too few labels to rely on: {shown} (settles at "
                f"{MIN_PAIR_LABELS} labels on the pair)",
            )
        return StopPart(name=name, settled=True, labels_needed=None, message=f"settled: {shown}")
    gap = abs(c.value - 0.5)
    half = (c.ci_high - c.ci_low) / 2
    if gap < 1e-9 or half <= 0:
        return StopPart(name=name, settled=False, labels_needed=None, message=f"at 1/2: {shown}")
    pair_needed = max(math.ceil(c.n * (half / gap) ** 2), MIN_PAIR_LABELS) - c.n
    needed = max(1, math.ceil(pair_needed * _share(state, c)))
    return StopPart(
        name=name,
        settled=False,
        labels_needed=needed,
        message=f"not told apart from 1/2: {shown}",
    )
