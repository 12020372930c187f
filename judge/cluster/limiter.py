"""One rate budget for the whole cluster: a single limiter actor holds each endpoint's
requests- and tokens-per-minute buckets (`judge.judging.ratelimit.RateLimiter`, the same policy as a
local run) and every shard waits on it, so N shards together send what one process would.
A 429's Retry-After pauses the endpoint for every shard, not only the one refused."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import ray
from ray.exceptions import ActorUnavailableError, RayActorError

from judge.errors import ProviderError
from judge.judging.ratelimit import RateLimiter

_CHECK_S = 0.25
"""How often a shard with no configured limit asks whether the endpoint is paused."""


class ClusterLost(ProviderError):
    """The limiter actor could not be reached (it died, or its node did). Not a reply to
    record: the shard fails, and the driver sends what it had not stored again (as a
    `ProviderError`, it is not retried as a call, nor stored as a request's error)."""


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class RateBudget:
    """The limiter actor (async: callers waiting on one bucket do not block the others)."""

    def __init__(self) -> None:
        self._limiters: dict[str, RateLimiter] = {}
        self._resume_at: dict[str, float] = {}

    def _limiter(self, key: str, rpm: float | None, tpm: float | None) -> RateLimiter:
        if key not in self._limiters:
            self._limiters[key] = RateLimiter(rpm, tpm)
        return self._limiters[key]

    async def take(self, key: str, rpm: float | None, tpm: float | None, tokens: float) -> None:
        """Return when one request of `tokens` tokens may go to `key`."""
        while (wait := self.paused_for(key)) > 0:
            await asyncio.sleep(wait)
        await self._limiter(key, rpm, tpm).acquire(tokens)
        # A pause that began while this caller queued for the buckets holds it too.
        while (wait := self.paused_for(key)) > 0:
            await asyncio.sleep(wait)

    def pause(self, key: str, seconds: float) -> None:
        self._resume_at[key] = max(self._resume_at.get(key, 0.0), time.monotonic() + seconds)

    def paused_for(self, key: str) -> float:
        """Seconds `key` stays paused (relative: shards' clocks are not this one's)."""
        return max(0.0, self._resume_at.get(key, 0.0) - time.monotonic())


class ClusterLimit:
    """A shard's view of one endpoint's budget in the `RateBudget` actor
    (`judge.judging.calls.Limiter`).
    With a configured limit every request asks the actor; without one, a request only checks,
    at most every `_CHECK_S`, whether a Retry-After paused the endpoint."""

    def __init__(self, budget: Any, key: str, rpm: float | None, tpm: float | None) -> None:
        self._budget = budget
        self._key = key
        self._rpm = rpm
        self._tpm = tpm
        self._checked = 0.0
        self._resume_at = 0.0

    @property
    def active(self) -> bool:
        return bool(self._rpm or self._tpm)

    async def acquire(self, tokens: float = 0.0) -> None:
        try:
            if self.active:
                await self._budget.take.remote(self._key, self._rpm, self._tpm, tokens)
                return
            now = time.monotonic()
            if now - self._checked >= _CHECK_S:
                self._checked = now
                paused = await self._budget.paused_for.remote(self._key)
                self._resume_at = max(self._resume_at, time.monotonic() + paused)
        except (RayActorError, ActorUnavailableError) as exc:
            raise ClusterLost(f"the cluster's rate limiter is unreachable: {exc}") from None
        if (wait := self._resume_at - time.monotonic()) > 0:
            await asyncio.sleep(wait)

    def pause(self, seconds: float) -> None:
        self._resume_at = max(self._resume_at, time.monotonic() + seconds)
        self._budget.pause.remote(self._key, seconds)
