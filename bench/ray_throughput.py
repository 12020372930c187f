"""The Ray executor against the local one on this machine (issues 18, 33): the same config judged
by `judge run` (`--workers 1`, the default, and `--workers 2`) and `judge run --executor ray`,
on a Ray cluster started by the run (`ray`) and on one already running (`ray-up`: `ray start
--head` before, `--address auto`), against the simulator at 200 ms latency, side by side. The
executors take turns, in a rotated order, for `--repeat` rounds, so a load that comes and goes
on a shared machine falls on each of them alike; medians are printed with the load average.

Printed per executor (medians over the rounds):
- run: requests over the whole `judge run` wall time (start-up, prepare, judging and the
  report included), the number the ≥ 0.8 target is about, and its ratio to `local-1`'s;
- judging: requests/s from the simulator's first to last request;
- first: seconds from the command's start to the simulator's first request (start-up);
- CPU: ms a request, user + system of the `judge run` process and every process under it and,
  with `ray-up`, of the running cluster's processes (GCS, raylet, agents, workers), over the
  whole run and within the judging window; sampled from /proc every 0.1 s;
- whether the judgments are identical to the first executor's.

    .venv/bin/python bench/ray_throughput.py [--requests 12000] [--connections 256] [--repeat 3]
        [--executors local-1,local-2,ray,ray-up]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.synthetic import write_config, write_inputs  # noqa: E402
from judge.simulator import SimulatorConfig, running_simulator  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")
EXECUTORS: dict[str, list[str]] = {
    "local-1": ["--workers", "1"],
    "local-2": ["--workers", "2"],
    "ray": ["--executor", "ray"],
    "ray-up": ["--executor", "ray", "--address", "auto"],
}


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


def _ray_processes() -> list[int]:
    """The processes of a cluster `ray start` left running (they are not the run's children)."""
    marks = (b"ray::", b"/ray/", b"raylet", b"gcs_server")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if any(m in cmdline for m in marks) and b"ray_throughput" not in cmdline:
            found.append(int(entry.name))
    return found


def _load() -> float:
    return os.getloadavg()[0]


def measure(root: Path, sim: Any, name: str, connections: int, cluster: bool) -> dict:
    """One `judge run` of a fresh run dir and cache; `cluster`: a running cluster's processes
    (those there before the run, from where they were, and those it starts, such as its
    actors' workers) count towards the run's CPU."""
    judge = {
        "model": "openai/sim-alpha",
        "base_url": sim.openai_base_url,
        "max_connections": connections,
    }
    config = write_config(root, name, root / "items.jsonl", root / "responses.jsonl", [judge])
    run_dir = root / name
    shutil.rmtree(run_dir, ignore_errors=True)
    (root / f"{name}.cache").unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "judge.cli", "run", str(config), "--run-dir", str(run_dir)]
    cmd += ["--quiet", "--cache", str(root / f"{name}.cache"), *EXECUTORS[name]]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    sim.reset()
    load = _load()
    theirs = _ray_processes() if cluster else []
    before = {pid: _cpu_s(pid) for pid in theirs}
    started_unix, started = time.time(), time.perf_counter()
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cpu: dict[int, float] = {}
    timeline: list[tuple[float, float]] = []
    scanned = time.perf_counter()
    while child.poll() is None:
        if cluster and time.perf_counter() - scanned > 0.5:  # the workers it starts
            theirs = sorted(set(theirs) | set(_ray_processes()))
            scanned = time.perf_counter()
        for pid in _tree(child.pid) + theirs:
            cpu[pid] = max(cpu.get(pid, 0.0), _cpu_s(pid))
        # Processes of the cluster that existed before the run count from where they were.
        timeline.append((time.time(), sum(c - before.get(p, 0.0) for p, c in cpu.items())))
        time.sleep(0.1)
    wall = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"{name}: " + (child.stderr.read().decode() if child.stderr else ""))
    stats = sim.stats()
    first, last = stats["first_request_unix"], stats["last_request_unix"]
    n = stats["requests"]

    def cpu_at(t: float) -> float:
        return max((c for at, c in timeline if at <= t), default=0.0)

    total_cpu = sum(c - before.get(p, 0.0) for p, c in cpu.items())
    lines = (json.loads(x) for x in (run_dir / "judgments.jsonl").open())
    return {
        "name": name,
        "requests": n,
        "rate": n / (last - first),
        "run_rate": n / wall,
        "wall": wall,
        "first": first - started_unix,
        "cpu_ms": 1000 * total_cpu / n,
        "window_cpu_ms": 1000 * (cpu_at(last) - cpu_at(first)) / n,
        "load": (load + _load()) / 2,
        "verdicts": sorted((r["pair_id"], r["verdict_ab"], r["verdict_ba"]) for r in lines),
    }


