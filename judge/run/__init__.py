"""A run's lifecycle, callable without the CLI: prepare -> execute -> outputs -> analyse ->
report. `judge run` and the service's workers call these same functions and translate their
typed outcomes (an exit code, a run status)."""

# Loaded on first use (PEP 562): the prepare process imports `judge.run.prepare` alone, and
# must not load the analysis (pandas, scipy) to start sending.
from __future__ import annotations

from judge.exports import lazy_exports

_LAZY: dict[str, str] = {
    "EXIT_CODES": "judge.run.lifecycle",
    "align_rubric": "judge.run.align_rubric",
    "migrate_run": "judge.run.migrate_run",
    "Finished": "judge.run.lifecycle",
    "PrepareSummary": "judge.run.prepare",
    "RunOutcome": "judge.run.lifecycle",
    "Status": "judge.run.lifecycle",
    "dry_run": "judge.run.dry",
    "finish_run": "judge.run.lifecycle",
    "prepare_run": "judge.run.prepare",
    "relabel_run": "judge.run.lifecycle",
    "run_pipeline": "judge.run.lifecycle",
    "stopped_at": "judge.run.lifecycle",
    "write_partial_outputs": "judge.run.lifecycle",
}


__all__ = [
    "EXIT_CODES",
    "Finished",
    "PrepareSummary",
    "RunOutcome",
    "Status",
    "align_rubric",
    "dry_run",
    "finish_run",
    "migrate_run",
    "prepare_run",
    "relabel_run",
    "run_pipeline",
    "stopped_at",
    "write_partial_outputs",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
