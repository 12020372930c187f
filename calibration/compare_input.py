"""The two input tables of `compare_table` (see `calibration.compare`), checked and normalised.

Every problem is a `ComparisonInputError` whose message names the fix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

_TIE_WORDS = frozenset({"tie", "draw", "tied", "equal"})


class ComparisonInputError(ValueError):
    """The table does not fit the declared kind; the message names the fix."""


def scores_rows(table: pd.DataFrame) -> pd.DataFrame:
    """A scores table's rows with system names as text and numeric scores."""
    _require(table, ["item_id", "system", "score"], "scores")
    df = table.copy()
    df["system"] = df["system"].astype(str)
    df["score"] = _numeric(df["score"], "score")
    return df


def pairwise_rows(table: pd.DataFrame) -> pd.DataFrame:
    """A pairwise table's rows with system names as text and score_a in [0, 1] (from
    `winner` when there is no score_a)."""
    _require(table, ["item_id", "system_a", "system_b"], "pairwise")
    df = table.copy()
    df["system_a"] = df["system_a"].astype(str)
    df["system_b"] = df["system_b"].astype(str)
    if "score_a" in df.columns:
        df["score_a"] = _numeric(df["score_a"], "score_a")
    elif "winner" in df.columns:
        df["score_a"] = _winner_scores(df)
    else:
        raise ComparisonInputError("a pairwise table needs a score_a or a winner column")
    if ((df["score_a"] < 0) | (df["score_a"] > 1)).any():
        raise ComparisonInputError("score_a must lie in [0, 1] (1 = a better, 0.5 = tie)")
    same = df["system_a"] == df["system_b"]
    if same.any():
        first = df[same].iloc[0]
        raise ComparisonInputError(
            f"{int(same.sum())} rows compare a system with itself (first: item "
            f"{first['item_id']!r}, system {first['system_a']!r}); drop them"
        )
    return df


def _require(table: pd.DataFrame, columns: Sequence[str], kind: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ComparisonInputError(
            f"a {kind} table needs columns {list(columns)}; missing {missing} "
            f"(columns present: {list(table.columns)})"
        )


def per_item(table: pd.DataFrame, column: str | None, what: str) -> pd.Series | None:
    """A column that must be constant within each item, as a Series indexed by item_id."""
    if column is None:
        return None
    if column not in table.columns:
        raise ComparisonInputError(f"{what} column {column!r} is not in the table")
    if table[column].isna().any():
        raise ComparisonInputError(f"{what} column {column!r} has empty cells; label every row")
    spread = table.groupby("item_id", sort=False)[column].nunique()
    if (spread > 1).any():
        raise ComparisonInputError(
            f"item {spread[spread > 1].index[0]!r} has several values in {what} column "
            f"{column!r}; it must be constant within an item"
        )
    return table.groupby("item_id", sort=False)[column].first().astype(str)


def _numeric(col: pd.Series, name: str) -> pd.Series:
    out = pd.to_numeric(col, errors="coerce")
    bad = out.isna() | ~np.isfinite(out.to_numpy(dtype=np.float64, na_value=np.nan))
    if bad.any():
        raise ComparisonInputError(
            f"{int(bad.sum())} rows have a missing or non-numeric {name} (first: row "
            f"{bad.to_numpy().nonzero()[0][0]}); drop them or score them explicitly"
        )
    return out.astype(np.float64)


def _winner_scores(table: pd.DataFrame) -> pd.Series:
    w = table["winner"].astype(str).str.strip()
    a, b = table["system_a"].astype(str), table["system_b"].astype(str)
    low = w.str.lower()
    score = pd.Series(np.nan, index=table.index)
    score[(low == "a") | (w == a)] = 1.0
    score[(low == "b") | (w == b)] = 0.0
    score[low.isin(_TIE_WORDS)] = 0.5
    if score.isna().any():
        first = w[score.isna()].iloc[0]
        raise ComparisonInputError(
            f"{int(score.isna().sum())} winner values are not 'A', 'B', 'tie' or one of the "
            f"pair's systems (first: {first!r})"
        )
    return score
