"""The judge cascade (calibration.cascade) on MT-Bench's expert votes: a simulated cheap judge
first, GPT-4's published pairwise verdicts second, humans last; over random calibration/test
splits, how often agreement with the experts on the items the judges decide reaches the
target (the guarantee asks for 1 - delta of them), the coverage of each level, and the cost
against GPT-4 alone.

Units: the 2,041 (question turn, pair of systems) with expert votes, labelled by their
majority (a tie where there is none). GPT-4: its verdicts in both orders (`inconsistent`, the
orders disagreeing, is a tie), confidence 1 where the orders agree and 0 where they do not.
The cheap judge is planted: right (the experts' label) with probability `--cheap-accuracy`,
else another label at random; its confidence a Beta(4, 2) draw when right and Beta(2, 4) when
wrong (a judge whose confidence means something, as log-probabilities can). Costs: the cheap
judge 1, GPT-4 `--gpt4-cost` per item asked.

    .venv/bin/python scripts/cascade_mt_bench.py [--target 0.75] [--delta 0.1] [--splits 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from calibration.cascade import Level, apply, calibrate  # noqa: E402

DATA = REPO / "data" / "mt_bench"
LABELS = np.array(["a", "b", "tie"])


def units() -> pd.DataFrame:
    """One row per (item, pair): the experts' majority and GPT-4's verdict, both as the
    winning system's name or 'tie', with the pair in a fixed orientation."""
    human = pd.read_json(DATA / "human_labels.jsonl", lines=True)
    gpt4 = pd.read_json(DATA / "gpt4_pair_recorded.jsonl", lines=True)

    def winner(row: pd.Series, field: str) -> str:
        value = row[field]
        if value in ("a", "system_a"):
            return str(row["system_a"])
        if value in ("b", "system_b"):
            return str(row["system_b"])
        return "tie"

    for table, field in ((human, "winner"), (gpt4, "winner")):
        table["won"] = table.apply(winner, axis=1, field=field)
        table["pair"] = table.apply(
            lambda r: "|".join(sorted((r["system_a"], r["system_b"]))), axis=1
        )
    majority = (
        human.groupby(["item_id", "pair"])["won"]
        .agg(lambda s: s.mode().iloc[0] if len(s.mode()) == 1 else "tie")
        .rename("human")
    )
    verdict = gpt4.groupby(["item_id", "pair"])["won"].first().rename("gpt4")
    consistent = (
        gpt4.groupby(["item_id", "pair"])["winner"].first().ne("inconsistent").rename("sure")
    )
    return pd.concat([majority, verdict, consistent], axis=1, join="inner").reset_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=float, default=0.75)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--cheap-accuracy", type=float, default=0.6)
    parser.add_argument("--gpt4-cost", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    table = units()
    n = len(table)
    truth = table["human"].to_numpy()
    right = rng.random(n) < args.cheap_accuracy
    names = np.array(sorted(set(truth) | set(table["gpt4"])))
    wrong = np.array([rng.choice(names[names != t]) for t in truth])
    cheap = Level(
        "cheap (planted)",
        np.where(right, rng.beta(4, 2, n), rng.beta(2, 4, n)),
        np.where(right, truth, wrong),
        1.0,
    )
    gpt4 = Level("gpt-4", table["sure"].to_numpy().astype(float), table["gpt4"].to_numpy(),
                 args.gpt4_cost)  # fmt: skip
    met, coverage, costs, agreement = 0, [], [], []
    for _ in range(args.splits):
        order = rng.permutation(n)
        cal, test = order[: n // 2], order[n // 2 :]
        levels = (cheap, gpt4)
        calibrated = [x.rows(cal) for x in levels]
        cascade = calibrate(calibrated, truth[cal], target=args.target, delta=args.delta)
        out = apply(cascade, [x.rows(test) for x in levels])
        decided = out.decided_by < 2
        share = (out.label[decided] == truth[test][decided]).mean() if decided.any() else 1.0
        met += share >= args.target
        agreement.append(share)
        coverage.append(out.coverage)
        costs.append(out.cost)
    cov = np.mean(coverage, axis=0)
    print(
        f"MT-Bench expert majority on {n} (item, pair) units; target agreement "
        f"{args.target:.2f}, delta {args.delta}, {args.splits} random half/half splits:"
    )
    print(
        f"  target met on the test half in {met / args.splits:.1%} of splits "
        f"(guarantee: >= {1 - args.delta:.0%}); agreement on decided items: median "
        f"{np.median(agreement):.3f}"
    )
    print(
        f"  decided by the cheap judge {cov[0]:.1%}, by GPT-4 {cov[1]:.1%}, left to humans "
        f"{1 - cov.sum():.1%}; cost {np.mean(costs):.2f} per item against GPT-4 alone's "
        f"{args.gpt4_cost:.2f} (x{np.mean(costs) / args.gpt4_cost:.2f})"
    )
    gpt4_alone = (table["gpt4"] == table["human"]).mean()
    print(f"  (GPT-4 alone agrees with the experts' majority on {gpt4_alone:.1%} of units)")


if __name__ == "__main__":
    main()
