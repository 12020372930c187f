"""`judge run --executor ray` (issue 18) on a local 2-CPU Ray cluster (one per module), against
the simulator over real HTTP: a run started locally finishes on the cluster with the judgments
of an all-local run and nothing answered twice; a shard actor killed mid-run is restarted and
nothing is lost; one rate budget holds across the shards; a Retry-After pauses every shard."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import ray

from judge import load_config
from judge.cluster import RayCluster
from judge.cluster.driver import judge_on_cluster
from judge.cluster.limiter import ClusterLimit, RateBudget
from judge.errors import ConfigError
from judge.judging.tally import Counts
from judge.run import prepare_run, run_pipeline
from judge.simulator import SimulatorConfig, running_simulator
from judge.store.rundir import RunDir
from tests.test_runner import judge_entry, judgments, quality, write_config, write_dataset

MODELS = ["openai/sim-alpha", "anthropic/sim-beta"]


@pytest.fixture(scope="module")
def cluster() -> Any:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield RayCluster(shard_requests=30)
    ray.shutdown()


def dataset(root: Path, n: int) -> tuple[Path, Path]:
    return write_dataset(
        root,
        n,
        {
            "sys-a": lambda i: quality(0.4 + (i % 3) / 10, f"Answer {i} from a."),
            "sys-b": lambda i: quality(0.5, f"B says {i}."),
            "sys-c": lambda i: quality(0.45, f"C thinks about {i}."),
        },
    )


def config_for(root: Path, n: int, judges: list[dict[str, Any]]) -> Any:
    items, responses = dataset(root, n)
    path = write_config(
        root, items, responses, judges=judges, pairs={"mode": "baseline", "baseline": "sys-b"}
    )
    return load_config(path)


def test_a_run_started_locally_finishes_on_the_cluster_as_it_would_have_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    faults = SimulatorConfig(seed=4, rate_malformed=0.1, rate_500=0.05)
    with running_simulator(faults) as sim:
        priced = {"input_cost_per_mtok": 100.0, "output_cost_per_mtok": 100.0}
        judges = [
            judge_entry(sim, m, backoff_initial_s=0.01, backoff_max_s=0.05, **priced)
            for m in MODELS
        ]
        config = config_for(tmp_path, 40, judges)  # 40 items x 2 pairs x 2 orders x 2 judges
        # Caches of their own: the second run must ask the judges, not the first run's cache.
        local = run_pipeline(config, tmp_path / "local", cache_path=tmp_path / "local.cache")
        assert local.complete and local.summary.counts.requests == 320
        sim.reset()
        # Stopped by the budget part-way, locally; finished on the cluster.
        cache = tmp_path / "mixed.cache"
        part = run_pipeline(config, tmp_path / "mixed", max_cost_usd=1.0, cache_path=cache)
        answered = part.summary.counts.requests - part.summary.counts.pending
        assert not part.complete and 0 < answered < 320
        rest = run_pipeline(config, tmp_path / "mixed", cluster=cluster, cache_path=cache)
        stats = sim.stats()
    assert rest.complete and rest.answered_before == answered
    assert judgments(tmp_path / "mixed") == judgments(tmp_path / "local")
    # Nothing the local part stored was sent again, and nothing was answered twice.
    assert stats["max_answers_per_request"] == 1
    assert rest.stats.repaired > 0 and rest.summary.counts.errors == 0


def _shard_pids(title: bytes = b"ray::ShardWorker") -> list[int]:
    """The worker processes of actors of one class (Ray titles them `ray::ClassName...`)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(title):
            pids.append(int(entry.name))
    return pids


