"""Judging a prepared run: its pending requests sent by this process and `workers - 1`
worker processes, each writing replies to the run's store as they arrive (so a killed run
resumes where it stopped). Progress is counted in memory as replies are stored (worker
processes publish theirs in shared memory: `judge.judging.tally`); the store is read once, at the
start."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING

from judge.config.run_config import RunConfig
from judge.judging.abort import until_aborted
from judge.judging.tally import BatchProgress, Board, Counts, Progress, Tally
from judge.run.spawning import main_left_behind
from judge.store.run_store import RunStore
from judge.store.rundir import RunDir

if TYPE_CHECKING:  # loaded when judging starts: `judge run` starts its prepare process first
    from judge.cluster import RayCluster
    from judge.judging.runner import Runner, RunStats

__all__ = [
    "Progress",
    "ProgressCallback",
    "WorkerPool",
    "execute",
    "progress_of",
    "simulator_for",
    "spent_usd",
    "worker_pool",
]

ProgressCallback = Callable[[Progress], None]

_REFRESH_S = 0.25
"""Seconds between progress snapshots handed to `on_progress` while judging."""
_ABORT_POLL_S = 0.1
"""How often judging looks whether the prepare it follows has failed."""


@dataclass(frozen=True)
class WorkerPool:
    """The worker processes of a multi-process run and the board they publish counts on."""

    executor: ProcessPoolExecutor
    board: Board


def execute(
    config: RunConfig,
    rundir: RunDir,
    *,
    workers: int = 1,
    max_cost_usd: float | None = None,
    cache_path: Path | None = None,
    on_progress: ProgressCallback | None = None,
    pool: WorkerPool | None = None,
    tally: Tally | None = None,
    preparing: threading.Event | None = None,
    abort: threading.Event | None = None,
    cluster: RayCluster | None = None,
) -> RunStats:
    """Judge the run's pending requests with `workers` processes: this one, and `workers - 1`
    from `pool` (a `worker_pool`, started here when not given), each sending its shard; or,
    with `cluster`, on Ray (`judge.cluster`: this process drives and stores).
    `on_progress` gets `tally`'s snapshots (a `Tally` from the store as it is now, when not
    given) every `_REFRESH_S` seconds and once at the end. `preparing` (one process only): set
    while a prepare is still storing requests; they are judged as they arrive. `abort` (with
    `preparing`): set when that prepare failed; judging stops at once, keeping what it stored."""
    if tally is None and on_progress is not None:
        with rundir.open_store() as store:
            tally = Tally(progress_of(store))
    if cluster is not None:
        if workers > 1:
            raise ValueError("a cluster run is driven from one process")
        return _run_on_cluster(
            config, rundir, max_cost_usd, cache_path, on_progress, tally, cluster,
            preparing, abort,
        )  # fmt: skip
    if workers <= 1:
        here = _run_in_process(
            config,
            rundir,
            max_cost_usd,
            cache_path,
            on_progress,
            tally,
            preparing=preparing,
            abort=abort,
        )
        return asyncio.run(here)
    if preparing is not None:
        raise ValueError("judging while preparing takes one process (workers=1)")
    if pool is None:
        with worker_pool(config, workers) as started:
            assert started is not None
            return execute(
                config,
                rundir,
                workers=workers,
                max_cost_usd=max_cost_usd,
                cache_path=cache_path,
                on_progress=on_progress,
                pool=started,
                tally=tally,
            )
    share = None if max_cost_usd is None else max_cost_usd / workers
    pool.board.clear()
    if tally is not None:
        for shard in range(1, workers):
            tally.include(partial(pool.board.read, shard))
    from judge.run.worker import run_shard

    futures = [
        pool.executor.submit(run_shard, config, str(rundir.path), cache_path, shard, workers, share)
        for shard in range(1, workers)
    ]
    # This process judges shard 0 meanwhile instead of idling: one process fewer to start.
    here = _run_in_process(
        config, rundir, share, cache_path, on_progress, tally, shard=0, shards=workers
    )
    mine = asyncio.run(here)
    while wait(futures, timeout=_REFRESH_S).not_done:
        if on_progress is not None and tally is not None:
            on_progress(tally.snapshot())
    results = [mine, *(f.result() for f in futures)]
    if on_progress is not None and tally is not None:
        on_progress(tally.snapshot())
    from judge.judging.runner import merge_stats

    return merge_stats(results)


@contextlib.contextmanager
def worker_pool(config: RunConfig, workers: int) -> Iterator[WorkerPool | None]:
    """The `workers - 1` worker processes of a multi-process run (None for one process),
    started at once: a spawned worker spends most of a second importing, which is otherwise
    wall time at the start of every run."""
    if workers <= 1:
        yield None
        return
    from judge.run.worker import start_worker, warm_up

    context = get_context("spawn")
    board = Board(context, workers)
    with ProcessPoolExecutor(
        max_workers=workers - 1,
        mp_context=context,
        # Ctrl-C is for the shards (`run_shard`), and `_interrupt` passes it on to them.
        initializer=start_worker,
        initargs=(board,),
    ) as executor:
        # A spawn-context pool starts its processes as tasks are submitted: all of them here.
        with main_left_behind():
            for _ in range(workers - 1):
                executor.submit(warm_up, config)
        try:
            yield WorkerPool(executor, board)
        except BaseException:
            _interrupt(executor)
            raise


def _interrupt(pool: ProcessPoolExecutor) -> None:
    """Stop the workers' shards now (Ctrl-C, an error here): leaving the pool waits for them,
    and they would go on sending (to a simulator this process no longer serves, retrying)
    long after this process gave up. A terminal's Ctrl-C reaches them anyway; a signal sent to
    this process alone does not. Each stops as at Ctrl-C: what it stored stays stored."""
    # The executor keeps its worker processes in `_processes` (pid -> Process; None once shut
    # down); there is no public way to reach them.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGINT)
    pool.shutdown(wait=False, cancel_futures=True)


async def _run_in_process(
    config: RunConfig,
    rundir: RunDir,
    max_cost_usd: float | None,
    cache_path: Path | None,
    on_progress: ProgressCallback | None,
    tally: Tally | None,
    *,
    shard: int = 0,
    shards: int = 1,
    preparing: threading.Event | None = None,
    abort: threading.Event | None = None,
) -> RunStats:
    from judge.batch import synchronous_judges
    from judge.judging.runner import Runner

    recorded = Counts()
    if tally is not None:
        tally.include(lambda: recorded)
    with rundir.open_store(cache_path) as store, store.checkpoints_apart():
        runner = Runner(
            store,
            config,
            max_cost_usd=max_cost_usd,
            shard=shard,
            shards=shards,
            recorded=recorded,
            judges=synchronous_judges(config.judges),
        )
        batches = None
        if tally is not None and any(j.mode == "batch" for j in config.judges) and shard == 0:
            batches = tally.batches = BatchProgress()
        return await _reporting(_judging(runner, preparing, abort, batches), on_progress, tally)


def _run_on_cluster(
    config: RunConfig,
    rundir: RunDir,
    max_cost_usd: float | None,
    cache_path: Path | None,
    on_progress: ProgressCallback | None,
    tally: Tally | None,
    cluster: RayCluster,
    preparing: threading.Event | None = None,
    abort: threading.Event | None = None,
) -> RunStats:
    from judge.cluster.driver import connected, judge_on_cluster

    recorded = Counts()
    if tally is not None:
        tally.include(lambda: recorded)
    with connected(cluster), rundir.open_store(cache_path) as store, store.checkpoints_apart():
        judging = judge_on_cluster(
            store, config, cluster, max_cost_usd=max_cost_usd, recorded=recorded,
            preparing=preparing, abort=abort,
        )  # fmt: skip
        return asyncio.run(_reporting(judging, on_progress, tally))


async def _reporting(
    judging: Awaitable[RunStats], on_progress: ProgressCallback | None, tally: Tally | None
) -> RunStats:
    """`judging`, with `tally`'s snapshots to `on_progress` every `_REFRESH_S` and at the end."""
    if on_progress is None or tally is None:
        return await judging

    async def tick() -> None:
        while True:
            on_progress(tally.snapshot())
            await asyncio.sleep(_REFRESH_S)

    ticker = asyncio.create_task(tick())
    try:
        return await judging
    finally:
        ticker.cancel()
        on_progress(tally.snapshot())


