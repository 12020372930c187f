"""OpenAI's Batch API: the body is a JSONL file uploaded through the Files API (purpose
`batch`), the batch is created on it with our batch id in its metadata (how an interrupted
create is found again), results come as an output file and an error file."""

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
from judge.providers.http import OpenAIHTTPProvider

ENDPOINT = "/v1/chat/completions"
METADATA_KEY = "judge_batch"
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
_LOOKBACK_S = 600.0
"""How far before an interrupted create's start a batch it made may be listed as created
(clock differences between us and the provider)."""


class OpenAIBatchAPI(BatchAPI):
    api = "openai"
    limits = PROVIDER_LIMITS["openai"]

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        import openai

        default_env = "OPENAI_API_KEY" if spec.provider == "openai" else None
        self._key = resolve_api_key(spec, default_env)
        self._wire = OpenAIHTTPProvider(spec, default_key_env=default_env)
        # max_retries=0: the engine decides what a failed control call means (a create that
        # timed out may have created the batch; the SDK retrying it could create two).
        self._client = openai.AsyncOpenAI(
            api_key=self._key,
            base_url=spec.base_url,
            max_retries=0,
            timeout=spec.batch.submit_timeout_s,
        )

    def line(self, custom_id: str, call: ProviderCall) -> bytes:
        return json.dumps(
            {
                "custom_id": custom_id,
                "method": "POST",
                "url": ENDPOINT,
                "body": self._wire.payload(call),
            },
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()

    async def upload(self, batch: Batch, body: Path) -> str | None:
        name = body.name
        size = body.stat().st_size
        planned_ago = seconds_since(batch.created_at)
        try:
            # A file a killed run uploaded but did not record is used, not uploaded again.
            # Files are listed newest first: none older than the batch can be its body.
            async for existing in self._client.files.list(purpose="batch"):
                if existing.filename == name and existing.bytes == size:
                    return str(existing.id)
                if time.time() - float(existing.created_at) > planned_ago + _LOOKBACK_S:
                    break
            with body.open("rb") as handle:
                uploaded = await self._client.files.create(
                    file=(name, handle, "application/jsonl"), purpose="batch"
                )
        except Exception as exc:
            raise scrub_secret(exc, self._key) from None
        return str(uploaded.id)

    async def create(self, batch: Batch, body: Path) -> str:
        if batch.input_file_id is None:
            raise ValueError(f"batch {batch.batch_id}: its body is not uploaded yet")
        try:
            created = await self._client.batches.create(
                input_file_id=batch.input_file_id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={METADATA_KEY: batch.batch_id},
            )
        except Exception as exc:
            scrub_secret(exc, self._key)
            refused = status_error(exc)
            raise (refused or exc) from None
        return str(created.id)

    async def find(self, batch: Batch, known: set[str]) -> str | None:
        since = (batch.submit_started_at and seconds_since(batch.submit_started_at)) or 0.0
        horizon = since + _LOOKBACK_S

        async for remote in self._client.batches.list(limit=100):
            metadata: dict[str, Any] = dict(remote.metadata or {})
            if metadata.get(METADATA_KEY) == batch.batch_id and remote.id not in known:
                return str(remote.id)
            if time.time() - float(remote.created_at) > horizon:
                break  # newest first: everything further is older than the create
        return None

    async def status(self, provider_id: str) -> Remote:
        remote = await self._client.batches.retrieve(provider_id)
        counts = remote.request_counts
        errors = None
        if remote.errors is not None and remote.errors.data:
            errors = "; ".join(
                f"{e.code or 'error'}: {e.message or ''}" for e in remote.errors.data[:5]
            )
        return Remote(
            provider_id=provider_id,
            status=remote.status,
            ended=remote.status in _ENDED,
            counts={
                "total": counts.total if counts else 0,
                "completed": counts.completed if counts else 0,
                "failed": counts.failed if counts else 0,
            },
            errors=errors,
            files=(remote.output_file_id, remote.error_file_id),
        )

    async def results(self, remote: Remote) -> AsyncIterator[Result]:
        for file_id in remote.files:
            if not file_id:
                continue
            async with self._client.files.with_streaming_response.content(file_id) as response:
                async for text in response.iter_lines():
                    if text.strip():
                        yield self._result(json.loads(text))

    def _result(self, line: dict[str, Any]) -> Result:
        custom = str(line.get("custom_id"))
        error = line.get("error") or None
        response = line.get("response") or None
        status = response.get("status_code") if isinstance(response, dict) else None
        if error is None and status == 200:
            return Result(custom, "answered", reply=self._wire.reply(response["body"]))
        code = str((error or {}).get("code") or "")
        if code == "batch_expired":
            return Result(custom, "expired", error="the batch expired before this request ran")
        if code == "batch_cancelled":
            return Result(custom, "canceled", error="the batch was cancelled")
        message = (error or {}).get("message")
        if message is None and isinstance(response, dict):
            body = response.get("body")
            if isinstance(body, dict) and isinstance(body.get("error"), dict):
                message = body["error"].get("message")
        text = f"HTTP {status}: {message}" if status else f"{code or 'error'}: {message}"
        return Result(custom, error_outcome(status), error=text[:500])

    async def cancel(self, provider_id: str) -> None:
        await self._client.batches.cancel(provider_id)

    async def aclose(self) -> None:
        await self._client.close()
        await self._wire.aclose()
