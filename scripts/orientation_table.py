"""MT-Bench judge-human agreement as printed by `calibrate`, with the systems as named and with
`alpaca-13b` renamed to sort last (which flips the a/b orientation of every pair it is in).

Chance-corrected statistics must not move with the renaming; raw agreement never does.
Run: PYTHONPATH=. python scripts/orientation_table.py [--resamples N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from calibration.calibrate import calibrate
from calibration.labels import load_mt_bench

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


if __name__ == "__main__":
    main()
