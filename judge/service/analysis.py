"""Calibration, comparison and the report of a finished run, through the library.

`calibration_of` and `comparison_of` compute what `judge calibrate --judge RUN --human LABELS
--json` and `judge compare RUN --json` print, with the same functions and defaults.
`refresh_analysis` recomputes the run's analysis and renders the report with the run's uploaded
human labels.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.errors import DataError
from judge.limits import ANALYSIS_SEED
from judge.service.layout import RunPaths

LABELS_STEM = "labels"


def labels_file(paths: RunPaths) -> Path | None:
    """The run's uploaded human labels (`inputs/labels.<ext>`), if any."""
    found = sorted(paths.inputs.glob(f"{LABELS_STEM}.*"))
    return found[0] if found else None


def validate_labels(path: Path) -> int:
    """Check human labels as `judge calibrate` will use them (the library's own
    `calibration.labels.normalise`: columns, empty keys, winners or scores); returns the number
    of rows. Raises `DataError` naming the file, and the row and column at fault."""
    from calibration.kinds import table_kind
    from calibration.labels import LabelError, normalise
    from judge.analysis import label_error
    from judge.labels import load_table

    table = load_table(path)
    try:
        normalise(table, table_kind(table)[0] or "pairwise", "human")
        if table.empty:
            raise DataError("no labels: the table has a header but no rows", path=str(path))
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
    return len(table)


def calibration_of(
    run_dir: Path,
    human: Path,
    *,
    judge_name: str | None = None,
    by: Sequence[str] = (),
    resamples: int = 1000,
    seed: int = ANALYSIS_SEED,
) -> dict[str, Any]:
    from judge.analysis import calibrate_tables
    from judge.labels import load_judge_table, load_table

    report = calibrate_tables(
        load_judge_table(run_dir, judge_name),
        load_table(human),
        strata=by,
        resamples=resamples,
        seed=seed,
        judge_path=run_dir,
        human_path=human,
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
) -> dict[str, Any]:
    from judge.analysis import compare_source

    report = compare_source(
        run_dir,
        judge_name=judge_name,
        baseline=baseline,
        by=by,
        resamples=resamples,
        seed=seed,
        gates=gates,
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
    """Analyse the finished run again with its uploaded labels (`calibration.human` for the
    analysis only) and render its report. Returns the files written; empty when the run has
    no judgments yet. Raises `RunDirBusy` when a worker holds the run."""
    from judge.config import load_config
    from judge.run import finish_run

    rundir = paths.rundir
    if not rundir.has_judgments():
        return []
    # The stored config stays as prepared, so its hash (checked when the run resumes) does not
    # change when labels arrive later.
    finish_run(load_config(paths.config), rundir, human=labels_file(paths))
    return [rundir.summary_file.name, rundir.report_md.name, rundir.report_html.name]