async def _judging(
    runner: Runner,
    preparing: threading.Event | None,
    abort: threading.Event | None,
    batches: BatchProgress | None = None,
) -> RunStats:
    """`runner.run` (and, in the first process, the batch engine of the batch-mode judges),
    cancelled as soon as `abort` is set (what it stored stays stored)."""
    # on abort, the runner's stats: the caller raises the reason
    return await until_aborted(
        _both(runner, preparing, batches), abort, lambda: runner.stats, _ABORT_POLL_S
    )


async def _both(
    runner: Runner, preparing: threading.Event | None, batches: BatchProgress | None
) -> RunStats:
    batch_specs = [j for j in runner.config.judges if j.mode == "batch"]
    if not batch_specs or runner.shard != 0:
        return await runner.run(preparing=preparing)
    from judge.batch.engine import BatchEngine
    from judge.judging.runner import Runner

    # Its own runner (the engine's synchronous calls: repairs, requests past the deadline),
    # sharing this process's budget, limits and progress counts.
    sync = Runner(
        runner.store,
        runner.config,
        rubric=runner.rubric,
        judges=frozenset(j.model for j in batch_specs),
        budget=runner.budget,
        recorded=runner.recorded,
    )
    sync.calls = runner.calls
    engine = BatchEngine(sync, batch_specs, preparing=preparing, progress=batches)
    mine, _ = await asyncio.gather(runner.run(preparing=preparing), engine.run())
    from judge.judging.runner import merge_stats

    return merge_stats([mine, sync.stats])


