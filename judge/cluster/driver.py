"""The driver of a run judged on Ray: reads the run's pending requests page by page (memory
holds the shards in flight), answers what the response cache holds, cuts the rest into
shards of whole items (both orders and every judge of an item together), keeps
`shards_per_actor` shards going on each shard actor, and stores the replies they stream back
in the run store as they come, exactly as a local runner does.

An actor that dies (its worker process killed, its node lost) is restarted by Ray, and its
shards are sent again without the requests whose replies were already stored: what is sent
twice is at most what was in flight on that actor. The driver dying is an ordinary resume."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import ray
from ray.exceptions import ActorUnavailableError, RayActorError, RayTaskError

from judge.cluster import RayCluster, check_cluster_config
from judge.cluster.limiter import RateBudget
from judge.cluster.shard import ShardWorker
from judge.config import RunConfig
from judge.errors import JudgeError
from judge.parsing import parse_reply
from judge.rubrics import Rubric, load_rubric
from judge.runner import Outcome, RunStats, merge_stats
from judge.store import RunStore
from judge.tally import Counts
from judge.types import JudgeRequest

_PAGE = 1000
_RESTART_WAIT_S = 0.5
"""Before a shard whose actor died is sent again (Ray is restarting the actor)."""


@contextlib.contextmanager
def connected(cluster: RayCluster) -> Any:
    """Ray, connected for the run: an existing connection in this process is used as it is;
    otherwise `cluster.address` is joined (None: a cluster on this machine, stopped after)."""
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
) -> RunStats:
    check_cluster_config(config)
    actors = cluster.actors or max(1, int(ray.cluster_resources().get("CPU", 1)))
    name = f"judge-rate-budget-{os.urandom(6).hex()}"
    budget = RateBudget.options(name=name).remote()  # type: ignore[attr-defined]
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
    driver = _Driver(store, cluster, workers, max_cost_usd, recorded, rubric)
    try:
        return await driver.run()
    finally:
        for worker in [*workers, budget]:
            with contextlib.suppress(Exception):
                ray.kill(worker)


class _Driver:
    def __init__(
        self,
        store: RunStore,
        cluster: RayCluster,
        workers: list[Any],
        max_cost_usd: float | None,
        recorded: Counts,
        rubric: Rubric,
    ) -> None:
        self.store = store
        self.rubric = rubric
        self.cluster = cluster
        self.workers = workers
        self.max_cost_usd = max_cost_usd
        self.recorded = recorded
        self.stats: list[RunStats] = []
        self.stopped = False
        self._load = [0] * len(workers)
        self._handed = 0.0
        """Budget parts of the shards in flight."""
        self._spent_done = 0.0
        """What the finished shards' replies cost."""
        self._slots = asyncio.Semaphore(len(workers) * cluster.shards_per_actor)
        self._failure: BaseException | None = None

    async def run(self) -> RunStats:
        tasks: set[asyncio.Task[None]] = set()
        try:
            async for shard in self._shards():
                await self._slots.acquire()
                if self._failure is not None or self.stopped:
                    self._slots.release()
                    break
                task = asyncio.create_task(self._run(shard))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            for task in tasks:
                task.cancel()
        if self._failure is not None:
            raise self._failure
        return merge_stats(self.stats or [RunStats()])

    async def _shards(self) -> AsyncIterator[list[JudgeRequest]]:
        """Pending requests cut into shards of whole items, cache hits stored on the way."""
        shard: list[JudgeRequest] = []
        after = 0
        while rows := self.store.pending_after(after, _PAGE):
            after = rows[-1][0]
            hits: list[Outcome] = []
            for _, request in rows:
                entry = self.store.cached_response(request.cache_key)
                if entry is not None:
                    response = entry.to_response(request.request_id)
                    hits.append((response, parse_reply(response.text, self.rubric)))
                    continue
                if len(shard) >= (self.cluster.shard_requests or 1) and (
                    shard[-1].item_id != request.item_id
                ):
                    yield shard
                    shard = []
                shard.append(request)
            self._store(hits, cached=True)
        if shard:
            yield shard

    def _store(self, rows: list[Outcome], *, cached: bool = False) -> None:
        if not rows:
            return
        self.store.record_responses(rows)
        self.recorded.add(rows)
        if cached:
            self.stats.append(RunStats(cached=len(rows)))

    def _share(self) -> float | None:
        """A new shard's part of the budget: what is neither spent by finished shards nor
        handed to shards in flight, split over the free slots (so the shards' parts never add
        up to more than the budget, however they finish)."""
        if self.max_cost_usd is None:
            return None
        free = len(self.workers) * self.cluster.shards_per_actor - sum(self._load)
        left = self.max_cost_usd - self._spent_done - self._handed
        return max(0.0, left) / max(1, free)

    async def _run(self, shard: list[JudgeRequest]) -> None:
        index = min(range(len(self.workers)), key=self._load.__getitem__)
        share = self._share()
        self._load[index] += 1
        self._handed += share or 0.0
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
                        self.stats.append(item)
                        if item.stopped_reason == "budget":
                            self.stopped = True
                        return
                    self._store(item)
                    for response, _ in item:
                        remaining.pop(response.request_id, None)
                        spent[0] += response.cost_usd or 0.0
                return
            except RayTaskError as exc:
                raise _cause(exc) from None
            except (RayActorError, ActorUnavailableError):
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
