"""Reading a run's results for the API: judgments pages, output files, labels upload, and
the mapping of library errors to problems."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, select
from sqlalchemy.engine import Row
from starlette.datastructures import UploadFile

from judge.analysis.table_analysis import validate_labels
from judge.errors import ConfigError, DataError, JudgeError, RunDirBusy
from judge.service.analysis import (
    calibration_of,
    comparison_of,
    finite,
    refresh_analysis,
)
from judge.service.db import runs
from judge.service.layout import RunPaths
from judge.service.models import JudgmentsPage
from judge.service.problems import ProblemError, data_problem, rename_paths
from judge.service.registry import record_labels
from judge.service.submit import checked, client_name, save_upload, stored_name
from judge.service.upload_limits import ExpansionBudget

__all__ = [
    "calibration_of",
    "comparison_of",
    "human_labels",
    "judgments_page",
    "library_call",
    "query_call",
    "report_file",
    "require_finished",
    "store_labels",
    "summary_for_client",
    "summary_section",
]

T = TypeVar("T")


def _not_yet(what: str, status: str) -> ProblemError:
    return ProblemError(
        404,
        "not-produced",
        "Not produced yet",
        f"{what} is not produced yet (the run is {status}); it is written when the run finishes",
    )


def report_file(paths: RunPaths, status: str) -> Path:
    path = paths.rundir.report_html
    if not path.is_file():
        raise _not_yet(path.name, status)
    return path


def require_finished(paths: RunPaths, status: str) -> None:
    if status != "finished":
        raise ProblemError(
            409,
            "not-finished",
            "Run not finished",
            f"the run is {status}: calibration and comparison use a finished run's judgments",
        )
    if not paths.rundir.has_judgments():
        raise _not_yet(paths.rundir.judgments_jsonl.name, status)


def human_labels(paths: RunPaths) -> Path:
    """The uploaded labels, else the config's `calibration.human`; 404 when neither."""
    from judge.analysis.verdict_tables import run_labels
    from judge.config.run_config import load_config

    human = run_labels(paths.rundir, load_config(paths.config))
    if human is None:
        raise _no_labels()
    return human


def _no_labels() -> ProblemError:
    return ProblemError(
        404,
        "no-labels",
        "No human labels",
        "this run has no human labels: POST them to /v1/runs/{run_id}/labels first",
    )


def summary_for_client(paths: RunPaths, status: str) -> dict[str, Any]:
    """`summary.json` as the client sees it: NaN-free, and naming the run's own files
    (uploads) by name rather than by where the data dir keeps them."""
    rundir = paths.rundir
    if not rundir.has_summary():
        raise _not_yet(rundir.summary_file.name, status)
    try:
        summary = rundir.read_summary().to_dict()
    except DataError:
        raise ProblemError(
            409,
            "summary-outdated",
            "Summary written by an older version",
            "this run's summary.json was written by an older version of the service: ask the "
            "operator to rewrite it (`judge report` on the run's directory sends no request)",
        ) from None
    return _client_paths(finite(summary), paths)  # type: ignore[no-any-return]


