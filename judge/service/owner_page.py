"""The owner's page (`GET /owner`): a run's owner logs in with the API token the runs were
submitted with (an admin token sees every run), lists the finished runs, creates a run's
labelling task, issues annotator tokens (shown once) and revokes them, and watches the task:
labels per annotator, pairs left, whether the calibration has caught up.

A browser form over the JSON API, not a second implementation: every action calls the function
the API route calls (`judge.service.labelling`, `judge.service.registry`, `owned_run`) and only
turns its outcome, or its `ProblemError`, into HTML.

The session is the annotators' mechanism: the token in an HttpOnly, SameSite=Strict cookie,
here scoped to /owner (it is never sent to the annotators' page, nor theirs here). Annotator
tokens do not log in: they are not API tokens. Forms that change anything are refused from
another origin, and carry a form key only the session's token yields (an HMAC of it), so a
post this page did not render is refused even without an Origin header.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from judge.labelling.task import TaskSpec
from judge.service import labelling, owner_html, registry
from judge.service.auth import Principal, authenticate, cross_site
from judge.service.label_html import html_response
from judge.service.labelling import AnnotatorToken
from judge.service.problems import ProblemError
from judge.service.routes import RunContext, owned_run

router = APIRouter(include_in_schema=False)

COOKIE = "judge_owner"
PAGE = "/owner"
LISTED = 200
"""Finished runs the list shows (newest first)."""

T = TypeVar("T")

_SPEC_FIELDS = ("mode", "size", "overlap", "uniform_share", "floor", "max_skips", "seed")


@dataclass(frozen=True)
class Owner:
    principal: Principal
    form_key: str
    """What this session's forms carry (an HMAC of its token: not the token)."""


def _form_key(token: str) -> str:
    return hmac.new(token.encode("utf-8"), b"judge owner page forms", hashlib.sha256).hexdigest()


def _owner(request: Request) -> Owner | None:
    token = request.cookies.get(COOKIE)
    if not token:
        return None
    principal = authenticate(request.app.state.engine, token)
    return None if principal is None else Owner(principal, _form_key(token))


def _login(error: str | None, status: int) -> HTMLResponse:
    return html_response(lambda n: owner_html.login(n, error), status)


def _problem(who: Owner, exc: ProblemError) -> HTMLResponse:
    name = who.principal.name
    return html_response(lambda n: owner_html.problem(n, name, exc.title, exc.detail), exc.status)


def _to(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303)


@router.get(PAGE)
def home(request: Request) -> Response:
    who = _owner(request)
    if who is None:
        return _login(None, 200)
    data_dir = request.app.state.settings.data_dir
    rows, total = registry.list_runs(
        request.app.state.engine, who.principal, status="finished", limit=LISTED, offset=0
    )
    listed = [
        owner_html.Listed(
            registry.run_info(data_dir, row, with_progress=False),
            registry.paths_of(data_dir, row).rundir.has_labelling(),
        )
        for row in rows
    ]
    name = who.principal.name
    return html_response(lambda n: owner_html.runs(n, name, who.form_key, listed, total))


@router.post(PAGE + "/login")
async def log_in(request: Request) -> Response:
    if cross_site(request):
        return _login("Not allowed from another site.", 403)
    form = await request.form()
    token = str(form.get("token") or "").strip()
    principal = await run_in_threadpool(authenticate, request.app.state.engine, token)
    if principal is None:
        return _login("That is not a live API token (annotator tokens do not open this page).", 401)
    response = _to(PAGE)
    secure = request.url.scheme == "https"
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure, path=PAGE)
    return response


@router.post(PAGE + "/logout")
async def log_out(request: Request) -> Response:
    if cross_site(request):
        return _login("Not allowed from another site.", 403)
    response = _to(PAGE)
    response.delete_cookie(COOKIE, path=PAGE)
    return response


@router.get(PAGE + "/runs/{run_id}")
def run_page(request: Request, run_id: str) -> Response:
    who = _owner(request)
    if who is None:
        return _login("Log in to open that run.", 401)
    try:
        run = owned_run(run_id, request, who.principal)
    except ProblemError as exc:
        return _problem(who, exc)
    return _view(request, who, run)


