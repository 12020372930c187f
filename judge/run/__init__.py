"""A run's lifecycle, callable without the CLI: prepare -> execute -> outputs -> analyse ->
report. `judge run` and the service's workers call these same functions and translate their
typed outcomes (an exit code, a run status)."""

# Loaded on first use (PEP 562): the prepare process imports `judge.run.prepare` alone, and
# must not load the analysis (pandas, scipy) to start sending.
from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "EXIT_CODES": "judge.run.lifecycle",
    "Finished": "judge.run.lifecycle",
    "PrepareSummary": "judge.run.prepare",
    "RunOutcome": "judge.run.lifecycle",
    "Status": "judge.run.lifecycle",
    "dry_run": "judge.run.lifecycle",
    "finish_run": "judge.run.lifecycle",
    "prepare_run": "judge.run.prepare",
    "relabel_run": "judge.run.lifecycle",
    "run_pipeline": "judge.run.lifecycle",
    "stopped_at": "judge.run.lifecycle",
    "write_partial_outputs": "judge.run.lifecycle",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'judge.run' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


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
