"""What every exporter reads: a finished run's summary (an error, naming the fix, for a run
that is not finished or not analysed) and its judgments, streamed a line at a time as typed
records; and the optional packages the exporters need, imported on use with the pip extra that
installs them (STYLE.md 3)."""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

from judge.analysis.aggregate import PairJudgment, ScoreJudgment
from judge.errors import ConfigError, DataError

if TYPE_CHECKING:
    from judge.store.rundir import RunDir
    from judge.summary.run_summary import RunSummary

Judgment = PairJudgment | ScoreJudgment

EXTRAS = {"mlflow": "mlflow", "opentelemetry": "otel", "weave": "weave"}
"""The top-level module an exporter needs -> the `judge-pipeline` extra that installs it."""


def finished_summary(rundir: RunDir) -> RunSummary:
    """The run's summary, once the run is finished (no request pending) and analysed, and its
    judgments are written; else a `DataError` saying what to run first."""
    summary = rundir.read_summary()
    where = str(rundir.path)
    if not summary.complete:
        raise DataError(
            f"the run is not finished ({summary.counts.pending} judge requests pending): "
            f"continue it with `judge run CONFIG --run-dir {where}`, then export",
            path=where,
        )
    if summary.analysis is None:
        raise DataError(
            f"the run is not analysed: `judge report {where}` analyses it, then export",
            path=where,
        )
    if not rundir.has_judgments():
        raise DataError(
            f"the run has no judgments file: `judge report {where}` writes it", path=where
        )
    return summary


def iter_judgments(rundir: RunDir) -> Iterator[Judgment]:
    """Each row of `judgments.jsonl` (every judge's, and the panel's), in file order, one line
    in memory at a time: a run of a million judgments exports in constant memory."""
    path = rundir.judgments_jsonl
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                yield _judgment(line, str(path), number)


def _judgment(line: str, path: str, number: int) -> Judgment:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"not JSON ({exc.msg})", path=path, line=number) from None
    if not isinstance(row, dict):
        raise DataError("a judgment is a JSON object", path=path, line=number)
    record = PairJudgment if "pair_id" in row else ScoreJudgment
    known = {f.name for f in dataclasses.fields(record)}
    unknown = sorted(set(row) - known)
    if unknown:
        raise DataError(
            f"unknown column {unknown[0]!r}: the file was written by another version; "
            "rewrite it with `judge report RUN_DIR`",
            path=path,
            line=number,
        )
    try:
        return record(**row)
    except TypeError as exc:  # a required column is missing
        raise DataError(f"{exc}", path=path, line=number) from None


def optional(module: str, what: str) -> ModuleType:
    """`module`, imported; `ConfigError` naming the pip extra when it is not installed. `what`
    says what needs it ("exporting to MLflow")."""
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing and missing != top:
            raise  # the package is there but one of its own dependencies is not: its error
        raise ConfigError(
            f"{what} needs {module}, which is not installed: "
            f"pip install 'judge-pipeline[{EXTRAS[top]}]'"
        ) from None
