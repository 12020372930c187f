"""The judge runner: pending request -> cache -> provider (limited, retried) -> parse -> store.

One asyncio loop per worker process; every call goes through `judge.judging.calls` (per connection
key one semaphore and one rate limiter; one retry policy). Judges in batch mode are not sent
from here: `judge.batch` submits them, and comes here for the synchronous repair of an
unparseable batch reply (`Runner.settle`) and for requests past the batch deadline.

Nothing paid for is lost: every reply is written with its verdict (or `ParseFailure`) in one
transaction, in small batches flushed every few milliseconds, and the same request content is
never sent twice (the cache, and in-flight de-duplication by cache key). A killed run resumes
from the requests without a response (`RunStore.pending_after`, page by page).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from judge.config.run_config import JudgeSpec, RunConfig
from judge.errors import ConfigError, ProviderError
from judge.judging.budget import Budget
from judge.judging.calls import Calls, Exhausted
from judge.judging.cost_estimate import worst_case_cost
from judge.judging.pricing import price
from judge.judging.tally import Counts
from judge.providers.base import Provider, ProviderCall, ProviderReply
from judge.rubric.parsing import output_schema, parse_reply, repair_prompt
from judge.rubric.rubrics import Rubric, load_rubric
from judge.store.run_store import RunStore
from judge.store.rundir import RunDir
from judge.types import ChatMessage, JudgeRequest, JudgeResponse, ParseFailure, Usage, Verdict

Outcome = tuple[JudgeResponse, Verdict | ParseFailure | None]

_FLUSH_EVERY_S = 0.02
_FLUSH_ROWS = 256
_PAGE_ROWS = 1000
"""Pending requests read from the store at a time."""
_POLL_S = 0.05
"""How often a runner ahead of a running prepare looks for newly stored requests."""
_YOUNG_COLLECTION = 50_000
"""Allocations between the cyclic collector's young collections while judging (Python's
default: 700)."""


class ReplyStore(Protocol):
    """What a runner reads and writes: a run's `RunStore`, or, on a cluster shard, the buffer
    its replies go back to the driver in (`judge.cluster.shard`)."""

    @property
    def run_dir(self) -> Path | None: ...

    def pending_after(self, rowid: int, limit: int) -> list[tuple[int, JudgeRequest]]: ...

    def cached_response(self, cache_key: str) -> Any: ...

    def record_responses(self, outcomes: Sequence[Outcome]) -> Any: ...


@dataclass
class RunStats:
    sent: int = 0
    """Requests that reached a provider (first attempts; retries not counted)."""
    cached: int = 0
    failed: int = 0
    parse_failures: int = 0
    repaired: int = 0
    spent_usd: float = 0.0
    skipped_for_budget: int = 0
    stopped_reason: str | None = None
    errors: dict[str, int] = field(default_factory=dict)


def cached_outcome(
    store: RunStore | ReplyStore, request: JudgeRequest, rubric: Rubric
) -> Outcome | None:
    """`request` answered by the response cache (its reply parsed again: the rubric decides
    what a reply means), or None. Free: nothing is sent."""
    entry = store.cached_response(request.cache_key)
    if entry is None:
        return None
    response = entry.to_response(request.request_id)
    return response, parse_reply(response.text, rubric)


def merge_stats(results: Sequence[RunStats]) -> RunStats:
    """Several runners' stats as one (worker processes, shards, a batch engine's runner)."""
    total = RunStats()
    for r in results:
        total.sent += r.sent
        total.cached += r.cached
        total.failed += r.failed
        total.parse_failures += r.parse_failures
        total.repaired += r.repaired
        total.spent_usd += r.spent_usd
        total.skipped_for_budget += r.skipped_for_budget
        total.stopped_reason = total.stopped_reason or r.stopped_reason
        for k, v in r.errors.items():
            total.errors[k] = total.errors.get(k, 0) + v
    return total


def judge_specs(config: RunConfig) -> dict[str, JudgeSpec]:
    specs: dict[str, JudgeSpec] = {}
    for spec in config.judges:
        if spec.model in specs:
            raise ConfigError(
                f"judge '{spec.model}' is listed twice; give each judge a distinct model string"
            )
        specs[spec.model] = spec
    return specs


def shard_of(request_id: str, shards: int) -> int:
    """Stable shard of a request for worker processes (not Python's salted hash)."""
    return int.from_bytes(hashlib.blake2b(request_id.encode(), digest_size=4).digest()) % shards


class Runner:
    """Sends one worker's share of a run's pending requests."""

    def __init__(
        self,
        store: RunStore | ReplyStore,
        config: RunConfig,
        *,
        rubric: Rubric | None = None,
        providers: dict[str, Provider] | None = None,
        max_cost_usd: float | None = None,
        shard: int = 0,
        shards: int = 1,
        repair: bool = True,
        on_result: Callable[[Outcome], None] | None = None,
        recorded: Counts | None = None,
        judges: frozenset[str] | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.rubric = rubric or load_rubric(config.rubric)
        self.specs = judge_specs(config)
        self._providers = providers if providers is not None else {}
        self.max_cost_usd = max_cost_usd
        self.budget = budget or Budget(max_cost_usd)
        """Shared with the batch engine of this process: spend, reservations, committed
        batches."""
        self.shard = shard
        self.shards = shards
        self.repair = repair
        self.on_result = on_result
        self.stats = RunStats()
        self.recorded = Counts() if recorded is None else recorded
        """What this runner has stored, counted at each flush: the progress display's source."""
        self._schema = output_schema(self.rubric)
        self._repair_text = repair_prompt(self.rubric)
        self.judges = judges
        """The judges whose pending requests this runner sends from the store (None: all)."""
        self.calls = Calls(self.specs, self.provider, shards)
        """Limits and retries; replaced by whoever shares them between runners (a batch
        engine's, a cluster shard's)."""
        self._inflight: dict[str, asyncio.Future[Outcome]] = {}
        self._pending_writes: list[Outcome] = []
        self._stop = False
        self._failure: Exception | None = None
        self._dispatcher: asyncio.Task[None] | None = None

    # -- setup -----------------------------------------------------------------------------

    def provider(self, judge: str) -> Provider:
        if judge not in self._providers:
            from judge.providers.factory import make_provider

            if judge not in self.specs:
                raise ConfigError(
                    f"the run store holds requests for judge '{judge}', which the config no "
                    f"longer lists (judges: {', '.join(self.specs) or 'none'})"
                )
            provider = make_provider(self.specs[judge])
            attach = getattr(provider, "attach", None)
            if attach is not None:
                # Only the recorded provider needs to know who sits in which slot.
                attach(RunDir(self.store.run_dir).read_key)
            self._providers[judge] = provider
        return self._providers[judge]

    # -- running ---------------------------------------------------------------------------

    async def run(
        self,
        requests: Sequence[JudgeRequest] | None = None,
        *,
        preparing: threading.Event | None = None,
        close: bool = True,
    ) -> RunStats:
        """Send `requests`, or (None) this shard's pending requests as the store holds them:
        read page by page, so memory holds a page and the requests in flight, and, while
        `preparing` is set (a prepare still storing requests in another thread), the rows it
        adds as they arrive."""
        with _COLLECTOR.paced():
            return await self._run(requests, preparing, close)

    async def _run(
        self,
        requests: Sequence[JudgeRequest] | None,
        preparing: threading.Event | None,
        close: bool,
    ) -> RunStats:
        feed = _listed(requests) if requests is not None else self._feed(preparing)
        writer = asyncio.create_task(self._writer())
        workers: list[asyncio.Task[None]] = []
        dispatcher = self._dispatcher = asyncio.create_task(self._dispatch(feed, workers))
        try:
            try:
                await dispatcher
            except asyncio.CancelledError:
                if self._failure is None:
                    raise
            if self._failure is not None:
                raise self._failure  # a worker's (a provider error stops the run)
            await asyncio.gather(*workers)
        finally:
            dispatcher.cancel()
            for task in workers:
                task.cancel()
            await asyncio.gather(dispatcher, *workers, return_exceptions=True)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
            self._flush()
            if close:
                await self.aclose()
        return self.stats

    async def aclose(self) -> None:
        """Close the providers' connections (`run` does, unless told not to)."""
        for provider in self._providers.values():
            await provider.aclose()

    @property
    def schema(self) -> dict[str, Any] | None:
        """The reply schema of structured output."""
        return self._schema

    def parse(self, text: str | None) -> Verdict | ParseFailure:
        return parse_reply(text, self.rubric)

    @property
    def budget_stopped(self) -> bool:
        return self._stop

    def stop_for_budget(self, skipped: int) -> None:
        """Nothing more is sent: the budget cannot take it."""
        self._stop = True
        self.stats.skipped_for_budget += skipped
        self.stats.stopped_reason = "budget"

    async def _dispatch(
        self, feed: AsyncIterator[list[JudgeRequest]], workers: list[asyncio.Task[None]]
    ) -> None:
        """Hand each request to its judge's workers (started at the judge's first request),
        then tell them the end. A worker that fails cancels this."""
        queues: dict[str, asyncio.Queue[JudgeRequest | None]] = {}
        counts: dict[str, int] = {}
        async for page in feed:
            for judge in sorted({r.judge for r in page} - queues.keys()):
                self.provider(judge)  # fail fast on a missing SDK or key, before any spend
                counts[judge] = max(1, self.specs[judge].max_connections // self.shards)
                queues[judge] = asyncio.Queue(maxsize=2 * counts[judge])
                workers += [
                    asyncio.create_task(self._worker(queues[judge])) for _ in range(counts[judge])
                ]
            for request in page:
                await queues[request.judge].put(request)
            # A put into a queue with room does not yield: without this, pages are read while a
            # prepare keeps storing them, and no worker sends anything until the queues fill.
            await asyncio.sleep(0)
        for judge, queue in queues.items():
            for _ in range(counts[judge]):
                await queue.put(None)

    async def _feed(self, preparing: threading.Event | None) -> AsyncIterator[list[JudgeRequest]]:
        """This shard's pending requests, a page at a time, in the order they were planned;
        while `preparing` is set, it waits for the rows still to come."""
        after = 0
        while True:
            finished = preparing is None or not preparing.is_set()
            rows = self.store.pending_after(after, _PAGE_ROWS)
            if rows:
                after = rows[-1][0]
                page = [r for _, r in rows]
                if self.judges is not None:
                    page = [r for r in page if r.judge in self.judges]
                if self.shards > 1:
                    page = [r for r in page if shard_of(r.request_id, self.shards) == self.shard]
                if page:
                    yield page
                continue
            if finished:
                return  # read after prepare ended: nothing more will come
            await asyncio.sleep(_POLL_S)

    async def _worker(self, queue: asyncio.Queue[JudgeRequest | None]) -> None:
        try:
            await self._work(queue)
        except Exception as exc:
            if self._failure is None:
                self._failure = exc
                if self._dispatcher is not None:
                    self._dispatcher.cancel()
            raise

    async def _work(self, queue: asyncio.Queue[JudgeRequest | None]) -> None:
        while (request := await queue.get()) is not None:
            if self._stop:
                self.stats.skipped_for_budget += 1
                continue
            outcome = await self._judge_once(request)
            if outcome is not None:
                self._pending_writes.append(outcome)
                if len(self._pending_writes) >= _FLUSH_ROWS:
                    self._flush()

    async def _writer(self) -> None:
        while True:
            await asyncio.sleep(_FLUSH_EVERY_S)
            self._flush()

    def _flush(self) -> None:
        if not self._pending_writes:
            return
        batch, self._pending_writes = self._pending_writes, []
        self.store.record_responses(batch)
        # Every row is new: a locked run sends each pending request from one runner only.
        self.recorded.add(batch)
        if self.on_result is not None:
            for outcome in batch:
                self.on_result(outcome)

    async def _judge_once(self, request: JudgeRequest) -> Outcome | None:
        # Same content in flight already (e.g. two identical prompts): wait for its answer.
        twin = self._inflight.get(request.cache_key)
        if twin is not None:
            response, verdict = await twin
            if response.error is not None:
                return _rekey(response, request.request_id), None
            cached = response.model_copy(
                update={
                    "request_id": request.request_id,
                    "cached": True,
                    "cost_usd": 0.0,
                    "attempts": 0,
                    "latency_s": None,
                }
            )
            self.stats.cached += 1
            return cached, verdict
        hit = cached_outcome(self.store, request, self.rubric)
        if hit is not None:
            self.stats.cached += 1
            return hit
        if self._over_budget(request):
            self._stop = True
            self.stats.skipped_for_budget += 1
            self.stats.stopped_reason = "budget"
            return None
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._inflight[request.cache_key] = future
        try:
            outcome = await self._send(request)
            future.set_result(outcome)
            return outcome
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: twins re-raise it themselves
            raise
        finally:
            del self._inflight[request.cache_key]

    async def _send(self, request: JudgeRequest) -> Outcome:
        provider = self.provider(request.judge)
        spec = self.specs[request.judge]
        # The reservation only matters to the budget check.
        estimate = 0.0 if self.budget.max_usd is None else worst_case_cost(request, spec)
        self.budget.reserved_usd += estimate
        started = time.perf_counter()
        self.stats.sent += 1
        try:
            call = ProviderCall(
                request=request,
                messages=request.messages,
                schema=self._schema if spec.structured_output else None,
                timeout_s=spec.timeout_s,
            )
            try:
                reply, attempts = await self.calls.call(provider, spec, call)
            except Exhausted as failure:
                return self._failed(request, spec, failure.error, failure.attempts, started), None
            usage, cost = _add(None, None, reply, spec)
            return await self.settle(
                request,
                reply.text,
                usage=usage,
                cost_usd=cost,
                attempts=attempts,
                started=started,
                provider_request_id=reply.provider_request_id,
            )
        finally:
            self.budget.reserved_usd -= estimate

    async def settle(
        self,
        request: JudgeRequest,
        text: str | None,
        *,
        usage: Usage,
        cost_usd: float | None,
        attempts: int,
        started: float | None,
        provider_request_id: str | None,
        batch_id: str | None = None,
    ) -> Outcome:
        """A received reply parsed into its verdict, with one synchronous repair turn when it
        does not parse (its usage and cost added): the response to store."""
        spec = self.specs[request.judge]
        cost = cost_usd
        verdict = parse_reply(text, self.rubric)
        if isinstance(verdict, ParseFailure) and self.repair and text:
            repair_call = ProviderCall(
                request=request,
                messages=(
                    *request.messages,
                    ChatMessage(role="assistant", content=text),
                    ChatMessage(role="user", content=self._repair_text),
                ),
                schema=self._schema if spec.structured_output else None,
                timeout_s=spec.timeout_s,
            )
            try:
                repaired, more = await self.calls.call(
                    self.provider(request.judge), spec, repair_call
                )
            except Exhausted as failure:
                if isinstance(failure.error, ProviderError):
                    raise failure.error from None
                # The first reply and its ParseFailure stand.
            else:
                attempts += more
                usage, cost = _add(usage, cost, repaired, spec)
                second = parse_reply(repaired.text, self.rubric)
                if isinstance(second, Verdict):
                    self.stats.repaired += 1
                    text, verdict = repaired.text, second
        if isinstance(verdict, ParseFailure):
            self.stats.parse_failures += 1
        self.stats.spent_usd += cost or 0.0
        self.budget.spent_usd += cost or 0.0
        response = JudgeResponse(
            request_id=request.request_id,
            text=text,
            usage=usage,
            cost_usd=cost,
            latency_s=None if started is None else time.perf_counter() - started,
            attempts=attempts,
            provider_request_id=provider_request_id,
            batch_id=batch_id,
        )
        return response, verdict

    def _failed(
        self, request: JudgeRequest, spec: JudgeSpec, exc: BaseException, attempts: int, t0: float
    ) -> JudgeResponse:
        if isinstance(exc, ProviderError):
            raise exc  # a configuration problem (missing SDK, key): stop the run, spend nothing
        self.stats.failed += 1
        kind = type(exc).__name__
        self.stats.errors[kind] = self.stats.errors.get(kind, 0) + 1
        return JudgeResponse(
            request_id=request.request_id,
            text=None,
            attempts=attempts,
            latency_s=time.perf_counter() - t0,
            error=_describe(exc, spec),
        )

    # -- budget ----------------------------------------------------------------------------

    def _over_budget(self, request: JudgeRequest) -> bool:
        if self.budget.max_usd is None:
            return False
        return not self.budget.allows(worst_case_cost(request, self.specs[request.judge]))


class _Collector:
    """The cyclic garbage collector kept out of judging's way, then restored (`paced`): the
    objects alive when judging starts (modules, the config, the providers, a page of requests)
    are frozen out of its scans, and young collections come every `_YOUNG_COLLECTION`
    allocations. Judging makes a few short-lived objects per request, which reference counting
    frees; at Python's default pace the collector rescanned the long-lived ones for ~0.05 ms a
    request. Runners can nest (a batch engine's beside the run's): the first in sets this, the
    last out restores it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = gc.get_threshold()

    @contextlib.contextmanager
    def paced(self) -> Iterator[None]:
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._saved = gc.get_threshold()
                young, *older = self._saved
                gc.freeze()
                gc.set_threshold(max(young, _YOUNG_COLLECTION), *older)
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    gc.set_threshold(*self._saved)
                    gc.unfreeze()


_COLLECTOR = _Collector()


async def _listed(requests: Sequence[JudgeRequest]) -> AsyncIterator[list[JudgeRequest]]:
    for start in range(0, len(requests), _PAGE_ROWS):
        yield list(requests[start : start + _PAGE_ROWS])


def _add(
    usage: Usage | None, cost: float | None, reply: ProviderReply, spec: JudgeSpec
) -> tuple[Usage, float | None]:
    """`reply`'s usage and cost added to those of the turns before it (None: the first)."""
    more = reply.usage
    total = more
    if usage is not None:
        total = Usage(
            input_tokens=usage.input_tokens + more.input_tokens,
            output_tokens=usage.output_tokens + more.output_tokens,
            cache_read_tokens=usage.cache_read_tokens + more.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens + more.cache_write_tokens,
        )
    this = reply.cost_usd if reply.cost_usd is not None else price(spec.model, reply.usage, spec)
    if this is None:
        return total, cost
    return total, (cost or 0.0) + this


def _rekey(response: JudgeResponse, request_id: str) -> JudgeResponse:
    return response.model_copy(update={"request_id": request_id, "attempts": 0, "cost_usd": None})


def _describe(exc: BaseException, spec: JudgeSpec) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    if spec.api_key is not None:
        text = text.replace(spec.api_key.get_secret_value(), "[key]")
    return text[:500]
