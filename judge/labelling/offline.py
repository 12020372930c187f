"""Labelling offline: pairs exported to a file for one annotator, answers imported from it.

An exported row names its pair by an opaque assignment id and holds what the page shows (the
question, the reference if any, the two blinded responses in this annotator's order, each
after its own earlier turns when the item continues a conversation) and two
cells to fill: `choice` (1, 2, 3 or tie, s or skip; blank: not answered) and `reason`. Import
reads the same file back; answers already recorded are recognised (importing a file twice
records nothing twice), a different answer to an answered pair is an error naming the row.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import DataError
from judge.labelling.label_store import open_labelling
from judge.labelling.session import CHOICES, answer, shown_pair
from judge.labelling.task import task_spec
from judge.store.rundir import RunDir

COLUMNS = (
    "assignment_id",
    "item_id",
    "question",
    "reference",
    "context_1",
    "response_1",
    "context_2",
    "response_2",
    "choice",
    "reason",
)


@dataclass(frozen=True)
class Imported:
    recorded: int
    """Answers recorded now."""
    already: int
    """Rows whose answer was recorded before (the same answer)."""
    blank: int
    """Rows left unanswered: their pairs stay in the annotator's queue."""


def as_text(value: str | list[dict[str, Any]] | None) -> str:
    """A prompt or conversation as plain text: chat messages as `role: content` paragraphs."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return "\n\n".join(f"{m.get('role', '?')}: {m.get('content', '')}" for m in value)


def export_pairs(rundir: RunDir, annotator: str, count: int, path: Path) -> int:
    """Assign up to `count` pairs to `annotator` (its open ones first) and write them to
    `path` (.csv or .jsonl). Returns the rows written."""
    if path.suffix not in (".csv", ".jsonl"):
        raise DataError("export to a .csv or .jsonl file", path=str(path))
    with open_labelling(rundir) as store:
        spec = task_spec(store)
        # Pairs shown earlier and never answered go out first: not lost, not assigned twice.
        rows = store.open_assignments(annotator)[:count]
        while len(rows) < count:
            assignment = store.assign_next(annotator, spec.overlap, spec.max_skips)
            if assignment is None:
                break
            rows.append(assignment)
        records = []
        for assignment in rows:
            shown = shown_pair(rundir, store, assignment)
            records.append(
                {
                    "assignment_id": shown.assignment_id,
                    "item_id": shown.item_id,
                    "question": as_text(shown.prompt),
                    "reference": shown.reference or "",
                    "context_1": as_text(shown.first.context),
                    "response_1": shown.first.output,
                    "context_2": as_text(shown.second.context),
                    "response_2": shown.second.output,
                    "choice": "",
                    "reason": "",
                }
            )
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as out:
        if path.suffix == ".csv":
            writer = csv.DictWriter(out, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(records)
        else:
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    tmp.replace(path)
    return len(records)


def import_labels(rundir: RunDir, path: Path) -> Imported:
    """Record the answers of an exported file (see the module docstring)."""
    from judge.analysis.verdict_tables import load_table

    table = load_table(path)
    for column in ("assignment_id", "choice"):
        if column not in table.columns:
            raise DataError(
                f"no {column!r} column: import the file `judge label export` wrote",
                path=str(path),
            )
    recorded = already = blank = 0
    with open_labelling(rundir) as store:
        task_spec(store)
        plan = []
        for row, record in enumerate(table.to_dict("records"), 1):
            choice = _cell(record.get("choice"))
            if not choice:
                blank += 1
                continue
            if choice.lower() not in CHOICES:
                raise DataError(
                    f"{choice!r}: answer 1, 2, 3 (tie) or s (skip)",
                    path=str(path),
                    row=row,
                    field="choice",
                )
            assignment_id = _cell(record.get("assignment_id"))
            assignment = store.assignment(assignment_id)
            if assignment is None:
                raise DataError(
                    f"{assignment_id!r} is not an assignment of this run's task",
                    path=str(path),
                    row=row,
                    field="assignment_id",
                )
            plan.append((row, assignment, CHOICES[choice.lower()], _cell(record.get("reason"))))
        # Every row is checked before any is recorded: a bad file records nothing.
        labels = {lab.assignment_id: lab for lab in store.labels(standing=True)}
        fresh = []
        in_file: dict[str, str] = {}
        for row, assignment, choice, reason in plan:
            if assignment.id in in_file:  # the same pair twice in the file
                if in_file[assignment.id] != choice:
                    raise DataError(
                        f"this pair is answered twice in the file ({in_file[assignment.id]}, "
                        f"then {choice})",
                        path=str(path),
                        row=row,
                        field="choice",
                    )
                already += 1
                continue
            in_file[assignment.id] = choice
            if assignment.answered_at is None:
                fresh.append((assignment, choice, reason))
                continue
            previous = labels.get(assignment.id)
            if previous is not None and previous.choice == choice:
                already += 1
                continue
            raise DataError(
                f"this pair was answered {previous.choice if previous else 'already'} before; "
                f"the file says {choice}",
                path=str(path),
                row=row,
                field="choice",
            )
    for assignment, choice, reason in fresh:
        answer(rundir, assignment.annotator, assignment.id, choice, reason or None, source="file")
        recorded += 1
    return Imported(recorded=recorded, already=already, blank=blank)


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float) and value.is_integer():
        # A JSONL column of answers 1, 2 with nulls for blanks arrives as floats.
        return str(int(value))
    return str(value).strip()
