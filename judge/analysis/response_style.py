"""What a response looks like, apart from what it says: its length and its markdown (headers,
list items, bold spans), as the style-controlled comparison reads them
(`calibration.style_control`; `judge compare --control`, `compare.control`).

The markdown counts follow Arena-Hard's style control (LMSYS, "Does style matter?", 2024):
fenced code blocks are left out first, so a `#` comment or a `- ` inside code is not formatting.
Length is in characters, as AlpacaEval measures it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pandas as pd

from judge.store.rundir import RunDir

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_HEADER = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*(?=\S)[^*\n]+?\*\*|__(?=\S)[^_\n]+?__")
_PAGE = 1000
"""Pairs read at a time."""


class Style(NamedTuple):
    length: int
    headers: int
    lists: int
    bold: int


def style_of(text: str) -> Style:
    prose = _FENCED.sub("", text)
    return Style(
        len(text),
        len(_HEADER.findall(prose)),
        len(_LIST_ITEM.findall(prose)),
        len(_BOLD.findall(prose)),
    )


COLUMNS = [f"{name}_{side}" for name in Style._fields for side in ("a", "b")]
"""The columns `pair_styles` adds: each feature for the response in slot A and in slot B."""


def pair_styles(rundir: RunDir) -> pd.DataFrame:
    """Every pair of the run with its two responses' styles, slot A's and slot B's (slot A
    holds `system_a` of the judgments files): pair_id and `COLUMNS`. Reads the outputs a page
    at a time; keeps only the counts."""
    ids: list[str] = []
    values: list[tuple[int, ...]] = []
    with rundir.open_store() as store:
        cursor = store.connection.execute(
            "SELECT p.pair_id, a.output, b.output FROM pairs p"
            " JOIN blinded_responses a ON a.blind_id = p.slot_a"
            " JOIN blinded_responses b ON b.blind_id = p.slot_b"
        )
        try:
            while page := cursor.fetchmany(_PAGE):
                for pair_id, output_a, output_b in page:
                    ids.append(pair_id)
                    a, b = style_of(output_a), style_of(output_b)
                    values.append(tuple(v for both in zip(a, b, strict=True) for v in both))
        finally:
            cursor.close()
    table = pd.DataFrame(values, columns=COLUMNS, dtype="int64")
    table.insert(0, "pair_id", ids)
    return table


def with_styles(table: pd.DataFrame) -> pd.DataFrame:
    """A pairwise table given with the responses' texts (`output_a`, `output_b`) and no
    style columns: the style columns measured from the texts."""
    if all(c in table.columns for c in COLUMNS) or not {"output_a", "output_b"} <= set(
        table.columns
    ):
        return table
    table = table.copy()
    for side in ("a", "b"):
        styles = [style_of("" if pd.isna(t) else str(t)) for t in table[f"output_{side}"]]
        for i, name in enumerate(Style._fields):
            table[f"{name}_{side}"] = [s[i] for s in styles]
    return table