def _view(
    request: Request,
    who: Owner,
    run: RunContext,
    *,
    error: str | None = None,
    status: int = 200,
    issued: AnnotatorToken | None = None,
) -> HTMLResponse:
    """The run's page: its task (or the form that creates one), and any message of a post."""
    info = registry.run_info(request.app.state.settings.data_dir, run.row, with_progress=True)
    try:
        task = labelling.labelling_of(request, run)
    except ProblemError:  # no task yet
        task = None
    label_url = str(request.base_url).rstrip("/") + labelling.PAGE
    name = who.principal.name
    return html_response(
        lambda n: owner_html.run_page(
            n, name, who.form_key, info, task, label_url=label_url, error=error, issued=issued
        ),
        status,
    )


async def _posted(request: Request, run_id: str) -> tuple[Owner, RunContext, FormData] | Response:
    """A form post's session, run and fields, or the page refusing it: another site, no live
    session, a form this session did not render (its key), or a run it may not see."""
    if cross_site(request):
        return _login("Not allowed from another site.", 403)
    form = await request.form()
    who = await run_in_threadpool(_owner, request)
    if who is None:
        return _login("Log in again: your session's token is not live.", 401)
    sent = str(form.get("form_key") or "").encode("utf-8")  # bytes: any text compares
    if not hmac.compare_digest(sent, who.form_key.encode("ascii")):
        stale = ProblemError(
            403,
            "forbidden",
            "Form refused",
            "This form did not come from your session's page: reload the page and try again.",
        )
        return _problem(who, stale)
    try:
        run = await run_in_threadpool(owned_run, run_id, request, who.principal)
    except ProblemError as exc:
        return _problem(who, exc)
    return who, run, form


def _spec(form: FormData) -> TaskSpec:
    """The task options of the creation form, as the API's body takes them; blank fields
    keep their defaults. `ValueError` (a pydantic `ValidationError` too) names the field."""
    raw: dict[str, Any] = {k: str(form.get(k) or "").strip() for k in _SPEC_FIELDS}
    raw = {k: v for k, v in raw.items() if v}
    where: dict[str, list[str]] = {}
    for clause in str(form.get("where") or "").split(";"):
        if not clause.strip():
            continue
        column, sep, values = clause.partition("=")
        if not sep or not column.strip():
            raise ValueError(f"where: {clause.strip()!r}: write column=value,value; ...")
        where[column.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    if where:
        raw["where"] = where
    instructions = str(form.get("instructions") or "").strip()
    if instructions:
        raw["instructions"] = instructions
    return TaskSpec.model_validate(raw)


def _invalid(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            ".".join(map(str, e["loc"])) + ": " + e["msg"] for e in exc.errors(include_url=False)
        )
    return str(exc)


async def _act(
    request: Request, who: Owner, run: RunContext, action: Callable[[], T]
) -> T | HTMLResponse:
    """`action()`'s outcome, or the run's page saying why the library refused it."""
    try:
        return await run_in_threadpool(action)
    except ProblemError as exc:
        error, status = exc.detail, exc.status
    return await run_in_threadpool(_view, request, who, run, error=error, status=status)


@router.post(PAGE + "/runs/{run_id}/labelling")
async def create_task(request: Request, run_id: str) -> Response:
    posted = await _posted(request, run_id)
    if isinstance(posted, Response):
        return posted
    who, run, form = posted
    try:
        spec = _spec(form)
    except ValueError as exc:
        error = _invalid(exc)
        return await run_in_threadpool(_view, request, who, run, error=error, status=422)
    done = await _act(request, who, run, lambda: labelling.create(request, run, spec))
    return done if isinstance(done, Response) else _to(f"{PAGE}/runs/{run.row.id}")


@router.post(PAGE + "/runs/{run_id}/annotators")
async def issue_token(request: Request, run_id: str) -> Response:
    posted = await _posted(request, run_id)
    if isinstance(posted, Response):
        return posted
    who, run, form = posted
    name = str(form.get("name") or "").strip()
    issued = await _act(request, who, run, lambda: labelling.new_annotator(request, run, name))
    if isinstance(issued, Response):
        return issued
    # The token is in this response only: no redirect (it would have to carry the token).
    return await run_in_threadpool(_view, request, who, run, issued=issued, status=201)


@router.post(PAGE + "/runs/{run_id}/annotators/{name}/revoke")
async def revoke_token(request: Request, run_id: str, name: str) -> Response:
    posted = await _posted(request, run_id)
    if isinstance(posted, Response):
        return posted
    who, run, _form = posted
    done = await _act(request, who, run, lambda: labelling.revoke(request, run, name))
    return done if isinstance(done, Response) else _to(f"{PAGE}/runs/{run.row.id}")
