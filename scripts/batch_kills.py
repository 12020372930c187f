"""`kill -9` a batch-mode `judge run` at random moments, then let it finish: 0 requests
submitted twice (the simulator's batch records), 0 lost (every request ends with a stored
outcome), and the same judgments as an uninterrupted synchronous run.

The simulator answers a batch create only `batch_create_latency_s` after it made the batch,
so kills land in the window between the provider's creating a batch and the run's storing
its id; those kills are counted (a ledger row left `submitting` whose batch the simulator
holds).

    .venv/bin/python scripts/batch_kills.py [--kills 14] [--items 1500]
        [--provider openai|anthropic] [--seed 1]
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
from judge import load_config  # noqa: E402
from judge.run import run_pipeline  # noqa: E402
from judge.simulator import SimulatorConfig, running_simulator  # noqa: E402


def ledger(run_dir: Path) -> dict[str, Any]:
    store = run_dir / "store.sqlite"
    if not store.exists():
        return {"states": {}, "provider_ids": 0}
    with sqlite3.connect(store, timeout=30) as conn:
        try:
            states = dict(conn.execute("SELECT state, COUNT(*) FROM batches GROUP BY 1"))
            (ids,) = conn.execute(
                "SELECT COUNT(*) FROM batches WHERE provider_id IS NOT NULL"
            ).fetchone()
        except sqlite3.OperationalError:  # killed before the migration ran
            return {"states": {}, "provider_ids": 0}
    return {"states": states, "provider_ids": int(ids)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=14)
    parser.add_argument("--items", type=int, default=1500)
    parser.add_argument("--provider", choices=["openai", "anthropic"], default="openai")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    model = "openai/sim-alpha" if args.provider == "openai" else "anthropic/sim-beta"
    root = Path(tempfile.mkdtemp(prefix="batch-kills-"))
    items, responses = write_inputs(root, args.items)
    sim_config = SimulatorConfig(
        seed=7, batch_delay_s=3.0, batch_create_latency_s=0.6, rate_malformed=0.05
    )
    with running_simulator(sim_config) as sim:
        base = sim.base_url if args.provider == "anthropic" else sim.openai_base_url
        judge = {
            "model": model,
            "base_url": base,
            "mode": "batch",
            "batch": {"max_requests": 40, "poll_s": 0.2, "submit_timeout_s": 1.5},
            "backoff_initial_s": 0.01,
            "backoff_max_s": 0.1,
        }
        path = write_config(root, "killed", items, responses, [judge])
        run_dir = root / "run"
        cmd = [sys.executable, "-m", "judge.cli", "run", str(path), "--run-dir", str(run_dir)]
        cmd += ["--quiet", "--cache", str(root / "cache.sqlite")]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        kills = in_window = in_flight = 0
        log: list[str] = []
        while kills < args.kills:
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(rng.uniform(2.0, 9.0))
            if proc.poll() is not None:
                if proc.returncode != 0:
                    raise SystemExit(
                        f"attempt after {kills} kills: "
                        + (proc.stderr.read().decode() if proc.stderr else "failed")
                    )
                break  # finished before this kill
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            state = ledger(run_dir)
            created = sim.stats()["batches"]["created"]
            window = state["states"].get("submitting", 0) > 0 and created > state["provider_ids"]
            in_window += window
            open_batches = sum(
                n
                for state, n in state["states"].items()
                if state in ("planned", "submitting", "submitted")
            )
            in_flight += open_batches > 0
            log.append(
                f"kill {kills}: ledger {state['states']}, simulator created {created}"
                + ("  <- between the create and the id's store write" if window else "")
            )
        final = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if final.returncode != 0:
            raise SystemExit(final.stderr)
        stats = sim.stats()
        sim.reset()
        sync_judge = {k: v for k, v in judge.items() if k not in ("mode", "batch")}
        clean_path = write_config(root, "clean", items, responses, [sync_judge])
        clean = run_pipeline(
            load_config(clean_path), root / "clean", cache_path=root / "clean.sqlite"
        )
    with sqlite3.connect(run_dir / "store.sqlite") as conn:
        (requests,) = conn.execute("SELECT COUNT(*) FROM judge_requests").fetchone()
        (answered,) = conn.execute("SELECT COUNT(*) FROM judge_responses").fetchone()
        adopted = conn.execute("SELECT COUNT(*) FROM batches WHERE adopted = 1").fetchone()[0]
        outcomes = dict(conn.execute("SELECT outcome, COUNT(*) FROM batch_requests GROUP BY 1"))

    def rows(path: Path) -> list[Any]:
        lines = (json.loads(x) for x in (path / "judgments.jsonl").open())
        return sorted(
            ((r["pair_id"], r["judge"], r["verdict_ab"], r["verdict_ba"]) for r in lines),
            key=lambda r: (r[0], r[1]),
        )

    same = rows(run_dir) == rows(root / "clean")
    print("\n".join(log))
    print(
        f"\n{args.provider}: {kills} kills, {in_flight} with batches open, {in_window} between a "
        f"create and its id's store write; {adopted} batches adopted on restart"
    )
    print(
        f"requests {requests}, with a stored outcome {answered} (lost {requests - answered}); "
        f"batches created {stats['batches']['created']}, requests submitted in batches "
        f"{stats['batches']['requests']}, double submissions "
        f"{stats['batches']['double_submissions']}; batch outcomes {outcomes}"
    )
    print(
        f"judgments identical to an uninterrupted synchronous run: {same}; clean {clean.complete}"
    )


if __name__ == "__main__":
    main()
