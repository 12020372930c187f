"""`judge align RUN_DIR`: a finished run's judge, its reading of the two orders fitted to the
run's human labels on half the items and scored on the other half (`calibration.align`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from calibration.align import AlignResult, align
from judge.analysis.verdict_tables import (
    judgment_table,
    load_labels,
    required_labels,
    run_judgments,
)
from judge.errors import DataError
from judge.store.rundir import RunDir


def align_run(
    run_dir: Path,
    *,
    judge: str | None = None,
    human: Path | None = None,
    share: float = 0.5,
    seed: int = 1,
) -> AlignResult:
    """The run's judge (`judge`, else its only one; a panel has no orders to read) against
    `human` (default: the run's labels)."""
    from calibration.labels import LabelError, normalise

    rundir = RunDir(run_dir)
    rows = run_rows(rundir, judge)
    labels = required_labels(rundir, rundir.stored_config(), human, "--human")
    try:
        people = normalise(load_labels(labels), "pairwise", "human")
        return align(order_patterns(rows), people, share=share, seed=seed)
    except (LabelError, ValueError) as exc:
        raise DataError(str(exc), path=str(labels)) from None


def align_tables(judge: Path, human: Path, *, share: float = 0.5, seed: int = 1) -> AlignResult:
    """A judge table with an `order` column (both presentations of each comparison) against a
    human labels table."""
    from calibration.align import table_patterns
    from calibration.labels import LabelError, normalise
    from judge.analysis.verdict_tables import load_table

    try:
        patterns = table_patterns(load_table(judge))
    except (LabelError, ValueError) as exc:
        raise DataError(str(exc), path=str(judge)) from None
    try:
        people = normalise(load_labels(human), "pairwise", "human")
        return align(patterns, people, share=share, seed=seed)
    except (LabelError, ValueError) as exc:
        raise DataError(str(exc), path=str(human)) from None


def run_rows(rundir: RunDir, judge: str | None) -> pd.DataFrame:
    """One judge's pairwise rows of a finished run, each order's verdict kept (a clear error
    for a run that scored responses, or a panel, whose rows combine the orders)."""
    rows, _ = run_judgments(rundir, judge, table=judgment_table(rundir))
    if "verdict_ab" not in rows.columns:
        raise DataError(
            "a pairwise run is needed: this one scored responses", path=str(rundir.path)
        )
    if rows["verdict_ab"].isna().all() and rows["verdict_ba"].isna().all():
        raise DataError(
            "these rows have no verdict per order (a panel's are combined): choose a judge "
            "with --judge-name",
            path=str(rundir.path),
        )
    return rows


def order_patterns(rows: pd.DataFrame) -> pd.DataFrame:
    """Each order's verdict (a system's name or tie) as a, b or tie in the row's terms, with
    the row's key and pair_id."""

    def side(column: str) -> list[str | None]:
        out: list[str | None] = []
        for verdict, a, b in zip(rows[column], rows["system_a"], rows["system_b"], strict=True):
            if verdict is None or (isinstance(verdict, float) and pd.isna(verdict)):
                out.append(None)
            else:
                out.append("a" if verdict == a else "b" if verdict == b else "tie")
        return out

    return pd.DataFrame(
        {
            "pair_id": rows["pair_id"].astype(str),
            "item_id": rows["item_id"].astype(str),
            "system_a": rows["system_a"].astype(str),
            "system_b": rows["system_b"].astype(str),
            "ab": side("verdict_ab"),
            "ba": side("verdict_ba"),
        }
    )
