"""A whole `judge run` (prepare, judging, outputs, analysis, report) against the simulator at
200 ms latency and 256 connections: time to first request and end-to-end requests/s.

The simulator runs in its own process; each run is a fresh `judge run CONFIG --quiet`
process with a fresh run dir and response cache, timed from its launch (imports included, as
a user waits for them) to its exit. The simulator's own clock gives the first and last
request it received. Data: N/2 items x 2 systems, short outputs, one judge, both orders: N
requests. Ideal end to end = 256 / 0.2 s = 1,280 requests/s.

    .venv/bin/python bench/run_e2e.py [--sizes 5000,50000] [--repeat 3]
        [--baseline-ref REF] [--transport http] [--first-only]

`--first-only` stops each run once the simulator has seen its first request: time to first
request at sizes too large to judge through (10^6 requests).

`--baseline-ref REF` runs the same measurement with the code of git commit REF (exported to
a temporary directory), interleaved with this tree's runs: side by side, on the same machine
state. Targets (issue 15): first request within 2 s at 5,000 and 50,000 requests; end to end
>= 0.6 of ideal at 50,000.
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
import urllib.request
from pathlib import Path

from runner_throughput import LATENCY_S, start_simulator, write_dataset

REPO = Path(__file__).resolve().parents[1]
CONCURRENCY = 256


def _config(root: Path, sim: str, items: Path, responses: Path, transport: str | None) -> Path:
    judge: dict[str, object] = {
        "model": "openai/sim-bench",
        "base_url": f"{sim}/v1",
        "max_connections": CONCURRENCY,
    }
    if transport:
        judge["transport"] = transport
    path = root / "config.yaml"
    path.write_text(
        json.dumps(
            {
                "name": "e2e",
                "data": {"items": str(items), "responses": str(responses)},
                "blinding": {"seed": 7},
                "rubric": "pairwise_general",
                "judges": [judge],
                "orders": "both",
                "compare": {"resamples": 1000},
            }
        )
    )
    return path


def _stats(sim: str) -> dict:
    with urllib.request.urlopen(f"{sim}/_stats") as reply:
        return json.loads(reply.read())


def _reset(sim: str) -> None:
    request = urllib.request.Request(f"{sim}/_reset", data=b"{}", method="POST")
    with urllib.request.urlopen(request):
        pass


def one_run(
    code: Path, config: Path, sim: str, root: Path, first_only: bool = False
) -> dict[str, float]:
    run_dir = root / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    _reset(sim)
    env = {**os.environ, "PYTHONPATH": str(code), "OPENAI_API_KEY": "sk-bench"}
    started = time.time()
    run = subprocess.Popen(
        [sys.executable, "-m", "judge.cli", "run", str(config), "--run-dir", str(run_dir),
         "--quiet", "--cache", str(root / "cache.sqlite")],
        env=env,
        cwd=code,  # `-m` puts the working directory first on sys.path, before PYTHONPATH
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    if first_only:
        while run.poll() is None and not _stats(sim)["requests"]:
            time.sleep(0.02)
        run.kill()  # its prepare process dies with it
    stderr = run.communicate()[1]
    ended = time.time()
    (root / "cache.sqlite").unlink(missing_ok=True)
    if run.returncode not in (0, 1) and not first_only:
        raise SystemExit(f"judge run failed ({run.returncode}):\n{stderr[-2000:]}")
    stats = _stats(sim)
    if first_only:
        return {"first_s": stats["first_request_unix"] - started, "requests": stats["requests"]}
    return {
        "first_s": stats["first_request_unix"] - started,
        "last_s": stats["last_request_unix"] - started,
        "wall_s": ended - started,
        "requests": stats["requests"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,50000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-ref", help="also measure the code of this git commit")
    parser.add_argument("--transport", choices=["http", "sdk"], default=None)
    parser.add_argument("--first-only", action="store_true", help="stop at the first request")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="run-e2e-"))
    codes = {"this tree": REPO}
    if args.baseline_ref:
        exported = root / "baseline"
        exported.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", args.baseline_ref], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(exported)], input=archive.stdout, check=True)
        codes = {f"{args.baseline_ref}": exported, **codes}
    server, sim = start_simulator()
    ideal = CONCURRENCY / LATENCY_S
    try:
        for n in (int(float(s)) for s in args.sizes.split(",")):
            data = root / f"n{n}"
            data.mkdir()
            items, responses = write_dataset(data, n // 2)
            config = _config(data, sim, items, responses, args.transport)
            results: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
            for _ in range(args.repeat):
                for name, code in codes.items():  # interleaved: same machine state
                    results[name].append(one_run(code, config, sim, data, args.first_only))
            print(f"\n{n:,} requests (ideal {ideal:,.0f}/s), median of {args.repeat}:")
            for name, runs in results.items():
                first = statistics.median(r["first_s"] for r in runs)
                if args.first_only:
                    each = ", ".join(f"{r['first_s']:.2f}" for r in runs)
                    print(f"  {name:>12}: first request {first:5.2f} s ({each})")
                    continue
                wall = statistics.median(r["wall_s"] for r in runs)
                judging = statistics.median(r["last_s"] - r["first_s"] for r in runs)
                sent = statistics.median(r["requests"] for r in runs)
                print(
                    f"  {name:>12}: first request {first:5.2f} s, judging {judging:5.1f} s, "
                    f"after last request {wall - statistics.median(r['last_s'] for r in runs):5.1f}"
                    f" s, whole run {wall:6.1f} s: {n / wall:7.1f} req/s end to end "
                    f"(x{n / wall / ideal:.2f} ideal; {sent:,.0f} sent)"
                )
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
