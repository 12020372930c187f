"""OpenAI's Files API, as much of it as the Batch API needs: upload (multipart), list, retrieve,
download, delete. Uploaded batch inputs and the output and error files of ended batches live
here, as lists of chunks: large files are streamed in and out, never joined into one object.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from judge.simulator.control import (
    RESPONSE_HEADERS,
    ApiError,
    Host,
    control_route,
    json_response,
    page_of,
    query_limit,
)
from judge.simulator.wire import new_id

MAX_FILE_BYTES = 512 * 1024**2
"""The Files API's per-file limit."""
_CHUNK = 1 << 20
_PURPOSES = frozenset({"assistants", "batch", "fine-tune", "vision", "user_data", "evals"})
_FILE_TTL_S = 30 * 86400
"""Batch files expire after 30 days by default."""


@dataclass(slots=True)
class StoredFile:
    file_id: str
    filename: str
    purpose: str
    created: int
    chunks: list[bytes] = field(default_factory=list)
    mime_type: str = "application/jsonl"
    """What the uploader declared (Gemini's Files API keeps it; OpenAI's has none)."""

    @property
    def size(self) -> int:
        return sum(len(chunk) for chunk in self.chunks)

    def lines(self) -> Iterator[bytes]:
        """The file's lines without their newline, across chunk boundaries."""
        carry = b""
        for chunk in self.chunks:
            parts = (carry + chunk).split(b"\n") if carry else chunk.split(b"\n")
            carry = parts.pop()
            yield from parts
        if carry:
            yield carry

    def as_object(self) -> dict[str, Any]:
        return {
            "id": self.file_id,
            "object": "file",
            "bytes": self.size,
            "created_at": self.created,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": self.created + _FILE_TTL_S if self.purpose.startswith("batch") else None,
            "status_details": None,
        }


class FileStore:
    """Every file since the last `/_reset`, oldest first."""

    def __init__(self) -> None:
        self.files: dict[str, StoredFile] = {}

    def add(
        self, filename: str, purpose: str, chunks: list[bytes], mime_type: str = "application/jsonl"
    ) -> StoredFile:
        stored = StoredFile(new_id("file-"), filename, purpose, int(time.time()), chunks, mime_type)
        self.files[stored.file_id] = stored
        return stored

    def get(self, file_id: str) -> StoredFile:
        stored = self.files.get(file_id)
        if stored is None:
            raise ApiError("not_found", f"No such File object: {file_id}", "id")
        return stored


def add_file_routes(app: web.Application, host: Host) -> None:
    routes = _FileRoutes(host)
    for method, path, handler in (
        ("POST", "/v1/files", routes.upload),
        ("GET", "/v1/files", routes.list),
        ("GET", "/v1/files/{file_id}", routes.retrieve),
        ("GET", "/v1/files/{file_id}/content", routes.content),
        ("DELETE", "/v1/files/{file_id}", routes.delete),
    ):
        app.router.add_route(method, path, control_route(host, "openai", handler))


class _FileRoutes:
    def __init__(self, host: Host) -> None:
        self.host = host

    async def upload(self, request: web.Request) -> web.StreamResponse:
        if not request.content_type.startswith("multipart/"):
            raise ApiError("bad_request", "expected a multipart/form-data body", "file")
        reader = await request.multipart()
        purpose: str | None = None
        filename: str | None = None
        chunks: list[bytes] = []
        size = 0
        found_file = False
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                continue
            if part.name == "purpose":
                purpose = (await part.text()).strip()
            elif part.name == "file":
                found_file = True
                filename = part.filename or "upload"
                while chunk := await part.read_chunk(_CHUNK):
                    size += len(chunk)
                    if size > MAX_FILE_BYTES:
                        raise ApiError("too_large", "File is too large (512 MB at most).", "file")
                    chunks.append(chunk)
            else:
                await part.release()
        if purpose is None:
            raise ApiError("bad_request", "Missing required parameter: 'purpose'.", "purpose")
        if purpose not in _PURPOSES:
            raise ApiError(
                "bad_request",
                f"Invalid value for 'purpose': {purpose!r}; expected one of "
                + ", ".join(sorted(_PURPOSES)),
                "purpose",
            )
        if not found_file or filename is None:
            raise ApiError("bad_request", "Missing required parameter: 'file'.", "file")
        if purpose == "batch" and not filename.endswith(".jsonl"):
            raise ApiError(
                "bad_request", "Invalid file format for Batch API. Must be .jsonl", "file"
            )
        stored = self.host.files.add(filename, purpose, chunks)
        return json_response(stored.as_object())

    async def list(self, request: web.Request) -> web.StreamResponse:
        store = self.host.files
        purpose = request.query.get("purpose")
        order = request.query.get("order", "desc")
        if order not in ("asc", "desc"):
            raise ApiError("bad_request", "order: expected 'asc' or 'desc'", "order")
        ids = [f.file_id for f in store.files.values() if purpose is None or f.purpose == purpose]
        if order == "desc":
            ids.reverse()
        page, more = page_of(ids, query_limit(request, 10_000, 10_000), request.query.get("after"))
        return json_response(
            {
                "object": "list",
                "data": [store.files[i].as_object() for i in page],
                "first_id": page[0] if page else None,
                "last_id": page[-1] if page else None,
                "has_more": more,
            }
        )

    async def retrieve(self, request: web.Request) -> web.StreamResponse:
        return json_response(self.host.files.get(request.match_info["file_id"]).as_object())

    async def content(self, request: web.Request) -> web.StreamResponse:
        stored = self.host.files.get(request.match_info["file_id"])
        response = web.StreamResponse(headers=request[RESPONSE_HEADERS])
        response.content_type = "application/octet-stream"
        response.content_length = stored.size
        await response.prepare(request)
        for chunk in stored.chunks:
            await response.write(chunk)
        await response.write_eof()
        return response

    async def delete(self, request: web.Request) -> web.StreamResponse:
        store = self.host.files
        stored = store.get(request.match_info["file_id"])
        del store.files[stored.file_id]
        return json_response({"id": stored.file_id, "object": "file", "deleted": True})