def progress_of(store: RunStore) -> Progress:
    """What the store holds now: read once when judging starts, and on demand (the service's
    run status, where an interrupted run stopped); never per refresh while judging."""
    counts = store.counts()
    return Progress(
        total=counts["requests"],
        done=counts["responses"],
        cached=counts["cached"],
        failed=counts["errors"],
        parse_failures=counts["parse_failures"],
        spent_usd=spent_usd(store),
    )


def spent_usd(store: RunStore) -> float:
    (value,) = store.connection.execute(
        "SELECT COALESCE(SUM(cost_usd), 0) FROM judge_responses"
    ).fetchone()
    return float(value)


@contextlib.contextmanager
def simulator_for(config: RunConfig) -> Iterator[RunConfig]:
    """Start the built-in simulator when the config asks for it (`simulator:`) and point the
    judges whose base_url is `simulator` at it."""
    if config.simulator is None:
        yield config
        return
    from judge.simulator import running_simulator

    with running_simulator(config.simulator) as sim:
        judges = []
        for judge in config.judges:
            if judge.base_url == "simulator":
                # The OpenAI wire format lives under /v1; Anthropic's and Gemini's at the root.
                native = judge.provider in ("anthropic", "google")
                url = sim.base_url if native else sim.openai_base_url
                update: dict[str, object] = {"base_url": url}
                if judge.input_cost_per_mtok is None and judge.output_cost_per_mtok is None:
                    # Free, as pricing prices a simulator judge, once its URL no longer says so.
                    update |= {"input_cost_per_mtok": 0.0, "output_cost_per_mtok": 0.0}
                judge = judge.model_copy(update=update)
            judges.append(judge)
        yield config.model_copy(update={"judges": judges})
