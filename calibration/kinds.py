"""Which kind of labels (pairwise or absolute) a judge and a human table hold, decided from
both tables alike: a column that is data in one kind (a pairwise table's `score`) never
decides."""

from __future__ import annotations

import pandas as pd

from calibration.label_tables import Kind, LabelError


class KindConflict(LabelError):
    """The judge and human tables hold different kinds of labels. `columns` maps each role to
    (its kind, the column that decided it), for a message naming each table's file."""

    def __init__(self, message: str, *, columns: dict[str, tuple[Kind, str]]) -> None:
        super().__init__(message)
        self.columns = columns


_DECIDING: tuple[tuple[str, Kind], ...] = (
    ("system_a", "pairwise"),
    ("system_b", "pairwise"),
    ("system", "absolute"),
    ("winner", "pairwise"),
    ("score", "absolute"),
)
"""Columns that tell a table's kind, keys first: a pairwise table may carry a `score` column as
data, so a value column decides only when no key column does."""


def table_kind(table: pd.DataFrame) -> tuple[Kind | None, str | None]:
    """The kind of labels a table holds and the column that says so (see `_DECIDING`);
    (None, None) when no column tells."""
    for column, kind in _DECIDING:
        if column in table.columns:
            return kind, column
    return None, None


def infer_kind(judge_table: pd.DataFrame, human_table: pd.DataFrame) -> Kind:
    """The kind both tables hold (a table that tells nothing takes the other's). Raises
    `KindConflict` naming each table's deciding column when they differ, `LabelError` when
    neither tells."""
    told: dict[str, tuple[Kind, str]] = {}
    for role, table in (("judge", judge_table), ("human", human_table)):
        kind, column = table_kind(table)
        if kind is not None and column is not None:
            told[role] = (kind, column)
    kinds = {kind for kind, _ in told.values()}
    if len(kinds) == 1:
        return kinds.pop()
    if not kinds:
        raise LabelError(
            "neither table has a system_a/system_b/winner (pairwise) or system/score "
            "(absolute) column; name the columns so, or give the kind",
            column="system_a",
        )
    said = "; ".join(f"the {r} table is {k} (column {c!r})" for r, (k, c) in told.items())
    raise KindConflict(
        f"the tables hold different kinds of labels: {said}; both must be pairwise "
        "(item_id, system_a, system_b, winner) or both absolute (item_id, system, score)",
        columns=told,
    )
