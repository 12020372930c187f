"""The runs table: lookups scoped to the caller, state changes, and `RunInfo` views.

Every lookup takes the caller's principal: a token sees only the runs it created (an admin
token sees all), and a run it may not see is reported exactly like a run that does not exist.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select, true, update
from sqlalchemy.engine import Row

from judge.service.auth import Principal
from judge.service.db import as_utc, runs, tokens, uploads, utc_now
from judge.service.layout import RUN_ID, RunPaths, run_paths
from judge.service.models import GateStatus, Progress, RunAnswer, RunInfo
from judge.service.problems import ProblemError, not_found
from judge.store.rundir import RunDir

_COLUMNS = (*runs.c, tokens.c.name.label("owner"))


def new_run_id() -> str:
    return "r_" + secrets.token_hex(10)


def _visible(principal: Principal) -> Any:
    return true() if principal.admin else runs.c.owner_id == principal.id


def get_run(engine: Engine, run_id: str, principal: Principal) -> Row[Any]:
    """The run, or 404 (also for a run another token owns)."""
    if not RUN_ID.match(run_id):
        raise not_found()
    with engine.connect() as conn:
        row = conn.execute(
            select(*_COLUMNS)
            .join(tokens, tokens.c.id == runs.c.owner_id)
            .where(runs.c.id == run_id, _visible(principal))
        ).first()
    if row is None:
        raise not_found()
    return row


def list_runs(
    engine: Engine, principal: Principal, *, status: str | None, limit: int, offset: int
) -> tuple[list[Row[Any]], int]:
    where = [_visible(principal)]
    if status is not None:
        where.append(runs.c.status == status)
    with engine.connect() as conn:
        total = conn.execute(select(func.count()).select_from(runs).where(*where)).scalar_one()
        rows = conn.execute(
            select(*_COLUMNS)
            .join(tokens, tokens.c.id == runs.c.owner_id)
            .where(*where)
            .order_by(runs.c.created_at.desc(), runs.c.id)
            .limit(limit)
            .offset(offset)
        ).all()
    return list(rows), int(total)


def insert_run(
    engine: Engine,
    run_id: str,
    principal: Principal,
    name: str,
    files: list[dict[str, Any]],
) -> None:
    """A new queued run with the records of its uploaded files."""
    labels = next((f["stored_as"] for f in files if f["kind"] == "labels"), None)
    now = utc_now()
    with engine.begin() as conn:
        conn.execute(
            runs.insert().values(
                id=run_id,
                owner_id=principal.id,
                name=name[:200],
                status="queued",
                created_at=now,
                updated_at=now,
                attempts=0,
                labels_file=labels,
            )
        )
        for record in files:
            conn.execute(uploads.insert().values(run_id=run_id, created_at=now, **record))


def record_labels(engine: Engine, run_id: str, record: dict[str, Any]) -> None:
    now = utc_now()
    with engine.begin() as conn:
        conn.execute(uploads.insert().values(run_id=run_id, created_at=now, **record))
        conn.execute(
            update(runs)
            .where(runs.c.id == run_id)
            .values(labels_file=record["stored_as"], updated_at=now)
        )


def cancel_run(engine: Engine, run_id: str) -> None:
    now = utc_now()
    with engine.begin() as conn:
        changed = conn.execute(
            update(runs)
            .where(runs.c.id == run_id, runs.c.status.in_(("queued", "running")))
            .values(status="cancelled", finished_at=now, updated_at=now)
        ).rowcount
    if not changed:
        raise ProblemError(
            409, "conflict", "Conflict", "only a queued or running run can be cancelled"
        )


def resume_run(engine: Engine, run_id: str) -> None:
    now = utc_now()
    with engine.begin() as conn:
        changed = conn.execute(
            update(runs)
            .where(runs.c.id == run_id, runs.c.status.in_(("failed", "cancelled")))
            .values(status="queued", error=None, finished_at=None, updated_at=now)
        ).rowcount
    if not changed:
        raise ProblemError(
            409,
            "conflict",
            "Conflict",
            "only a failed or cancelled run can be resumed (a queued or running one is under "
            "way, a finished one has nothing left to do)",
        )


def paths_of(data_dir: Path, row: Row[Any]) -> RunPaths:
    return run_paths(data_dir, row.id)


def run_info(data_dir: Path, row: Row[Any], *, with_progress: bool) -> RunInfo:
    paths = paths_of(data_dir, row)
    return RunInfo(
        id=row.id,
        name=row.name,
        status=row.status,
        owner=row.owner,
        created_at=as_utc(row.created_at),  # type: ignore[arg-type]
        updated_at=as_utc(row.updated_at),  # type: ignore[arg-type]
        started_at=as_utc(row.started_at),
        finished_at=as_utc(row.finished_at),
        error=row.error,
        attempts=row.attempts,
        has_labels=row.labels_file is not None,
        progress=progress(paths.run_dir) if with_progress else None,
        **(_decision(paths) if with_progress and row.status == "finished" else {}),
    )


def _decision(paths: RunPaths) -> dict[str, Any]:
    """The gates and the answer of a finished run's `summary.json` (none when it has no
    analysis, or was written by an older version: `GET .../summary.json` says so)."""
    from judge.errors import DataError

    rundir = paths.rundir
    try:
        summary = rundir.read_summary() if rundir.has_summary() else None
    except DataError:
        return {}
    analysis = summary.analysis if summary is not None else None
    if summary is None or analysis is None:
        return {}
    decision = analysis.decision
    return {
        "notice": summary.run.notice(),
        "gates": [GateStatus(kind=kind, **g.model_dump()) for kind, g in analysis.gates()],
        "answer": RunAnswer(
            outcome=decision.answer.outcome,
            text=decision.answer.text,
            judge=decision.gate,
            judge_reason=decision.trust_reason,
        ),
    }


def progress(run_dir: Path) -> Progress | None:
    """What the store says now (WAL: safe beside the worker writing to it)."""
    rundir = RunDir(run_dir)
    if not rundir.has_store():
        return None
    from judge.run.execute import progress_of

    with rundir.open_store() as store:
        now = progress_of(store)
    return Progress(
        total=now.total,
        done=now.done,
        pending=now.total - now.done,
        cached=now.cached,
        failed=now.failed,
        parse_failures=now.parse_failures,
        spent_usd=now.spent_usd,
    )
