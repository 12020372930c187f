"""A run's progress counted as it happens, so showing it never reads the store.

The store is read once, when judging starts (`judge.run.execute.progress_of`): the requests
planned and what earlier runs answered. From then on each runner counts the responses it
stores (`Counts`, at each flush), worker processes publish theirs in shared memory (`Board`),
and `Tally.snapshot` adds them up: a refresh costs microseconds whatever the run's size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import astuple, dataclass, replace
from multiprocessing.context import BaseContext
from typing import Any

from judge.types import JudgeResponse, ParseFailure, Verdict


@dataclass(slots=True)
class BatchProgress:
    """The batch engine's batches (`judge.batch.engine`), updated in place as they move."""

    submitted: int = 0
    """Batches submitted (or being submitted) that have not ended."""
    planned: int = 0
    """Batches planned, waiting to be submitted."""
    done: int = 0
    """Batches collected."""
    in_flight: int = 0
    """Requests in planned or submitted batches."""
    answered: int = 0
    """Requests answered by batches (in this run dir, across restarts)."""


@dataclass(frozen=True, slots=True)
class Progress:
    """A run's judging at one moment: what the display, the service and Ctrl-C's message show."""

    total: int
    """Requests stored for judging (pairs x orders x judges once prepare is done)."""
    done: int
    """Requests with a stored outcome: verdict, parse failure or error."""
    cached: int
    failed: int
    parse_failures: int
    spent_usd: float
    total_final: bool = True
    """False while prepare still stores requests: `total` is then a lower bound."""
    batches: BatchProgress | None = None
    """Batch-mode judges' batches, when there are any."""


@dataclass(slots=True)
class Counts:
    """The responses one runner has stored, counted as it stores them: the rows the store
    gained (`RunStore.counts`' responses, cached, errors, parse failures; the sum of costs)."""

    done: int = 0
    cached: int = 0
    failed: int = 0
    parse_failures: int = 0
    spent_usd: float = 0.0

    def add(self, batch: Iterable[tuple[JudgeResponse, Verdict | ParseFailure | None]]) -> None:
        """Count a batch the store has just recorded."""
        for response, verdict in batch:
            self.done += 1
            self.cached += response.cached
            self.failed += response.error is not None
            self.parse_failures += isinstance(verdict, ParseFailure)
            self.spent_usd += response.cost_usd or 0.0


_WIDTH = len(astuple(Counts()))


class Board:
    """Worker processes' `Counts` in shared memory, one row per shard: each worker writes its
    own row at every flush (no lock, no message to drain), the parent reads them all. Made
    before the workers start and handed to them at start (`judge.run.worker.start_worker`):
    shared memory cannot be passed with a task."""

    def __init__(self, context: BaseContext, shards: int) -> None:
        self._shards = shards
        # Doubles hold every count exactly up to 2**53.
        self._memory: Any = context.RawArray("d", shards * _WIDTH)

    def clear(self) -> None:
        """Zero every row: a new run on the same workers."""
        self._memory[:] = [0.0] * (self._shards * _WIDTH)

    def read(self, shard: int) -> Counts:
        done, cached, failed, parse_failures, spent = self._memory[
            shard * _WIDTH : (shard + 1) * _WIDTH
        ]
        return Counts(int(done), int(cached), int(failed), int(parse_failures), spent)

    def publisher(self, shard: int) -> Counts:
        """The `Counts` a worker's runner keeps for `shard`: also written to its row."""
        return _Published(self._memory, shard * _WIDTH)


class _Published(Counts):
    __slots__ = ("_at", "_memory")

    def __init__(self, memory: Any, at: int) -> None:
        super().__init__()
        self._memory = memory
        self._at = at
        memory[at : at + _WIDTH] = [0.0] * _WIDTH

    def add(self, batch: Iterable[tuple[JudgeResponse, Verdict | ParseFailure | None]]) -> None:
        super().add(batch)
        self._memory[self._at : self._at + _WIDTH] = [
            self.done,
            self.cached,
            self.failed,
            self.parse_failures,
            self.spent_usd,
        ]


class Tally:
    """The progress of a run being judged: where the store stood when judging started, plus
    the `Counts` of this run's runners (in this process, or read from a `Board`). A snapshot
    reads memory only. The total may grow while judging (`add_total`: prepare still storing
    requests) until `close_total`."""

    def __init__(self, start: Progress) -> None:
        self._start = start
        self._total = start.total
        self._final = start.total_final
        self._parts: list[Callable[[], Counts]] = []
        self._lock = threading.Lock()
        self.batches: BatchProgress | None = None
        """The batch engine's counts, when this process runs one (it updates them)."""

    def include(self, counts: Callable[[], Counts]) -> None:
        """Add a runner's counts (a function returning them: a `Board` row is read anew)."""
        self._parts.append(counts)

    def add_total(self, requests: int) -> None:
        """`requests` more were stored for judging (from any thread)."""
        with self._lock:
            self._total += requests

    def set_total(self, requests: int) -> None:
        """The store now holds `requests` for judging (a prepare's count; never lowers it)."""
        with self._lock:
            self._total = max(self._total, requests)

    def close_total(self) -> None:
        """Every request is stored: the total is final."""
        self._final = True

    def snapshot(self) -> Progress:
        start = self._start
        done, cached, failed, parse_failures = (
            start.done,
            start.cached,
            start.failed,
            start.parse_failures,
        )
        spent = start.spent_usd
        for part in self._parts:
            c = part()
            done += c.done
            cached += c.cached
            failed += c.failed
            parse_failures += c.parse_failures
            spent += c.spent_usd
        return Progress(
            total=self._total,
            done=done,
            cached=cached,
            failed=failed,
            parse_failures=parse_failures,
            spent_usd=spent,
            total_final=self._final,
            batches=None if self.batches is None else replace(self.batches),
        )
