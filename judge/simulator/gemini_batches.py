"""Gemini's Batch API on the simulator, with as much of its Files API as batches need.

Files: the SDK's resumable upload (`POST /upload/v1beta/files` with `X-Goog-Upload-Command:
start` answers an `X-Goog-Upload-URL`; the bytes follow in chunks to that URL, the last one
with `upload, finalize`), list, get, and download (`/download/v1beta/files/{id}:download`).

Batches: `POST /v1beta/models/{model}:batchGenerateContent` takes the requests inline
(`inputConfig.requests.requests`, each `{request, metadata: {key}}`, under 20 MB) or as an
uploaded JSONL file (`inputConfig.fileName`, each line `{key, request}`); any invalid request
refuses the whole create with a 400. A batch is an Operation whose `metadata` is the batch
(`state` BATCH_STATE_PENDING / RUNNING / SUCCEEDED / CANCELLED / EXPIRED, `batchStats`,
`output`). Once it has ended its results are inline (`output.inlinedResponses`) or a JSONL
file (`output.responsesFile`, each line `{key, response}` or `{key, error}`), in input order;
a cancelled or expired batch lists only the requests it did before it ended.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from judge.simulator.batches import FAILED, INVALID, OK, Batch, Stager, derived_id
from judge.simulator.control import (
    RESPONSE_HEADERS,
    ApiError,
    Host,
    control_route,
    error_response,
    json_object,
    json_response,
    page_of,
)
from judge.simulator.json_stream import write_lines
from judge.simulator.openai_files import StoredFile
from judge.simulator.replies import gemini_response
from judge.simulator.wire import BadRequest, new_id, parse_gemini

MAX_FILE_BYTES = 2 * 1024**3
MAX_INLINE_BYTES = 20 * 1024**2
_PURPOSE = "gemini"
"""How Gemini's files are told from OpenAI's in the shared file store."""
_OUTPUT_PREFIX = "batchout-"
_BATCH_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"
_OUTPUT_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"
_ENDED = frozenset({"BATCH_STATE_SUCCEEDED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED"})
_FILE_TTL_S = 48 * 3600
_CHUNK = 256 * 1024
_ITEM_ERRORS = {
    FAILED: {"code": 13, "message": "Internal error encountered (simulated)."},
    INVALID: {"code": 3, "message": "Request contains an invalid argument (simulated)."},
}
"""google.rpc.Status per failed item: INTERNAL (worth another try), INVALID_ARGUMENT (final)."""


def add_gemini_batch_routes(app: web.Application, host: Host) -> None:
    routes = _GeminiRoutes(host)
    start = control_route(host, "gemini", routes.start_upload)

    async def upload(request: web.Request) -> web.StreamResponse:
        # The upload URL is the session's credential: its chunks carry no API key.
        if "upload_id" not in request.query:
            return await start(request)
        try:
            return await routes.upload_chunk(request)
        except ApiError as exc:
            return error_response(exc.kind, "gemini", new_id("req_"), {}, exc.message)

    app.router.add_post("/upload/v1beta/files", upload)
    for method, path, handler in (
        ("GET", "/v1beta/files", routes.list_files),
        ("GET", "/v1beta/files/{file_id}", routes.get_file),
        ("GET", "/download/v1beta/files/{file_id}:download", routes.download),
        ("POST", "/v1beta/models/{model}:batchGenerateContent", routes.create),
        ("GET", "/v1beta/batches", routes.list),
        ("GET", "/v1beta/batches/{batch_id}", routes.get),
        ("POST", "/v1beta/batches/{batch_id}:cancel", routes.cancel),
    ):
        app.router.add_route(method, path, control_route(host, "gemini", handler))


@dataclass(slots=True)
class _Upload:
    display_name: str
    mime_type: str
    size: int
    chunks: list[bytes] = field(default_factory=list)
    received: int = 0


class _GeminiRoutes:
    def __init__(self, host: Host) -> None:
        self.host = host
        self._uploads: dict[str, _Upload] = {}

    # -- files ----------------------------------------------------------------------------------

    async def upload_chunk(self, request: web.Request) -> web.StreamResponse:
        upload_id = request.query["upload_id"]
        upload = self._uploads.get(upload_id)
        if upload is None:
            raise ApiError("not_found", f"unknown upload_id {upload_id!r}")
        command = request.headers.get("X-Goog-Upload-Command", "")
        offset = request.headers.get("X-Goog-Upload-Offset", "")
        if offset != str(upload.received):
            raise ApiError(
                "bad_request", f"X-Goog-Upload-Offset {offset!r}: expected {upload.received}"
            )
        while chunk := await request.content.read(_CHUNK):
            upload.received += len(chunk)
            if upload.received > upload.size:
                raise ApiError("bad_request", "more bytes than X-Goog-Upload-Header-Content-Length")
            upload.chunks.append(chunk)
        if "finalize" not in command:
            return web.Response(headers={"X-Goog-Upload-Status": "active"})
        del self._uploads[upload_id]
        if upload.received != upload.size:
            raise ApiError("bad_request", f"received {upload.received} bytes of {upload.size}")
        stored = self.host.files.add(upload.display_name, _PURPOSE, upload.chunks, upload.mime_type)
        body = {"file": _file_object(stored, _origin(request))}
        return web.Response(
            text=json.dumps(body),
            content_type="application/json",
            headers={"X-Goog-Upload-Status": "final"},
        )

    async def start_upload(self, request: web.Request) -> web.StreamResponse:
        headers = request.headers
        if headers.get("X-Goog-Upload-Protocol") != "resumable" or (
            headers.get("X-Goog-Upload-Command") != "start"
        ):
            raise ApiError("bad_request", "expected X-Goog-Upload-Protocol: resumable, start")
        try:
            size = int(headers.get("X-Goog-Upload-Header-Content-Length", ""))
        except ValueError:
            raise ApiError(
                "bad_request", "X-Goog-Upload-Header-Content-Length is required"
            ) from None
        if size > MAX_FILE_BYTES:
            raise ApiError("too_large", "File is too large (2 GB at most).")
        meta = (await json_object(request)).get("file") or {}
        upload_id = new_id("")
        self._uploads[upload_id] = _Upload(
            display_name=str(meta.get("displayName") or meta.get("display_name") or "upload"),
            mime_type=headers.get("X-Goog-Upload-Header-Content-Type", "application/jsonl"),
            size=size,
        )
        url = f"{_origin(request)}/upload/v1beta/files?upload_id={upload_id}"
        url += "&upload_protocol=resumable"
        return web.Response(
            text="{}",
            content_type="application/json",
            headers={"X-Goog-Upload-URL": url, "X-Goog-Upload-Status": "active"},
        )

    async def list_files(self, request: web.Request) -> web.StreamResponse:
        files = [f for f in reversed(self.host.files.files.values()) if f.purpose == _PURPOSE]
        ids = [f.file_id for f in files]
        page, more = page_of(ids, _page_size(request), request.query.get("pageToken") or None)
        origin = _origin(request)
        body: dict[str, Any] = {
            "files": [_file_object(self.host.files.files[i], origin) for i in page]
        }
        if more and page:
            body["nextPageToken"] = page[-1]
        return json_response(body)

    async def get_file(self, request: web.Request) -> web.StreamResponse:
        file_id = request.match_info["file_id"]
        if file_id.endswith(":download"):
            # The SDK downloads from here rather than from /download/v1beta/...
            return await self._download(request, file_id.removesuffix(":download"))
        stored = self._file(file_id)
        return json_response(_file_object(stored, _origin(request)))

    async def download(self, request: web.Request) -> web.StreamResponse:
        return await self._download(request, request.match_info["file_id"])

    async def _download(self, request: web.Request, file_id: str) -> web.StreamResponse:
        if file_id.startswith(_OUTPUT_PREFIX):
            batch = self._batch(file_id.removeprefix(_OUTPUT_PREFIX))
            if batch.status(time.time()) not in _ENDED:
                raise ApiError("not_found", f"File files/{file_id} does not exist yet.")
            lines: Iterator[bytes] = _result_lines(batch)
        else:
            lines = iter(self._file(file_id).chunks)
        response = web.StreamResponse(headers=request[RESPONSE_HEADERS])
        response.content_type = "application/octet-stream"
        await response.prepare(request)
        return await write_lines(response, lines)

    def _file(self, file_id: str) -> StoredFile:
        stored = self.host.files.files.get(file_id)
        if stored is None or stored.purpose != _PURPOSE:
            raise ApiError("not_found", f"File files/{file_id} does not exist.")
        return stored

    # -- batches --------------------------------------------------------------------------------

    async def create(self, request: web.Request) -> web.StreamResponse:
        host = self.host
        config, book = host.config, host.book  # bound once: a /_reset may come meanwhile
        model = request.match_info["model"].removeprefix("models/")
        spec = (await json_object(request)).get("batch")
        if not isinstance(spec, dict) or not isinstance(spec.get("inputConfig"), dict):
            raise ApiError("bad_request", "batch.inputConfig is required")
        source = spec["inputConfig"]
        stager = Stager(config, host.faults, book)
        try:
            inline = _stage_all(stager, self._items(source), model)
        except BadRequest as exc:
            raise ApiError("bad_request", exc.message) from None
        now = time.time()
        extra = {
            "model": model,
            "display_name": str(spec.get("displayName") or ""),
            "input": {"fileName": source["fileName"]} if not inline else {"requests": "inline"},
            "inline": inline,
        }
        batch = book.open("gemini", new_id(""), stager, host.cache, now, extra)
        return json_response(_operation(batch, now, _origin(request), fresh=True))

    def _items(self, source: dict[str, Any]) -> Iterator[tuple[int, Any]]:
        """(index, {key, request}) per request of an inline or file source."""
        file_name = source.get("fileName")
        if isinstance(file_name, str):
            stored = self._file(file_name.removeprefix("files/"))
            for index, line in enumerate(x for x in stored.lines() if x.strip()):
                try:
                    yield index, json.loads(line)
                except ValueError:
                    raise BadRequest(f"line {index + 1} of {file_name} is not JSON") from None
            return
        requests = (source.get("requests") or {}).get("requests")
        if not isinstance(requests, list) or not requests:
            raise BadRequest("batch.inputConfig needs fileName or requests.requests")
        if len(json.dumps(requests)) > MAX_INLINE_BYTES:
            raise BadRequest("inline requests exceed 20 MB; upload them as a JSONL file")
        for index, item in enumerate(requests):
            item = item if isinstance(item, dict) else {}
            key = (item.get("metadata") or {}).get("key", str(index))
            yield index, {"key": key, "request": item.get("request"), "inline": True}

    async def list(self, request: web.Request) -> web.StreamResponse:
        book = self.host.book
        page, more = page_of(
            book.newest_first("gemini"), _page_size(request), request.query.get("pageToken") or None
        )
        now, origin = time.time(), _origin(request)
        ops = [_operation(b, now, origin) for i in page if (b := book.get("gemini", i))]
        body: dict[str, Any] = {"operations": ops}
        if more and page:
            body["nextPageToken"] = page[-1]
        return json_response(body)

    async def get(self, request: web.Request) -> web.StreamResponse:
        batch = self._batch(request.match_info["batch_id"])
        return json_response(_operation(batch, time.time(), _origin(request)))

    async def cancel(self, request: web.Request) -> web.StreamResponse:
        batch = self._batch(request.match_info["batch_id"])
        now = time.time()
        if batch.status(now) in _ENDED:
            raise ApiError("bad_request", f"Batch batches/{batch.batch_id} has already ended.")
        batch.cancel(now)
        return json_response({})

    def _batch(self, batch_id: str) -> Batch:
        batch = self.host.book.get("gemini", batch_id.removeprefix("batches/"))
        if batch is None:
            raise ApiError("not_found", f"Batch batches/{batch_id} does not exist.")
        return batch


def _stage_all(stager: Stager, items: Iterator[tuple[int, Any]], model: str) -> bool:
    """Judge every request (a BadRequest names the first invalid one); whether they were inline."""
    seen: set[str] = set()
    inline = False
    count = 0
    for index, item in items:
        if not isinstance(item, dict):
            raise BadRequest(f"requests[{index}]: expected an object")
        key = item.get("key")
        if not isinstance(key, str) or not key:
            raise BadRequest(f"requests[{index}].key: a non-empty string is required")
        if key in seen:
            raise BadRequest(f"requests[{index}].key: {key!r} is used more than once")
        seen.add(key)
        inline = inline or bool(item.get("inline"))
        request = item.get("request")
        request_model = request.get("model") if isinstance(request, dict) else None
        try:
            call = parse_gemini(request, str(request_model or model))
        except BadRequest as exc:
            raise BadRequest(f"requests[{index}].request: {exc.message}") from None
        stager.add(key, call)
        count += 1
    if count == 0:
        raise BadRequest("the batch holds no requests")
    return inline


def _operation(batch: Batch, now: float, origin: str, *, fresh: bool = False) -> dict[str, Any]:
    state = batch.status(now, fresh=fresh)
    counts = batch.counts(now)
    name = f"batches/{batch.batch_id}"
    metadata: dict[str, Any] = {
        "@type": _BATCH_TYPE,
        "model": f"models/{batch.extra['model']}",
        "displayName": batch.extra["display_name"],
        "inputConfig": batch.extra["input"],
        "createTime": _rfc3339(batch.created),
        "updateTime": _rfc3339(min(now, batch.ends_at)),
        "batchStats": {
            "requestCount": str(batch.size),
            "successfulRequestCount": str(counts["succeeded"]),
            "failedRequestCount": str(counts["failed"] + counts["invalid"]),
            "pendingRequestCount": str(counts["pending"]),
        },
        "state": state,
        "name": name,
    }
    operation: dict[str, Any] = {"name": name, "metadata": metadata, "done": state in _ENDED}
    if state in _ENDED:
        metadata["endTime"] = _rfc3339(batch.ends_at)
        if batch.extra["inline"]:
            responses = [json.loads(line) for line in _result_lines(batch)]
            for response in responses:
                response["metadata"] = {"key": response.pop("key")}
            output: dict[str, Any] = {"inlinedResponses": {"inlinedResponses": responses}}
        else:
            output = {"responsesFile": f"files/{_OUTPUT_PREFIX}{batch.batch_id}"}
        metadata["output"] = output
        operation["response"] = {"@type": _OUTPUT_TYPE, **output}
    return operation


def _result_lines(batch: Batch) -> Iterator[bytes]:
    """One JSONL line per request done before the batch ended, in input order."""
    replies = batch.replies or []
    cut = batch.view(batch.ends_at).done
    for index, key in enumerate(batch.custom_ids[:cut]):
        reply = replies[index] if index < len(replies) else None
        line: dict[str, Any]
        if batch.codes[index] == OK and reply is not None:
            response_id = derived_id("", batch.batch_id, index)
            line = {"key": key, "response": gemini_response(reply, response_id)}
        else:
            line = {"key": key, "error": _ITEM_ERRORS[batch.codes[index]]}
        yield json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _file_object(stored: StoredFile, origin: str) -> dict[str, Any]:
    return {
        "name": f"files/{stored.file_id}",
        "displayName": stored.filename,
        "mimeType": stored.mime_type,
        "sizeBytes": str(stored.size),
        "createTime": _rfc3339(stored.created),
        "updateTime": _rfc3339(stored.created),
        "expirationTime": _rfc3339(stored.created + _FILE_TTL_S),
        "uri": f"{origin}/v1beta/files/{stored.file_id}",
        "state": "ACTIVE",
        "source": "UPLOADED",
    }


def _page_size(request: web.Request) -> int:
    raw = request.query.get("pageSize", "100")
    try:
        size = int(raw)
    except ValueError:
        raise ApiError("bad_request", f"pageSize: {raw!r} is not an integer") from None
    return max(1, min(size, 1000))


def _origin(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def _rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
