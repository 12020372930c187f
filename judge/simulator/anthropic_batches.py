"""Anthropic's Message Batches on the simulator: create, retrieve, list, cancel, results.

The create body (up to 256 MB, 100,000 requests) is decoded one request at a time as it
arrives; any invalid request refuses the whole create with a 400, as the real API does. Results
are streamed as JSONL from the batch's compact items, once it has ended; `results_url` is
absolute, on the host the client called (the SDK uses an absolute URL as it is).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from judge.simulator.batches import FAILED, INVALID, OK, ROUTES, Batch, Stager, derived_id
from judge.simulator.control import (
    RESPONSE_HEADERS,
    ApiError,
    Host,
    control_route,
    json_response,
    page_of,
    query_limit,
)
from judge.simulator.json_stream import TooLarge, array_items, write_lines
from judge.simulator.replies import anthropic_message
from judge.simulator.wire import BadRequest, new_id, parse_anthropic

MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1024**2
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_WINDOW_S = 86_400
_YIELD_EVERY = 500
_ERRORED = {
    FAILED: ("api_error", "Internal server error (simulated)."),
    INVALID: ("invalid_request_error", "This request was refused as invalid (simulated)."),
}


def add_message_batch_routes(app: web.Application, host: Host) -> None:
    routes = _MessageBatchRoutes(host)
    base = ROUTES["anthropic"]
    for method, path, handler in (
        ("POST", base, routes.create),
        ("GET", base, routes.list),
        ("GET", base + "/{batch_id}", routes.retrieve),
        ("POST", base + "/{batch_id}/cancel", routes.cancel),
        ("GET", base + "/{batch_id}/results", routes.results),
    ):
        app.router.add_route(method, path, control_route(host, "anthropic", handler))


class _MessageBatchRoutes:
    def __init__(self, host: Host) -> None:
        self.host = host

    async def create(self, request: web.Request) -> web.StreamResponse:
        host = self.host
        config, book = host.config, host.book  # bound once: a /_reset may come meanwhile
        stager = Stager(config, host.faults, book)
        seen: set[str] = set()
        count = 0
        try:
            async for item in array_items(request.content, "requests", MAX_BYTES):
                _stage(stager, item, count, seen)
                count += 1
                if count > MAX_REQUESTS:
                    raise BadRequest(f"requests: a batch holds at most {MAX_REQUESTS} requests")
                if count % _YIELD_EVERY == 0:
                    await asyncio.sleep(0)
        except TooLarge:
            raise ApiError(
                "too_large", f"Request exceeds the maximum size of {MAX_BYTES} bytes."
            ) from None
        except BadRequest as exc:
            raise ApiError("bad_request", exc.message) from None
        if count == 0:
            raise ApiError("bad_request", "requests: List should have at least 1 item")
        now = time.time()
        batch = book.open("anthropic", new_id("msgbatch_"), stager, host.cache, now)
        if config.batch_create_latency_s > 0:
            await asyncio.sleep(config.batch_create_latency_s)
        return json_response(_object(batch, now, _origin(request), fresh=True))

    async def retrieve(self, request: web.Request) -> web.StreamResponse:
        return json_response(_object(self._batch(request), time.time(), _origin(request)))

    async def list(self, request: web.Request) -> web.StreamResponse:
        book = self.host.book
        page, more = page_of(
            book.newest_first("anthropic"),
            query_limit(request, 20, 1000),
            request.query.get("after_id"),
            request.query.get("before_id"),
        )
        now, origin = time.time(), _origin(request)
        data = [_object(b, now, origin) for i in page if (b := book.get("anthropic", i))]
        return json_response(
            {
                "data": data,
                "has_more": more,
                "first_id": page[0] if page else None,
                "last_id": page[-1] if page else None,
            }
        )

    async def cancel(self, request: web.Request) -> web.StreamResponse:
        batch = self._batch(request)
        now = time.time()
        if batch.status(now) == "ended":
            raise ApiError(
                "bad_request", f"Batch {batch.batch_id} has ended and can no longer be canceled."
            )
        batch.cancel(now)
        return json_response(_object(batch, now, _origin(request), fresh=True))

    async def results(self, request: web.Request) -> web.StreamResponse:
        batch = self._batch(request)
        if batch.status(time.time()) != "ended":
            raise ApiError(
                "bad_request",
                f"Batch {batch.batch_id} has not ended yet; its results are available once "
                "processing_status is 'ended'.",
            )
        response = web.StreamResponse(headers=request[RESPONSE_HEADERS])
        response.content_type = "application/binary"
        await response.prepare(request)
        return await write_lines(response, _result_lines(batch))

    def _batch(self, request: web.Request) -> Batch:
        batch_id = request.match_info["batch_id"]
        batch = self.host.book.get("anthropic", batch_id)
        if batch is None:
            raise ApiError("not_found", f"Message batch {batch_id!r} not found.")
        return batch


def _stage(stager: Stager, item: Any, index: int, seen: set[str]) -> None:
    where = f"requests.{index}"
    if not isinstance(item, dict):
        raise BadRequest(f"{where}: Input should be an object")
    custom_id = item.get("custom_id")
    if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
        raise BadRequest(f"{where}.custom_id: String should match pattern '{_CUSTOM_ID.pattern}'")
    if custom_id in seen:
        raise BadRequest(
            f"{where}.custom_id: {custom_id!r} is used more than once; custom_id must be unique "
            "within a batch"
        )
    seen.add(custom_id)
    try:
        call = parse_anthropic(item.get("params"))
    except BadRequest as exc:
        raise BadRequest(f"{where}.params: {exc.message}") from None
    stager.add(custom_id, call)


def _object(batch: Batch, now: float, origin: str, *, fresh: bool = False) -> dict[str, Any]:
    status = batch.status(now, fresh=fresh)
    counts = {"processing": batch.size, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    ended = status == "ended"
    if ended:
        # Requests move out of `processing` only once the whole batch has ended.
        states = batch.counts(now)
        counts = {
            "processing": 0,
            "succeeded": states["succeeded"],
            "errored": states["failed"] + states["invalid"],
            "canceled": states["canceled"],
            "expired": states["expired"],
        }
    return {
        "id": batch.batch_id,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": counts,
        "ended_at": _rfc3339(batch.ends_at) if ended else None,
        "created_at": _rfc3339(batch.created),
        "expires_at": _rfc3339(batch.created + _WINDOW_S),
        "archived_at": None,
        "cancel_initiated_at": _rfc3339(batch.canceled_at) if batch.canceled_at else None,
        "results_url": f"{origin}{ROUTES['anthropic']}/{batch.batch_id}/results" if ended else None,
    }


def _result_lines(batch: Batch) -> Iterator[bytes]:
    """One JSONL line per request, in input order."""
    replies = batch.replies or []
    cut = batch.view(batch.ends_at).done
    never_ran = {"type": "canceled" if batch.canceled_at is not None else "expired"}
    for index, custom_id in enumerate(batch.custom_ids):
        result: dict[str, Any]
        reply = replies[index] if index < len(replies) else None
        if index >= cut:
            result = never_ran
        elif batch.codes[index] == OK and reply is not None:
            message_id = derived_id("msg_", batch.batch_id, index)
            tool_id = derived_id("toolu_", batch.batch_id, index)
            message = anthropic_message(reply, message_id, tool_id, service_tier="batch")
            result = {"type": "succeeded", "message": message}
        else:
            kind, text = _ERRORED[batch.codes[index]]
            error = {"type": "error", "error": {"type": kind, "message": text}}
            result = {"type": "errored", "error": error}
        line = {"custom_id": custom_id, "result": result}
        yield json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _origin(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def _rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
