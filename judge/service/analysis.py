"""Calibration, comparison and the report of a finished run, through the library.

`calibration_of` and `comparison_of` compute what `judge calibrate --judge RUN --human LABELS
--json` and `judge compare RUN --json` print, with the same functions and defaults.
`refresh_analysis` recomputes the run's analysis and renders the report with the labels its run
dir keeps.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.service.layout import RunPaths


def labels_file(paths: RunPaths) -> Path | None:
    """The run's uploaded human labels, kept by its run dir (`RunDir.human_labels`). A run
    stored by an earlier version kept them as `inputs/labels.*`: they move into the run dir
    the first time they are looked for, so an upgrade loses no labels."""
    kept = paths.rundir.human_labels()
    if kept is None:
        legacy = sorted(p for p in paths.inputs.glob("labels.*") if not p.name.endswith(".tmp"))
        if legacy and paths.rundir.path.is_dir():
            kept = paths.rundir.keep_labels(legacy[0], move=True)
    return kept


def calibration_of(
    run_dir: Path,
    human: Path,
    *,
    judge_name: str | None = None,
    by: Sequence[str] = (),
    resamples: int | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """As `judge calibrate --judge RUN_DIR --human HUMAN --json` prints it: the run's gate
    settings, and its resamples and seed unless given."""
    from judge.analysis.table_analysis import calibrate_run

    report = calibrate_run(
        run_dir, human, judge_name=judge_name, strata=by, resamples=resamples, seed=seed
    )
    return finite(report.to_dict())


def comparison_of(
    run_dir: Path,
    *,
    baseline: str | None = None,
    by: str | None = None,
    judge_name: str | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    gates: Sequence[str] = (),
    control: str | None = None,
) -> dict[str, Any]:
    from judge.analysis.table_analysis import compare_source, split_controls

    report = compare_source(
        run_dir,
        judge_name=judge_name,
        baseline=baseline,
        by=by,
        resamples=resamples,
        seed=seed,
        gates=gates,
        controls=split_controls(control),
    )
    # As the CLI prints it (`default=str` for the few non-JSON values).
    return finite(json.loads(json.dumps(report.to_dict(), default=str)))


def finite(value: Any) -> Any:
    """NaN and infinities as null: JSON has no spelling for them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def refresh_analysis(paths: RunPaths) -> list[str]:
    """Analyse the finished run again (with the labels its run dir keeps) and render its
    report. Returns the files written; empty when the run has no judgments yet. Raises
    `RunDirBusy` when a worker holds the run."""
    from judge.config.run_config import load_config
    from judge.run import finish_run

    rundir = paths.rundir
    if not rundir.has_judgments():
        return []
    # The stored config stays as prepared, so its hash (checked when the run resumes) does not
    # change when labels arrive later: the run dir keeps them, and the analysis finds them.
    finish_run(load_config(paths.config), rundir)
    return rundir.analysis_files
