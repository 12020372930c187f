"""`judge calibrate` and `judge compare` on tables or finished run dirs: the library calls the
CLI and the service share, with input problems raised as `ConfigError` / `DataError`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from judge.errors import ConfigError, DataError
from judge.labels import label_kind
from judge.limits import ANALYSIS_SEED

if TYPE_CHECKING:
    from calibration.calibrate import CalibrationReport
    from calibration.compare import ComparisonReport


def calibrate_tables(
    judge_table: pd.DataFrame,
    human_table: pd.DataFrame,
    *,
    kind: str | None = None,
    strata: Sequence[str] = (),
    resamples: int = 1000,
    seed: int = ANALYSIS_SEED,
    human_path: Path | None = None,
) -> CalibrationReport:
    """`judge calibrate`: judge labels against human labels (kind: from the human table's
    columns unless given). A malformed table raises `DataError` naming row and column."""
    from calibration.calibrate import calibrate
    from calibration.labels import LabelError

    try:
        return calibrate(
            judge_table,
            human_table,
            kind=kind or label_kind(human_table),  # type: ignore[arg-type]
            strata=list(strata),
            resamples=resamples,
            seed=seed,
        )
    except LabelError as exc:
        raise DataError(str(exc), path=None if human_path is None else str(human_path)) from None


def compare_source(
    source: Path,
    *,
    judge_name: str | None = None,
    baseline: str | None = None,
    by: str | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    gates: Sequence[str] = (),
) -> ComparisonReport:
    """`judge compare SOURCE`: a finished run dir (one judge's rows, items' strata joined) or
    a table, compared with the paired bootstrap. Input problems raise `ConfigError` or
    `DataError` with the fix in the message (the CLI and the service both show them).

    `resamples`, `seed` and (for a run dir) `by` default to the run's `compare` settings, so
    the numbers are the report's; for a table, to `CompareConfig`'s defaults."""
    from judge.config import CompareConfig
    from judge.rundir import RunDir

    settings = RunDir(source).stored_config().compare if source.is_dir() else CompareConfig()
    if source.is_dir() and by is None and settings.strata:
        by = settings.strata[0]
    resamples = settings.resamples if resamples is None else resamples
    seed = settings.seed if seed is None else seed
    from calibration.compare import compare_table
    from calibration.compare_input import ComparisonInputError
    from calibration.gates import GateError, GateSyntaxError
    from judge.labels import load_comparison_table

    table, item_columns = load_comparison_table(source, judge_name)
    kind = "pairwise" if "system_a" in table.columns else "scores"
    if by is not None and by not in table.columns and by not in item_columns:
        raise ConfigError(f"by {by!r}: no such column; columns: {', '.join(table.columns)}")
    try:
        return compare_table(
            table,
            kind=kind,  # type: ignore[arg-type]
            baseline=baseline,
            by=by,
            resamples=resamples,
            seed=seed,
            gates=gates,
        )
    except (ComparisonInputError, GateSyntaxError, GateError) as exc:
        raise DataError(str(exc)) from None
