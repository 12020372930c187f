"""Anthropic's Message Batches: the body is one JSON object of requests, streamed from the
body file; results are a JSONL stream once the batch has ended.

A Message Batch carries no metadata, so an interrupted create is found again by what the
listing shows: a batch created within the create's time window, of exactly this batch's
request count, that the ledger does not already hold. The engine marks such a batch
`adopted` and checks, when its results arrive, that every custom id in them is one of this
batch's requests (custom ids are request content hashes: a stranger's batch cannot pass)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from judge.batch.api import BatchAPI, Remote, Result, error_outcome, status_error
from judge.batch.ledger import Batch, seconds_since
from judge.config.batch import PROVIDER_LIMITS
from judge.config.run_config import JudgeSpec
from judge.providers._common import resolve_api_key, scrub_secret
from judge.providers.base import ProviderCall
from judge.providers.http import AnthropicHTTPProvider

_CHUNK = 1 << 20
_SLACK_S = 120.0
"""Clock difference allowed between us and the provider when matching creation times."""
_FINAL_ERRORS = frozenset(
    {"invalid_request_error", "authentication_error", "permission_error", "not_found_error"}
)
_ERROR_STATUS = {"rate_limit_error": 429, "api_error": 500, "overloaded_error": 529}


class AnthropicBatchAPI(BatchAPI):
    api = "anthropic"
    limits = PROVIDER_LIMITS["anthropic"]

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        import anthropic

        self._key = resolve_api_key(spec, "ANTHROPIC_API_KEY")
        self._wire = AnthropicHTTPProvider(spec)
        # max_retries=0: see OpenAIBatchAPI.
        self._client = anthropic.AsyncAnthropic(
            api_key=self._key,
            base_url=spec.base_url,
            max_retries=0,
            timeout=spec.batch.submit_timeout_s,
        )
        self._message_batch = anthropic.types.messages.MessageBatch

    def line(self, custom_id: str, call: ProviderCall) -> bytes:
        return json.dumps(
            {"custom_id": custom_id, "params": self._wire.payload(call)},
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()

    async def create(self, batch: Batch, body: Path) -> str:
        try:
            created = await self._client.post(
                "/v1/messages/batches",
                cast_to=self._message_batch,
                content=_request_list(body),
                options={"headers": {"Content-Type": "application/json"}},
            )
        except Exception as exc:
            scrub_secret(exc, self._key)
            refused = status_error(exc)
            raise (refused or exc) from None
        return str(created.id)

    async def find(self, batch: Batch, known: set[str]) -> str | None:
        if batch.submit_started_at is None:
            return None
        started = time.time() - seconds_since(batch.submit_started_at)
        earliest = started - _SLACK_S
        latest = started + self.spec.batch.submit_timeout_s + _SLACK_S
        async for remote in self._client.messages.batches.list(limit=100):
            created = remote.created_at.timestamp()
            if created < earliest:
                break  # newest first
            counts = remote.request_counts
            total = (
                counts.processing
                + counts.succeeded
                + counts.errored
                + counts.canceled
                + counts.expired
            )
            if created <= latest and total == batch.requests and remote.id not in known:
                return str(remote.id)
        return None

    async def status(self, provider_id: str) -> Remote:
        remote = await self._client.messages.batches.retrieve(provider_id)
        counts = remote.request_counts
        return Remote(
            provider_id=provider_id,
            status=remote.processing_status,
            ended=remote.processing_status == "ended",
            counts={
                "processing": counts.processing,
                "succeeded": counts.succeeded,
                "errored": counts.errored,
                "canceled": counts.canceled,
                "expired": counts.expired,
            },
        )

    async def results(self, remote: Remote) -> AsyncIterator[Result]:
        batches = self._client.messages.batches
        async with batches.with_streaming_response.results(remote.provider_id) as response:
            async for text in response.iter_lines():
                if text.strip():
                    yield self._result(json.loads(text))

    def _result(self, line: dict[str, Any]) -> Result:
        custom = str(line.get("custom_id"))
        result = line.get("result") or {}
        kind = result.get("type")
        if kind == "succeeded":
            return Result(custom, "answered", reply=self._wire.reply(result["message"]))
        if kind == "expired":
            return Result(custom, "expired", error="the batch expired before this request ran")
        if kind == "canceled":
            return Result(custom, "canceled", error="the batch was cancelled")
        error = (result.get("error") or {}).get("error") or {}
        error_type = str(error.get("type") or "api_error")
        outcome = (
            "error"
            if error_type in _FINAL_ERRORS
            else error_outcome(_ERROR_STATUS.get(error_type, 500))
        )
        return Result(custom, outcome, error=f"{error_type}: {error.get('message', '')}"[:500])

    async def cancel(self, provider_id: str) -> None:
        await self._client.messages.batches.cancel(provider_id)

    async def aclose(self) -> None:
        await self._client.close()
        await self._wire.aclose()


async def _request_list(body: Path) -> AsyncIterator[bytes]:
    """`{"requests": [line, line, ...]}` from the body file's lines, a megabyte at a time: the
    client never holds the whole create body (up to 256 MB) in memory."""
    yield b'{"requests":['
    first = True
    pending: list[bytes] = []
    size = 0
    with body.open("rb") as handle:
        for raw in handle:
            line = raw.rstrip(b"\n")
            if not line:
                continue
            pending.append(line if first else b"," + line)
            first = False
            size += len(line) + 1
            if size >= _CHUNK:
                yield b"".join(pending)
                pending, size = [], 0
    if pending:
        yield b"".join(pending)
    yield b"]}"
