"""One label or judgment table, validated and normalised (joining two is `calibration.labels`).

Pairwise tables: `item_id, system_a, system_b, winner`, winner in {a, b, tie} (or the name of
one of the row's systems). Absolute tables: `item_id, system, score`. Any other column is
carried along (strata such as `category`, `turn`).

A human table without an `annotator` column counts each row as its own (anonymous) annotator.
A pairwise judge table may hold a comparison's two presentation orders, told apart by an
`order` column (`AB`/`BA`; `winner` still names the row's systems).

Pairwise rows are normalised so that `system_a < system_b`, flipping a/b when the names are
swapped (as the MT-Bench paper's FastChat script does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from calibration.orders import parse_orders

Kind = Literal["pairwise", "absolute"]
OUTCOMES: tuple[str, ...] = ("a", "b", "tie")
"""Pairwise label categories, in the order used by codes and confusion matrices."""
OUTCOME_SCORE = {"a": 1.0, "tie": 0.5, "b": 0.0}
"""A pairwise label as system_a's score: a win counts 1, a tie half."""

KEYS: dict[str, tuple[str, ...]] = {
    "pairwise": ("item_id", "system_a", "system_b"),
    "absolute": ("item_id", "system"),
}
VALUE = {"pairwise": "winner", "absolute": "score"}


class LabelError(ValueError):
    """A label or judgment table is malformed; the message names the row and column.

    For a callers' own error format the parts are attributes too: `role` (`judge` or
    `human`) when one table is at fault, `row` (0-based position in that table) and `problem`
    when one cell is at fault, `column` for that cell or for the first missing column,
    `problem` alone otherwise.
    """

    def __init__(
        self,
        message: str,
        *,
        role: str | None = None,
        row: int | None = None,
        column: str | None = None,
        problem: str | None = None,
    ) -> None:
        super().__init__(message)
        self.role = role
        self.row = row
        self.column = column
        self.problem: str = problem or message


def row_index(table: pd.DataFrame, pos: int) -> object:
    label = table.index[pos]
    return label.item() if isinstance(label, np.generic) else label


def _where(role: str, table: pd.DataFrame, pos: int, column: str) -> str:
    return f"{role} table, row {pos} (index {row_index(table, pos)!r}), column {column!r}"


def cell_error(role: str, table: pd.DataFrame, pos: int, column: str, problem: str) -> LabelError:
    return LabelError(
        f"{_where(role, table, pos, column)}: {problem}",
        role=role,
        row=pos,
        column=column,
        problem=problem,
    )


