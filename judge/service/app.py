"""`create_app(settings)`: the FastAPI application (`judge serve` runs it under uvicorn)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judge import __version__
from judge.service.db import make_engine
from judge.service.label_page import router as label_page
from judge.service.labelling import router as labelling
from judge.service.models import CreateRunFromPaths
from judge.service.owner_page import router as owner_page
from judge.service.problems import (
    PROBLEM_JSON,
    Problem,
    ProblemError,
    install_handlers,
    problem_response,
)
from judge.service.refresher import LabelRefresher
from judge.service.routes import router
from judge.service.settings import ServiceSettings
from judge.service.workers import Scheduler

_log = logging.getLogger("judge.service")

DESCRIPTION = """\
The blinded LLM-as-judge pipeline behind HTTP: submit a run (config + data), watch its
progress, read its judgments, calibration, comparison, summary and report.

Every endpoint but `/healthz` (and this schema) needs `Authorization: Bearer <token>`
(`judge tokens create NAME`). A token sees only the runs it created; an admin token sees all.
Errors are `application/problem+json` documents whose `detail` names the fix.
"""


def create_app(settings: ServiceSettings, *, start_workers: bool = True) -> FastAPI:
    """The service app. `start_workers=False`: no background execution (schema fuzzing,
    route introspection); runs are accepted and stay queued."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.database_url)
    scheduler = Scheduler(engine, settings)
    refresher = LabelRefresher()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if start_workers:
            scheduler.start()
        refresher.start(settings.data_dir / "runs")
        try:
            yield
        finally:
            refresher.stop()
            if start_workers:
                scheduler.stop()
            engine.dispose()

    app = FastAPI(
        title="judge service",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # the interactive pages load scripts from a CDN; the schema suffices
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.scheduler = scheduler
    app.state.refresher = refresher
    install_handlers(app)
    app.include_router(router)
    app.include_router(labelling)
    app.include_router(label_page)
    app.include_router(owner_page)
    app.add_middleware(BodyLimit, max_bytes=settings.max_upload_bytes)
    app.openapi = problem_openapi(app)  # type: ignore[method-assign]
    return app


_ERROR_TITLES = {
    "400": "Bad request",
    "401": "Missing, unknown or revoked bearer token",
    "403": "Forbidden",
    "404": "No such run (or not yours), or not produced yet",
    "409": "Not possible in the run's current state",
    "413": "Request body, or the run it asks for, over the server's limits",
    "415": "Unsupported media type",
    "422": "Invalid request, config or data",
    "503": "Not ready",
}


def problem_openapi(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """The schema as the service answers: every error is an `application/problem+json`
    `Problem` (FastAPI would document its own 422 body, which the service never sends), and
    every operation lists the errors any request to it can get (401, 413, 422)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for unused in ("HTTPValidationError", "ValidationError"):
            components.pop(unused, None)
        components["Problem"] = Problem.model_json_schema()
        # The JSON form of POST /v1/runs (its multipart form is described inline).
        components["CreateRunFromPaths"] = CreateRunFromPaths.model_json_schema()
        problem = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}
        for item in schema["paths"].values():
            for operation in item.values():
                responses = operation.setdefault("responses", {})
                if operation.get("security"):
                    responses.setdefault("401", {})
                if operation.get("parameters") or operation.get("requestBody"):
                    responses.setdefault("422", {})
                if operation.get("requestBody"):
                    responses.setdefault("413", {})
                for code, response in responses.items():
                    if code[0] in "45":
                        response["description"] = _ERROR_TITLES.get(code, "Error")
                        response["content"] = problem
        app.openapi_schema = schema
        return schema

    return openapi


class _TooLarge(StarletteHTTPException):
    """Raised from `receive` once a body passes the limit. An HTTPException, so FastAPI's
    body reading passes it on (it turns other exceptions into a 400)."""


class BodyLimit:
    """413 for bodies over `max_bytes`: at once when Content-Length says so, else as soon as
    the streamed body passes the limit (before it is spooled to disk in full)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        limit_mb = self.max_bytes / (1024 * 1024)
        detail = f"the request body is larger than this server's limit of {limit_mb:g} MB"
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _drain(receive, self.max_bytes)
            await problem_response(_too_large(detail))(scope, receive, send)
            return
        received = 0
        started = False

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge(413, detail)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, tracked)
        except _TooLarge as exc:
            if started:
                raise
            await problem_response(_too_large(str(exc.detail)))(scope, receive, send)


def _too_large(detail: str) -> ProblemError:
    return ProblemError(413, "too-large", "Request too large", detail)


async def _drain(receive: Receive, max_bytes: int) -> None:
    """Read (and drop) a declared-too-large body up to a bound, so the client, still sending,
    reads the 413 instead of a reset connection."""
    budget = max(max_bytes, 64 << 20)
    seen = 0
    while seen <= budget:
        message: dict[str, Any] = dict(await receive())
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body", False):
            return
