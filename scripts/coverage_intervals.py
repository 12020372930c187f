"""Coverage of the corrected estimates' intervals and of Bradley-Terry's, by simulation.

    python scripts/coverage_intervals.py [--seeds 1000] [--bt-seeds 1000]

PPI++ (win rate) and Rogan-Gladen: 2,000 judged units of which the first n carry a human
label; the truth is Bernoulli(pi); the judge says "a" with probability Se among the human
positives and 1 - Sp among the negatives (Se 0.9, Sp 0.8, so the raw judge is biased; then
Se 0.8 / Sp 0.9 and Se 0.95 / Sp 0.95). One dataset per seed; an undefined interval counts
as a miss. Bradley-Terry (5, 10 and 30 items): 4 systems with true strengths
(log-odds) 0.6, 0.2, -0.2, -0.6, every pair judged once per item; coverage of each centred
strength, over the datasets where the interval is estimable. Monte Carlo s.e. =
sqrt(c (1 - c) / seeds). Runs in about three minutes on one core.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd

from calibration.correction import ppi_win_rate
from calibration.ranking import bradley_terry
from calibration.rogan_gladen import rogan_gladen

_N_ALL = 2000
# The design first, then two more so the intervals are not fitted to one judge.
_DESIGNS = ((0.9, 0.8), (0.8, 0.9), (0.95, 0.95))
_STRENGTHS = np.array([0.6, 0.2, -0.2, -0.6])


def _cell_row(name: str, n: int, pi: float, lows: list, highs: list) -> str:
    lo = np.array([np.nan if v is None else v for v in lows], dtype=float)
    hi = np.array([np.nan if v is None else v for v in highs], dtype=float)
    defined = np.isfinite(lo) & np.isfinite(hi)
    cover = float((defined & (lo <= pi) & (pi <= hi)).mean())
    mcse = np.sqrt(cover * (1 - cover) / len(lo))
    outside = int(((lo < 0) | (hi > 1))[defined].sum())
    zero = int((hi - lo == 0)[defined].sum())
    width = float(np.mean((hi - lo)[defined])) if defined.any() else float("nan")
    return (
        f"| {name} | {n} | {pi:.2f} | {cover:.3f} ± {mcse:.3f} | {outside} | {zero} | "
        f"{int((~defined).sum())} | {width:.3f} |"
    )


def corrected(seeds: int, sens: float, spec: float) -> None:
    print(
        f"\nPPI++ and Rogan-Gladen, {seeds} seeds per cell, 95% intervals, "
        f"judge Se {sens} Sp {spec}"
    )
    print(
        "| method | labels | true rate | coverage ± MC s.e. | outside [0,1] | zero width "
        "| undefined | mean width |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n, pi in itertools.product((50, 100, 300), (0.05, 0.5, 0.95)):
        seed = [n, int(pi * 100)] + ([] if (sens, spec) == _DESIGNS[0] else [int(sens * 100)])
        rng = np.random.default_rng(seed)
        truth = rng.random((seeds, _N_ALL)) < pi
        noise = rng.random((seeds, _N_ALL))
        judge = np.where(truth, noise < sens, noise >= spec)
        out: dict[str, tuple[list, list]] = {"PPI++": ([], []), "Rogan-Gladen": ([], [])}
        for y, j in zip(truth, judge, strict=True):
            h = np.where(y[:n], "a", "b")
            jl, ju = np.where(j[:n], "a", "b"), np.where(j[n:], "a", "b")
            p = ppi_win_rate(h, jl, ju)
            r = rogan_gladen(j[n:], j[:n], y[:n])
            for name, e in (("PPI++", p), ("Rogan-Gladen", r)):
                out[name][0].append(e.ci_low)
                out[name][1].append(e.ci_high)
        for name, (lows, highs) in out.items():
            print(_cell_row(name, n, pi, lows, highs))


def _bt_table(rng: np.random.Generator, items: int) -> pd.DataFrame:
    k = len(_STRENGTHS)
    pairs = list(itertools.combinations(range(k), 2))
    rows = []
    for item in range(items):
        for i, j in pairs:
            p = 1 / (1 + np.exp(-(_STRENGTHS[i] - _STRENGTHS[j])))
            rows.append((f"q{item}", f"s{i}", f"s{j}", float(rng.random() < p)))
    return pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "score_a"])


def bradley_terry_coverage(seeds: int, resamples: int) -> None:
    truth = _STRENGTHS - _STRENGTHS.mean()
    print(
        f"\nBradley-Terry, 4 systems, {seeds} seeds per row, {resamples} bootstrap resamples; "
        "coverage of each centred true strength where estimable"
    )
    print(
        "| items | no finite fit at all | not estimable | coverage ± MC s.e. "
        "| mean width | widest interval |"
    )
    print("|---|---|---|---|---|---|")
    for items in (5, 10, 30):
        rng = np.random.default_rng(items)
        hits = total = not_estimable = no_fit = 0
        widths: list[float] = []
        for seed in range(seeds):
            table = _bt_table(rng, items)
            try:
                bt = bradley_terry(table, seed=seed, resamples=resamples)
            except ValueError:
                no_fit += 1  # some system never lost or never won: no MLE, no interval
                continue
            if any(v is None for v in bt.ci_low):
                not_estimable += 1
                continue
            order = [bt.systems.index(f"s{i}") for i in range(len(truth))]
            lo, hi = np.array(bt.ci_low)[order], np.array(bt.ci_high)[order]
            hits += int(((lo <= truth) & (truth <= hi)).sum())
            total += len(truth)
            widths += list(hi - lo)
        cover = hits / total if total else float("nan")
        mcse = np.sqrt(cover * (1 - cover) / max(total, 1))
        print(
            f"| {items} | {no_fit} | {not_estimable} | {cover:.3f} ± {mcse:.3f} | "
            f"{np.mean(widths):.2f} | {np.max(widths):.2f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--bt-seeds", type=int, default=1000)
    parser.add_argument("--bt-resamples", type=int, default=400)
    args = parser.parse_args()
    started = time.perf_counter()
    for sens, spec in _DESIGNS:
        corrected(args.seeds, sens, spec)
    bradley_terry_coverage(args.bt_seeds, args.bt_resamples)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
