"""A shard actor: judges the shards the driver sends it with the runner code a local run uses
(providers, connection limits, retries, parsing, repair), and streams the replies back as
they arrive, so what a dying actor had answered is mostly stored already. Its providers and
its limits live as long as the actor and are shared by the shards it works on at once."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import ray

from judge.cluster.limiter import ClusterLimit
from judge.config.run_config import RunConfig
from judge.judging.calls import Calls, Limiter, LimiterFor
from judge.judging.runner import Outcome, Runner, RunStats, judge_specs
from judge.providers.base import Provider
from judge.rubric.rubrics import Rubric
from judge.types import JudgeRequest

_YIELD_S = 0.05
"""Replies are sent back at least this often (and at every runner flush)."""


class _Replies:
    """Where a shard's runner stores its replies: a buffer the actor empties into the stream
    back to the driver. The driver answered every cached request before sending the shard."""

    run_dir: Path | None = None

    def __init__(self) -> None:
        self._rows: list[Outcome] = []

    def pending_after(self, rowid: int, limit: int) -> list[tuple[int, JudgeRequest]]:
        return []  # a shard is handed its requests

    def cached_response(self, cache_key: str) -> None:
        return None

    def record_responses(self, outcomes: Sequence[Outcome]) -> int:
        self._rows.extend(outcomes)
        return len(outcomes)

    def take(self) -> list[Outcome]:
        rows, self._rows = self._rows, []
        return rows


class ShardRunner:
    """What a shard actor judges with, usable in any Ray worker (a Ray Data stage's actors
    too): the runner code a local run uses, whose replies are handed back instead of stored.
    Its providers and limits live as long as it does and are shared by everything it judges
    at once. `shards`: processes splitting each endpoint's connections (and, without
    `limiter_for`, its rate limits) evenly."""

    def __init__(
        self,
        config: RunConfig,
        rubric: Rubric,
        shards: int,
        limiter_for: LimiterFor | None = None,
    ) -> None:
        self._config = config
        self._rubric = rubric
        self._shards = shards
        self._specs = judge_specs(config)
        self._providers: dict[str, Provider] = {}
        self._calls = Calls(self._specs, self._provider, shards, limiter_for=limiter_for)

    def _provider(self, judge: str) -> Provider:
        if judge not in self._providers:
            from judge.providers.factory import make_provider

            self._providers[judge] = make_provider(self._specs[judge])
        return self._providers[judge]

    async def judge(
        self, requests: Sequence[JudgeRequest], max_cost_usd: float | None
    ) -> AsyncIterator[list[Outcome] | RunStats]:
        """Replies in chunks, one every `_YIELD_S` while they arrive, then the `RunStats`."""
        replies = _Replies()
        runner = Runner(
            replies,
            self._config,
            rubric=self._rubric,
            providers=self._providers,
            max_cost_usd=max_cost_usd,
            shards=self._shards,
        )
        runner.calls = self._calls
        work = asyncio.ensure_future(runner.run(requests, close=False))
        try:
            while True:
                done, _ = await asyncio.wait({work}, timeout=_YIELD_S)
                if rows := replies.take():
                    yield rows
                if done:
                    break
        finally:
            work.cancel()
        stats = work.result()
        if rows := replies.take():
            yield rows
        yield stats

    async def judge_all(self, requests: Sequence[JudgeRequest]) -> list[Outcome]:
        """Every reply of `requests` at once (no budget)."""
        outcomes: list[Outcome] = []
        async for chunk in self.judge(requests, None):
            if not isinstance(chunk, RunStats):
                outcomes += chunk
        return outcomes


@ray.remote(num_cpus=1)
class ShardWorker:
    def __init__(self, config: RunConfig, rubric: Rubric, actors: int, budget: str) -> None:
        # By name, not handle: Ray cannot restart an actor whose constructor took a handle.
        self._budget_name = budget
        self._budget: Any = None
        # Connections split over the actors; rates held for all of them by one actor.
        self._runner = ShardRunner(config, rubric, actors, limiter_for=self._limiter)

    def pid(self) -> int:
        return os.getpid()

    def _limiter(self, key: str, rpm: float | None, tpm: float | None) -> Limiter:
        if self._budget is None:
            self._budget = ray.get_actor(self._budget_name)
        return ClusterLimit(self._budget, key, rpm, tpm)

    async def judge(
        self, requests: list[JudgeRequest], max_cost_usd: float | None
    ) -> AsyncIterator[list[Outcome] | RunStats]:
        """Replies in chunks as they are stored, then this shard's `RunStats`."""
        async for chunk in self._runner.judge(requests, max_cost_usd):
            yield chunk
