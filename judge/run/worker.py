"""What a worker process of a multi-process run does (`judge.run.execute.worker_pool`). Apart
from `judge.run`, so a spawned worker imports the runner and what it needs, not the prepare,
analysis and report modules: start-up is part of every run's wall time and CPU."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path

from judge.batch import synchronous_judges
from judge.config.run_config import RunConfig
from judge.judging.runner import Runner, RunStats
from judge.judging.tally import Board, Counts
from judge.store.run_store import RunStore

_board: Board | None = None
"""Where this process's shards publish their counts (the parent's progress display)."""


def start_worker(board: Board) -> None:
    """A worker process's initializer: ignore Ctrl-C between tasks (an idle worker has nothing
    to stop, and would die with a traceback; `run_shard` handles it during a shard), and keep
    the board its shards' counts go to."""
    global _board
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _board = board


def run_shard(
    config: RunConfig,
    run_dir: str,
    cache_path: Path | None,
    shard: int,
    shards: int,
    max_cost_usd: float | None,
) -> RunStats:
    """A worker process's whole job: its shard of the run's pending requests."""

    async def main() -> RunStats:
        recorded = Counts() if _board is None else _board.publisher(shard)
        with RunStore.open(run_dir, cache_path) as store, store.checkpoints_apart():
            runner = Runner(
                store,
                config,
                shard=shard,
                shards=shards,
                max_cost_usd=max_cost_usd,
                recorded=recorded,
                # Batch-mode judges are the first process's (`judge.run.execute`).
                judges=synchronous_judges(config.judges),
            )
            return await runner.run()

    # During its shard a worker stops at Ctrl-C as the parent does, keeping what it stored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return asyncio.run(main())
    finally:
        signal.signal(signal.SIGINT, previous)


def warm_up(config: RunConfig) -> None:
    """A worker process's first task, run while the parent still prepares the run: import the
    judges' transports and SDKs (LiteLLM takes seconds). Errors are left for the run itself to
    report."""
    from judge.providers.factory import make_provider

    for spec in config.judges:
        with contextlib.suppress(Exception):
            make_provider(spec)
