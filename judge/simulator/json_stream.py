"""The elements of one array in a JSON request body, decoded one at a time as the body arrives.

An Anthropic batch create may be 256 MB: decoded whole, it would hold the body and every
request's Python objects at once (several times its size). Read this way, memory holds about a
megabyte of the body and one request.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import AsyncIterator, Iterable
from typing import Any

from aiohttp import StreamReader, web

from judge.simulator.wire import BadRequest

_READ = 1 << 20
_TRIM = 1 << 20
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_INVALID = "The request body is not valid JSON."


class TooLarge(Exception):
    """The body is larger than the route allows."""


async def array_items(stream: StreamReader, field: str, max_bytes: int) -> AsyncIterator[Any]:
    """Each element of the top-level object's array `field`; BadRequest when the body is not
    such an object (or the field is missing), TooLarge past `max_bytes`."""
    reader = _Reader(stream, max_bytes)
    if await reader.expect("{") is None:
        raise BadRequest("the request body must be a JSON object")
    found = False
    if await reader.peek() == "}":
        reader.pos += 1
    else:
        while True:
            key = await reader.value()
            if not isinstance(key, str) or await reader.expect(":") is None:
                raise BadRequest(_INVALID)
            if key == field:
                found = True
                async for item in _array(reader, field):
                    yield item
            else:
                await reader.value()
            separator = await reader.expect(",", "}")
            if separator is None:
                raise BadRequest(_INVALID)
            if separator == "}":
                break
    if await reader.peek() != "":
        raise BadRequest(_INVALID)
    if not found:
        raise BadRequest(f"{field}: Field required")


async def _array(reader: _Reader, field: str) -> AsyncIterator[Any]:
    if await reader.expect("[") is None:
        raise BadRequest(f"{field}: Input should be a valid list")
    if await reader.peek() == "]":
        reader.pos += 1
        return
    while True:
        yield await reader.value()
        separator = await reader.expect(",", "]")
        if separator is None:
            raise BadRequest(_INVALID)
        if separator == "]":
            return


class _Reader:
    """A decoded window on the body: `buffer[pos:]` is what is not consumed yet."""

    def __init__(self, stream: StreamReader, max_bytes: int) -> None:
        self._stream = stream
        self._max_bytes = max_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._read = 0
        self.buffer = ""
        self.pos = 0
        self.eof = False

    async def _more(self) -> None:
        """Read until the unconsumed part has doubled (or the body ends): a value that spans
        many reads is then decoded a logarithmic, not linear, number of times."""
        target = 2 * (len(self.buffer) - self.pos) + 1
        pieces = [self.buffer[self.pos :]]
        size = len(pieces[0])
        while size < target and not self.eof:
            chunk = await self._stream.read(_READ)
            self._read += len(chunk)
            if self._read > self._max_bytes:
                raise TooLarge
            self.eof = not chunk
            try:
                text = self._decoder.decode(chunk, final=self.eof)
            except UnicodeDecodeError:
                raise BadRequest("The request body is not valid UTF-8.") from None
            pieces.append(text)
            size += len(text)
        self.buffer, self.pos = "".join(pieces), 0

    async def peek(self) -> str:
        """The next character that is not whitespace ("" at the end of the body)."""
        while True:
            match = _WHITESPACE.match(self.buffer, self.pos)
            self.pos = match.end() if match else self.pos
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if self.eof:
                return ""
            await self._more()

    async def expect(self, *chars: str) -> str | None:
        """Consume the next character when it is one of `chars`."""
        char = await self.peek()
        if char and char in chars:
            self.pos += 1
            return char
        return None

    async def value(self) -> Any:
        await self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError:
                if self.eof:
                    raise BadRequest(_INVALID) from None
            else:
                # A number at the very end of what was read may go on in the next read.
                if end < len(self.buffer) or self.eof:
                    self.pos = end
                    if self.pos > _TRIM:
                        self.buffer, self.pos = self.buffer[self.pos :], 0
                    return value
            await self._more()


WRITE_CHUNK = 256 * 1024
"""Bytes of a streamed body written at a time: results of a large batch are never held whole."""


async def write_lines(response: web.StreamResponse, lines: Iterable[bytes]) -> web.StreamResponse:
    """Write `lines` to a prepared `response` in chunks of about `WRITE_CHUNK`, then end it."""
    pending: list[bytes] = []
    size = 0
    for line in lines:
        pending.append(line)
        size += len(line)
        if size >= WRITE_CHUNK:
            await response.write(b"".join(pending))
            pending, size = [], 0
    if pending:
        await response.write(b"".join(pending))
    await response.write_eof()
    return response