def _client_paths(value: Any, paths: RunPaths) -> Any:
    if isinstance(value, str):
        for own in (paths.inputs, paths.run_dir):  # uploads, and the labels the run dir keeps
            value = value.replace(str(own) + "/", "")
        return value.replace(str(paths.root), "<run>")
    if isinstance(value, dict):
        return {k: _client_paths(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_client_paths(v, paths) for v in value]
    return value


def summary_section(paths: RunPaths, key: str, *, required: bool = True) -> Any:
    """A section of `summary.json` (as the client sees it); 404 when absent and `required`."""
    section = summary_for_client(paths, "finished").get(key)
    if section is None and required:
        if key == "calibration":
            raise _no_labels()
        raise _not_yet(f"the {key} section of summary.json", "finished")
    return section


def library_call(call: Callable[[], T], names: dict[str, str] | None = None) -> T:
    """Run a library computation; its user errors become 422 problems without server paths."""
    names = names or {}
    try:
        return call()
    except DataError as exc:
        raise data_problem(exc, names) from None
    except JudgeError as exc:
        raise ProblemError(
            422, "invalid-request", "Cannot compute this", rename_paths(str(exc), names)
        ) from None


_CLI_FLAGS = {"--judge-name": "judge"}
"""Library messages name the CLI's options; the API's parameters instead."""


def query_call(call: Callable[[], T], paths: RunPaths, params: dict[str, Any]) -> T:
    """Run a computation the request's query `params` asked for. Its user errors are the
    request's: 422 "Invalid request" naming the parameter (`field`) where one is at fault, in
    the API's words (parameters, not CLI flags) and without server paths."""
    try:
        return call()
    except JudgeError as exc:
        detail = exc.detail if isinstance(exc, DataError) else str(exc)
        field = None
        for flag, param in _CLI_FLAGS.items():
            if flag in detail:
                detail = detail.replace(flag, f"the `{param}` parameter")
                field = param
        field = field or _parameter_in(detail, params)
        if field is None and isinstance(exc, DataError):
            detail = str(exc)  # about a file, not a parameter: keep its name
        elif field is not None and f"`{field}`" not in detail:
            detail = f"parameter `{field}`: {detail}"
        names = {str(paths.inputs) + os.sep: "", str(paths.root): "<run>"}
        raise ProblemError(
            422, "invalid-request", "Invalid request", rename_paths(detail, names), field=field
        ) from None


def _parameter_in(message: str, params: dict[str, Any]) -> str | None:
    """The parameter whose value the message quotes, if any."""
    for name, value in params.items():
        values = value if isinstance(value, list | tuple) else [value]
        if any(v is not None and repr(str(v)) in message for v in values):
            return name
    return None


def judgments_page(
    paths: RunPaths, status: str, filters: dict[str, str | None], limit: int, offset: int
) -> JudgmentsPage:
    path = paths.rundir.judgments_jsonl
    if not path.is_file():
        raise _not_yet(path.name, status)
    wanted = {k: v for k, v in filters.items() if v is not None}
    system = wanted.pop("system", None)
    items: list[dict[str, Any]] = []
    total = 0
    # Streamed: memory holds one page, whatever the run's size.
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if any(str(row.get(k)) != v for k, v in wanted.items()):
                continue
            if system is not None and system not in (
                row.get("system"),
                row.get("system_a"),
                row.get("system_b"),
            ):
                continue
            if offset <= total < offset + limit:
                items.append(row)
            total += 1
    next_offset = offset + limit if offset + limit < total else None
    return JudgmentsPage(
        items=items, total=total, limit=limit, offset=offset, next_offset=next_offset
    )


_LABEL_LOCKS: dict[str, threading.Lock] = {}
_LABEL_LOCKS_GUARD = threading.Lock()


def _labels_lock(run_id: str) -> threading.Lock:
    """One lock per run: label uploads to one run replace and recalibrate one at a time."""
    with _LABEL_LOCKS_GUARD:
        return _LABEL_LOCKS.setdefault(run_id, threading.Lock())


def store_labels(
    engine: Engine,
    paths: RunPaths,
    row: Row[Any],
    upload: UploadFile,
    budget: ExpansionBudget,
) -> tuple[int, dict[str, Any] | None, list[str]]:
    """Validate and keep the labels; calibrate at once when the run is finished. Returns
    (rows, calibration report or None, files refreshed)."""
    name = client_name(upload.filename, "labels")
    # Checked under a name of its own (uploads to one run may arrive together), ending like
    # the client's name (the library reads the format from it); the run dir keeps the labels
    # only once they pass, so a refused upload leaves the previous labels in place and in use.
    suffix = "-" + stored_name("labels", name, "")
    fd, staged_name = tempfile.mkstemp(prefix="upload-", suffix=suffix, dir=paths.inputs)
    os.close(fd)
    staged = Path(staged_name)
    names = {str(staged): name, str(paths.root): "<run>"}
    try:
        record = save_upload(upload.file, staged, "labels", name)
        checked(budget, staged, names)
        rows = library_call(lambda: validate_labels(staged), names)
        with _labels_lock(row.id):
            return _replace_labels(engine, paths, row, staged, record, names, rows)
    finally:
        staged.unlink(missing_ok=True)


def _replace_labels(
    engine: Engine,
    paths: RunPaths,
    row: Row[Any],
    staged: Path,
    record: dict[str, Any],
    names: dict[str, str],
    rows: int,
) -> tuple[int, dict[str, Any] | None, list[str]]:
    rundir = paths.rundir
    final = rundir.labels_path(staged)
    names[str(final)] = names[str(staged)]
    record["stored_as"] = final.name
    if _status(engine, row.id) == "finished" and rundir.has_judgments():
        # Analysed with them at once (`judge report --human` does the same); kept only if
        # that succeeds, else the labels in use stay.
        from judge.config.run_config import load_config
        from judge.run import relabel_run

        try:
            relabel_run(load_config(paths.config), rundir, staged, move=True)
        except RunDirBusy:
            rundir.keep_labels(staged, move=True)
            record_labels(engine, row.id, record)
            raise _busy() from None
        except (ConfigError, DataError) as exc:
            raise _analysis_failed(exc, names) from None
        record_labels(engine, row.id, record)
        return rows, summary_section(paths, "calibration"), rundir.analysis_files
    rundir.keep_labels(staged, move=True)
    record_labels(engine, row.id, record)
    if _status(engine, row.id) != "finished":
        return rows, None, []  # the run analyses with them when it finishes
    # Finished meanwhile, perhaps after its worker looked for labels: analyse here.
    try:
        refreshed = refresh_analysis(paths)
    except RunDirBusy:
        raise _busy() from None
    except (ConfigError, DataError) as exc:
        raise _analysis_failed(exc, names) from None
    return rows, summary_section(paths, "calibration"), refreshed


def _busy() -> ProblemError:
    return ProblemError(
        409,
        "run-busy",
        "Run busy",
        "the run is being worked on (resumed meanwhile?): the labels are kept and used when it "
        "finishes",
    )


def _analysis_failed(exc: JudgeError, names: dict[str, str]) -> ProblemError:
    if isinstance(exc, DataError):  # about a file (the labels, mostly): name it, and its row
        return data_problem(exc, names)
    return ProblemError(422, "analysis-failed", "Analysis failed", rename_paths(str(exc), names))


def _status(engine: Engine, run_id: str) -> str | None:
    with engine.connect() as conn:
        return conn.execute(select(runs.c.status).where(runs.c.id == run_id)).scalar()
