"""Kill shard actors' worker processes of a `judge run --executor ray` at random moments, then
the driver itself, then resume it: 0 requests lost, and the answers beyond one per request
(the simulator's count) no more than what was in flight on the killed actors (its
connections, plus the replies answered in the last ~50 ms that it had not streamed back).
Also checked: the judgments equal an uninterrupted local run's, and no Ray process is left
behind by the killed driver.

    .venv/bin/python scripts/ray_kills.py [--worker-kills 6] [--items 750] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.synthetic import write_config, write_inputs  # noqa: E402
from judge.cluster import RayCluster  # noqa: E402
from judge.simulator import SimulatorConfig, running_simulator  # noqa: E402

CONNECTIONS = 16
ACTORS = 2


def processes(prefix: bytes) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(prefix):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def ray_leftovers() -> list[int]:
    return [
        pid
        for pid in processes(b"")
        if any(
            part in Path(f"/proc/{pid}/cmdline").read_bytes()
            for part in (b"ray::", b"raylet", b"gcs_server")
        )
        and pid != os.getpid()
    ]


def _extra(sim: Any) -> int:
    stats = sim.stats()
    return int(stats["answered"] - stats["distinct_answered"])


def stored(run_dir: Path) -> tuple[int, int]:
    with sqlite3.connect(run_dir / "store.sqlite", timeout=30) as conn:
        (requests,) = conn.execute("SELECT COUNT(*) FROM judge_requests").fetchone()
        (answered,) = conn.execute("SELECT COUNT(*) FROM judge_responses").fetchone()
    return int(requests), int(answered)


def verdicts(run_dir: Path) -> list[Any]:
    lines = (json.loads(x) for x in (run_dir / "judgments.jsonl").open())
    return sorted((r["pair_id"], r["verdict_ab"], r["verdict_ba"]) for r in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker-kills", type=int, default=6)
    parser.add_argument("--items", type=int, default=750)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = Path(tempfile.mkdtemp(prefix="ray-kills-"))
    items, responses = write_inputs(root, args.items)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with running_simulator(SimulatorConfig(seed=7, latency={"median_s": 0.2})) as sim:
        judge = {"model": "openai/sim-alpha", "base_url": sim.openai_base_url}
        judge["max_connections"] = CONNECTIONS
        path = write_config(root, "killed", items, responses, [judge])
        run_dir = root / "killed"
        cmd = [sys.executable, "-m", "judge.cli", "run", str(path), "--run-dir", str(run_dir)]
        cmd += ["--quiet", "--cache", str(root / "killed.cache"), "--executor", "ray"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        kills: list[str] = []
        while len(kills) < args.worker_kills and proc.poll() is None:
            time.sleep(rng.uniform(2.0, 5.0))
            pids = processes(b"ray::ShardWorker")
            if not pids or proc.poll() is not None:
                continue
            victim = rng.choice(pids)
            os.kill(victim, signal.SIGKILL)
            done = stored(run_dir)[1] if (run_dir / "store.sqlite").exists() else 0
            extra = _extra(sim)
            kills.append(
                f"worker kill {len(kills) + 1}: pid {victim}, {done} stored, {extra} extra"
            )
        time.sleep(rng.uniform(1.0, 3.0))
        driver_killed = proc.poll() is None
        if driver_killed:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills.append(f"driver kill: {stored(run_dir)[1]} stored, {_extra(sim)} extra")
        time.sleep(5.0)
        sent = sim.stats()["requests"]
        after = f"5 s after the driver's kill: {_extra(sim)} extra, {sent} sent"
        leftover = ray_leftovers()
        resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if resumed.returncode != 0:
            raise SystemExit(resumed.stderr)
        stats = sim.stats()
        sim.reset()
        clean_path = write_config(root, "clean", items, responses, [judge])
        clean = [*cmd[:4], str(clean_path), "--run-dir", str(root / "clean"), "--quiet"]
        clean += ["--cache", str(root / "clean.cache")]
        subprocess.run(clean, env=env, check=True, capture_output=True, timeout=900)
    requests, answered = stored(run_dir)
    extra = stats["answered"] - stats["distinct_answered"]
    print("\n".join([*kills, after]))
    worker_kills = len(kills) - driver_killed
    # What can be answered without reaching the store is what was handed to the actors and not
    # yet stored: at most an actor's shards (3, of max(16, its 8 connections) requests and the
    # rest of their last item: 4 requests) at an actor's kill, every actor's at the driver's.
    in_flight = RayCluster().shards_per_actor * (max(16, CONNECTIONS // ACTORS) + 3)
    bound = worker_kills * in_flight + driver_killed * ACTORS * in_flight
    print(
        f"\n{worker_kills} shard-actor kills and {int(driver_killed)} driver kill: requests "
        f"{requests}, stored {answered} (lost {requests - answered}); answers beyond one per "
        f"request {extra} (bound from what was in flight: {bound}); Ray processes left 5 s "
        f"after the driver's kill: {len(leftover)}"
    )
    same = verdicts(run_dir) == verdicts(root / "clean")
    print(f"judgments identical to an uninterrupted local run: {same}")


if __name__ == "__main__":
    main()
