"""`judge calibrate` and `judge compare` on tables or finished run dirs: the library calls the
CLI and the service share, with input problems raised as `ConfigError` / `DataError`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from judge.config.limits import ANALYSIS_SEED
from judge.errors import ConfigError, DataError

if TYPE_CHECKING:
    from calibration.calibrate import CalibrationReport
    from calibration.compare import ComparisonReport
    from calibration.labels import LabelError
    from calibration.trust_gate import GateThresholds


def calibrate_tables(
    judge_table: pd.DataFrame,
    human_table: pd.DataFrame,
    *,
    kind: str | None = None,
    strata: Sequence[str] = (),
    resamples: int = 1000,
    seed: int = ANALYSIS_SEED,
    shuffle_judge: int | None = None,
    gate: GateThresholds | None = None,
    judge_path: Path | None = None,
    human_path: Path | None = None,
) -> CalibrationReport:
    """`judge calibrate`: judge labels against human labels (kind: from both tables' columns
    unless given; `shuffle_judge`: the negative control's seed; `gate`: the trust gate's
    settings, default `GateThresholds()`). A malformed table raises `DataError` naming its
    file, row and column."""
    from calibration.calibrate import calibrate, shuffled_judge
    from calibration.kinds import infer_kind
    from calibration.labels import LabelError

    try:
        kind = kind or infer_kind(judge_table, human_table)
        if shuffle_judge is not None:
            judge_table = shuffled_judge(judge_table, kind=kind, seed=shuffle_judge)  # type: ignore[arg-type]
        return calibrate(
            judge_table,
            human_table,
            kind=kind,  # type: ignore[arg-type]
            strata=list(strata),
            gate=gate,
            resamples=resamples,
            seed=seed,
        )
    except LabelError as exc:
        raise label_error(exc, judge=judge_path, human=human_path) from None


def calibrate_source(
    judge: Path | None,
    human: Path | None,
    *,
    mt_bench: bool = False,
    judge_name: str | None = None,
    kind: str | None = None,
    strata: Sequence[str] | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    shuffle_judge: int | None = None,
) -> CalibrationReport:
    """`judge calibrate`: the bundled MT-Bench tables (`mt_bench`; strata default to `turn`),
    a finished run dir (`calibrate_run`: the run's settings), or two tables (the defaults of
    `calibrate_tables`)."""
    from judge.analysis.verdict_tables import load_judge_table, load_labels, mt_bench_tables

    if kind not in (None, "pairwise", "absolute"):
        raise ConfigError(f"--kind {kind!r}: expected pairwise or absolute")
    given = {"resamples": resamples, "seed": seed}
    if judge is not None and judge.is_dir() and not mt_bench:
        return calibrate_run(
            judge,
            human,
            judge_name=judge_name,
            kind=kind,
            strata=strata or [],
            shuffle_judge=shuffle_judge,
            **given,  # type: ignore[arg-type]
        )
    if mt_bench:
        judge_table, human_table = mt_bench_tables()
        strata = ["turn"] if strata is None else strata
    elif judge is None or human is None:
        raise ConfigError("give --judge FILE_OR_RUN_DIR and --human FILE (or --mt-bench)")
    else:
        judge_table, human_table = load_judge_table(judge, judge_name), load_labels(human)
    return calibrate_tables(
        judge_table,
        human_table,
        kind=kind,
        strata=strata or [],
        shuffle_judge=shuffle_judge,
        judge_path=judge,
        human_path=human,
        **{k: v for k, v in given.items() if v is not None},  # type: ignore[arg-type]
    )


def calibrate_run(
    run_dir: Path,
    human: Path | None = None,
    *,
    judge_name: str | None = None,
    kind: str | None = None,
    strata: Sequence[str] = (),
    resamples: int | None = None,
    seed: int | None = None,
    shuffle_judge: int | None = None,
) -> CalibrationReport:
    """`judge calibrate --judge RUN_DIR`: the run's judgments (one judge) against `human`,
    by default the labels the run is calibrated against
    (`judge.analysis.verdict_tables.run_labels`), with the
    run's `calibration` settings: its trust gate always (the verdict must be the report's),
    and `resamples` and `seed` unless given."""
    from judge.analysis.verdict_tables import load_judge_table, load_labels, required_labels
    from judge.store.rundir import RunDir

    rundir = RunDir(run_dir)
    settings = rundir.stored_config()
    human = required_labels(rundir, settings, human, "--human")
    return calibrate_tables(
        load_judge_table(run_dir, judge_name),
        load_labels(human),
        kind=kind,
        strata=strata,
        resamples=settings.calibration.resamples if resamples is None else resamples,
        seed=settings.calibration.seed if seed is None else seed,
        shuffle_judge=shuffle_judge,
        gate=settings.calibration.gate,
        judge_path=run_dir,
        human_path=human,
    )


def validate_labels(path: Path) -> int:
    """Check human labels as the calibration will use them (`calibration.labels.normalise`:
    columns, empty keys, winners or scores) before they are kept anywhere; returns the number
    of rows. Raises `DataError` naming the file, and the row and column at fault."""
    return len(checked_labels(path))


def checked_labels(path: Path) -> pd.DataFrame:
    """The human labels of `path` as read, once `validate_labels`' checks have passed."""
    from calibration.kinds import table_kind
    from calibration.labels import LabelError, normalise
    from judge.analysis.verdict_tables import load_labels

    table = load_labels(path)
    try:
        normalise(table, table_kind(table)[0] or "pairwise", "human")
    except LabelError as exc:
        error = label_error(exc, judge=None, human=path)
        if exc.row is None:
            error = DataError(
                f"{error.detail} (human labels are item_id, system_a, system_b, winner; or "
                "item_id, system, score; each with an optional annotator)",
                path=str(path),
                field=exc.column,
            )
        raise error from None
    return table


