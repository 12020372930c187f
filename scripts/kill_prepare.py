"""kill -9 a `judge prepare` at random instants, then run the same `judge run`: does every run
dir complete? (issue 11: prepare must be crash-safe at any instant.)

    python scripts/kill_prepare.py [CONFIG] [--kills 30] [--seed 0]

Each trial prepares into a fresh run dir (the first prepare of a dir is where the secret is
drawn), kills it at an instant drawn uniformly over a measured prepare's duration, notes what
the kill left behind (key? store rows?), then runs `judge run CONFIG --run-dir DIR` and checks
it exits 0 with every planned request answered. Prints one line per trial and a tally.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from judge import RunDir  # noqa: E402


def _judge(*args: str) -> list[str]:
    return [sys.executable, "-m", "judge.cli", *args]


def _state(rundir: RunDir) -> str:
    """What a killed prepare left: key file, and rows in the store."""
    requests = 0
    if rundir.has_store():
        with rundir.open_store() as store:
            requests = store.counts()["requests"]
    return f"key={'yes' if rundir.has_key() else 'no'} requests={requests}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("config", nargs="?", default=str(REPO / "configs" / "demo.yaml"))
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--window",
        type=float,
        default=0.8,
        help="kill instants are drawn over this fraction of the reference prepare's duration",
    )
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    rng = random.Random(args.seed)
    root = Path(tempfile.mkdtemp(prefix="kill-prepare-"))
    started = time.monotonic()
    subprocess.run(
        _judge("prepare", args.config, "--run-dir", str(root / "ref")),
        env=env,
        check=True,
        capture_output=True,
    )
    duration = time.monotonic() - started
    with RunDir(root / "ref").open_store() as store:
        planned = store.counts()["requests"]
    print(f"reference prepare: {duration:.2f} s, {planned} requests planned")
    completed = 0
    states: dict[str, int] = {}
    for trial in range(args.kills):
        rundir = RunDir(root / f"t{trial}")
        proc = subprocess.Popen(
            _judge("prepare", args.config, "--run-dir", str(rundir.path)),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        at = rng.uniform(0.0, duration * args.window)
        time.sleep(at)
        proc.send_signal(signal.SIGKILL)
        code = proc.wait()
        left = _state(rundir) if code == -signal.SIGKILL else "finished before the kill"
        result = subprocess.run(
            _judge("run", args.config, "--run-dir", str(rundir.path), "--quiet"),
            env=env,
            capture_output=True,
            text=True,
        )
        requests = pending = -1
        if rundir.has_store():
            with rundir.open_store() as store:
                counts = store.counts()
            requests, pending = counts["requests"], counts["pending"]
        ok = result.returncode == 0 and requests == planned and pending == 0
        completed += ok
        bucket = left.split(" requests=")[0] + (
            " requests>0" if "requests=" in left and not left.endswith("=0") else ""
        )
        states[bucket] = states.get(bucket, 0) + 1
        line = result.stderr.strip().splitlines()[-1:] if not ok else []
        print(
            f"trial {trial:2d}: killed at {at:5.2f} s ({left}); judge run exit "
            f"{result.returncode}, {requests} requests, {pending} pending"
            + (f"  FAILED: {line}" if line else "")
        )
    killed = args.kills - states.get("finished before the kill", 0)
    print(f"\n{completed} of {args.kills} run dirs completed ({killed} killed during prepare)")
    for state, n in sorted(states.items()):
        print(f"  kill left {state}: {n}")
    return 0 if completed == args.kills else 1


if __name__ == "__main__":
    sys.exit(main())
