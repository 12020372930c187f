"""Errors as RFC 7807 problem documents (`application/problem+json`).

Every error the service returns has `type`, `title`, `status` and a `detail` that names the fix
(and, for uploads, the file, line and field). Handlers never echo request input back: FastAPI's
default validation errors include the offending value, which could be a secret.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException

from judge.errors import DataError, LimitError
from judge.service.redaction import redact

PROBLEM_JSON = "application/problem+json"
_TYPE_PREFIX = "urn:judge:problem:"
_log = logging.getLogger("judge.service")


class Problem(BaseModel):
    """An error response (RFC 7807)."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    detail: str
    file: str | None = None
    """Uploads: the file (as the client named it) the problem is in."""
    line: int | None = None
    row: int | None = None
    field: str | None = None
    """The config key or table column at fault (e.g. `judges[0].api_key`)."""
    limit: str | None = None
    """A request over one of the server's limits: the setting's name (`max_requests`,
    `max_template_output_kb`, `max_render_s`, `max_render_total_s`, `max_resamples`,
    `max_wait_s`, `max_attempts`)."""
    maximum: float | None = None
    """That setting's value."""
    actual: float | None = None
    """What was asked, when known (e.g. the judge requests the run would make)."""


class ProblemError(Exception):
    """Raise anywhere in a request to answer with a problem document."""

    def __init__(
        self,
        status: int,
        slug: str,
        title: str,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.headers = headers
        self.extra = {k: v for k, v in extra.items() if v is not None}

    def body(self) -> dict[str, Any]:
        return {
            "type": _TYPE_PREFIX + self.slug,
            "title": self.title,
            "status": self.status,
            "detail": redact(self.detail),
            **self.extra,
        }


def problem_response(error: ProblemError) -> JSONResponse:
    return JSONResponse(
        error.body(), status_code=error.status, headers=error.headers, media_type=PROBLEM_JSON
    )


def not_found(what: str = "run") -> ProblemError:
    # One message for "missing" and "someone else's": the two must be indistinguishable.
    return ProblemError(404, "not-found", "Not found", f"no such {what}")


def data_problem(exc: DataError, names: dict[str, str]) -> ProblemError:
    """A `DataError` from the pipeline's loaders as a 422, with server paths replaced by the
    client's file names (`names`: server path -> client name)."""
    client_file = names.get(str(exc.path)) if exc.path else None
    message = rename_paths(str(exc), names)
    return ProblemError(
        422,
        "invalid-data",
        "Invalid uploaded data",
        message,
        file=client_file,
        line=exc.line,
        row=exc.row,
        field=exc.field,
    )


def limit_problem(exc: LimitError, names: dict[str, str]) -> ProblemError:
    """A `LimitError` of the pipeline: 413 when the run is too large (judge requests), 422
    when its rubric is (template output, render time). `limit` names the server setting."""
    status = 413 if exc.limit == "max_requests" else 422
    return ProblemError(
        status,
        "limit-exceeded",
        "Limit exceeded",
        rename_paths(str(exc), names),
        limit=exc.limit,
        maximum=exc.maximum,
        actual=exc.actual,
        field=None if exc.limit == "max_requests" else "rubric",
    )


def rename_paths(message: str, names: dict[str, str]) -> str:
    """Replace server-side paths in a library message by the names the client knows; the
    data directory's layout is not the client's business."""
    for path, name in sorted(names.items(), key=lambda kv: -len(kv[0])):
        message = message.replace(path, name)
    return message


_STATUS_TITLES = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Unauthorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    409: ("conflict", "Conflict"),
    413: ("too-large", "Request too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    422: ("invalid-request", "Invalid request"),
}


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProblemError)
    async def _problem(_request: Request, exc: ProblemError) -> JSONResponse:
        return problem_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        slug, title = _STATUS_TITLES.get(exc.status_code, ("error", "Error"))
        detail = exc.detail if isinstance(exc.detail, str) else title
        if exc.status_code == 404:
            detail = "no such endpoint"
        error = ProblemError(exc.status_code, slug, title, detail, headers=exc.headers)
        return problem_response(error)

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # Locations and messages only: the rejected input is not echoed (it may be a secret).
        errors = [
            {"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", ""))}
            for err in exc.errors()
        ]
        where = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors)
        error = ProblemError(422, "invalid-request", "Invalid request", where, errors=errors)
        return problem_response(error)

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        # The client gets no internals; the log gets the type and a redacted message.
        _log.error(
            "internal error on %s %s: %s: %s",
            request.method,
            request.url.path,
            type(exc).__name__,
            redact(str(exc)),
        )
        error = ProblemError(
            500, "internal", "Internal server error", "internal error; see the server log"
        )
        return problem_response(error)
