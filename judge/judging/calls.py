"""One call to a provider, limited and retried: the policy every request (and every repair
turn) goes through, whether the runner sends it or a batch reply's repair does.

Per connection key: one semaphore (`max_connections`) and one requests/tokens-per-minute
limiter. One tenacity policy for every provider: exponential jitter, Retry-After honoured,
finite attempts, a per-attempt timeout. Providers never retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Protocol

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from judge.config.run_config import JudgeSpec
from judge.judging.cost_estimate import estimate_tokens, max_tokens
from judge.judging.ratelimit import RateLimiter
from judge.providers.base import Provider, ProviderCall, ProviderReply


class Exhausted(Exception):
    """A call that failed for good, with how many attempts it took."""

    def __init__(self, error: Exception, attempts: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


class Limiter(Protocol):
    """An endpoint's requests- and tokens-per-minute budget as one process's calls see it."""

    @property
    def active(self) -> bool:
        """Whether `acquire` can ever wait for a limit (token estimates are skipped when not)."""
        ...

    async def acquire(self, tokens: float = 0.0) -> None: ...

    def pause(self, seconds: float) -> None:
        """The provider asked for a pause (a 429's Retry-After)."""
        ...


LimiterFor = Callable[[str, float | None, float | None], Limiter]
"""(connection key, the endpoint's requests per minute, its tokens per minute) -> the limiter
this process's calls to it wait on."""


class Calls:
    """The limits and the retry policy of one process's calls (`shards`: processes splitting
    each endpoint's connections, and, unless `limiter_for` says otherwise, its rate limits,
    evenly)."""

    def __init__(
        self,
        specs: Mapping[str, JudgeSpec],
        provider: Callable[[str], Provider],
        shards: int = 1,
        *,
        limiter_for: LimiterFor | None = None,
    ) -> None:
        self._specs = specs
        self._provider = provider
        self._shards = shards
        self._limiter_for = limiter_for or self._own_share
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._limiters: dict[str, Limiter] = {}
        self._by_provider: dict[Provider, tuple[asyncio.Semaphore, Limiter]] = {}

    def _own_share(self, _key: str, rpm: float | None, tpm: float | None) -> Limiter:
        # This process's even share of the endpoint's limits, enforced here alone. A 429's
        # Retry-After delays the refused call only (its retry waits it out).
        return RateLimiter(rpm / self._shards if rpm else None, tpm / self._shards if tpm else None)

    def _limits(self, provider: Provider) -> tuple[asyncio.Semaphore, Limiter]:
        limits = self._by_provider.get(provider)
        if limits is None:
            limits = self._by_provider[provider] = self._key_limits(provider)
        return limits

    def _key_limits(self, provider: Provider) -> tuple[asyncio.Semaphore, Limiter]:
        key = provider.connection_key()
        if key not in self._semaphores:
            sharing = [
                s for m, s in self._specs.items() if self._provider(m).connection_key() == key
            ]
            # Limits are per provider endpoint; worker processes split them evenly.
            connections = max(1, max(s.max_connections for s in sharing) // self._shards)
            rpm = min(
                (s.requests_per_minute for s in sharing if s.requests_per_minute), default=None
            )
            tpm = min((s.tokens_per_minute for s in sharing if s.tokens_per_minute), default=None)
            self._semaphores[key] = asyncio.Semaphore(connections)
            self._limiters[key] = self._limiter_for(key, rpm, tpm)
        return self._semaphores[key], self._limiters[key]

    async def call(
        self, provider: Provider, spec: JudgeSpec, call: ProviderCall
    ) -> tuple[ProviderReply, int]:
        """The reply and the attempts it took; `Exhausted` when every attempt failed or the
        error is final."""
        semaphore, limiter = self._limits(provider)
        tokens = estimate_tokens(call.messages) + max_tokens(spec) if limiter.active else 0

        async def attempt() -> ProviderReply:
            await limiter.acquire(tokens)
            async with semaphore:
                if provider.bounds_timeout:
                    return await provider.complete(call)
                async with asyncio.timeout(spec.timeout_s):
                    return await provider.complete(call)

        # Fast path: most calls succeed at once, and entering tenacity costs more CPU than the
        # call itself. A failed first attempt is handed to the one retry policy as its attempt
        # 1, so every decision (retry or not, wait, stop) is the policy's, as if it had made
        # that attempt itself.
        try:
            return await attempt(), 1
        except BaseException as exc:
            first: BaseException | None = exc
        attempt_number = 1
        try:
            async for managed in _retrying(provider, spec, limiter):
                with managed:
                    attempt_number = managed.retry_state.attempt_number
                    if first is not None:
                        failed, first = first, None
                        raise failed
                    reply = await attempt()
        except Exception as exc:
            raise Exhausted(exc, attempt_number) from exc
        return reply, attempt_number


def _retrying(provider: Provider, spec: JudgeSpec, limiter: Limiter) -> AsyncRetrying:
    """The one retry policy: finite attempts, full-jitter exponential backoff, Retry-After
    honoured, retrying only what the provider classifies as transient or a rate limit (and
    timeouts). A fresh iterator per call: tenacity keeps per-call state on it."""
    # Full jitter: many workers that failed together do not retry together.
    backoff = wait_random_exponential(multiplier=spec.backoff_initial_s, max=spec.backoff_max_s)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = provider.retry_after(exc) if exc is not None else None
        if asked:
            limiter.pause(asked)
        return max(asked or 0.0, backoff(state))

    return AsyncRetrying(
        stop=stop_after_attempt(spec.max_attempts),
        wait=wait,
        retry=retry_if_exception(lambda exc: retryable(provider, exc)),
        reraise=True,
    )


def retryable(provider: Provider, exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError):
        return True
    return provider.classify_error(exc) is not None
