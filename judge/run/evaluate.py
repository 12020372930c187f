"""The pipeline from Python: `judge.evaluate` runs a config end to end (what `judge run` does)
and returns its results as typed objects and DataFrames; `judge.calibrate` and
`judge.compare` are `judge calibrate` and `judge compare` over tables.

Safe in a plain script without an `if __name__ == "__main__":` guard, in `python -` and in a
notebook: the processes a run starts never import the caller's script
(`judge.run.spawning`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.config.run_config import RunConfig, config_from_mapping, load_config
from judge.errors import ConfigError
from judge.store.rundir import RunDir

if TYPE_CHECKING:
    import pandas as pd

    from calibration.calibrate import CalibrationReport
    from calibration.compare import ComparisonReport
    from judge.summary.run_summary import Calibration, RunSummary

_VERDICT_COLUMNS = ("item_id", "system_a", "system_b", "winner", "score_a", "system", "score")

PANEL = "panel"
"""The `judge` value of the panel's rows in the judgments files (one per pair: the judges'
majority), beside each judge's own rows."""


@dataclass(frozen=True)
class Result:
    """A finished (or stopped) run: its summary, its judgments and its report."""

    run_dir: RunDir
    config: RunConfig
    summary: RunSummary
    exit_code: int
    """As `judge run` would exit: 0, 1 when a `compare.gates` check failed or a canary fooled
    a judge, 3 when stopped with requests pending (the budget)."""

    @property
    def complete(self) -> bool:
        """No request is left pending (`summary.counts.pending == 0`): false for a run its
        budget stopped."""
        return self.summary.complete

    @property
    def judgments(self) -> pd.DataFrame:
        """One row per pair and judge, with both presentation orders' verdicts (`verdict_ab`,
        `verdict_ba`), `winner`, `consistent` and the rest of judgments.parquet; with several
        judges, the panel's majority rows too, where `panel` is True (leave them out to count
        a judge's own verdicts: `df[~df.panel]`)."""
        import pandas as pd

        table = pd.read_parquet(self.run_dir.judgments_parquet)
        table.insert(table.columns.get_loc("judge") + 1, "panel", table["judge"] == PANEL)
        return table

    @property
    def calibration(self) -> Calibration | None:
        """The judge against the human labels (agreement with intervals, the human ceiling,
        the trust gate); None when the run has no labels or is not analysed."""
        analysis = self.summary.analysis
        return None if analysis is None else analysis.calibration

    @property
    def report_path(self) -> Path:
        """The one-page report (report.html; report.md beside it)."""
        return self.run_dir.report_html

    def compare(
        self,
        *,
        judge: str | None = None,
        baseline: str | None = None,
        by: str | None = None,
        resamples: int | None = None,
        seed: int | None = None,
        gates: Sequence[str] = (),
        control: Sequence[str] | None = None,
    ) -> ComparisonReport:
        """The comparison again, with other options (`judge compare RUN_DIR`): the paired
        bootstrap of per-item differences. Defaults are the run's `compare` settings, so
        with none given the numbers are the report's. `judge`: which judge's verdicts (the
        run's only judge by default; `panel` for the panel's)."""
        from judge.analysis.table_analysis import compare_source

        return compare_source(
            self.run_dir.path,
            judge_name=judge,
            baseline=baseline,
            by=by,
            resamples=resamples,
            seed=seed,
            gates=gates,
            controls=control,
        )


def evaluate(
    config: RunConfig | Mapping[str, Any] | str | Path,
    *,
    items: pd.DataFrame | str | Path | None = None,
    responses: pd.DataFrame | str | Path | None = None,
    labels: pd.DataFrame | str | Path | None = None,
    columns: Mapping[str, str] | None = None,
    run_dir: str | Path | None = None,
    max_cost_usd: float | None = None,
    quiet: bool = True,
) -> Result:
    """Run `config` end to end, as `judge run` does: blind, judge in both orders, aggregate,
    calibrate against the labels, compare, write the report. Resumable: called again on the
    same run dir it continues where it stopped, and pays for nothing twice.

    `config`: a YAML path (relative paths in it resolve against its directory), a mapping of
    the same keys (relative paths resolve against the working directory), or a `RunConfig`.
    `items`, `responses`, `labels`: DataFrames or paths that replace the config's
    `data.items`, `data.responses` and `calibration.human` (a DataFrame is written into the
    run dir's `dataframes/`, so the run can be resumed and audited like any other). `columns`:
    your tables' names for the pipeline's columns (`{"item_id": "ticket_id", "system":
    "model_name", "output": "reply"}`), replacing `data.columns`. `run_dir`: default
    `runs/<config name>`. `quiet=False` logs the run's steps to stderr."""
    cfg = _as_config(config)
    target = RunDir.for_config(cfg, run_dir)
    inputs = _Inputs(items, responses, labels, columns)
    return _outside_a_running_loop(
        lambda: _evaluate(cfg, target, inputs, max_cost_usd=max_cost_usd, quiet=quiet)
    )


