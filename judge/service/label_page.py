"""The labelling page (`GET /label`): annotators log in with their annotator token (kept in an
HttpOnly, SameSite=Strict cookie scoped to /label), then label their own queue pair by pair.

Only annotator tokens open it, and it opens nothing else: it shows the pair the annotator's
queue gives it, blinded (no system name, no judge verdict, no other annotator's label), and
accepts answers only to that annotator's own assignments. Forms post back to the page (a
cross-site form carries no cookie; a request whose Origin is another site is refused too).
Each answer marks the run for the calibration refresher, so the report follows the labels.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from judge.errors import DataError
from judge.labelling import session
from judge.labelling.label_store import open_labelling
from judge.labelling.task import TaskSpec, human_instructions, task_spec
from judge.service import label_html
from judge.service.annotators import Annotator, authenticate_annotator
from judge.service.auth import cross_site
from judge.service.layout import run_paths
from judge.store.rundir import RunDir

router = APIRouter(include_in_schema=False)

COOKIE = "judge_annotator"
PAGE = "/label"


_html = label_html.html_response


def _annotator(request: Request) -> Annotator | None:
    token = request.cookies.get(COOKIE)
    if not token:
        return None
    return authenticate_annotator(request.app.state.engine, token)


def _rundir(request: Request, who: Annotator) -> RunDir:
    return run_paths(request.app.state.settings.data_dir, who.run_id).rundir


def _back() -> RedirectResponse:
    return RedirectResponse(PAGE, status_code=303)


def _refused() -> HTMLResponse:
    return _html(lambda n: label_html.login(n, "Not allowed from another site."), 403)


@router.get(PAGE)
async def show(request: Request) -> Response:
    who = await run_in_threadpool(_annotator, request)
    if who is None:
        return _html(label_html.login, 200)
    return await run_in_threadpool(_current, request, who, None)


def _current(request: Request, who: Annotator, error: str | None) -> HTMLResponse:
    rundir = _rundir(request, who)
    if not rundir.has_labelling():
        return _html(
            lambda n: label_html.message(
                n, who.name, "Nothing to label yet", "The run's owner has not created a task."
            )
        )
    shown = session.next_pair(rundir, who.name)
    if shown is None:
        with open_labelling(rundir) as store:
            done, _pool = store.counts(who.name)
        return _html(
            lambda n: label_html.message(
                n,
                who.name,
                "Your queue is done",
                f"Thank you: {done} labels. Nothing else is waiting for you.",
                undo=done > 0,
            )
        )
    with open_labelling(rundir) as store:
        spec = task_spec(store)
    text = _instructions(rundir, spec)
    return _html(
        lambda n: label_html.pair(n, who.name, shown, text, error), 200 if error is None else 422
    )


def _instructions(rundir: RunDir, spec: TaskSpec) -> str:
    try:
        return human_instructions(rundir, spec)
    except Exception:  # the rubric moved since the run: the page still works
        return "Which of the two responses answers the question better?"


@router.post(PAGE + "/login")
async def log_in(request: Request) -> Response:
    if cross_site(request):
        return _refused()
    form = await request.form()
    token = str(form.get("token") or "").strip()
    who = await run_in_threadpool(authenticate_annotator, request.app.state.engine, token)
    if who is None:
        return _html(lambda n: label_html.login(n, "That is not a live annotator token."), 401)
    response = _back()
    secure = request.url.scheme == "https"
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure, path=PAGE)
    return response


@router.post(PAGE + "/logout")
async def log_out(request: Request) -> Response:
    if cross_site(request):
        return _refused()
    response = _back()
    response.delete_cookie(COOKIE, path=PAGE)
    return response


async def _poster(request: Request) -> Annotator | Response:
    """The annotator a form post comes from, or the page refusing it (another site, no live
    token)."""
    if cross_site(request):
        return _refused()
    who = await run_in_threadpool(_annotator, request)
    if who is None:
        return _html(lambda n: label_html.login(n, "Log in again: your token is not live."), 401)
    return who


@router.post(PAGE + "/answer")
async def answer(request: Request) -> Response:
    who = await _poster(request)
    if isinstance(who, Response):
        return who
    form = await request.form()
    assignment = str(form.get("assignment") or "")
    choice = str(form.get("choice") or "")
    reason = str(form.get("reason") or "") or None
    if not choice:
        return await run_in_threadpool(_current, request, who, "Choose 1, 2, 3 (tie) or s (skip).")
    rundir = _rundir(request, who)
    try:
        await run_in_threadpool(session.answer, rundir, who.name, assignment, choice, reason)
    except LookupError:
        return await run_in_threadpool(
            _current, request, who, "That pair is not waiting for your answer any more."
        )
    except DataError as exc:
        return await run_in_threadpool(_current, request, who, exc.detail)
    request.app.state.refresher.mark(who.run_id, rundir.path)
    return _back()


@router.post(PAGE + "/undo")
async def undo(request: Request) -> Response:
    who = await _poster(request)
    if isinstance(who, Response):
        return who
    rundir = _rundir(request, who)
    undone = await run_in_threadpool(session.undo, rundir, who.name)
    if undone is not None:
        request.app.state.refresher.mark(who.run_id, rundir.path)
    return _back()
