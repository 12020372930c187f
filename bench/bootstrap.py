"""Paired bootstrap speed: ours vs the naive pure-Python loop, side by side in one run.

The naive loop is the one in `benchmarking-responsibly.txt` (shared reading): for each resample,
`sum(random.choice(diffs) for _ in diffs) / len(diffs)`, then sort and take percentiles. Its
cost is exactly linear in the number of resamples, so it is timed on fewer resamples (about
3 million draws per run) and scaled to the target; `--full-naive` times it on all of them.
"Straightforward" is the obvious vectorisation: chunks of resamples, one
`rng.integers(0, n, (chunk, n))` and `d[idx].mean(axis=1)` each, single thread.

Three kinds of per-item differences: continuous (normal scores), verdicts (a's score in
{1, 0.5, 0} against 1 - a: differences in {-1, 0, 1}) and rubric (two 1-5 scores: differences
in -4..4). The last two take few distinct values, where `paired_bootstrap` draws multinomial
counts of each value instead of n indices.

Peak memory is measured in a fresh child process (ru_maxrss, so it includes the interpreter
and numpy/scipy/pandas, which are printed separately as the baseline).

    .venv/bin/python bench/bootstrap.py [--resamples 10000] [--repeats 3] [--full-naive]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from calibration.bootstrap import paired_bootstrap
from calibration.resampling import default_workers

_NAIVE_DRAWS = 3_000_000  # per naive timing run: about one second


def _data(kind: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        a = rng.normal(0.05, 1.0, n)
        return a, 0.5 * a + rng.normal(0.0, 1.0, n)
    if kind == "verdicts":
        a = rng.choice([1.0, 0.5, 0.0], size=n, p=[0.45, 0.2, 0.35])
        return a, 1.0 - a
    if kind == "rubric":
        return rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float)
    raise ValueError(kind)


def naive(diffs: list[float], resamples: int) -> tuple[float, float]:
    """Verbatim from the reading, minus file I/O."""
    random.seed(7)
    boot = sorted(sum(random.choice(diffs) for _ in diffs) / len(diffs) for _ in range(resamples))
    return boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot))]


def straightforward(d: np.ndarray, resamples: int, seed: int = 1) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    chunk = max(1, 10_000_000 // len(d))  # about 80 MB of indices per chunk
    boot = np.concatenate(
        [
            d[rng.integers(0, len(d), size=(min(chunk, resamples - r), len(d)))].mean(axis=1)
            for r in range(0, resamples, chunk)
        ]
    )
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return float(lo), float(hi)


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _peak_rss_mb() -> float:
    """High-water RSS of this address space. VmHWM resets at exec, unlike ru_maxrss, which
    Linux carries over from the forking parent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(n: int, resamples: int, kind: str) -> None:
    """Run one bootstrap in this (fresh) process and print time and peak memory."""
    a, b = _data(kind, n)
    base = _peak_rss_mb()
    tracemalloc.start()  # numpy reports its buffers to tracemalloc
    start = time.perf_counter()
    res = paired_bootstrap(a, b, seed=1, resamples=resamples)
    dt = time.perf_counter() - start
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    out = {
        "seconds": dt,
        "baseline_mb": base,
        "peak_mb": _peak_rss_mb(),
        "traced_mb": traced,
        "algorithm": res.algorithm,
    }
    print(json.dumps(out))


def _memory(n: int, resamples: int, kind: str) -> dict[str, float]:
    script = str(Path(__file__).resolve())
    args = [sys.executable, script, "--child", str(n), str(resamples), kind]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--full-naive", action="store_true", help="time naive on all resamples")
    parser.add_argument("--child", nargs=3, metavar=("N", "RESAMPLES", "KIND"), help="internal")
    args = parser.parse_args()
    if args.child:
        _child(int(args.child[0]), int(args.child[1]), args.child[2])
        return

    r = args.resamples
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"paired bootstrap, {r:,} resamples, {default_workers()} worker threads on "
        f"{default_workers()} CPUs; medians of {args.repeats} runs; "
        "naive* = timed on fewer resamples, scaled linearly"
    )
    header = (
        f"{'differences':<12}{'n':>9}{'naive s':>10}{'straightfwd s':>15}{'ours s':>9}"
        f"{'algorithm':>10}{'vs naive':>10}{'vs straightfwd':>16}{'items*resamples/s':>19}"
    )
    print(header)
    for kind in ("continuous", "verdicts", "rubric"):
        for n in args.sizes:
            a, b = _data(kind, n)
            diffs = (a - b).tolist()
            nr = r if args.full_naive else max(1, min(r, _NAIVE_DRAWS // n))
            t_naive = _median_time(lambda d=diffs, k=nr: naive(d, k), args.repeats) * r / nr
            t_simple = _median_time(lambda d=a - b: straightforward(d, r), args.repeats)
            res = paired_bootstrap(a, b, seed=1, resamples=r)
            t_ours = _median_time(
                lambda x=a, y=b: paired_bootstrap(x, y, seed=1, resamples=r), args.repeats
            )
            mark = "" if nr == r else "*"
            print(
                f"{kind:<12}{n:>9,}{t_naive:>9.2f}{mark:1}{t_simple:>15.3f}{t_ours:>9.4f}"
                f"{res.algorithm:>10}{t_naive / t_ours:>9,.0f}x{t_simple / t_ours:>15,.1f}x"
                f"{n * r / t_ours:>19,.3g}"
            )

    # Where does continuous time go? Threads and blocks, at n = 10,000.
    a, b = _data("continuous", 10_000)
    one = _median_time(lambda: paired_bootstrap(a, b, seed=1, resamples=r, workers=1), 3)
    two = _median_time(lambda: paired_bootstrap(a, b, seed=1, resamples=r), 3)
    gather = _median_time(
        lambda: paired_bootstrap(
            *_data("verdicts", 10_000), seed=1, resamples=r, algorithm="gather"
        ),
        3,
    )
    print(
        f"\ncontinuous n=10,000: 1 pool thread {one:.3f} s ({one / (1e4 * r) * 1e9:.2f} ns/draw), "
        f"{default_workers()} threads {two:.3f} s ({two / (1e4 * r) * 1e9:.2f} ns/draw); "
        f"verdicts forced to gather: {gather:.3f} s"
    )
    d = (a - b).tolist()
    ours = paired_bootstrap(a, b, seed=1, resamples=r)
    lo, hi = naive(d, 2_000)
    print(
        f"same data, 95% interval: ours [{ours.ci_low:+.4f}, {ours.ci_high:+.4f}], "
        f"naive (2,000 resamples) [{lo:+.4f}, {hi:+.4f}]"
    )

    print("\npeak memory, fresh process per run (ru_maxrss):")
    for n, rr, kind in (
        (100_000, r, "continuous"),
        (1_000_000, 1_000, "continuous"),
        (1_000_000, r, "verdicts"),
    ):
        m = _memory(n, rr, kind)
        print(
            f"  {kind:<11}{n:>10,} items x {rr:>6,} resamples: {m['seconds']:6.2f} s, "
            f"peak RSS {m['peak_mb']:5.0f} MB (imports + data before the call: "
            f"{m['baseline_mb']:.0f} MB; allocated by the call: {m['traced_mb']:.1f} MB), "
            f"{m['algorithm']}"
        )

    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
