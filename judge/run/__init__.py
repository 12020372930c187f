"""A run's lifecycle, callable without the CLI: prepare -> execute -> outputs -> analyse ->
report. `judge run` and the service's workers call these same functions and translate their
typed outcomes (an exit code, a run status)."""

from judge.run.lifecycle import (
    EXIT_CODES,
    Finished,
    RunOutcome,
    Status,
    dry_run,
    finish_run,
    relabel_run,
    run_pipeline,
    stopped_at,
    write_partial_outputs,
)
from judge.run.prepare import PrepareSummary, prepare_run

__all__ = [
    "EXIT_CODES",
    "Finished",
    "PrepareSummary",
    "RunOutcome",
    "Status",
    "dry_run",
    "finish_run",
    "prepare_run",
    "relabel_run",
    "run_pipeline",
    "stopped_at",
    "write_partial_outputs",
]
