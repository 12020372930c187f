"""A batch-mode run at scale (issue 17): `judge run --batch` on N requests against the
simulator's batch API: the client's peak memory and the time to submit every batch, at two
sizes side by side (memory must not grow with the run: batch bodies are streamed from files,
results are read a line at a time).

Each size is prepared first (`judge prepare`, not timed); then `judge run --batch` runs in a
child process whose peak RSS is its own high-water mark (VmHWM in /proc, sampled every 20 ms,
summed over the process and any children it has), the submit time from the ledger (first
batch planned -> last batch submitted). Not `ru_maxrss` from wait4: Linux carries the forking
process's RSS into the child's maximum across exec, so it would report this process (which
hosts the simulator and its batches) rather than the client.

    .venv/bin/python bench/batch_scale.py [--sizes 10000,100000] [--provider openai|anthropic]
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.synthetic import write_config, write_inputs  # noqa: E402
from judge.simulator import SimulatorConfig, running_simulator  # noqa: E402


def _hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass  # the process ended between two samples
    return 0


def _tree_hwm_kb(pid: int) -> int:
    """The high-water marks of `pid` and its children, added (an upper bound on their peak
    together)."""
    total = _hwm_kb(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(_tree_hwm_kb(int(c)) for c in children)


def _answered(store: Path) -> int:
    """Replies stored so far (read-only; the run keeps writing)."""
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=0.1) as conn:
            return conn.execute("SELECT COUNT(*) FROM judge_responses").fetchone()[0]
    except sqlite3.Error:
        return 0


def measure(root: Path, sim: object, requests: int, provider: str) -> dict[str, float]:
    items, responses = write_inputs(root, requests // 4)
    model = "openai/sim-alpha" if provider == "openai" else "anthropic/sim-beta"
    base = sim.base_url if provider == "anthropic" else sim.openai_base_url  # type: ignore[attr-defined]
    judge = {
        "model": model,
        "base_url": base,
        "mode": "batch",
        "batch": {"max_requests": 10_000, "poll_s": 0.5},
    }
    config = write_config(root, f"scale-{requests}", items, responses, [judge])
    run_dir = root / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    base_cmd = [sys.executable, "-m", "judge.cli"]
    subprocess.run(
        [*base_cmd, "prepare", str(config), "--run-dir", str(run_dir)],
        env=env,
        check=True,
        capture_output=True,
    )
    started = time.perf_counter()
    child = subprocess.Popen(
        [*base_cmd, "run", str(config), "--run-dir", str(run_dir), "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    peak_kb = judged_kb = 0
    judged_s = 0.0
    store = run_dir / "store.sqlite"
    while child.poll() is None:
        peak_kb = max(peak_kb, _tree_hwm_kb(child.pid))
        if not judged_kb and _answered(store) >= requests:
            judged_kb, judged_s = peak_kb, time.perf_counter() - started
        time.sleep(0.02)
    status = child.returncode
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(child.stderr.read().decode() if child.stderr else "run failed")
    with sqlite3.connect(run_dir / "store.sqlite") as conn:
        first, last, batches = conn.execute(
            "SELECT MIN(created_at), MAX(submitted_at), COUNT(*) FROM batches"
        ).fetchone()
        (answered,) = conn.execute("SELECT COUNT(*) FROM judge_responses").fetchone()
    submit_s = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
    return {
        "requests": requests,
        "answered": answered,
        "batches": batches,
        "submit_s": submit_s,
        "wall_s": wall,
        "peak_mb": peak_kb / 1024,
        "judged_mb": judged_kb / 1024,
        "judged_s": judged_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--provider", choices=["openai", "anthropic"], default="openai")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with running_simulator(SimulatorConfig(seed=1, batch_delay_s=2.0)) as sim:
        rows = []
        for size in sizes:
            with tempfile.TemporaryDirectory(prefix="batch-scale-") as tmp:
                rows.append(measure(Path(tmp), sim, size, args.provider))
                sim.reset()
    print(f"\n{args.provider} batch API, client `judge run --batch` (child process):")
    for r in rows:
        rate = r["requests"] / max(r["submit_s"], 1e-9)
        print(
            f"  {r['requests']:>8,} requests in {r['batches']:.0f} batches: peak RSS "
            f"{r['judged_mb']:.0f} MB until every reply was stored ({r['judged_s']:.1f} s), "
            f"all submitted in {r['submit_s']:.1f} s ({rate:,.0f} requests/s); whole run "
            f"{r['wall_s']:.1f} s with the analysis and report, peak {r['peak_mb']:.0f} MB; "
            f"answered {r['answered']:,}"
        )
    if len(rows) > 1:
        print(
            f"  peak memory while judging x{rows[-1]['judged_mb'] / rows[0]['judged_mb']:.2f} "
            f"(whole run x{rows[-1]['peak_mb'] / rows[0]['peak_mb']:.2f}) for "
            f"x{rows[-1]['requests'] / rows[0]['requests']:.0f} the requests"
        )
    print(f"  (this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
