"""The driver of a run judged on Ray: reads the run's pending requests page by page (memory
holds the shards in flight), answers what the response cache holds, cuts the rest into
shards of whole items (both orders and every judge of an item together), keeps
`shards_per_actor` shards going on each shard actor, and stores the replies they stream back
in the run store as they come, exactly as a local runner does. While a prepare is still
storing requests (`preparing`), it follows the store as a local runner does, so the cluster
starts and judges while the rest of the run is rendered.

An actor that dies (its worker process killed, its node lost) is restarted by Ray, and its
shards are sent again without the requests whose replies were already stored: what is sent
twice is at most what was in flight on that actor. The driver dying is an ordinary resume."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import Any

import ray
from ray.exceptions import ActorUnavailableError, ObjectLostError, RayActorError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from judge.cluster import RayCluster, check_cluster_config
from judge.cluster.limiter import ClusterLost, RateBudget
from judge.cluster.shard import ShardWorker
from judge.config.run_config import RunConfig
from judge.errors import JudgeError
from judge.judging.abort import until_aborted
from judge.judging.cost_estimate import worst_case_cost
from judge.judging.runner import Outcome, RunStats, cached_outcome, judge_specs, merge_stats
from judge.judging.tally import Counts
from judge.rubric.rubrics import Rubric, load_rubric
from judge.store.run_store import RunStore
from judge.types import JudgeRequest

_PAGE = 1000
_POLL_S = 0.05
"""How often a driver ahead of a running prepare looks for newly stored requests."""
_RESTART_WAIT_S = 0.5
"""Before a shard whose actor died is sent again (Ray is restarting the actor)."""


@contextlib.contextmanager
def connected(cluster: RayCluster) -> Iterator[None]:
    """Ray, connected for the run: an existing connection in this process is used as it is;
    otherwise `cluster.address` is joined (`RayCluster.address`), and left after the run."""
    if ray.is_initialized():
        yield
        return
    ray.init(
        address=cluster.address,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield
    finally:
        ray.shutdown()


async def judge_on_cluster(
    store: RunStore,
    config: RunConfig,
    cluster: RayCluster,
    *,
    max_cost_usd: float | None,
    recorded: Counts,
    preparing: threading.Event | None = None,
    abort: threading.Event | None = None,
) -> RunStats:
    """Judge the run's pending requests on the cluster `connected` joined. `preparing`: set
    while a prepare in another process still stores requests (they are judged as they
    arrive); `abort`: set when that prepare failed, and judging stops at once, keeping what
    it stored (the caller raises the reason)."""
    check_cluster_config(config)
    actors = cluster.actors or _actors_for(config)
    name = f"judge-rate-budget-{os.urandom(6).hex()}"
    # On this node (if it can): the limiter is every shard's, and dies with this process.
    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
    budget = RateBudget.options(name=name, scheduling_strategy=here).remote()  # type: ignore[attr-defined]
    rubric = load_rubric(config.rubric)
    workers = [
        ShardWorker.options(max_restarts=-1, max_task_retries=0).remote(  # type: ignore[attr-defined]
            config, rubric, actors, name
        )
        for _ in range(actors)
    ]
    if cluster.shard_requests is None:
        per_actor = sum(max(1, j.max_connections // actors) for j in config.judges)
        cluster = replace(cluster, shard_requests=max(16, per_actor))
    specs = judge_specs(config)
    driver = _Driver(
        store, cluster, workers, max_cost_usd, recorded, rubric,
        worst_case=lambda r: worst_case_cost(r, specs[r.judge]), preparing=preparing,
    )  # fmt: skip
    try:
        return await _unless_aborted(driver, abort)
    finally:
        for worker in [*workers, budget]:
            with contextlib.suppress(Exception):
                ray.kill(worker)


def _actors_for(config: RunConfig) -> int:
    """One actor a CPU, but never more actors than connections (each holds at least one). On
    one machine, one CPU is left to this process: its cache look-ups and store writes are a
    core's work at full speed, and an actor that shares a core with it judges no faster than
    the actors beside it could have, yet costs its own Ray threads and streams per request
    (measured: one actor on 2 CPUs judged as fast as two, with a quarter less CPU)."""
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    if cpus > 1 and sum(1 for node in ray.nodes() if node.get("Alive")) == 1:
        cpus -= 1
    return min(cpus, max(j.max_connections for j in config.judges))


async def _unless_aborted(driver: _Driver, abort: threading.Event | None) -> RunStats:
    """`driver.run()`, stopped as soon as `abort` is set: the stats of what it stored."""
    return await until_aborted(
        driver.run(), abort, lambda: merge_stats(driver.stats or [RunStats()]), _POLL_S
    )


class _Driver:
    def __init__(
        self,
        store: RunStore,
        cluster: RayCluster,
        workers: list[Any],
        max_cost_usd: float | None,
        recorded: Counts,
        rubric: Rubric,
        *,
        worst_case: Callable[[JudgeRequest], float],
        preparing: threading.Event | None = None,
    ) -> None:
        self.store = store
        self.preparing = preparing
        self.rubric = rubric
        self.worst_case = worst_case
        self.cluster = cluster
        self.workers = workers
        self.max_cost_usd = max_cost_usd
        self.recorded = recorded
        self.stats: list[RunStats] = []
        self._load = [0] * len(workers)
        self._handed = 0.0
        """Budget parts of the shards in flight."""
        self._spent_done = 0.0
        """What the finished shards' replies cost."""
        self._slots = asyncio.Semaphore(len(workers) * cluster.shards_per_actor)
        self._requeued: deque[list[JudgeRequest]] = deque()
        """Shards whose part of the budget ran out before they were sent in full."""
        self._failure: BaseException | None = None

    async def run(self) -> RunStats:
        tasks: set[asyncio.Task[None]] = set()
        source = aiter(self._shards())
        exhausted = False
        try:
            while self._failure is None:
                if self._requeued:
                    shard = self._requeued.popleft()
                elif not exhausted:
                    if (read := await anext(source, None)) is None:
                        exhausted = True
                        continue
                    shard = read
                elif tasks:  # shards stopped by their part of the budget may come back
                    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                    continue
                else:
                    break
                await self._slots.acquire()
                first = self.worst_case(shard[0])
                share = self._share(first)
                if share is not None and share < first:
                    # Not even its first request is affordable now: wait for a shard in flight
                    # to give back what it did not spend; with none in flight, the budget is
                    # spent (as a local run stops before a request it cannot pay for).
                    self._slots.release()
                    if not tasks:
                        self._stop_for_budget(shard)
                        break
                    self._requeued.appendleft(shard)
                    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                    continue
                index = min(range(len(self.workers)), key=self._load.__getitem__)
                self._load[index] += 1
                self._handed += share or 0.0
                task = asyncio.create_task(self._run(index, shard, share))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            for task in tasks:
                task.cancel()
        if self._failure is not None:
            raise self._failure
        return merge_stats(self.stats or [RunStats()])

    def _stop_for_budget(self, shard: list[JudgeRequest]) -> None:
        unsent = len(shard) + sum(len(s) for s in self._requeued)
        self.stats.append(RunStats(skipped_for_budget=unsent, stopped_reason="budget"))

    async def _shards(self) -> AsyncIterator[list[JudgeRequest]]:
        """Pending requests cut into shards of whole items, cache hits stored on the way; while
        a prepare runs, the rows it stores as they arrive. A prepare stores whole items (a chunk
        of them in one transaction), so when nothing more is stored yet, what was read ends
        with a whole item, and it goes out rather than waiting for a full shard."""
        shard: list[JudgeRequest] = []
        after = 0
        while True:
            finished = self.preparing is None or not self.preparing.is_set()
            rows = self.store.pending_after(after, _PAGE)
            if not rows:
                if shard:
                    yield shard
                    shard = []
                if finished:
                    return  # read after the prepare ended: nothing more will come
                await asyncio.sleep(_POLL_S)
                continue
            after = rows[-1][0]
            hits: list[Outcome] = []
            for _, request in rows:
                hit = cached_outcome(self.store, request, self.rubric)
                if hit is not None:
                    hits.append(hit)
                    continue
                if len(shard) >= (self.cluster.shard_requests or 1) and (
                    shard[-1].item_id != request.item_id
                ):
                    yield shard
                    shard = []
                shard.append(request)
            self._store(hits, cached=True)

    def _store(self, rows: list[Outcome], *, cached: bool = False) -> None:
        if not rows:
            return
        self.store.record_responses(rows)
        self.recorded.add(rows)
        if cached:
            self.stats.append(RunStats(cached=len(rows)))

    def _share(self, first: float) -> float | None:
        """A new shard's part of the budget: what is neither spent by finished shards nor
        handed to shards in flight, split over the free slots (this one's included), so the
        parts never add up to more than the budget; at least its `first` request's worst case
        where what is left covers it. A shard's runner holds back each request's worst case
        before sending it, as a local runner does: it stops when its part cannot pay for the
        next, and what it did not send is queued again."""
        if self.max_cost_usd is None:
            return None
        free = len(self.workers) * self.cluster.shards_per_actor - sum(self._load)
        left = max(0.0, self.max_cost_usd - self._spent_done - self._handed)
        return max(left / max(1, free), min(left, first))

    async def _run(self, index: int, shard: list[JudgeRequest], share: float | None) -> None:
        """A dispatched shard (its actor's load and its budget part already counted, when it
        was dispatched: the next dispatch may come before this task first runs)."""
        spent = [0.0]
        try:
            await self._judge(index, shard, share, spent)
        except BaseException as exc:
            if self._failure is None and not isinstance(exc, asyncio.CancelledError):
                self._failure = exc
            raise
        finally:
            self._load[index] -= 1
            self._handed -= share or 0.0
            self._spent_done += spent[0]
            self._slots.release()

    async def _judge(
        self, index: int, shard: list[JudgeRequest], share: float | None, spent: list[float]
    ) -> None:
        """One shard to the end: sent again, without what was stored and with what is left of
        its budget part, while its actor dies. `spent[0]`: what its replies cost."""
        remaining = {r.request_id: r for r in shard}
        for attempt in range(self.cluster.max_shard_tries + 1):
            left = None if share is None else max(0.0, share - spent[0])
            stream = self.workers[index].judge.remote(list(remaining.values()), left)
            try:
                async for ref in stream:
                    item = await ref
                    if isinstance(item, RunStats):
                        if item.stopped_reason == "budget" and remaining:
                            # Not a stop of the run: these go out again with a new part.
                            self._requeued.append(list(remaining.values()))
                            item = replace(item, stopped_reason=None, skipped_for_budget=0)
                        self.stats.append(item)
                        return
                    self._store(item)
                    for response, _ in item:
                        remaining.pop(response.request_id, None)
                        spent[0] += response.cost_usd or 0.0
                return
            except RayTaskError as exc:
                cause = _cause(exc)
                if not isinstance(cause, ClusterLost):
                    raise cause from None
            except ActorUnavailableError:
                # The task may still be running on the actor: stop it before resending.
                with contextlib.suppress(Exception):
                    ray.cancel(stream)
            except (RayActorError, ObjectLostError):
                pass
            if not remaining:
                return
            await asyncio.sleep(_RESTART_WAIT_S * (attempt + 1))
        raise JudgeError(
            f"a shard's actor died {self.cluster.max_shard_tries + 1} times; what was answered "
            "is stored: run again to resume"
        )


def _cause(exc: RayTaskError) -> BaseException:
    """The exception a shard raised (a provider's missing key, ...), not Ray's wrapper."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc
