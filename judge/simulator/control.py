"""What every batch and file route shares: the API key check, the injected control-route faults
(`batch_api_rate_429`, `batch_api_rate_500`), errors as the provider spells them, list pages.

A handler raises `ApiError` for a refusal; `control_route` turns it into the provider's error
response, so the handlers hold only what their route does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web

from judge.simulator.wire import Route, error_body, error_status, has_key, new_id

if TYPE_CHECKING:
    from judge.config.simulator import SimulatorConfig
    from judge.simulator.batches import BatchBook
    from judge.simulator.openai_files import FileStore
    from judge.simulator.prefix_cache import PromptCache
    from judge.simulator.replies import Faults

_JSON = "application/json"
RESPONSE_HEADERS = web.RequestKey("response_headers", dict)
"""Where a streaming handler finds the request-id header to send."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Host(Protocol):
    """The simulator state a control route reads; looked up on every call, since `/_reset`
    swaps in fresh state and `/_config` a new config."""

    @property
    def config(self) -> SimulatorConfig: ...

    @property
    def faults(self) -> Faults: ...

    @property
    def cache(self) -> PromptCache: ...

    @property
    def book(self) -> BatchBook: ...

    @property
    def files(self) -> FileStore: ...


class ApiError(Exception):
    """A refusal as the real API would send it: `kind` is a `wire` error kind (`bad_request`,
    `not_found`, `conflict`, `too_large`)."""

    def __init__(self, kind: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.param = param


def control_route(host: Host, route: Route, handler: Handler) -> Handler:
    """`handler` behind the key check and the control-route faults. A faulted call does
    nothing: no file is stored, no batch created."""

    async def wrapped(request: web.Request) -> web.StreamResponse:
        request_id = new_id("req_")
        headers = {"x-request-id" if route == "openai" else "request-id": request_id}
        book = host.book
        if not has_key(request.headers, route):
            book.api_calls["unauthorized"] += 1
            return error_response("unauthorized", route, request_id, headers)
        config = host.config
        if config.batch_api_rate_429 or config.batch_api_rate_500:
            draw = book.control_draw()
            if draw < config.batch_api_rate_429:
                book.api_calls["429"] += 1
                return rate_limited(route, request_id, headers, config.retry_after_s)
            if draw < config.batch_api_rate_429 + config.batch_api_rate_500:
                book.api_calls["500"] += 1
                return error_response("500", route, request_id, headers)
        # For streamed responses, which send their headers before the wrapper sees them.
        request[RESPONSE_HEADERS] = headers
        try:
            response = await handler(request)
        except ApiError as exc:
            book.api_calls[exc.kind] += 1
            return error_response(exc.kind, route, request_id, headers, exc.message, exc.param)
        book.api_calls["ok"] += 1
        if not response.prepared:
            response.headers.update(headers)
        return response

    return wrapped


async def json_object(request: web.Request) -> dict[str, Any]:
    try:
        payload = json.loads(await request.read())
    except ValueError:
        raise ApiError("bad_request", "the body is not valid JSON") from None
    if not isinstance(payload, dict):
        raise ApiError("bad_request", "the request body must be a JSON object")
    return payload


def json_response(body: Any) -> web.Response:
    return web.Response(text=json.dumps(body), content_type=_JSON)


def query_limit(request: web.Request, default: int, maximum: int) -> int:
    raw = request.query.get("limit")
    if raw is None:
        return default
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if not 1 <= limit <= maximum:
        raise ApiError("bad_request", f"limit: must be an integer from 1 to {maximum}", "limit")
    return limit


def page_of(
    ids: Sequence[str], limit: int, after: str | None = None, before: str | None = None
) -> tuple[list[str], bool]:
    """(a page of `ids`, whether more lie beyond it) from ids in list order: the `limit` right
    after `after`, or right before `before` (more then means more before the page)."""
    position = {id_: i for i, id_ in enumerate(ids)}
    for cursor in (after, before):
        if cursor is not None and cursor not in position:
            raise ApiError("bad_request", f"unknown pagination cursor {cursor!r}")
    if before is not None:
        end = position[before]
        start = max(0, end - limit)
        return list(ids[start:end]), start > 0
    start = position[after] + 1 if after is not None else 0
    return list(ids[start : start + limit]), start + limit < len(ids)


def error_response(
    kind: str,
    route: Route,
    request_id: str,
    headers: dict[str, str],
    message: str = "",
    param: str | None = None,
    retry_s: float | None = None,
) -> web.Response:
    return web.Response(
        body=error_body(kind, route, request_id, message, param, retry_s),
        status=error_status(kind, route),
        content_type=_JSON,
        headers=headers,
    )


def rate_limited(
    route: Route, request_id: str, headers: dict[str, str], seconds: float
) -> web.Response:
    """A 429 saying to wait `seconds` as the provider says it: Retry-After headers (OpenAI,
    Anthropic), or a `RetryInfo` detail in the body and no header (Gemini)."""
    if route == "gemini":
        return error_response("429", route, request_id, headers, retry_s=seconds)
    return error_response("429", route, request_id, {**headers, **retry_after(seconds)})


def retry_after(seconds: float) -> dict[str, str]:
    # Retry-After is whole seconds by the HTTP spec; both SDKs prefer the finer retry-after-ms.
    return {
        "retry-after": str(max(0, math.ceil(seconds))),
        "retry-after-ms": str(max(0, round(seconds * 1000))),
    }
