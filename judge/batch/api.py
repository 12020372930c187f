"""The one small interface the batch engine drives a provider's batch API through, and the
records it hands back. Adapters (`openai_api`, `anthropic_api`) use the official SDKs for the
control calls and the lean transport's payload and reply code (`judge.providers.http`), so a
batched request is byte for byte the request a synchronous call would send, and its reply is
read the same way."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.batch.ledger import Batch, Outcome
from judge.config.run_config import JudgeSpec
from judge.providers.base import ProviderCall, ProviderReply


@dataclass(frozen=True)
class Remote:
    """A batch as the provider describes it."""

    provider_id: str
    status: str
    """The provider's own word (OpenAI `status`, Anthropic `processing_status`)."""
    ended: bool
    """Its results are final and can be read."""
    counts: dict[str, int] = field(default_factory=dict)
    errors: str | None = None
    """Why a batch failed as a whole (OpenAI's validation errors), when it did."""
    files: tuple[str | None, ...] = ()
    """Where its results are (OpenAI: the output and error files)."""


@dataclass(frozen=True)
class Result:
    """One request's result in an ended batch."""

    custom_id: str
    outcome: Outcome
    """`answered` (with `reply`), `error` (final: recorded as the request's error), or
    `failed` / `expired` / `canceled` (queued again)."""
    reply: ProviderReply | None = None
    error: str | None = None


class Unsubmitted(Exception):
    """The provider answered the create call with an error status: no batch exists. `final`:
    the request itself was refused (4xx other than 408/409/429); else worth another try."""

    def __init__(self, message: str, *, final: bool) -> None:
        super().__init__(message)
        self.final = final


class BatchAPI(ABC):
    """One judge's provider batch API."""

    api: str
    limits: tuple[int, int]
    """(requests, bytes) one batch may hold at this provider."""

    def __init__(self, spec: JudgeSpec) -> None:
        self.spec = spec

    @abstractmethod
    def line(self, custom_id: str, call: ProviderCall) -> bytes:
        """One request as a line of the batch body (JSON, no newline)."""

    async def upload(self, batch: Batch, body: Path) -> str | None:
        """Upload the body where the API wants it first (OpenAI's Files API); the file id."""
        return None

    @abstractmethod
    async def create(self, batch: Batch, body: Path) -> str:
        """Create the batch; its provider id. `Unsubmitted` when the provider refused; any
        other exception leaves it unknown whether the batch exists (a timeout, a dropped
        connection): the engine then looks it up with `find` before submitting again."""

    @abstractmethod
    async def find(self, batch: Batch, known: set[str]) -> str | None:
        """The provider id of `batch` if an earlier, interrupted `create` made it (`known`:
        ids the ledger already holds, never this batch's), else None."""

    @abstractmethod
    async def status(self, provider_id: str) -> Remote: ...

    @abstractmethod
    def results(self, remote: Remote) -> AsyncIterator[Result]:
        """Every result of an ended batch, streamed (memory holds one line at a time)."""

    @abstractmethod
    async def cancel(self, provider_id: str) -> None: ...

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


def status_error(exc: BaseException) -> Unsubmitted | None:
    """An SDK's error status as `Unsubmitted` (the server answered: nothing was created);
    None for anything else (the outcome of the call is unknown)."""
    status: Any = getattr(exc, "status_code", None)
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    retryable = status in (408, 409, 429) or status >= 500
    return Unsubmitted(f"HTTP {status}: {exc}", final=not retryable)


def error_outcome(status: int | None) -> Outcome:
    """How a request's error status inside a batch ends it: a server-side or rate error is
    worth another batch, a refusal of the request itself is final."""
    if status is None or status in (408, 409, 429) or status >= 500:
        return "failed"
    return "error"
