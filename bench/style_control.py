"""Length/style-controlled win rates (`calibration.style_control`): our batched Newton bootstrap
(every resample refitted at once, from the full-data fit) against refitting each resample on its
own with scikit-learn's LogisticRegression (the soft targets as two weighted rows), side by side
in one run on the SAME resamples; then how the whole computation grows with the judgments.

Data: systems against a baseline, a planted length and bold preference (the test suite's
generator). Printed: median seconds of each side, their ratio, the largest difference between
the two sides' controlled rates over the resamples, and seconds per 1,000 judgments at 10x and
100x the size.

    .venv/bin/python bench/style_control.py [--items 300] [--resamples 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.style_control import _columns, _Fit, _oriented, newton, style_controlled


def planted(items: int, systems: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    base_len = np.maximum(50, rng.normal(900, 300, items))
    base_bold = rng.poisson(1, items)
    for j in range(systems):
        length = np.maximum(50, rng.normal(900 + 400 * (j % 2), 300, items))
        bold = rng.poisson(1 + 2 * (j % 2), items)
        total = bold + base_bold
        style = np.divide(bold - base_bold, total, out=np.zeros(items), where=total > 0)
        z = 0.2 * j + 1.2 * np.tanh((length - base_len) / 600) + 0.8 * style
        frames.append(
            pd.DataFrame(
                {
                    "item_id": np.arange(items),
                    "system_a": f"s{j}",
                    "system_b": "base",
                    "score_a": (rng.random(items) < expit(z)).astype(float),
                    **{"length_a": length, "length_b": base_len},
                    **{"headers_a": 0, "headers_b": 0, "lists_a": 0, "lists_b": 0},
                    **{"bold_a": bold, "bold_b": base_bold},
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def naive(x: np.ndarray, p: np.ndarray, items: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """One unpenalised sklearn fit per resample; the controlled rate sigmoid(intercept)."""
    out = []
    n = len(p)
    for draw in counts:
        w = draw[items]
        model = LogisticRegression(C=1e8, fit_intercept=False, tol=1e-10, max_iter=10_000)
        model.fit(
            np.vstack([x, x]),
            np.r_[np.ones(n), np.zeros(n)],
            sample_weight=np.r_[w * p, w * (1 - p)],
        )
        out.append(expit(model.coef_[0][0]))
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    table = planted(args.items, 1)
    item_ids, index = np.unique(table["item_id"].astype(str), return_inverse=True)
    controls = ("length", "markdown")
    rows = _oriented(_columns(table, controls), index, "s0", None, controls)
    assert rows is not None
    rng = np.random.default_rng(0)
    counts = rng.multinomial(
        len(item_ids), np.full(len(item_ids), 1 / len(item_ids)), args.resamples
    )
    ours_t, naive_t = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        fit = _Fit.of(rows)
        weights = counts[:, rows.items].astype(float)
        refit = newton(rows.x, rows.p, weights, fit.ridge, np.tile(fit.w, (len(counts), 1)))
        ours = fit.controlled(weights, refit)
        ours_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs = naive(rows.x, rows.p, rows.items, counts.astype(float))
        naive_t.append(time.perf_counter() - start)
    ours_m, naive_m = statistics.median(ours_t), statistics.median(naive_t)
    print(f"{args.items} judgments, {args.resamples} resamples, median of {args.repeats}:")
    print(f"  batched Newton {ours_m:.3f} s, sklearn per resample {naive_m:.3f} s", end="")
    print(f": x{naive_m / ours_m:.1f}")
    # The markdown slopes carry a unit prior in ours, none in the naive fit: close, not equal.
    gap = np.abs(ours - theirs).max()
    print(f"  largest |difference| of the controlled rates over resamples: {gap:.4f}")
    print("whole style_controlled (length + markdown, 4 systems against a baseline, ", end="")
    print("1,000 resamples):")
    for items in (250, 2_500, 25_000):
        data = planted(items, 4)
        start = time.perf_counter()
        style_controlled(data, ["length", "markdown"], baseline="base", resamples=1000)
        took = time.perf_counter() - start
        tracemalloc.start()  # a second, traced pass: what the computation holds beyond its input
        style_controlled(data, ["length", "markdown"], baseline="base", resamples=1000)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        per_1k = 1000 * took / len(data)
        print(f"  {len(data):>7,} judgments: {took:6.2f} s, {per_1k:.3f} s per 1,000; ", end="")
        print(f"peak {peak:.0f} MiB beyond the input")


if __name__ == "__main__":
    main()