def _require(table: pd.DataFrame, role: str, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        problem = (
            f"lacks column(s) {', '.join(map(repr, missing))}; "
            f"it has {', '.join(map(repr, table.columns)) or 'no columns (an empty file?)'}"
        )
        raise LabelError(f"{role} table {problem}", role=role, column=missing[0], problem=problem)


def _text_column(table: pd.DataFrame, role: str, column: str) -> pd.Series:
    col = table[column]
    bad = col.isna() | (col.astype(str).str.strip() == "")
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        raise cell_error(role, table, pos, column, "empty; every row needs a value")
    return col.astype(str)


def normalise(table: pd.DataFrame, kind: Kind, role: Literal["judge", "human"]) -> pd.DataFrame:
    """Validate one table and return it with sorted pairwise keys and a `label` column.

    Judge rows may lack a verdict (`label` None); human rows may not.
    """
    if kind not in KEYS:
        raise LabelError(f"kind must be 'pairwise' or 'absolute', got {kind!r}")
    if not isinstance(table, pd.DataFrame):
        raise LabelError(f"{role} labels must be a pandas DataFrame, got {type(table).__name__}")
    _require(table, role, [*KEYS[kind], VALUE[kind]])
    out = table.reset_index(drop=True).copy()
    src = table
    text = KEYS[kind] + (("annotator",) if role == "human" and "annotator" in table else ())
    for col in text:
        out[col] = _text_column(src, role, col).to_numpy()
    if role == "human" and "annotator" not in table:
        # Anonymous labels: each row its own annotator (see the module docstring).
        out["annotator"] = [f"row-{pos}" for pos in range(len(out))]
    if kind == "pairwise":
        _pairwise_labels(out, src, role)
        if role == "judge" and "order" in table:
            out["order"] = _orders(src, role)
            out["first_won"] = _first_won(out, src)
    else:
        _absolute_labels(out, src, role)
    return out.drop(columns=[VALUE[kind]])


def _first_won(out: pd.DataFrame, src: pd.DataFrame) -> np.ndarray:
    """Per row: did the response shown first win (None: a tie or no verdict)?"""
    first = shown_first(out, src)
    label = out["label"].to_numpy()
    winner = np.where(label == "a", out["system_a"], np.where(label == "b", out["system_b"], ""))
    decided = (label == "a") | (label == "b")
    return np.where(decided, winner == first, None)


def shown_first(out: pd.DataFrame, src: pd.DataFrame) -> np.ndarray:
    """Per row of a judge table with an `order` column: the system the judge saw first.
    `out`: the table as `normalise` returns it (keys sorted); `src`: as given.

    A row names its systems in the order they were shown (system_a first, as the runner's
    AB and BA requests show them, and as a user logs what was shown), and `order` tells a
    comparison's two presentations apart: so the two rows of a key name the pair in opposite
    orders. A table whose two rows of a key name it the same way is read as the order column
    saying which was shown first (AB: system_a, BA: system_b). Read before the keys were
    sorted, which may have swapped system_a and system_b."""
    written_a = src["system_a"].astype(str).to_numpy()
    written_b = src["system_b"].astype(str).to_numpy()
    swapped = out["system_a"].to_numpy() != written_a
    keys = out[["item_id", "system_a", "system_b"]].astype(str).agg("\0".join, axis=1)
    grouped = pd.Series(swapped).groupby(keys.to_numpy())
    same_way = (grouped.transform("size") == 2) & (grouped.transform("nunique") == 1)
    by_tag = same_way.to_numpy() & (out["order"].to_numpy() == "BA")
    return np.where(by_tag, written_b, written_a)


def _orders(src: pd.DataFrame, role: str) -> np.ndarray:
    orders, bad = parse_orders(_text_column(src, role, "order"))
    if bad is not None:
        problem = f"{src['order'].iat[bad]!r} is not AB or BA (the presentation order)"
        raise cell_error(role, src, bad, "order", problem)
    return orders


def _pairwise_labels(out: pd.DataFrame, src: pd.DataFrame, role: str) -> None:
    same = (out["system_a"] == out["system_b"]).to_numpy()
    if same.any():
        pos = int(np.flatnonzero(same)[0])
        raise cell_error(
            role,
            src,
            pos,
            "system_b",
            f"same system as system_a ({out['system_a'].iat[pos]!r}); a pair needs two systems",
        )
    raw = src["winner"].reset_index(drop=True)
    missing = raw.isna().to_numpy()
    text = raw.astype(str).str.strip()
    lower = text.str.lower()
    label = lower.where(lower.isin(OUTCOMES), None).astype(object)
    # A winner given by system name (as judge runs write it) maps to its slot.
    label[(text == out["system_a"]).to_numpy()] = "a"
    label[(text == out["system_b"]).to_numpy()] = "b"
    bad = label.isna().to_numpy() & ~missing
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise cell_error(
            role,
            src,
            pos,
            "winner",
            f"{raw.iat[pos]!r} is not a, b, tie or one of the row's systems "
            f"({out['system_a'].iat[pos]!r}, {out['system_b'].iat[pos]!r})",
        )
    if role == "human" and missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise cell_error(role, src, pos, "winner", "missing; a human label is a, b or tie")
    swap = (out["system_a"] > out["system_b"]).to_numpy()
    a, b = out["system_a"].to_numpy().copy(), out["system_b"].to_numpy().copy()
    out["system_a"] = np.where(swap, b, a)
    out["system_b"] = np.where(swap, a, b)
    flipped = label.map({"a": "b", "b": "a", "tie": "tie"})
    values = np.where(swap, flipped, label).astype(object)
    values[missing] = None
    # object, not pandas' string dtype: a missing verdict stays None, never NaN.
    out["label"] = pd.Series(values, index=out.index, dtype=object)


def _absolute_labels(out: pd.DataFrame, src: pd.DataFrame, role: str) -> None:
    raw = src["score"].reset_index(drop=True)
    num = pd.to_numeric(raw, errors="coerce")
    bad = (num.isna() & raw.notna()).to_numpy() | ~np.isfinite(num.fillna(0).to_numpy())
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise cell_error(role, src, pos, "score", f"{raw.iat[pos]!r} is not a number")
    if role == "human" and num.isna().any():
        pos = int(np.flatnonzero(num.isna().to_numpy())[0])
        raise cell_error(role, src, pos, "score", "missing; a human label needs a score")
    out["label"] = num.astype(float).to_numpy()