def label_error(exc: LabelError, *, judge: Path | None, human: Path | None) -> DataError:
    """A `LabelError` as a `DataError` naming the file at fault (else "judge table" or "human
    table"), its row counted from 1 as a file's data rows are, and the column."""
    from calibration.kinds import KindConflict

    names = {"judge": judge or "judge table", "human": human or "human table"}
    if isinstance(exc, KindConflict):
        said = "; ".join(
            f"{names[role]} is {kind} (column {column!r})"
            for role, (kind, column) in exc.columns.items()
        )
        return DataError(
            f"the tables hold different kinds of labels: {said}; give both the columns of one "
            "kind: pairwise item_id, system_a, system_b, winner; absolute item_id, system, score"
        )
    if exc.role is None:
        return DataError(f"{names['judge']} and {names['human']}: {exc}", field=exc.column)
    return DataError(
        exc.problem,
        path=str(names[exc.role]),
        row=None if exc.row is None else exc.row + 1,
        field=exc.column,
    )


def split_controls(text: str | None) -> list[str] | None:
    """`--control length,markdown` (the CLI, the service's `control` parameter) as a list;
    None when not given."""
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


def compare_source(
    source: Path,
    *,
    judge_name: str | None = None,
    baseline: str | None = None,
    by: str | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    gates: Sequence[str] = (),
    controls: Sequence[str] | None = None,
) -> ComparisonReport:
    """`judge compare SOURCE`: a finished run dir (one judge's rows, items' strata joined) or
    a table, compared with the paired bootstrap. Input problems raise `ConfigError` or
    `DataError` with the fix in the message (the CLI and the service both show them).

    `resamples`, `seed` and (for a run dir) `by` and `controls` (`length`, `markdown`) default
    to the run's `compare` settings, so the numbers are the report's; for a table, to
    `CompareConfig`'s defaults."""
    from judge.config.run_config import CompareConfig
    from judge.store.rundir import RunDir

    stored = RunDir(source).stored_config() if source.is_dir() else None
    settings = CompareConfig() if stored is None else stored.compare
    # A run whose pairs all hold one system is controlled against it, as its report is.
    paired_against = None if stored is None else stored.pairs.baseline
    if source.is_dir() and by is None and settings.strata:
        by = settings.strata[0]
    controls = _checked_controls(settings.control if controls is None else controls)
    from judge.analysis.verdict_tables import load_comparison_table

    table, item_columns = load_comparison_table(source, judge_name, styles=bool(controls))
    return _compare_loaded(
        table,
        item_columns,
        baseline=baseline,
        by=by,
        resamples=settings.resamples if resamples is None else resamples,
        seed=settings.seed if seed is None else seed,
        gates=gates,
        controls=controls,
        paired_against=paired_against,
    )


def compare_frame(
    table: pd.DataFrame,
    *,
    baseline: str | None = None,
    by: str | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    gates: Sequence[str] = (),
    controls: Sequence[str] | None = None,
) -> ComparisonReport:
    """`compare_source` on a table in memory (pairwise: item_id, system_a, system_b, score_a;
    scores: item_id, system, score), with `CompareConfig`'s defaults."""
    from judge.analysis.response_style import with_styles
    from judge.config.run_config import CompareConfig

    settings = CompareConfig()
    controls = _checked_controls(controls or [])
    return _compare_loaded(
        with_styles(table) if controls else table,
        [],
        baseline=baseline,
        by=by,
        resamples=settings.resamples if resamples is None else resamples,
        seed=settings.seed if seed is None else seed,
        gates=gates,
        controls=controls,
        paired_against=None,
    )


def _checked_controls(controls: Sequence[str]) -> list[str]:
    if not controls:
        return list(controls)
    from calibration.style_control import StyleControlError, check_controls

    try:
        return list(check_controls(controls))
    except StyleControlError as exc:
        raise ConfigError(str(exc)) from None


def _compare_loaded(
    table: pd.DataFrame,
    item_columns: Sequence[str],
    *,
    baseline: str | None,
    by: str | None,
    resamples: int,
    seed: int,
    gates: Sequence[str],
    controls: Sequence[str],
    paired_against: str | None,
) -> ComparisonReport:
    from calibration.compare import compare_table
    from calibration.compare_input import ComparisonInputError
    from calibration.gates import GateError, GateSyntaxError

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
            controls=controls,
            control_baseline=None if baseline is not None else paired_against,
        )
    except (ComparisonInputError, GateSyntaxError, GateError) as exc:
        raise DataError(str(exc)) from None
