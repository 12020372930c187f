"""An annotator's side of a task: the pair to label now, answering it, undoing the last answer.

What is shown is the pair's blinded texts in the order this annotator was assigned (`shown`),
under opaque assignment ids: no system name, no pair id, no verdict, no other annotator's
label ever reaches an annotator.
"""

from __future__ import annotations

from dataclasses import dataclass

from judge.errors import DataError
from judge.labelling.label_store import Assignment, LabelRow, LabelStore, open_labelling
from judge.labelling.task import MAX_REASON, Candidate, PairContent, pair_content, task_spec
from judge.store.rundir import RunDir

CHOICES = {"1": "1", "2": "2", "3": "tie", "tie": "tie", "s": "skip", "skip": "skip"}
"""What an annotator may answer (keys on the page, cells in a file) -> the stored choice."""


@dataclass(frozen=True)
class Shown:
    assignment_id: str
    item_id: str
    prompt: str | list[dict[str, object]]
    reference: str | None
    first: Candidate
    second: Candidate
    done: int
    """Labels this annotator has standing (undone ones not counted)."""
    pool: int


def shown_pair(rundir: RunDir, store: LabelStore, assignment: Assignment) -> Shown:
    content: PairContent = pair_content(rundir, assignment.pair_id)
    first, second = content.slot_a, content.slot_b
    if assignment.shown == "BA":
        first, second = second, first
    done, pool = store.counts(assignment.annotator)
    return Shown(
        assignment_id=assignment.id,
        item_id=content.item_id,
        prompt=content.prompt,
        reference=content.reference,
        first=first,
        second=second,
        done=done,
        pool=pool,
    )


def next_pair(rundir: RunDir, annotator: str) -> Shown | None:
    """The pair `annotator` should label now (the one it was shown and has not answered, else
    the next in the queue for it); None when nothing is left for it."""
    with open_labelling(rundir) as store:
        spec = task_spec(store)
        assignment = store.open_assignment(annotator) or store.assign_next(
            annotator, spec.overlap, spec.max_skips
        )
        return None if assignment is None else shown_pair(rundir, store, assignment)


def normalise_choice(value: str) -> str:
    choice = CHOICES.get(value.strip().lower())
    if choice is None:
        raise ValueError(f"{value!r}: answer 1, 2, 3 (tie) or s (skip)")
    return choice


def one_line(reason: str | None) -> str | None:
    if reason is None:
        return None
    text = " ".join(reason.split())[:MAX_REASON]
    return text or None


def answer(
    rundir: RunDir,
    annotator: str,
    assignment_id: str,
    choice: str,
    reason: str | None = None,
    *,
    source: str = "page",
) -> LabelRow:
    """Record `annotator`'s answer to its open assignment. `LookupError`: no such open
    assignment of this annotator (answered already, or another's: both look the same)."""
    with open_labelling(rundir) as store:
        assignment = store.assignment(assignment_id)
        if assignment is None or assignment.annotator != annotator:
            raise LookupError("no such pair in your queue")
        if assignment.answered_at is not None:
            raise LookupError("this pair was answered already")
        try:
            return store.add_label(
                assignment, normalise_choice(choice), one_line(reason), source=source
            )
        except ValueError as exc:
            raise DataError(str(exc), field="choice") from None


def undo(rundir: RunDir, annotator: str) -> LabelRow | None:
    """Undo `annotator`'s last standing label (its pair comes back first)."""
    with open_labelling(rundir) as store:
        return store.undo_last(annotator)
