"""Gemini's Batch API: the body is a JSONL file (each line `{key, request}`) uploaded through
the Files API, the batch is created on it with our batch id as its display name (how an
interrupted create is found again), and its results are a JSONL file (each line `{key,
response}` or `{key, error}`) once it has ended.

The control calls go through the google-genai SDK (an optional extra); the request lines and
the replies are `judge.providers.gemini_wire`'s, so a batched request is the request a
synchronous call would send, and its reply is read the same way. Always a file, never inline
requests: the SDK builds inline requests from its own typed config, not from a request body,
and a file has no 20 MB ceiling. Results are streamed from the download into a temporary
file, then read a line at a time.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from judge.batch.api import BatchAPI, Remote, Result, Unsubmitted, error_outcome
from judge.batch.ledger import Batch, seconds_since
from judge.config.run_config import JudgeSpec
from judge.providers import gemini_wire
from judge.providers._common import scrub_secret
from judge.providers.base import ProviderCall
from judge.providers.gemini_sdk import genai_client, genai_modules

LIMITS = (100_000, 2 * 1024**3)
"""(requests, bytes) of one Gemini batch: its input file may hold 2 GB; the request count is
the engine's own ceiling (the API states none)."""
_ENDED = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"})
_ENDED |= {"JOB_STATE_EXPIRED"}
_LOOKBACK_S = 600.0
"""How far before an interrupted create's start a batch it made may be listed as created."""
_CANCELED_CODE, _DEADLINE_CODE = 1, 4
"""google.rpc.Code of an item a cancel or the batch's deadline stopped."""


class GeminiBatchAPI(BatchAPI):
    api = "gemini"
    limits = LIMITS

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        _, _, self._errors = genai_modules(spec)
        self._key = gemini_wire.resolve_key(spec)
        # One attempt per call: the engine decides what a failed control call means (a create
        # that timed out may have created the batch; a retry could create two).
        self._client = genai_client(spec, self._key, spec.batch.submit_timeout_s)

    def line(self, custom_id: str, call: ProviderCall) -> bytes:
        return json.dumps(
            {"key": custom_id, "request": gemini_wire.payload(self.spec, call)},
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()

    async def upload(self, batch: Batch, body: Path) -> str | None:
        size = body.stat().st_size
        planned_ago = seconds_since(batch.created_at)
        files = self._client.aio.files
        try:
            # A file a killed run uploaded but did not record is used, not uploaded again.
            async for existing in await files.list(config={"page_size": 100}):
                if existing.display_name == body.name and int(existing.size_bytes or 0) == size:
                    return str(existing.name)
                created = existing.create_time.timestamp() if existing.create_time else None
                if created is not None and time.time() - created > planned_ago + _LOOKBACK_S:
                    break
            uploaded = await files.upload(
                file=body, config={"display_name": body.name, "mime_type": "jsonl"}
            )
        except Exception as exc:
            raise scrub_secret(exc, self._key) from None
        return str(uploaded.name)

    async def create(self, batch: Batch, body: Path) -> str:
        if batch.input_file_id is None:
            raise ValueError(f"batch {batch.batch_id}: its body is not uploaded yet")
        try:
            created = await self._client.aio.batches.create(
                model=self.spec.model_name,
                src=batch.input_file_id,
                config={"display_name": batch.batch_id},
            )
        except Exception as exc:
            scrub_secret(exc, self._key)
            raise (self._refused(exc) or exc) from None
        return str(created.name)

    def _refused(self, exc: BaseException) -> Unsubmitted | None:
        """An error status as `Unsubmitted` (the server answered: nothing was created)."""
        if not isinstance(exc, self._errors.APIError) or not isinstance(exc.code, int):
            return None
        retryable = exc.code in (408, 409, 429) or exc.code >= 500
        return Unsubmitted(f"HTTP {exc.code}: {exc.status}: {exc.message}", final=not retryable)

    async def find(self, batch: Batch, known: set[str]) -> str | None:
        since = (batch.submit_started_at and seconds_since(batch.submit_started_at)) or 0.0
        horizon = since + _LOOKBACK_S
        async for remote in await self._client.aio.batches.list(config={"page_size": 100}):
            if remote.display_name == batch.batch_id and remote.name not in known:
                return str(remote.name)
            created = remote.create_time.timestamp() if remote.create_time else None
            if created is not None and time.time() - created > horizon:
                break  # newest first: everything further is older than the create
        return None

    async def status(self, provider_id: str) -> Remote:
        job = await self._client.aio.batches.get(name=provider_id)
        state = _state(job.state)
        dest = job.dest
        errors = None
        if job.error is not None and job.error.message:
            errors = f"{job.error.code or 'error'}: {job.error.message}"
        return Remote(
            provider_id=provider_id,
            status=state,
            ended=state in _ENDED,
            errors=errors,
            files=(dest.file_name,) if dest is not None and dest.file_name else (),
        )

    async def results(self, remote: Remote) -> AsyncIterator[Result]:
        for name in remote.files:
            if not name:
                continue
            with tempfile.TemporaryFile() as handle:
                await self._client.aio.files.download(file=name, destination=handle)
                handle.seek(0)
                for raw in handle:
                    if raw.strip():
                        yield self._result(json.loads(raw))

    def _result(self, line: dict[str, Any]) -> Result:
        key = str(line.get("key"))
        response = line.get("response")
        if isinstance(response, dict):
            return Result(key, "answered", reply=gemini_wire.reply(response))
        error = line.get("error") if isinstance(line.get("error"), dict) else {}
        code = error.get("code")
        message = f"{code}: {error.get('message', '')}"[:500]
        if code == _CANCELED_CODE:
            return Result(key, "canceled", error="the batch was cancelled")
        if code == _DEADLINE_CODE:
            return Result(key, "expired", error="the batch expired before this request ran")
        outcome = "error" if gemini_wire.item_error_final(error) else error_outcome(None)
        return Result(key, outcome, error=message)

    async def cancel(self, provider_id: str) -> None:
        await self._client.aio.batches.cancel(name=provider_id)

    async def aclose(self) -> None:
        await self._client.aio.aclose()


def _state(state: Any) -> str:
    return str(getattr(state, "value", state) or "JOB_STATE_UNSPECIFIED")