def test_a_killed_shard_actor_loses_nothing_and_resends_at_most_what_was_in_flight(
    tmp_path: Path, cluster: RayCluster
) -> None:
    slow = SimulatorConfig(seed=2, latency={"median_s": 0.1})
    with running_simulator(slow) as sim:
        judge = judge_entry(sim, MODELS[0], max_connections=8)  # 4 per actor
        config = config_for(tmp_path, 120, [judge])  # 480 requests, ~6 s
        small = RayCluster(shard_requests=8)
        done: list[Any] = []
        thread = threading.Thread(
            target=lambda: done.append(run_pipeline(config, tmp_path / "run", cluster=small))
        )
        thread.start()
        victims: list[int] = []
        for settle in (0.5, 1.0):
            # Once the actors are up and judging; each time an actor not killed before.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                pids = [p for p in _shard_pids() if p not in victims]
                if pids:
                    break
                time.sleep(0.05)
            time.sleep(settle)
            # Chosen at the kill, not before the settle: an actor listed then may have exited.
            while thread.is_alive():
                pids = [p for p in _shard_pids() if p not in victims]
                if not pids:
                    break
                try:
                    os.kill(pids[0], signal.SIGKILL)
                except ProcessLookupError:  # gone between the listing and the kill
                    continue
                victims.append(pids[0])
                break
        killed = len(victims)
        thread.join(timeout=120)
        stats = sim.stats()
    assert killed == 2
    (outcome,) = done
    counts = outcome.summary.counts
    assert outcome.complete and counts.requests == 480 and counts.errors == 0
    assert stats["distinct_answered"] == 480
    # Per kill, at most what was handed to that actor and not yet stored: its shards (of 8
    # requests and the rest of their last item, 4 requests an item).
    handed = small.shards_per_actor * (8 + 3)
    assert stats["answered"] - stats["distinct_answered"] <= killed * handed


def test_one_rate_budget_holds_across_shards(tmp_path: Path, cluster: RayCluster) -> None:
    # The simulator refuses (429) anything over 660 a minute (a burst of 12): the run's
    # 600 a minute, held over both actors by the limiter actor, must never trip it.
    guarded = SimulatorConfig(seed=3, rpm_capacity=660, rpm_burst=12)
    with running_simulator(guarded) as sim:
        judge = judge_entry(sim, MODELS[0], requests_per_minute=600, max_connections=16)
        config = config_for(tmp_path, 20, [judge])  # 80 requests: ~7 s at 10 a second
        outcome = run_pipeline(
            config, tmp_path / "run", cluster=RayCluster(shard_requests=8, actors=2)
        )
        stats = sim.stats()
    assert outcome.complete and outcome.summary.counts.errors == 0
    assert stats["by_outcome"].get("429", 0) == 0
    # A token bucket of 10 a second with a one-second burst: by the end of the k-th wall-clock
    # second of the run, at most the burst and k seconds' refill (10 + 10 k) may have gone.
    counts = [n for _, n in sorted(stats["requests_by_second"].items(), key=lambda s: int(s[0]))]
    sent = 0
    for k, n in enumerate(counts, start=1):
        sent += n
        assert sent <= 10 + 10 * k, (k, counts)
    assert sent == 80 and len(counts) >= 7


def test_a_killed_limiter_is_restarted_and_no_request_is_recorded_as_failed(
    tmp_path: Path, cluster: RayCluster
) -> None:
    slow = SimulatorConfig(seed=8, latency={"median_s": 0.05})
    with running_simulator(slow) as sim:
        judge = judge_entry(sim, MODELS[0], requests_per_minute=1200, max_connections=8)
        config = config_for(tmp_path, 40, [judge])  # 160 requests at 20 a second
        done: list[Any] = []
        thread = threading.Thread(
            target=lambda: done.append(run_pipeline(config, tmp_path / "run", cluster=cluster))
        )
        thread.start()
        time.sleep(3.0)
        (limiter,) = _shard_pids(b"ray::RateBudget")
        os.kill(limiter, signal.SIGKILL)
        thread.join(timeout=120)
    (outcome,) = done
    assert outcome.complete and outcome.summary.counts.requests == 160
    assert outcome.summary.counts.errors == 0


def test_a_retry_after_pauses_every_shard(cluster: RayCluster) -> None:
    budget = RateBudget.remote()  # type: ignore[attr-defined]

    async def main() -> float:
        refused = ClusterLimit(budget, "endpoint", None, None)
        other = ClusterLimit(budget, "endpoint", None, None)
        await other.acquire()  # not paused yet
        refused.pause(0.8)
        await asyncio.sleep(0.3)  # the pause reaches the actor; `other` checks again
        started = time.monotonic()
        await other.acquire()
        return time.monotonic() - started

    waited = asyncio.run(main())
    ray.kill(budget)
    assert 0.3 <= waited <= 1.5


@pytest.mark.parametrize(
    ("extra", "refusal"),
    [({"mode": "batch"}, "batch mode"), ({"api_key": "sk-in-the-config"}, "api_key_env")],
)
def test_what_a_cluster_cannot_judge_is_a_config_error(
    tmp_path: Path, extra: dict[str, Any], refusal: str
) -> None:
    with running_simulator(SimulatorConfig(seed=1)) as sim:
        config = config_for(tmp_path, 2, [judge_entry(sim, MODELS[0], **extra)])
        with pytest.raises(ConfigError, match=refusal) as raised:
            run_pipeline(config, tmp_path / "run", cluster=RayCluster())
    assert "sk-in-the-config" not in str(raised.value)
    assert not (tmp_path / "run" / "store.sqlite").exists()


