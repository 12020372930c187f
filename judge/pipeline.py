"""`judge run`: prepare -> judge (worker processes, resumable) -> aggregate -> outputs.

Outputs in the run dir: `judgments.jsonl` and `judgments.parquet` (one unblinded judgment per
pair and judge, plus `panel` rows when several judges grade), and `summary.json`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from judge.aggregate import (
    JudgeStats,
    aggregate_absolute,
    aggregate_pairwise,
    as_rows,
)
from judge.config import RunConfig
from judge.errors import DataError
from judge.files import write_json, write_jsonl
from judge.prepare import KEY_FILENAME, PrepareSummary, prepare_run
from judge.runner import Runner, RunStats, estimate_run, run_shard, warm_up
from judge.store import RunStore
from judge.types import BlindingKey

JUDGMENTS_JSONL = "judgments.jsonl"
JUDGMENTS_PARQUET = "judgments.parquet"
SUMMARY_JSON = "summary.json"


@dataclass
class Progress:
    total: int
    done: int
    cached: int
    failed: int
    parse_failures: int
    spent_usd: float


ProgressCallback = Callable[[Progress], None]


@dataclass
class RunOutcome:
    run_dir: Path
    prepared: PrepareSummary
    stats: RunStats
    summary: dict[str, Any]
    complete: bool
    """Every request has a stored response (verdict, parse failure or error)."""


def run_pipeline(
    config: RunConfig,
    run_dir: Path,
    *,
    workers: int = 1,
    max_cost_usd: float | None = None,
    cache_path: Path | None = None,
    on_progress: ProgressCallback | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> RunOutcome:
    # Worker processes start (and import) at once, while this one prepares the run.
    with _worker_pool(config, workers) as pool:
        # Prepared from the config as written (a `simulator` base_url stays a name, not a
        # port), so the run's config hash and cache keys are stable across restarts.
        prepared = prepare_run(config, run_dir, log=log)
        cache = cache_file(config, run_dir, cache_path)
        budget = max_cost_usd if max_cost_usd is not None else config.budget.max_cost_usd
        if budget is not None:
            with RunStore.open(run_dir) as store:
                budget = max(0.0, budget - spent_usd(store))
        log(f"judging {prepared.requests} requests with {workers} worker(s)")
        with _simulator(config) as live:
            stats = execute(
                live,
                run_dir,
                workers=workers,
                max_cost_usd=budget,
                cache_path=cache,
                on_progress=on_progress,
                pool=pool,
            )
    summary = write_outputs(config, run_dir)
    complete = summary["counts"]["pending"] == 0
    if complete:
        summary = finish_run(config, run_dir, log=log)
    return RunOutcome(run_dir, prepared, stats, summary, complete)


def finish_run(
    config: RunConfig, run_dir: Path, log: Callable[[str], None] = lambda _msg: None
) -> dict[str, Any]:
    """Calibrate, compare and write the report of a run whose judging is done (no judge
    calls: `judge report` re-renders with this)."""
    from judge.analysis import analyse_run
    from judge.report import write_report

    log("calibrating and comparing")
    summary = analyse_run(config, run_dir)
    write_report(run_dir)
    return summary


def stored_config(run_dir: Path) -> RunConfig:
    """The config a run was prepared with (paths already absolute)."""
    if not (run_dir / "store.sqlite").exists():
        raise DataError("not a run directory (no store.sqlite)", path=str(run_dir))
    with RunStore.open(run_dir) as store:
        raw = store.get_meta("config")
    if raw is None:
        raise DataError("this run was never prepared (no config in its store)", path=str(run_dir))
    return RunConfig.model_validate(raw)


def cache_file(config: RunConfig, run_dir: Path, explicit: Path | None = None) -> Path:
    """The shared response cache: explicit, else config, else beside the run dir."""
    return explicit or config.cache or run_dir.parent / "response_cache.sqlite"


def dry_run(
    config: RunConfig, run_dir: Path, log: Callable[[str], None], cache_path: Path | None = None
) -> dict[str, Any]:
    prepare_run(config, run_dir, log=log)
    with RunStore.open(run_dir, cache_file(config, run_dir, cache_path)) as store:
        return estimate_run(store, config)


def execute(
    config: RunConfig,
    run_dir: Path,
    *,
    workers: int = 1,
    max_cost_usd: float | None = None,
    cache_path: Path | None = None,
    on_progress: ProgressCallback | None = None,
    pool: ProcessPoolExecutor | None = None,
) -> RunStats:
    """Judge the run's pending requests with `workers` processes: this one, and `workers - 1`
    from `pool` (a `_worker_pool`, started here when not given), each sending its shard."""
    if workers <= 1:
        return asyncio.run(_run_in_process(config, run_dir, max_cost_usd, cache_path, on_progress))
    if pool is None:
        with _worker_pool(config, workers) as started:
            assert started is not None
            return execute(
                config,
                run_dir,
                workers=workers,
                max_cost_usd=max_cost_usd,
                cache_path=cache_path,
                on_progress=on_progress,
                pool=started,
            )
    share = None if max_cost_usd is None else max_cost_usd / workers
    futures = [
        pool.submit(run_shard, config, str(run_dir), cache_path, shard, workers, share)
        for shard in range(1, workers)
    ]
    # This process judges shard 0 meanwhile instead of idling: one process fewer to start.
    here = _run_in_process(config, run_dir, share, cache_path, on_progress, shard=0, shards=workers)
    mine = asyncio.run(here)
    with RunStore.open(run_dir) as store:
        while wait(futures, timeout=0.25).not_done:
            if on_progress is not None:
                on_progress(progress_of(store))
        results = [mine, *(f.result() for f in futures)]
        if on_progress is not None:
            on_progress(progress_of(store))
    return _merge(results)


@contextlib.contextmanager
def _worker_pool(config: RunConfig, workers: int) -> Iterator[ProcessPoolExecutor | None]:
    """The `workers - 1` worker processes of a multi-process run (None for one process),
    started at once: a spawned worker spends most of a second importing, which is otherwise
    wall time at the start of every run."""
    if workers <= 1:
        yield None
        return
    with ProcessPoolExecutor(max_workers=workers - 1, mp_context=get_context("spawn")) as pool:
        for _ in range(workers - 1):
            pool.submit(warm_up, config)
        yield pool


async def _run_in_process(
    config: RunConfig,
    run_dir: Path,
    max_cost_usd: float | None,
    cache_path: Path | None,
    on_progress: ProgressCallback | None,
    *,
    shard: int = 0,
    shards: int = 1,
) -> RunStats:
    with RunStore.open(run_dir, cache_path) as store:
        runner = Runner(store, config, max_cost_usd=max_cost_usd, shard=shard, shards=shards)
        ticker = None
        if on_progress is not None:

            async def tick() -> None:
                while True:
                    on_progress(progress_of(store))
                    await asyncio.sleep(0.25)

            ticker = asyncio.create_task(tick())
        try:
            return await runner.run()
        finally:
            if ticker is not None:
                ticker.cancel()
                on_progress(progress_of(store))  # type: ignore[misc]


def _merge(results: list[RunStats]) -> RunStats:
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


def progress_of(store: RunStore) -> Progress:
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


def write_outputs(config: RunConfig, run_dir: Path) -> dict[str, Any]:
    """Aggregate what the store holds and write judgments + summary (re-runnable any time)."""
    key = BlindingKey.model_validate_json((run_dir / KEY_FILENAME).read_text(encoding="utf-8"))
    with RunStore.open(run_dir) as store:
        meta = store.all_meta()
        counts = store.counts()
        lengths = {b.blind_id: len(b.output) for b in store.iter_blinded()}
        pairs = list(store.iter_pairs())
        results = list(store.iter_results())
    kind = meta.get("rubric", {}).get("kind") or (
        "absolute" if results and results[0].request.kind == "absolute" else "pairwise"
    )
    if kind == "absolute":
        score_rows, stats = aggregate_absolute(results, key)
        rows = as_rows(score_rows)
        overview = _score_overview(score_rows)
    else:
        pair_rows, stats = aggregate_pairwise(results, pairs, key, lengths, config.aggregate)
        rows = as_rows(pair_rows)
        overview = _win_overview(pair_rows)
    # Responses arrive in completion order; a fixed row order keeps the files, and the
    # bootstrap draws that index them, identical from run to run.
    rows.sort(key=_row_order)
    write_jsonl(run_dir / JUDGMENTS_JSONL, rows)
    _write_parquet(run_dir / JUDGMENTS_PARQUET, rows)
    summary = {
        "run": {
            "name": config.name,
            "question": config.question,
            "rubric": meta.get("rubric"),
            "judges": [j.model_dump(mode="json", exclude={"api_key"}) for j in config.judges],
            "orders": config.orders,
            "pairs": config.pairs.model_dump(mode="json"),
            "allow_same_family": config.allow_same_family,
            "seeds": meta.get("seeds"),
            "environment": meta.get("environment"),
            "config_hash": meta.get("config_hash"),
        },
        "counts": counts,
        "scrub": meta.get("scrub_report"),
        "skipped_pairs": len(meta.get("skipped_pairs") or []),
        "system_costs": meta.get("system_costs") or {},
        "judges": {name: asdict(s) for name, s in sorted(stats.items())},
        "systems": overview,
        "aggregate": config.aggregate.model_dump(mode="json"),
    }
    write_json(run_dir / SUMMARY_JSON, summary)
    return summary


def _row_order(row: dict[str, Any]) -> tuple:
    return (
        str(row.get("judge")),
        str(row.get("item_id")),
        str(row.get("pair_id") or row.get("system") or ""),
    )


def _win_overview(rows: list) -> dict[str, dict[str, Any]]:
    """Per judge (and panel), per system: wins, losses, ties and the plain win rate (ties as
    half). Intervals and paired comparisons come from `calibration.compare`."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        if row.winner is None:
            continue
        for system in (row.system_a, row.system_b):
            cell = table.setdefault(row.judge, {}).setdefault(
                system, {"wins": 0, "losses": 0, "ties": 0}
            )
            if row.winner == "tie":
                cell["ties"] += 1
            elif row.winner == system:
                cell["wins"] += 1
            else:
                cell["losses"] += 1
    for per_system in table.values():
        for cell in per_system.values():
            n = cell["wins"] + cell["losses"] + cell["ties"]
            cell["n"] = n
            cell["win_rate"] = (cell["wins"] + 0.5 * cell["ties"]) / n if n else None
    return table


def _score_overview(rows: list) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        if row.score is not None:
            table.setdefault(row.judge, {}).setdefault(row.system, []).append(row.score)
    return {
        judge: {
            system: {"n": len(v), "mean_score": sum(v) / len(v)} for system, v in systems.items()
        }
        for judge, systems in table.items()
    }


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pandas as pd

    frame = pd.DataFrame(rows)
    if "scores" in frame:
        # Parquet needs one type per column: keep per-criterion scores as JSON text.
        import json

        frame["scores"] = frame["scores"].map(json.dumps)
    tmp = path.with_name(path.name + ".tmp")
    frame.to_parquet(tmp, index=False)
    tmp.replace(path)


@contextlib.contextmanager
def _simulator(config: RunConfig) -> Iterator[RunConfig]:
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
                url = sim.base_url if judge.provider == "anthropic" else sim.openai_base_url
                judge = judge.model_copy(update={"base_url": url})
            judges.append(judge)
        yield config.model_copy(update={"judges": judges})


def judge_stats_table(summary: dict[str, Any]) -> list[JudgeStats]:
    return [JudgeStats(**v) for v in summary["judges"].values()]
