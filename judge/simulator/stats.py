"""What the simulator counts, and its server-side rate limit."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any


class SimulatorStats:
    """Counters behind `GET /_stats`. Mutated only on the server's event loop."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.cpu_started = time.process_time()
        self.requests = 0
        self.by_route: Counter[str] = Counter()
        self.by_model: Counter[str] = Counter()
        self.by_outcome: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.attempts: Counter[str] = Counter()
        """content key -> requests that reached the judge (past the rate limit)."""
        self.answered: Counter[str] = Counter()
        """content key -> well-formed replies delivered (ok, malformed, refusal, late stall)."""
        self.duplicates = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read_tokens = 0
        """Of the answered requests' prompt tokens: read from the prompt cache."""
        self.cache_write_tokens = 0
        """Written to the prompt cache (Anthropic only reports writes)."""
        self.first_at: float | None = None
        """Wall-clock time (Unix) of the first request: a client's time to first request."""
        self.last_at: float | None = None
        self.by_second: Counter[int] = Counter()
        """Unix second -> requests that arrived in it (a client's rate, as the server saw it)."""

    def enter(self, route: str) -> None:
        self.requests += 1
        self.last_at = time.time()
        if self.first_at is None:
            self.first_at = self.last_at
        self.by_route[route] += 1
        self.by_second[int(self.last_at)] += 1
        self.in_flight += 1
        if self.in_flight > self.max_in_flight:
            self.max_in_flight = self.in_flight

    def leave(self) -> None:
        self.in_flight -= 1

    def answer(self, key: str) -> None:
        self.answered[key] += 1
        if self.answered[key] == 2:
            self.duplicates += 1

    def snapshot(self, *, with_hashes: bool = False) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started
        snapshot: dict[str, Any] = {
            "requests": self.requests,
            "by_route": dict(self.by_route),
            "by_model": dict(self.by_model),
            "by_outcome": dict(self.by_outcome),
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "distinct_requests": len(self.attempts),
            "distinct_answered": len(self.answered),
            "answered": sum(self.answered.values()),
            "duplicates": self.duplicates,
            "max_answers_per_request": max(self.answered.values(), default=0),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "elapsed_s": round(elapsed, 6),
            "cpu_s": round(time.process_time() - self.cpu_started, 6),
            "first_request_unix": self.first_at,
            "last_request_unix": self.last_at,
            "requests_by_second": {str(s): n for s, n in sorted(self.by_second.items())},
        }
        if with_hashes:
            snapshot["attempts_by_hash"] = dict(self.attempts)
            snapshot["answered_by_hash"] = dict(self.answered)
        return snapshot


class TokenBucket:
    """Requests-per-minute limit: `capacity` tokens, refilled at `rpm / 60` per second."""

    def __init__(self, rpm: float, burst: int | None) -> None:
        self.rate = rpm / 60.0
        self.capacity = float(burst if burst is not None else max(1, int(self.rate)))
        self.tokens = self.capacity
        self.updated = time.monotonic()

    def take(self) -> float:
        """0 when a request may pass, else the seconds until the next token."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate
