"""The owner's side of labelling: create a run's task, make annotator tokens, watch the task
(its counts, the stopping rule, whether the calibration has caught up), read every label.

Every route here is a run route (`owned_run`): the owner's bearer token, or an admin's. The
owner's page (`judge.service.owner_page`) does the same in a browser, through the same
functions. Annotators use the labelling page (`judge.service.label_page`), never these.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Body, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from judge.errors import ConfigError, DataError
from judge.labelling.label_store import open_labelling
from judge.labelling.status import TaskStatus, task_status
from judge.labelling.task import TaskSpec, create_task
from judge.service import annotators
from judge.service.problems import ProblemError, data_problem
from judge.service.results import require_finished
from judge.service.routes import _RESULT_ERRORS, Run, RunContext, _engine

router = APIRouter(tags=["labelling"])

PAGE = "/label"


class AnnotatorInfo(BaseModel):
    name: str
    created_at: datetime
    revoked_at: datetime | None


class Labelling(BaseModel):
    task: TaskStatus
    analysing: bool
    """Labels have arrived that the run's calibration does not include yet (being analysed)."""
    analysis_error: str | None
    """Why the last analysis with the task's labels failed, if it did."""
    annotators: list[AnnotatorInfo]
    page: str
    """Where annotators open their queue (log in with their token)."""


class NewAnnotator(BaseModel):
    name: str = Field(min_length=1, max_length=100)


class AnnotatorToken(BaseModel):
    name: str
    token: str
    """Shown once: give it to the annotator. It opens this run's labelling page only."""
    page: str


class LabelRecord(BaseModel):
    id: int
    annotator: str
    item_id: str
    system_a: str
    system_b: str
    choice: str
    """As answered: 1 or 2 (the response shown first or second), tie or skip."""
    winner: str | None
    """The system the label prefers, `tie`, or null for a skip."""
    shown: str
    """AB: system_a's response was shown first; BA: system_b's."""
    reason: str | None
    seconds: float | None
    """From the pair being shown to the answer (page labels only)."""
    source: str
    created_at: str
    undone_at: str | None


class LabelList(BaseModel):
    items: list[LabelRecord]
    total: int


# The functions below are the labelling service: the JSON routes at the end of this module and
# the owner's page (`judge.service.owner_page`) both call them, and only translate the outcome
# (a model, or a `ProblemError`) into JSON or HTML.


def labelling_of(request: Request, run: RunContext) -> Labelling:
    """The run's task with its annotators; 404 when the run has none."""
    rundir = run.paths.rundir
    if not rundir.has_labelling():
        raise ProblemError(
            404, "not-found", "Not found", "this run has no labelling task (POST one)"
        )
    try:
        status = task_status(rundir)
    except LookupError:
        raise ProblemError(
            404, "not-found", "Not found", "this run has no labelling task"
        ) from None
    refresher = request.app.state.refresher
    return Labelling(
        task=status,
        analysing=refresher.pending(run.row.id),
        analysis_error=refresher.error(run.row.id),
        annotators=[
            AnnotatorInfo(**a) for a in annotators.list_annotators(_engine(request), run.row.id)
        ],
        page=PAGE,
    )


def create(request: Request, run: RunContext, spec: TaskSpec) -> Labelling:
    """Create the run's task (409: not finished, or it has one; 422: nothing to label)."""
    require_finished(run.paths, run.row.status)
    try:
        create_task(run.paths.rundir, spec)
    except ConfigError as exc:
        raise ProblemError(409, "conflict", "Conflict", str(exc)) from None
    except DataError as exc:
        raise data_problem(exc, {str(run.paths.root): "<run>"}) from None
    return labelling_of(request, run)


def new_annotator(request: Request, run: RunContext, name: str) -> AnnotatorToken:
    """A token for one more annotator of the run's task (404 without a task)."""
    labelling_of(request, run)
    token, who = annotators.create_annotator(_engine(request), run.row.id, name)
    return AnnotatorToken(name=who.name, token=token, page=PAGE)


def revoke(request: Request, run: RunContext, name: str) -> Labelling:
    """Revoke a live annotator's token (404: none of that name); its labels stay."""
    if not annotators.revoke_annotator(_engine(request), run.row.id, name):
        raise ProblemError(404, "not-found", "Not found", "no such live annotator of this run")
    return labelling_of(request, run)


def labels_of(request: Request, run: RunContext) -> LabelList:
    """Every label given, undone ones too, unblinded (for the run's owner only)."""
    labelling_of(request, run)
    rundir = run.paths.rundir
    slots = rundir.read_key().pairs
    with open_labelling(rundir) as store:
        rows = store.labels()
    out = []
    for label in rows:
        a, b = slots[label.pair_id]
        winner = {"a": a, "b": b, "tie": "tie"}.get(label.winner or "")
        out.append(
            LabelRecord(
                id=label.id,
                annotator=label.annotator,
                item_id=label.item_id,
                system_a=a,
                system_b=b,
                choice=label.choice,
                winner=winner,
                shown=label.shown,
                reason=label.reason,
                seconds=label.seconds,
                source=label.source,
                created_at=label.created_at,
                undone_at=label.undone_at,
            )
        )
    return LabelList(items=out, total=len(out))


# -- the JSON routes -----------------------------------------------------------------------


@router.post(
    "/v1/runs/{run_id}/labelling",
    status_code=201,
    response_model=Labelling,
    responses=_RESULT_ERRORS,
)
def create_labelling(
    request: Request, run: Run, spec: Annotated[TaskSpec | None, Body()] = None
) -> Labelling:
    """Create the run's labelling task (one per run) from its judged pairs: `mode` active
    (pairs the judge is unsure of first, with known probabilities) or uniform, `size`,
    `overlap` (annotators per pair), `where` (strata). Its labels become the run's human
    labels: the calibration, the summary and the report follow each label."""
    return create(request, run, spec or TaskSpec())


@router.get("/v1/runs/{run_id}/labelling", response_model=Labelling, responses=_RESULT_ERRORS)
def get_labelling(request: Request, run: Run) -> Labelling:
    """The task: counts, the stopping rule (will more labels change the gate or the order of
    neighbouring systems; if so, about how many), annotators, and whether the run's
    calibration includes every label yet (`analysing`)."""
    return labelling_of(request, run)


@router.post(
    "/v1/runs/{run_id}/labelling/annotators",
    status_code=201,
    response_model=AnnotatorToken,
    responses=_RESULT_ERRORS,
)
def add_annotator(request: Request, run: Run, body: NewAnnotator) -> AnnotatorToken:
    """A token for one annotator of this run's task, shown once. It opens the labelling page
    (`page`) with this annotator's own queue, and no API route."""
    return new_annotator(request, run, body.name)


@router.post(
    "/v1/runs/{run_id}/labelling/annotators/{name}/revoke",
    response_model=Labelling,
    responses=_RESULT_ERRORS,
)
def revoke_annotator(request: Request, run: Run, name: str) -> Labelling:
    """Revoke an annotator's token (its labels stay)."""
    return revoke(request, run, name)


@router.get(
    "/v1/runs/{run_id}/labelling/labels", response_model=LabelList, responses=_RESULT_ERRORS
)
async def list_labels(request: Request, run: Run) -> LabelList:
    """Every label given (undone ones too, marked), oldest first, unblinded for the owner."""
    return await run_in_threadpool(labels_of, request, run)