@dataclass(frozen=True)
class _Inputs:
    items: pd.DataFrame | str | Path | None
    responses: pd.DataFrame | str | Path | None
    labels: pd.DataFrame | str | Path | None
    columns: Mapping[str, str] | None


def _evaluate(
    cfg: RunConfig, target: RunDir, inputs: _Inputs, *, max_cost_usd: float | None, quiet: bool
) -> Result:
    from judge.run.lifecycle import run_pipeline

    # Held before the tables are written: a run dir another process is judging keeps its
    # inputs (RunDirBusy names that process).
    with target.locked():
        data_update: dict[str, Any] = {}
        if inputs.columns is not None:
            data_update["columns"] = dict(inputs.columns)
        if inputs.items is not None:
            data_update["items"] = _table_path(inputs.items, target, "items")
        if inputs.responses is not None:
            data_update["responses"] = _table_path(inputs.responses, target, "responses")
        if data_update:
            cfg = _with_data(cfg, data_update)
        labels = inputs.labels
        human = None if labels is None else _table_path(labels, target, "labels")
        outcome = run_pipeline(cfg, target, max_cost_usd=max_cost_usd, human=human, log=_log(quiet))
    return Result(target, cfg, outcome.summary, outcome.exit_code)


def _outside_a_running_loop(work: Callable[[], Result]) -> Result:
    """`work()`, in a thread of its own when this one runs an event loop (a Jupyter cell
    does): the runner runs its own loop, which cannot start inside another. The caller waits
    either way, and an error reaches it as raised."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        looping = False
    else:
        looping = True
    if not looping:
        return work()
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judge-evaluate") as pool:
        return pool.submit(work).result()


def calibrate(
    judge_verdicts: pd.DataFrame | str | Path,
    human_labels: pd.DataFrame | str | Path | None = None,
    *,
    judge: str | None = None,
    kind: str | None = None,
    strata: Sequence[str] | None = None,
    resamples: int | None = None,
    seed: int | None = None,
) -> CalibrationReport:
    """`judge calibrate`: a judge's verdicts against human labels, over tables (DataFrames or
    files) or a finished run dir (then `human_labels` defaults to the run's labels, and the
    settings to the run's). Returns agreement with intervals, the human ceiling and the trust
    gate's verdict. `judge`: which judge's rows, when the table holds several."""
    from judge.analysis.table_analysis import calibrate_source, calibrate_tables

    if _is_frame(judge_verdicts) or _is_frame(human_labels):
        from judge.analysis.verdict_tables import load_judge_table, load_labels

        if human_labels is None:
            raise ConfigError("calibrate: give the human labels with a judge table")
        judge_table = (
            _one_judge(judge_verdicts, judge)
            if _is_frame(judge_verdicts)
            else load_judge_table(Path(judge_verdicts), judge)  # type: ignore[arg-type]
        )
        human_table = (
            human_labels if _is_frame(human_labels) else load_labels(Path(human_labels))  # type: ignore[arg-type]
        )
        given = {k: v for k, v in {"resamples": resamples, "seed": seed}.items() if v is not None}
        return calibrate_tables(
            judge_table,
            human_table,  # type: ignore[arg-type]
            kind=kind,
            strata=strata or [],
            **given,  # type: ignore[arg-type]
        )
    return calibrate_source(
        Path(judge_verdicts),  # type: ignore[arg-type]
        None if human_labels is None else Path(human_labels),  # type: ignore[arg-type]
        judge_name=judge,
        kind=kind,
        strata=strata,
        resamples=resamples,
        seed=seed,
    )


def compare(
    judgments: pd.DataFrame | str | Path,
    *,
    judge: str | None = None,
    baseline: str | None = None,
    by: str | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    gates: Sequence[str] = (),
    control: Sequence[str] | None = None,
) -> ComparisonReport:
    """`judge compare`: systems compared with the paired bootstrap of per-item differences,
    from a table (pairwise: item_id, system_a, system_b, score_a; scores: item_id, system,
    score), a file of one, or a finished run dir (then its `compare` settings are the
    defaults). `gates`: checks such as `"a - b > 0"` whose outcome the report states."""
    from judge.analysis.table_analysis import compare_frame, compare_source

    if _is_frame(judgments):
        return compare_frame(
            _one_judge(judgments, judge),  # type: ignore[arg-type]
            baseline=baseline,
            by=by,
            resamples=resamples,
            seed=seed,
            gates=gates,
            controls=control,
        )
    return compare_source(
        Path(judgments),  # type: ignore[arg-type]
        judge_name=judge,
        baseline=baseline,
        by=by,
        resamples=resamples,
        seed=seed,
        gates=gates,
        controls=control,
    )


# --------------------------------------------------------------------------- helpers


def _as_config(config: RunConfig | Mapping[str, Any] | str | Path) -> RunConfig:
    if isinstance(config, RunConfig):
        return config
    if isinstance(config, str | Path):
        return load_config(config)
    if isinstance(config, Mapping):
        return config_from_mapping(dict(config), Path.cwd(), source="config")
    raise ConfigError(
        f"config: expected a YAML path, a mapping or a RunConfig, got {type(config).__name__}"
    )


def _with_data(config: RunConfig, update: dict[str, Any]) -> RunConfig:
    """`config` with `update` in its `data` section, checked as the YAML's would be."""
    from pydantic import ValidationError

    from judge.config.run_config import DataConfig, format_validation_error

    try:
        data = DataConfig.model_validate({**config.data.model_dump(exclude_unset=True), **update})
    except ValidationError as exc:
        raise ConfigError(f"data: {format_validation_error(exc, DataConfig)}") from None
    return config.model_copy(update={"data": data})


def _is_frame(value: object) -> bool:
    # Without importing pandas for a path: a DataFrame's module is loaded if one was given.
    frame = getattr(sys.modules.get("pandas"), "DataFrame", None)
    return frame is not None and isinstance(value, frame)


def _table_path(table: pd.DataFrame | str | Path, rundir: RunDir, name: str) -> Path:
    """The file the run reads `table` from: a path as given (made absolute), a DataFrame
    written as Parquet into the run dir (rewritten byte for byte the same when the frame is,
    so a resumed run sees the same input)."""
    if not _is_frame(table):
        return Path(table).resolve()  # type: ignore[arg-type]
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = rundir.input_table(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrow = pa.Table.from_pandas(table, preserve_index=False)  # type: ignore[arg-type]
    staged = path.with_name(path.name + ".tmp")
    pq.write_table(arrow, staged)
    staged.replace(path)
    return path


def _one_judge(table: pd.DataFrame, judge: str | None) -> pd.DataFrame:
    """A judgments table as a comparison or calibration reads it: one judge's rows."""
    if "judge" not in table.columns:
        return table
    if judge is None:
        judges = sorted(set(table["judge"]) - {PANEL})
        if len(judges) > 1:
            raise ConfigError(
                f"the table holds {len(judges)} judges ({', '.join(judges)}): "
                f"choose one with judge=, or judge={PANEL!r} for the panel"
            )
        judge = judges[0] if judges else PANEL
    rows = table[table["judge"] == judge]
    if rows.empty:
        raise ConfigError(f"judge={judge!r}: no rows of that judge in the table")
    # A judgments table's verdict columns, as `load_judge_table` reads a run's.
    keep = [c for c in _VERDICT_COLUMNS if c in rows.columns]
    return rows[keep].reset_index(drop=True)


def _log(quiet: bool) -> Callable[[str], None]:
    if quiet:
        return lambda _msg: None
    return lambda msg: print(msg, file=sys.stderr)
