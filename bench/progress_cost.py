"""What the progress display costs the judging: the same run with the display on (lines, as
in CI logs; a terminal's bar, forced) and with `--quiet`, side by side.

The simulator runs in its own process (fixed 200 ms latency). N judge requests (default
20,000) are prepared once, outside the timing; each measurement copies that run dir and judges
it in a fresh client process, with a fresh response cache, at concurrency 256 (ideal: 1,280
requests/s), through `judge.run.execute.execute` fed as `judge run` feeds it (the store read
once, `Tally`, the display's `update` every 0.25 s; the display writes to /dev/null). Modes run
interleaved, in a rotated order each repetition:

  quiet      no display (`--quiet`)
  lines      the display without a terminal: a line every 5 s
  terminal   the live bar (rich, 5 frames a second), forced as if stderr were a terminal
  poll       (--poll) the display fed as before issue 15: the store's counts queried at each
             refresh, for the before/after comparison

Per mode: judging req/s, client CPU per request, refreshes and the wall time of the display's
`update` per refresh; then the same-repetition ratio mode / quiet (median over repetitions).
Last, the cost of one refresh measured alone: `Tally.snapshot` plus `update` (lines and
terminal), against `progress_of` (what each refresh cost before) on a judged run's store.

    .venv/bin/python bench/progress_cost.py [--requests 20000] [--repeat 3] [--poll]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

from runner_throughput import LATENCY_S, start_simulator, write_dataset

CONCURRENCY = 256
MODES = ("quiet", "lines", "terminal")
FRAMES_PER_S = 5
"""How often the terminal bar draws (`judge.cli.progress`: rich's `refresh_per_second`)."""


def _config(sim: str, root: Path) -> Any:
    from judge import RunConfig

    return RunConfig.model_validate(
        {
            "name": "progress-bench",
            "data": {"items": root / "items.jsonl", "responses": root / "responses.jsonl"},
            "blinding": {"seed": 1, "secret": "ab" * 32},
            "rubric": "pairwise_general",
            "orders": "both",
            "judges": [
                {
                    "model": "openai/sim-bench",
                    "base_url": f"{sim}/v1",
                    "transport": "http",
                    "max_connections": CONCURRENCY,
                    "timeout_s": 60,
                }
            ],
        }
    )


# --- one measurement (a fresh client process) ---------------------------------------------


def child(mode: str, sim: str, root: Path, n: int) -> dict[str, Any]:
    import aiohttp  # noqa: F401  - warm imports, as in a long-lived process

    from judge import RunDir
    from judge.cli.progress import progress_display
    from judge.judging.tally import Progress, Tally
    from judge.run.execute import execute, progress_of

    config = _config(sim, root)
    work = Path(tempfile.mkdtemp(prefix=f"{mode}-", dir=root))
    shutil.copytree(root / "template", work / "run")
    rundir = RunDir(work / "run")
    _sim(sim, "/_reset", b"{}")
    refresh = {"calls": 0, "s": 0.0}
    with (
        open(os.devnull, "w") as out,
        progress_display(enabled=mode != "quiet", terminal=mode == "terminal", file=out) as shown,
        rundir.open_store() as poll_store,
    ):
        with rundir.open_store() as store:
            before = progress_of(store)
        on_progress = None
        if shown is not None:
            display = shown
            display.update(before)  # as `run_pipeline` does: the display leaves "preparing"
            display.log(f"judging {before.total:,} requests with 1 worker(s)")

            def on_progress(p: Progress) -> None:
                t = time.perf_counter()
                # `poll`: what every refresh did before issue 15, on the event loop's thread.
                display.update(progress_of(poll_store) if mode == "poll" else p)
                refresh["calls"] += 1
                refresh["s"] += time.perf_counter() - t

        t0, cpu0, threads0 = time.perf_counter(), _cpu(), _display_threads_cpu()
        stats = execute(
            config,
            rundir,
            cache_path=work / "cache.sqlite",
            on_progress=on_progress,
            tally=Tally(before),
        )
        t1, cpu1, threads1 = time.perf_counter(), _cpu(), _display_threads_cpu()
    assert stats.sent == n and stats.failed == 0 and stats.cached == 0, stats
    served = _sim(sim, "/_stats")
    assert served["requests"] == n and served["duplicates"] == 0, served
    calls = refresh["calls"]
    return {
        "mode": mode,
        "rps": n / (t1 - t0),
        "cpu_ms": 1000 * (cpu1 - cpu0) / n,
        "refreshes": calls,
        "update_us": 1e6 * refresh["s"] / calls if calls else None,
        "loop_share": refresh["s"] / (t1 - t0),
        # The display's CPU (its threads', and `update` on the loop) in the process's CPU.
        "cpu_share": (threads1 - threads0 + refresh["s"]) / (cpu1 - cpu0),
        "run_dir": str(work / "run"),
    }


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _display_threads_cpu() -> float:
    """CPU seconds of the display's own threads: the lines' heartbeat and rich's bar refresh
    (Linux: /proc per-thread times, in clock ticks)."""
    import threading

    total = 0
    for thread in threading.enumerate():
        if thread.name == "judge-progress" or type(thread).__name__ == "_RefreshThread":
            with open(f"/proc/self/task/{thread.native_id}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def _sim(base: str, path: str, body: bytes | None = None) -> dict[str, Any]:
    request = urllib.request.Request(base + path, data=body, method="POST" if body else "GET")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


# --- the cost of one refresh, alone -------------------------------------------------------


def refresh_cost(run_dir: Path, repeat: int = 20_000) -> dict[str, float]:
    """Microseconds per refresh: `Tally.snapshot` (this process's runner and three worker
    rows) and `update` on each display; per frame the terminal bar draws (5 a second, on its
    own thread); milliseconds per `progress_of` on a judged store (each refresh, before)."""
    from multiprocessing import get_context

    from judge import RunDir
    from judge.cli.progress import progress_display
    from judge.judging.tally import Board, Counts, Tally
    from judge.run.execute import progress_of

    with RunDir(run_dir).open_store() as store:
        t = time.perf_counter()
        for _ in range(10):
            start = progress_of(store)
        poll_ms = 100 * (time.perf_counter() - t)
    board = Board(get_context("spawn"), 4)
    tally = Tally(replace(start, done=start.done // 2))
    mine = Counts(done=5, cached=1)
    tally.include(lambda: mine)
    for shard in range(1, 4):
        tally.include(lambda shard=shard: board.read(shard))
    result = {"progress_of_ms": poll_ms}
    t = time.perf_counter()
    for _ in range(repeat):
        tally.snapshot()
    result["snapshot_us"] = 1e6 * (time.perf_counter() - t) / repeat
    with open(os.devnull, "w") as out:
        for name, terminal in (("lines", False), ("terminal", True)):
            with progress_display(file=out, terminal=terminal) as display:
                assert display is not None
                display.log(f"judging {start.total:,} requests with 1 worker(s)")
                t = time.perf_counter()
                for _ in range(repeat):
                    display.update(tally.snapshot())
                result[f"refresh_{name}_us"] = 1e6 * (time.perf_counter() - t) / repeat
                if terminal:
                    bar = display._bar  # the rich bar `progress_display` started (private)
                    assert bar is not None
                    t = time.perf_counter()
                    for _ in range(repeat // 10):
                        bar.refresh()
                    result["frame_us"] = 1e6 * (time.perf_counter() - t) / (repeat // 10)
    return result


# --- the orchestrating process ------------------------------------------------------------


def run_case(mode: str, args: argparse.Namespace, sim: str, root: Path) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", mode, "--sim", sim]
    cmd += ["--root", str(root), "--requests", str(args.requests)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000, help="judge requests (even)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (medians reported)")
    parser.add_argument("--poll", action="store_true", help="also the display fed by the store")
    parser.add_argument("--child", choices=(*MODES, "poll"), help=argparse.SUPPRESS)
    parser.add_argument("--sim", help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.requests -= args.requests % 2
    if args.child:
        print(json.dumps(child(args.child, args.sim, args.root, args.requests)))
        return
    modes = [*MODES, "poll"] if args.poll else list(MODES)
    started = time.perf_counter()
    server, sim = start_simulator()
    results: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="judge-progress-bench-") as tmp:
            root = Path(tmp)
            write_dataset(root, args.requests // 2)
            from judge.run import prepare_run

            prepared = prepare_run(_config(sim, root), root / "template")
            assert prepared.requests == args.requests, prepared.requests
            print(
                f"progress cost: {args.requests:,} judge requests, simulator latency "
                f"{LATENCY_S * 1000:.0f} ms (own process), concurrency {CONCURRENCY} (ideal "
                f"{CONCURRENCY / LATENCY_S:,.0f} req/s), {len(os.sched_getaffinity(0))} CPUs, "
                f"{args.repeat} repetition(s)",
                flush=True,
            )
            for rep in range(args.repeat):
                for mode in modes[rep % len(modes) :] + modes[: rep % len(modes)]:
                    r = run_case(mode, args, sim, root)
                    r["rep"] = rep
                    results.append(r)
                    per = "" if r["update_us"] is None else f", {r['update_us']:.0f} us/update"
                    print(
                        f"  rep {rep} {mode:<9}{r['rps']:7.0f} req/s {r['cpu_ms']:6.3f} cpu "
                        f"ms/req ({r['refreshes']} refreshes{per})",
                        flush=True,
                    )
            cost = refresh_cost(Path(results[-1]["run_dir"]))
    finally:
        server.terminate()
        server.wait(10)
    report(results, modes, args.repeat, cost)
    print(f"\n(bench took {time.perf_counter() - started:.0f} s)")


def report(
    results: list[dict[str, Any]], modes: list[str], reps: int, cost: dict[str, float]
) -> None:
    def pick(mode: str, rep: int) -> dict[str, Any]:
        return next(r for r in results if r["mode"] == mode and r["rep"] == rep)

    print(f"\nmedians of {reps} repetition(s); x quiet: median of same-repetition ratios")
    head = ("mode", "req/s", "x quiet", "cpu ms/req", "us/update", "loop share", "cpu share")
    print("{:<10}{:>8}{:>9}{:>12}{:>11}{:>12}{:>11}".format(*head))
    for mode in modes:
        rows = [pick(mode, rep) for rep in range(reps)]
        ratio = statistics.median(r["rps"] / pick("quiet", r["rep"])["rps"] for r in rows)
        updates = [r["update_us"] for r in rows if r["update_us"] is not None]
        share = statistics.median(r["loop_share"] for r in rows)
        cpu_share = statistics.median(r["cpu_share"] for r in rows)
        print(
            f"{mode:<10}{statistics.median(r['rps'] for r in rows):8.0f}{ratio:9.3f}"
            f"{statistics.median(r['cpu_ms'] for r in rows):12.3f}"
            f"{statistics.median(updates) if updates else float('nan'):11.0f}{share:12.4%}"
            f"{cpu_share:11.3%}"
        )
    print(
        "\nloop share: the judging loop's time spent in the display's update (poll: and in the "
        "store query)\ncpu share: the display's CPU (its threads, and update) in the judging "
        "process's CPU\n"
        f"one refresh alone: Tally.snapshot {cost['snapshot_us']:.1f} us; snapshot + update: "
        f"lines {cost['refresh_lines_us']:.1f} us, terminal {cost['refresh_terminal_us']:.1f} "
        f"us\nthe terminal bar's frame: {cost['frame_us']:.0f} us, {FRAMES_PER_S} a second on its "
        f"own thread = {cost['frame_us'] * FRAMES_PER_S / 1e6:.2%} of a core\n"
        f"progress_of on the judged store (every refresh, before): "
        f"{cost['progress_of_ms']:.2f} ms"
    )


if __name__ == "__main__":
    main()
