"""Which kind of labels (pairwise or absolute) a judge and a human table hold, decided from
both tables alike: a column that is data in one kind (a pairwise table's `score`) never
decides."""

from __future__ import annotations

import pandas as pd

from calibration.labels import Kind, LabelError


class KindConflict(LabelError):
    """The judge and human tables hold different kinds of labels. `columns` maps each role to
    (its kind, the column that decided it), for a message naming each table's file."""

    def __init__(self, message: str, *, columns: dict[str, tuple[Kind, str]]) -> None:
        super().__init__(message)
        self.columns = columns


def table_kind(table: pd.DataFrame) -> tuple[Kind | None, str | None]:
    """The kind of labels a table holds and the column that says so, from its key columns
    (`system_a`/`system_b` pairwise, `system` absolute), else from its value column
    (`winner` pairwise, `score` absolute): a pairwise table may carry a `score` column as
    data. (None, None) when no column tells."""
    columns = set(table.columns)
    for column, kind in (
        ("system_a", "pairwise"),
        ("system_b", "pairwise"),
        ("system", "absolute"),
        ("winner", "pairwise"),
        ("score", "absolute"),
    ):
        if column in columns:
            return kind, column  # type: ignore[return-value]
    return None, None


def infer_kind(judge_table: pd.DataFrame, human_table: pd.DataFrame) -> Kind:
    """The kind both tables hold (see `table_kind`). Raises `KindConflict` naming each table's
    deciding column when they differ, `LabelError` when neither tells."""
    found = {role: table_kind(t) for role, t in (("judge", judge_table), ("human", human_table))}
    kinds = {kind for kind, _ in found.values() if kind is not None}
    if len(kinds) == 1:
        return kinds.pop()
    if not kinds:
        raise LabelError(
            "neither table has a system_a/system_b/winner (pairwise) or system/score "
            "(absolute) column; name the columns so, or give the kind",
            column="system_a",
        )
    columns: dict[str, tuple[Kind, str]] = {r: (k, c) for r, (k, c) in found.items()}  # type: ignore[misc]
    said = "; ".join(f"the {r} table is {k} (column {c!r})" for r, (k, c) in columns.items())
    raise KindConflict(
        f"the tables hold different kinds of labels: {said}; both must be pairwise "
        "(item_id, system_a, system_b, winner) or both absolute (item_id, system, score)",
        columns=columns,
    )
