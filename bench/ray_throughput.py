"""The Ray executor against the local one on this machine (issue 18): the same config judged by
`judge run` with `--workers 1`, `--workers 2` and `--executor ray` (a local Ray cluster of this
machine's CPUs, started by the run), against the simulator at 200 ms latency, side by side.

Printed per executor: requests/s while judging (the simulator's first to last request, so the
cluster's start is left out; the whole run's wall time is printed too), client CPU per request
(user + system time of the `judge run` process and every process under it: Ray's GCS, raylet
and workers included; sampled from /proc every 0.1 s, so a process's last 0.1 s before it
exits can be missed), and whether the judgments are identical to the first executor's.

    .venv/bin/python bench/ray_throughput.py [--requests 12000] [--connections 128]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.synthetic import write_config, write_inputs  # noqa: E402
from judge.simulator import SimulatorConfig, running_simulator  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def _tree(pid: int) -> list[int]:
    found = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return found
    for child in children:
        found += _tree(int(child))
    return found


def measure(root: Path, sim: object, name: str, extra: list[str], connections: int) -> dict:
    judge = {
        "model": "openai/sim-alpha",
        "base_url": sim.openai_base_url,  # type: ignore[attr-defined]
        "max_connections": connections,
    }
    config = write_config(root, name, root / "items.jsonl", root / "responses.jsonl", [judge])
    run_dir = root / name
    cmd = [sys.executable, "-m", "judge.cli", "run", str(config), "--run-dir", str(run_dir)]
    cmd += ["--quiet", "--cache", str(root / f"{name}.cache"), *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    sim.reset()  # type: ignore[attr-defined]
    started = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cpu: dict[int, float] = {}
    while child.poll() is None:
        for pid in _tree(child.pid):
            cpu[pid] = max(cpu.get(pid, 0.0), _cpu_s(pid))
        time.sleep(0.1)
    wall = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"{name}: " + (child.stderr.read().decode() if child.stderr else ""))
    stats = sim.stats()  # type: ignore[attr-defined]
    span = stats["last_request_unix"] - stats["first_request_unix"]
    lines = (json.loads(x) for x in (run_dir / "judgments.jsonl").open())
    return {
        "name": name,
        "requests": stats["requests"],
        "rate": stats["requests"] / span,
        "wall": wall,
        "cpu_ms": 1000 * sum(cpu.values()) / stats["requests"],
        "processes": len(cpu),
        "verdicts": sorted((r["pair_id"], r["verdict_ab"], r["verdict_ba"]) for r in lines),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=12_000)
    parser.add_argument("--connections", type=int, default=128)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ray-throughput-"))
    write_inputs(root, args.requests // 4)
    runs = (
        ("local-1", ["--workers", "1"]),
        ("local-2", ["--workers", "2"]),
        ("ray", ["--executor", "ray"]),
    )
    with running_simulator(SimulatorConfig(seed=1, latency={"median_s": args.latency})) as sim:
        rows = [measure(root, sim, name, extra, args.connections) for name, extra in runs]
    print(
        f"\n{args.requests:,} requests, simulator at {args.latency * 1000:.0f} ms, "
        f"max_connections {args.connections}, {os.cpu_count()} CPUs:"
    )
    for r in rows:
        print(
            f"  {r['name']:<8} {r['rate']:7.1f} requests/s while judging "
            f"(x{r['rate'] / rows[0]['rate']:.2f} of local-1, x{r['rate'] / rows[1]['rate']:.2f}"
            f" of local-2), run {r['wall']:.1f} s, client CPU {r['cpu_ms']:.2f} ms/request over "
            f"{r['processes']} processes; judgments identical: "
            f"{r['verdicts'] == rows[0]['verdicts']}"
        )


if __name__ == "__main__":
    main()
