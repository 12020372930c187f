"""The HTTP endpoints. Handlers are thin: the work is in `submit`, `registry`, `results` and
`analysis`, which call the pipeline library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Query, Request, Response, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from pydantic import ValidationError
from sqlalchemy import Engine
from sqlalchemy.engine import Row

from judge.service import registry, results, submit
from judge.service.auth import Principal, require_token
from judge.service.db import ping
from judge.service.layout import RunPaths
from judge.service.models import (
    CreateRunFromPaths,
    Health,
    JudgmentsPage,
    LabelsResult,
    Ready,
    RunInfo,
    RunList,
    RunStatus,
)
from judge.service.problems import ProblemError
from judge.service.settings import ServiceSettings
from judge.service.upload_limits import ExpansionBudget

# Problem responses get their schema and media type in `app.problem_openapi`.
_PROBLEM: dict[str, Any] = {"description": "A problem document"}
_AUTH_ERRORS: dict[int | str, dict[str, Any]] = {401: _PROBLEM}
_RUN_ERRORS: dict[int | str, dict[str, Any]] = {401: _PROBLEM, 404: _PROBLEM, 422: _PROBLEM}
_RESULT_ERRORS: dict[int | str, dict[str, Any]] = {**_RUN_ERRORS, 409: _PROBLEM}

router = APIRouter()


@dataclass(frozen=True)
class RunContext:
    row: Row[Any]
    paths: RunPaths
    principal: Principal


def _engine(request: Request) -> Engine:
    return request.app.state.engine  # type: ignore[no-any-return]


def _settings(request: Request) -> ServiceSettings:
    return request.app.state.settings  # type: ignore[no-any-return]


def owned_run(
    run_id: str, request: Request, principal: Annotated[Principal, Depends(require_token)]
) -> RunContext:
    """The run named in the path, if the caller may see it (else 404, as for no run)."""
    row = registry.get_run(_engine(request), run_id, principal)
    return RunContext(row, registry.paths_of(_settings(request).data_dir, row), principal)


Run = Annotated[RunContext, Depends(owned_run)]
Caller = Annotated[Principal, Depends(require_token)]


def _info(request: Request, ctx: RunContext, *, progress: bool = True) -> RunInfo:
    row = registry.get_run(_engine(request), ctx.row.id, ctx.principal)  # fresh status
    return registry.run_info(_settings(request).data_dir, row, with_progress=progress)


# -- health --------------------------------------------------------------------------------


@router.get("/healthz", response_model=Health, tags=["health"])
def healthz() -> Health:
    """The process is up (no authentication)."""
    return Health(status="ok")


@router.get("/readyz", response_model=Ready, tags=["health"], responses={503: _PROBLEM})
def readyz(request: Request, _caller: Caller) -> Ready:
    """The database answers."""
    try:
        ping(_engine(request))
    except Exception:
        raise ProblemError(
            503, "not-ready", "Not ready", "the service database does not answer"
        ) from None
    return Ready(
        status="ready",
        database=_engine(request).dialect.name,
        running=request.app.state.scheduler.running(),
    )


# -- runs ----------------------------------------------------------------------------------

_CREATE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["config", "items", "responses"],
                    "properties": {
                        "config": {"type": "string", "format": "binary"},
                        "items": {"type": "string", "format": "binary"},
                        "responses": {"type": "string", "format": "binary"},
                        "labels": {"type": "string", "format": "binary"},
                        "rubric": {"type": "string", "format": "binary"},
                    },
                }
            },
            "application/json": {
                "schema": {"$ref": "#/components/schemas/CreateRunFromPaths"},
            },
        },
    }
}


@router.post(
    "/v1/runs",
    status_code=201,
    response_model=RunInfo,
    tags=["runs"],
    openapi_extra=_CREATE_BODY,
    responses={**_AUTH_ERRORS, 400: _PROBLEM, 403: _PROBLEM, 413: _PROBLEM, 415: _PROBLEM},
)
async def create_run(request: Request, response: Response, caller: Caller) -> RunInfo:
    """Submit a run: multipart parts `config` (YAML), `items`, `responses` (JSONL, CSV or
    Parquet) and optionally `labels`, `rubric`; or JSON `{"config": {...}}` naming files on the
    server (operator-allowed directories only). The run is prepared (validated, blinded,
    paired) before this returns, then queued."""
    settings, engine = _settings(request), _engine(request)
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "multipart/form-data":
        async with request.form(max_files=8, max_fields=8, max_part_size=4 << 20) as form:
            run_id = await run_in_threadpool(
                submit.create_from_upload, form, caller, settings, engine
            )
    elif media == "application/json":
        try:
            body = CreateRunFromPaths.model_validate(await request.json())
        except ValueError as exc:  # bad JSON, or a ValidationError (a ValueError)
            where = (
                "; ".join(".".join(map(str, e["loc"])) + ": " + e["msg"] for e in exc.errors())
                if isinstance(exc, ValidationError)
                else "the body is not valid JSON"
            )
            raise submit.bad_request(where) from None
        run_id = await run_in_threadpool(submit.create_from_paths, body, caller, settings, engine)
    else:
        raise ProblemError(
            415,
            "unsupported-media-type",
            "Unsupported media type",
            "send multipart/form-data (config, items, responses) or application/json",
        )
    request.app.state.scheduler.wake()
    response.headers["Location"] = f"/v1/runs/{run_id}"
    row = await run_in_threadpool(registry.get_run, engine, run_id, caller)
    return await run_in_threadpool(registry.run_info, settings.data_dir, row, with_progress=True)


@router.get("/v1/runs", response_model=RunList, tags=["runs"], responses=_AUTH_ERRORS)
def list_runs(
    request: Request,
    caller: Caller,
    status: RunStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> RunList:
    """Your runs (an admin token: everyone's), newest first; progress is on the run itself."""
    rows, total = registry.list_runs(
        _engine(request), caller, status=status, limit=limit, offset=offset
    )
    data_dir = _settings(request).data_dir
    items = [registry.run_info(data_dir, row, with_progress=False) for row in rows]
    return RunList(items=items, total=total, limit=limit, offset=offset)


@router.get("/v1/runs/{run_id}", response_model=RunInfo, tags=["runs"], responses=_RUN_ERRORS)
def get_run(request: Request, run: Run) -> RunInfo:
    """Status and progress (done, cached, failed, parse failures, cost so far)."""
    return _info(request, run)


@router.post(
    "/v1/runs/{run_id}/cancel", response_model=RunInfo, tags=["runs"], responses=_RESULT_ERRORS
)
def cancel_run(request: Request, run: Run) -> RunInfo:
    """Stop a queued or running run. Replies already received are kept; resume continues."""
    registry.cancel_run(_engine(request), run.row.id)
    request.app.state.scheduler.wake()
    return _info(request, run)


@router.post(
    "/v1/runs/{run_id}/resume", response_model=RunInfo, tags=["runs"], responses=_RESULT_ERRORS
)
def resume_run(request: Request, run: Run) -> RunInfo:
    """Queue a failed or cancelled run again: it continues where its store stopped."""
    registry.resume_run(_engine(request), run.row.id)
    request.app.state.scheduler.wake()
    return _info(request, run)


# -- results -------------------------------------------------------------------------------

_Filter = Annotated[str | None, Query(max_length=200)]


@router.get(
    "/v1/runs/{run_id}/judgments",
    response_model=JudgmentsPage,
    tags=["results"],
    responses=_RESULT_ERRORS,
)
def judgments(
    run: Run,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    judge: _Filter = None,
    system: _Filter = None,
    item_id: _Filter = None,
    winner: _Filter = None,
) -> JudgmentsPage:
    """Unblinded judgments, one per pair and judge (`panel` rows when several judges grade),
    in `judgments.jsonl` order; filter by judge, system (either side), item_id, winner."""
    filters = {"judge": judge, "system": system, "item_id": item_id, "winner": winner}
    return results.judgments_page(run.paths, run.row.status, filters, limit, offset)


@router.get(
    "/v1/runs/{run_id}/calibration",
    response_model=dict[str, Any],
    tags=["results"],
    responses=_RESULT_ERRORS,
)
def calibration(
    request: Request,
    run: Run,
    judge: _Filter = None,
    by: Annotated[list[str] | None, Query(max_length=10)] = None,
    resamples: Annotated[int | None, Query(ge=1, le=20_000)] = None,
    seed: Annotated[int | None, Query(ge=0, le=2**32 - 1)] = None,
) -> dict[str, Any]:
    """The judge against the human labels (agreement with intervals, human ceiling, gate).

    Without parameters: the `calibration` section of `summary.json`, as in the report (the
    config's calibration settings). With any of judge, by, resamples, seed: computed now, as
    `judge calibrate --judge RUN_DIR --human LABELS --json` prints it with those options."""
    _within_resamples(request, resamples)
    results.require_finished(run.paths, run.row.status)
    if judge is None and by is None and resamples is None and seed is None:
        return results.summary_section(run.paths, "calibration")
    human = results.human_labels(run.paths)
    return results.query_call(
        lambda: results.calibration_of(
            run.paths.run_dir,
            human,
            judge_name=judge,
            by=by or (),
            resamples=resamples,
            seed=seed,
        ),
        run.paths,
        {"judge": judge, "by": by, "resamples": resamples, "seed": seed},
    )


@router.get(
    "/v1/runs/{run_id}/comparison",
    response_model=dict[str, Any],
    tags=["results"],
    responses=_RESULT_ERRORS,
)
def comparison(
    request: Request,
    run: Run,
    baseline: _Filter = None,
    by: _Filter = None,
    judge: _Filter = None,
    resamples: Annotated[int | None, Query(ge=100, le=100_000)] = None,
    seed: Annotated[int | None, Query(ge=0, le=2**32 - 1)] = None,
    gate: Annotated[list[str] | None, Query(max_length=20)] = None,
    control: _Filter = None,
) -> dict[str, Any]:
    """Paired-bootstrap comparison of the systems (differences with intervals, Holm-adjusted
    p-values, ranking, gates; with `control=length,markdown`, win rates controlled for
    response style).

    Without parameters: the `comparison` section of `summary.json`, as in the report. With any
    of baseline, by, judge, resamples, seed, gate, control: computed now, as `judge compare
    RUN_DIR --json` prints it with those options."""
    _within_resamples(request, resamples)
    results.require_finished(run.paths, run.row.status)
    options = (baseline, by, judge, resamples, seed, gate, control)
    if all(o is None for o in options):
        section = results.summary_section(run.paths, "comparison", required=False)
        if section is not None:
            return section
    return results.query_call(
        lambda: results.comparison_of(
            run.paths.run_dir,
            baseline=baseline,
            by=by,
            judge_name=judge,
            resamples=resamples,
            seed=seed,
            gates=gate or (),
            control=control,
        ),
        run.paths,
        {
            "baseline": baseline,
            "by": by,
            "judge": judge,
            "gate": gate,
            "seed": seed,
            "control": control,
        },
    )


def _within_resamples(request: Request, resamples: int | None) -> None:
    cap = _settings(request).max_resamples
    if resamples is not None and resamples > cap:
        raise ProblemError(
            422,
            "limit-exceeded",
            "Limit exceeded",
            f"resamples: {resamples:,} is over this server's cap of {cap:,} (max_resamples)",
            field="resamples",
            limit="max_resamples",
            maximum=cap,
            actual=resamples,
        )


@router.get(
    "/v1/runs/{run_id}/summary.json",
    response_model=dict[str, Any],
    tags=["results"],
    responses=_RESULT_ERRORS,
)
def summary(run: Run) -> dict[str, Any]:
    """The run's `summary.json` (as `judge run` writes it; NaN as null, and uploaded files
    named as uploaded)."""
    return results.summary_for_client(run.paths, run.row.status)


@router.get(
    "/v1/runs/{run_id}/report.html",
    tags=["results"],
    response_class=FileResponse,
    responses={**_RUN_ERRORS, 200: {"content": {"text/html": {}}}},
)
def report(run: Run) -> FileResponse:
    """The one-page report (when the installed pipeline renders one)."""
    path = results.report_file(run.paths, run.row.status)
    # The report quotes untrusted text (system outputs): no scripts, no outside requests.
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
    return FileResponse(path, media_type="text/html", headers={"Content-Security-Policy": csp})


@router.post(
    "/v1/runs/{run_id}/labels",
    response_model=LabelsResult,
    tags=["results"],
    responses={
        **_RESULT_ERRORS,
        202: {"model": LabelsResult, "description": "Kept; used when the run finishes"},
        413: _PROBLEM,
    },
)
def upload_labels(
    request: Request, response: Response, run: Run, labels: Annotated[UploadFile, File()]
) -> LabelsResult:
    """Upload human labels (JSONL, CSV or Parquet: item_id, system_a, system_b, winner or
    item_id, system, score; optionally annotator), checked on arrival. A finished run is
    calibrated at once (and its summary and report refreshed); otherwise when it finishes.
    Replaces earlier labels. Refused (409) for a run with a labelling task, whose labels are
    the task's."""
    if run.paths.rundir.has_labelling():
        # One source of human labels per run: a file would be replaced by the task's labels
        # at the next label given on the page.
        raise ProblemError(
            409,
            "conflict",
            "Conflict",
            "this run's human labels come from its labelling task (GET .../labelling); "
            "label through the task, or submit the labels with a new run",
        )
    rows, report_dict, refreshed = results.store_labels(
        _engine(request), run.paths, run.row, labels, ExpansionBudget(_settings(request))
    )
    if report_dict is None:
        response.status_code = 202
    return LabelsResult(
        run=_info(request, run, progress=False),
        rows=rows,
        calibration=report_dict,
        refreshed=refreshed,
    )
