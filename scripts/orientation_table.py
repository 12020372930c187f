"""MT-Bench judge-human agreement as printed by `calibrate`, with the systems as named and with
`alpaca-13b` renamed to sort last (which flips the a/b orientation of every pair it is in).

Chance-corrected statistics must not move with the renaming; raw agreement never does. A second
table puts calibrate's construction (every comparison in both orientations) beside the one
orientation it replaced and two other orientation-free variants of nominal alpha: each copy
weighted 1/2 (n unchanged), and Krippendorff's expected disagreement averaged over every
orientation of the keys (exact: the a/b counts of each key flip together).
Run: PYTHONPATH=. python scripts/orientation_table.py [--resamples N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from calibration.calibrate import calibrate
from calibration.labels import join_labels, load_mt_bench

MT_BENCH = Path(__file__).resolve().parent.parent / "data" / "mt_bench"


def _renamed(table: pd.DataFrame, old: str, new: str) -> pd.DataFrame:
    return table.replace({"system_a": {old: new}, "system_b": {old: new}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    judge, human = load_mt_bench(MT_BENCH / "human.jsonl", MT_BENCH / "gpt4_pair.jsonl")
    rows = []
    for label, (j, h) in {
        "as named": (judge, human),
        "alpaca-13b -> zz-alpaca": (
            _renamed(judge, "alpaca-13b", "zz-alpaca"),
            _renamed(human, "alpaca-13b", "zz-alpaca"),
        ),
    }.items():
        r = calibrate(j, h, kind="pairwise", resamples=args.resamples, seed=0)
        m, c = r.overall.metrics, r.overall.ceiling
        assert c is not None
        rows.append(
            (
                label,
                m["alpha"],
                m["kappa"],
                c.human_alpha,
                c.judge_alpha_loho,
                c.alpha_gap,
                f"{m['agreement_s1'].agree}/{m['agreement_s1'].comparisons}",
            )
        )
    head = ("systems", "judge alpha", "kappa", "human alpha", "LOHO alpha", "alpha gap", "S1")
    print(" | ".join(head))
    for label, *ests, s1 in rows:
        cells = [f"{e.value:.4f} [{e.ci_low:.3f}, {e.ci_high:.3f}]" for e in ests]
        print(" | ".join([label, *cells, s1]))
    variants_table(judge, human)


def _variants(units: np.ndarray, key: np.ndarray, mirror: np.ndarray) -> dict[str, float]:
    """Nominal alpha of per-unit value counts (a, b, tie) four ways; `key`: each unit's key,
    whose values flip orientation together."""
    m = units.sum(axis=1)
    c, key, m = units[m >= 2], key[m >= 2], m[m >= 2]
    observed = ((m**2 - (c**2).sum(axis=1)) / (m - 1)).sum()
    marg = c.sum(axis=0)
    n = marg.sum()
    sym = (marg + marg[mirror]) / 2
    e_one, e_sym = n**2 - (marg**2).sum(), n**2 - (sym**2).sum()
    spread = np.bincount(key, weights=c[:, 0] - c[:, 1])
    e_avg = e_sym - 0.5 * (spread**2).sum()  # minus the variance of n_a and n_b over flips
    return {
        "one orientation (before)": 1 - (n - 1) * observed / e_one,
        "both orientations (calibrate)": 1 - (n - 0.5) * observed / e_sym,
        "each copy weighted 1/2": 1 - (n - 1) * observed / e_sym,
        "expected averaged over orientations": 1 - (n - 1) * observed / e_avg,
    }


def variants_table(judge: pd.DataFrame, human: pd.DataFrame) -> None:
    j = join_labels(judge, human, kind="pairwise")
    h, mirror = j.human_counts, j.mirror
    assert mirror is not None
    key, cat = np.nonzero(h)
    key, cat = np.repeat(key, h[key, cat]), np.repeat(cat, h[key, cat])
    pairs = np.zeros((len(key), h.shape[1]))
    np.add.at(pairs, (np.arange(len(key)), j.judge_code[key]), 1)
    np.add.at(pairs, (np.arange(len(key)), cat), 1)
    judge_alpha = _variants(pairs, key, mirror)
    human_alpha = _variants(h.astype(float), np.arange(len(h)), mirror)
    print("\nnominal alpha | judge vs human | human vs human")
    for name in judge_alpha:
        print(f"{name} | {judge_alpha[name]:.5f} | {human_alpha[name]:.5f}")


if __name__ == "__main__":
    main()
