"""OpenAI's Batch API on the simulator: create from an uploaded JSONL file, retrieve, list,
cancel; the results as an output file and an error file, written when a look first finds the
batch ended.

Input lines are validated as the real API does (a JSON object, a unique `custom_id`, method
POST, the batch's endpoint as url, a valid chat request as body, one model for the whole file);
any error fails the whole batch, with every error (up to 100) in `errors.data`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from aiohttp import web

from judge.simulator.batches import FAILED, INVALID, OK, ROUTES, Batch, Stager, derived_id
from judge.simulator.control import (
    ApiError,
    Host,
    control_route,
    json_object,
    json_response,
    page_of,
    query_limit,
)
from judge.simulator.openai_files import StoredFile
from judge.simulator.replies import openai_completion
from judge.simulator.wire import ROUTE_PATHS, BadRequest, new_id, parse_openai

ENDPOINT = ROUTE_PATHS["openai"]
"""The one endpoint the simulator batches."""
_ENDPOINTS = frozenset(
    {
        "/v1/responses",
        "/v1/chat/completions",
        "/v1/embeddings",
        "/v1/completions",
        "/v1/moderations",
        "/v1/images/generations",
        "/v1/images/edits",
        "/v1/videos",
    }
)
MAX_REQUESTS = 50_000
_MAX_ERRORS = 100
_WINDOW_S = 86_400
_YIELD_EVERY = 500
"""Lines between two returns to the event loop while a large file is validated."""
_CHUNK = 1 << 20
_METADATA_KEY = re.compile(r"^.{1,64}$", re.DOTALL)
_EXPIRED = {
    "code": "batch_expired",
    "message": "This request could not be executed before the completion window expired.",
}
_CANCELLED = {
    "code": "batch_cancelled",
    "message": "This request was not executed because the batch was cancelled.",
}
_LINE_ERRORS = {
    FAILED: (500, "server_error", "The server had an error processing this request (simulated)."),
    INVALID: (400, "invalid_request_error", "This request was refused as invalid (simulated)."),
}
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


def add_batch_routes(app: web.Application, host: Host) -> None:
    routes = _BatchRoutes(host)
    base = ROUTES["openai"]
    for method, path, handler in (
        ("POST", base, routes.create),
        ("GET", base, routes.list),
        ("GET", base + "/{batch_id}", routes.retrieve),
        ("POST", base + "/{batch_id}/cancel", routes.cancel),
    ):
        app.router.add_route(method, path, control_route(host, "openai", handler))


class _BatchRoutes:
    def __init__(self, host: Host) -> None:
        self.host = host

    async def create(self, request: web.Request) -> web.StreamResponse:
        host = self.host
        body = await json_object(request)
        stored = host.files.get(_required_string(body, "input_file_id"))
        if stored.purpose != "batch":
            raise ApiError(
                "bad_request",
                f"File {stored.file_id} has purpose {stored.purpose!r}; upload it with "
                "purpose 'batch'.",
                "input_file_id",
            )
        endpoint = _required_string(body, "endpoint")
        if endpoint not in _ENDPOINTS:
            raise ApiError("bad_request", f"Invalid endpoint {endpoint!r}.", "endpoint")
        if endpoint != ENDPOINT:
            raise ApiError(
                "bad_request", f"the simulator batches {ENDPOINT} only, not {endpoint}", "endpoint"
            )
        window = _required_string(body, "completion_window")
        if window != "24h":
            raise ApiError(
                "bad_request", "completion_window: only '24h' is supported", "completion_window"
            )
        metadata = _metadata(body.get("metadata"))

        config, book = host.config, host.book  # bound once: a /_reset may come meanwhile
        stager = Stager(config, host.faults, book)
        errors, model = await _validate(stored, stager)
        now = time.time()
        extra = {
            "input_file_id": stored.file_id,
            "metadata": metadata,
            "completion_window": window,
            "endpoint": endpoint,
            "model": model,
        }
        batch_id = new_id("batch_")
        if errors:
            batch = book.failed(batch_id, now, errors, extra)
        else:
            batch = book.open("openai", batch_id, stager, host.cache, now, extra)
        if config.batch_create_latency_s > 0:
            await asyncio.sleep(config.batch_create_latency_s)
        return json_response(self._object(batch, now, fresh=True))

    async def retrieve(self, request: web.Request) -> web.StreamResponse:
        batch = self._batch(request)
        return json_response(self._object(batch, time.time()))

    async def list(self, request: web.Request) -> web.StreamResponse:
        book = self.host.book
        limit = query_limit(request, 20, 100)
        page, more = page_of(book.newest_first("openai"), limit, request.query.get("after"))
        now = time.time()
        data = []
        for batch_id in page:
            batch = book.get("openai", batch_id)
            if batch is not None:
                data.append(self._object(batch, now))
        return json_response(
            {
                "object": "list",
                "data": data,
                "first_id": page[0] if page else None,
                "last_id": page[-1] if page else None,
                "has_more": more,
            }
        )

    async def cancel(self, request: web.Request) -> web.StreamResponse:
        batch = self._batch(request)
        now = time.time()
        status = batch.status(now)
        if status in _ENDED:
            raise ApiError("conflict", f"Cannot cancel a batch with status '{status}'.")
        batch.cancel(now)
        return json_response(self._object(batch, now, fresh=True))

    def _batch(self, request: web.Request) -> Batch:
        batch_id = request.match_info["batch_id"]
        batch = self.host.book.get("openai", batch_id)
        if batch is None:
            raise ApiError("not_found", f"No batch found with id '{batch_id}'.", "batch_id")
        return batch

    def _object(self, batch: Batch, now: float, *, fresh: bool = False) -> dict[str, Any]:
        status = batch.status(now, fresh=fresh)
        if status in _ENDED and batch.replies is not None and not batch.errors:
            self._write_results(batch)
        view = batch.view(now, fresh=fresh)
        completed = batch.codes[: view.done].count(OK)
        # Once ended, the requests that never ran (expired, cancelled) count as failed too.
        failed = (batch.size if view.phase == "ended" else view.done) - completed
        started = not batch.errors and status != "validating"
        ends = batch.ends_at

        def stamp(at: float | None, shown: bool = True) -> int | None:
            return int(at) if at is not None and shown else None

        def reached(at: float) -> bool:
            return started and at <= now and at <= ends

        in_progress_at, finalizing_at = batch.phase_times
        extra = batch.extra
        return {
            "id": batch.batch_id,
            "object": "batch",
            "endpoint": extra["endpoint"],
            "model": extra["model"],
            "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
            "input_file_id": extra["input_file_id"],
            "completion_window": extra["completion_window"],
            "status": status,
            "output_file_id": extra.get("output_file_id"),
            "error_file_id": extra.get("error_file_id"),
            "created_at": int(batch.created),
            "in_progress_at": stamp(in_progress_at, reached(in_progress_at)),
            "expires_at": int(batch.created) + _WINDOW_S,
            "finalizing_at": stamp(finalizing_at, reached(finalizing_at)),
            "completed_at": stamp(ends, status == "completed"),
            "failed_at": stamp(ends, status == "failed"),
            "expired_at": stamp(ends, status == "expired"),
            "cancelling_at": stamp(batch.canceled_at),
            "cancelled_at": stamp(ends, status == "cancelled"),
            "request_counts": {"total": batch.size, "completed": completed, "failed": failed},
            "metadata": extra["metadata"],
            "usage": extra.get("usage") or _usage(0, 0, 0),
        }

    def _write_results(self, batch: Batch) -> None:
        """The output and error files of an ended batch, written once; the replies are then
        dropped (the files hold them)."""
        replies = batch.replies
        assert replies is not None
        cut = batch.view(batch.ends_at).done
        created = int(batch.ends_at)
        output = _ChunkWriter()
        errors = _ChunkWriter()
        tokens = [0, 0, 0]
        for index, custom_id in enumerate(batch.custom_ids):
            line: dict[str, Any] = {"id": derived_id("batch_req_", batch.batch_id, index)}
            line["custom_id"] = custom_id
            code = batch.codes[index]
            reply = replies[index]
            if index >= cut:
                line["response"] = None
                line["error"] = _CANCELLED if batch.canceled_at is not None else _EXPIRED
                errors.add(line)
                continue
            request_id = derived_id("req_", batch.batch_id, index)
            if code == OK and reply is not None:
                body = openai_completion(
                    reply, derived_id("chatcmpl-", batch.batch_id, index), created, "default"
                )
                tokens[0] += reply.prompt_tokens
                tokens[1] += reply.cache_read
                tokens[2] += reply.output_tokens
                line["response"] = {"status_code": 200, "request_id": request_id, "body": body}
                line["error"] = None
                output.add(line)
                continue
            status, kind, message = _LINE_ERRORS[code]
            error = {"message": message, "type": kind, "param": None, "code": None}
            line["response"] = {
                "status_code": status,
                "request_id": request_id,
                "body": {"error": error},
            }
            line["error"] = None
            errors.add(line)
        files = self.host.files
        name = batch.batch_id
        if output.lines:
            batch.extra["output_file_id"] = files.add(
                f"{name}_output.jsonl", "batch_output", output.done()
            ).file_id
        if errors.lines:
            batch.extra["error_file_id"] = files.add(
                f"{name}_error.jsonl", "batch_output", errors.done()
            ).file_id
        batch.extra["usage"] = _usage(*tokens)
        batch.replies = None


class _ChunkWriter:
    """JSONL lines gathered into chunks of about a megabyte."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.lines = 0
        self._pending: list[bytes] = []
        self._size = 0

    def add(self, line: dict[str, Any]) -> None:
        encoded = json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        self._pending.append(encoded)
        self._size += len(encoded)
        self.lines += 1
        if self._size >= _CHUNK:
            self._flush()

    def _flush(self) -> None:
        self.chunks.append(b"".join(self._pending))
        self._pending, self._size = [], 0

    def done(self) -> list[bytes]:
        if self._pending:
            self._flush()
        return self.chunks


