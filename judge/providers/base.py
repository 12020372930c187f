"""The provider interface. Providers classify, the runner decides.

A provider turns one call into one reply. It never sleeps, retries, logs or prints: the runner
owns concurrency, rate limits, retries (one tenacity policy), timeouts and the cache. It imports
its SDK lazily and names the install command when it is missing. API keys come from the
environment (or an explicit secret in config) and never appear in errors or replies.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from judge.config.run_config import JudgeSpec
from judge.types import ChatMessage, JudgeRequest, Usage

ErrorKind = Literal["rate_limit", "transient"]


@dataclass(frozen=True)
class ProviderCall:
    """What the runner asks of a provider: one request's messages (the rendered prompt, or the
    prompt plus a repair turn), the reply schema for structured output, and a timeout."""

    request: JudgeRequest
    messages: tuple[ChatMessage, ...]
    schema: dict[str, Any] | None = None
    timeout_s: float = 120.0


@dataclass(frozen=True)
class ProviderReply:
    text: str | None
    """The reply text; for structured output, the JSON text of the structured answer."""
    usage: Usage = field(default_factory=Usage)
    provider_request_id: str | None = None
    cost_usd: float | None = None
    """Set when the provider itself reports a cost; otherwise the runner prices the usage."""


class Provider(ABC):
    bounds_timeout: bool = False
    """The transport itself ends a call after `call.timeout_s`, raising a `TimeoutError` (the
    runner then adds no timer of its own: one per request is CPU enough)."""

    def __init__(self, spec: JudgeSpec) -> None:
        self.spec = spec

    @abstractmethod
    async def complete(self, call: ProviderCall) -> ProviderReply:
        """Send one call; raise the SDK's (or transport's) exception on failure."""

    @abstractmethod
    def classify_error(self, exc: BaseException) -> ErrorKind | None:
        """`rate_limit` and `transient` are retried by the runner; None is final."""

    def retry_after(self, exc: BaseException) -> float | None:
        """Seconds the server asked to wait (Retry-After), if it said."""
        return None

    def connection_key(self) -> str:
        """Requests sharing a key share one concurrency limit and one rate limit: by default
        one per provider endpoint and API key variable, not per model."""
        return f"{self.spec.provider}|{self.spec.base_url or ''}|{self.spec.api_key_env or ''}"

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most providers hold nothing
        """Release connections."""