def test_a_run_stopped_on_the_cluster_by_its_budget_finishes_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    with running_simulator(SimulatorConfig(seed=6)) as sim:
        priced = {"input_cost_per_mtok": 100.0, "output_cost_per_mtok": 100.0}
        config = config_for(tmp_path, 30, [judge_entry(sim, MODELS[1], **priced)])
        local = run_pipeline(config, tmp_path / "local", cache_path=tmp_path / "local.cache")
        sim.reset()
        # Room for half as much again as the run costs: the cluster finishes it, as a local
        # run would (its shards' parts of the budget are given back as they end).
        roomy = run_pipeline(
            config,
            tmp_path / "roomy",
            max_cost_usd=1.5 * local.stats.spent_usd,
            cluster=cluster,
            cache_path=tmp_path / "roomy.cache",
        )
        assert roomy.complete and roomy.stats.stopped_reason is None
        sim.reset()
        cache = tmp_path / "mixed.cache"
        part = run_pipeline(
            config, tmp_path / "mixed", max_cost_usd=0.6, cluster=cluster, cache_path=cache
        )
        counts = part.summary.counts
        assert not part.complete and 0 < counts.requests - counts.pending < 120
        assert part.stats.stopped_reason == "budget" and part.stats.spent_usd <= 0.6
        rest = run_pipeline(config, tmp_path / "mixed", cache_path=cache)
        stats = sim.stats()
    assert rest.complete and judgments(tmp_path / "mixed") == judgments(tmp_path / "local")
    assert stats["max_answers_per_request"] == 1


def test_the_cluster_judges_a_run_while_its_prepare_still_stores_requests(
    tmp_path: Path, cluster: RayCluster
) -> None:
    """`preparing` set: the driver sends what is stored, waits for what is still to come, and
    ends once the prepare has ended and everything it stored is answered."""
    with running_simulator(SimulatorConfig(seed=5, latency={"median_s": 0.05})) as sim:
        config = config_for(tmp_path, 60, [judge_entry(sim, MODELS[0], max_connections=8)])
        rundir = RunDir(tmp_path / "run")
        preparing = threading.Event()
        preparing.set()
        ended: list[float] = []

        def prepare() -> None:
            try:  # 6 chunks of 10 items, a pause after each: the judging starts before the end
                prepare_run(config, rundir, chunk_items=10, on_stored=lambda *_: time.sleep(0.4))
            finally:
                ended.append(time.time())
                preparing.clear()

        thread = threading.Thread(target=prepare)
        thread.start()
        while not (rundir.path / "store.sqlite").exists():
            time.sleep(0.01)
        with rundir.open_store() as store:
            judging = judge_on_cluster(
                store, config, cluster, max_cost_usd=None, recorded=Counts(), preparing=preparing
            )
            stats = asyncio.run(judging)
            pending = store.pending_after(0, 10)
        thread.join()
        served = sim.stats()
    assert stats.sent == 240 and not pending  # 60 items x 2 pairs x 2 orders
    assert served["max_answers_per_request"] == 1
    assert served["first_request_unix"] < ended[0] - 1.0


def test_a_failed_prepare_stops_the_cluster_judging_at_once(
    tmp_path: Path, cluster: RayCluster
) -> None:
    with running_simulator(SimulatorConfig(seed=5, latency={"median_s": 0.05})) as sim:
        config = config_for(tmp_path, 10, [judge_entry(sim, MODELS[0])])
        rundir = RunDir(tmp_path / "run")
        prepare_run(config, rundir)
        preparing, abort = threading.Event(), threading.Event()
        preparing.set()  # a prepare that will never end by itself
        threading.Timer(1.0, abort.set).start()
        started = time.monotonic()
        with rundir.open_store() as store:
            judging = judge_on_cluster(
                store, config, cluster, max_cost_usd=None, recorded=Counts(),
                preparing=preparing, abort=abort,
            )  # fmt: skip
            asyncio.run(judging)
            stored = 40 - len(store.pending_after(0, 100))
        served = sim.stats()
    # A prepare that never ends would hold the driver for ever: the abort ends it, and what
    # it stored before is kept (what the actors had in flight is sent again on a resume).
    assert time.monotonic() - started < 10
    assert stored <= served["distinct_answered"]
