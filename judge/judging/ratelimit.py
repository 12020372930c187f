"""Requests- and tokens-per-minute limits: one token bucket each, shared by every request on a
connection key, so a run saturates a provider's limit and no more."""

from __future__ import annotations

import asyncio
import time


class _Bucket:
    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.rate = per_minute / 60.0
        # A small burst lets a fresh run start at once without overshooting the minute.
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def wait_for(self, amount: float, now: float) -> float:
        """Seconds until `amount` is available (0: take it now)."""
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        amount = min(amount, self.capacity)
        if self.level >= amount:
            return 0.0
        return (amount - self.level) / self.rate

    def take(self, amount: float) -> None:
        self.level -= min(amount, self.capacity)


class RateLimiter:
    """Waits until both budgets allow one more request of `tokens` tokens."""

    def __init__(
        self,
        requests_per_minute: float | None,
        tokens_per_minute: float | None,
        *,
        burst_s: float = 1.0,
    ) -> None:
        self._requests = _Bucket(requests_per_minute, burst_s) if requests_per_minute else None
        self._tokens = _Bucket(tokens_per_minute, burst_s) if tokens_per_minute else None
        self._lock = asyncio.Lock()

    @property
    def active(self) -> bool:
        return self._requests is not None or self._tokens is not None

    def pause(self, seconds: float) -> None:
        """Nothing: in one process, the refused call's own retry waits out a Retry-After, and
        the other calls go on (`judge.cluster.limiter` holds every shard instead)."""

    async def acquire(self, tokens: float = 0.0) -> None:
        if not self.active:
            return
        # One waiter at a time: FIFO order, and no thundering herd after a pause.
        async with self._lock:
            while True:
                now = time.monotonic()
                wait = 0.0
                if self._requests is not None:
                    wait = max(wait, self._requests.wait_for(1.0, now))
                if self._tokens is not None:
                    wait = max(wait, self._tokens.wait_for(tokens, now))
                if wait <= 0:
                    break
                await asyncio.sleep(wait)
            if self._requests is not None:
                self._requests.take(1.0)
            if self._tokens is not None:
                self._tokens.take(tokens)