@contextmanager
def running_cluster(cpus: int) -> Iterator[float]:
    """A Ray cluster of this machine started with `ray start --head` (how long that took),
    stopped after the block."""
    ray = str(Path(sys.executable).with_name("ray"))
    started = time.perf_counter()
    subprocess.run(
        [ray, "start", "--head", f"--num-cpus={cpus}", "--include-dashboard=false",
         "--disable-usage-stats"],
        check=True, capture_output=True,
    )  # fmt: skip
    took = time.perf_counter() - started
    try:
        time.sleep(2.0)  # its agents settle before the first run counts their CPU
        yield took
    finally:
        subprocess.run([ray, "stop", "--force"], check=False, capture_output=True)


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def report(rows: list[dict], names: list[str], args: argparse.Namespace, up_s: float) -> None:
    by = {n: [r for r in rows if r["name"] == n] for n in names}
    base = names[0]
    print(
        f"\n{args.requests:,} requests, simulator at {args.latency * 1000:.0f} ms, "
        f"max_connections {args.connections}, {os.cpu_count()} CPUs, {args.repeat} rounds "
        f"(medians; load average {min(r['load'] for r in rows):.1f}-"
        f"{max(r['load'] for r in rows):.1f}, median {_median(rows, 'load'):.1f}):"
    )
    for n in names:
        rs = by[n]
        # The ratio of each round's pair, then their median: a round's load falls on both.
        ratios = [r["run_rate"] / b["run_rate"] for r, b in zip(rs, by[base], strict=True)]
        judging = [r["rate"] / b["rate"] for r, b in zip(rs, by[base], strict=True)]
        print(
            f"  {n:<8} run {_median(rs, 'run_rate'):6.1f} req/s (x{statistics.median(ratios):.2f}"
            f" of {base}; rounds {', '.join(f'{x:.2f}' for x in ratios)}), "
            f"judging {_median(rs, 'rate'):6.1f} req/s (x{statistics.median(judging):.2f}), "
            f"wall {_median(rs, 'wall'):5.1f} s, first request {_median(rs, 'first'):4.1f} s, "
            f"CPU {_median(rs, 'cpu_ms'):.2f} ms/req ({_median(rs, 'window_cpu_ms'):.2f} "
            f"judging), load {_median(rs, 'load'):.1f}; judgments identical: "
            f"{all(r['verdicts'] == by[base][0]['verdicts'] for r in rs)}"
        )
    if "ray-up" in names:
        print(f"  (ray-up: `ray start --head` took {up_s:.1f} s before each round, not counted)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=12_000)
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--executors", default="local-1,local-2,ray,ray-up")
    args = parser.parse_args()
    names = args.executors.split(",")
    if unknown := set(names) - EXECUTORS.keys():
        raise SystemExit(f"unknown executors {sorted(unknown)}; known: {', '.join(EXECUTORS)}")
    root = Path(tempfile.mkdtemp(prefix="ray-throughput-"))
    write_inputs(root, args.requests // 4)
    rows: list[dict] = []
    up: list[float] = []
    with running_simulator(SimulatorConfig(seed=1, latency={"median_s": args.latency})) as sim:
        for k in range(args.repeat):
            for name in names[k % len(names) :] + names[: k % len(names)]:
                if name == "ray-up":
                    with running_cluster(os.cpu_count() or 1) as took:
                        up.append(took)
                        rows.append(measure(root, sim, name, args.connections, True))
                else:
                    rows.append(measure(root, sim, name, args.connections, False))
                r = rows[-1]
                print(
                    f"round {k + 1} {name:<8} run {r['run_rate']:6.1f} req/s, judging "
                    f"{r['rate']:6.1f}, wall {r['wall']:5.1f} s, first {r['first']:4.1f} s, "
                    f"CPU {r['cpu_ms']:.2f} ms/req, load {r['load']:.1f}",
                    flush=True,
                )
    report(rows, names, args, statistics.median(up) if up else 0.0)


if __name__ == "__main__":
    main()