async def _validate(stored: StoredFile, stager: Stager) -> tuple[list[dict[str, Any]], str | None]:
    """(errors, the file's model), judging each valid line into `stager` until an error."""
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    model: str | None = None
    count = 0

    def error(code: str, message: str, line: int | None, param: str | None = None) -> None:
        if len(errors) < _MAX_ERRORS:
            errors.append({"code": code, "message": message, "param": param, "line": line})

    for number, raw in enumerate(stored.lines(), start=1):
        if number % _YIELD_EVERY == 0:
            await asyncio.sleep(0)
        if not raw.strip():
            continue
        count += 1
        try:
            line = json.loads(raw)
        except ValueError:
            error("invalid_json_line", "This line is not parseable as valid JSON.", number)
            continue
        if not isinstance(line, dict):
            error("invalid_json_line", "Each line must be a JSON object.", number)
            continue
        custom_id = line.get("custom_id")
        if not isinstance(custom_id, str) or not custom_id:
            error("missing_required_parameter", "Missing 'custom_id'.", number, "custom_id")
            continue
        if custom_id in seen:
            message = f"The custom_id '{custom_id}' is not unique within the batch."
            error("duplicate_custom_id", message, number, "custom_id")
            continue
        seen.add(custom_id)
        if line.get("method") != "POST":
            error("invalid_method", "Only the POST method is supported.", number, "method")
            continue
        if line.get("url") != ENDPOINT:
            message = (
                f"The provided URL {line.get('url')!r} does not match the batch endpoint "
                f"'{ENDPOINT}'."
            )
            error("url_mismatch", message, number, "url")
            continue
        try:
            call = parse_openai(line.get("body"))
        except BadRequest as exc:
            where = f"body.{exc.param}" if exc.param else "body"
            error("invalid_request", exc.message, number, where)
            continue
        if model is None:
            model = call.model
        elif call.model != model:
            message = (
                f"The provided model {call.model!r} does not match the model of the batch "
                f"({model!r}); a batch holds requests to one model."
            )
            error("model_mismatch", message, number, "body.model")
            continue
        # Past an error or the request limit nothing is judged: the batch will fail.
        if not errors and count <= MAX_REQUESTS:
            stager.add(custom_id, call)
    if count == 0:
        error("empty_file", "The batch input file is empty.", None)
    elif count > MAX_REQUESTS:
        message = f"The batch holds {count} requests; at most {MAX_REQUESTS} are allowed."
        error("too_many_tasks", message, None)
    return errors, model


def _required_string(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise ApiError("bad_request", f"Missing required parameter: '{name}'.", name)
    return value


def _metadata(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) > 16:
        raise ApiError("bad_request", "metadata: at most 16 string pairs", "metadata")
    for key, item in value.items():
        if not _METADATA_KEY.match(key) or not isinstance(item, str) or len(item) > 512:
            raise ApiError(
                "bad_request",
                "metadata: keys of at most 64 characters, string values of at most 512",
                "metadata",
            )
    return dict(value)


def _usage(prompt: int, cached: int, output: int) -> dict[str, Any]:
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + output,
    }
