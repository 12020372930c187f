"""Length-controlled win rates (calibration.length_control) on the bundled AlpacaEval 2 data,
against the published leaderboard: rank correlation and mean absolute difference, ours and the
raw win rates', and the systems where ours is furthest from the published value.

    .venv/bin/python scripts/lc_alpaca_eval.py [--resamples 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from calibration.length_control import item_difficulty, length_controlled  # noqa: E402
from calibration.style_control import style_controlled  # noqa: E402

DATA = REPO / "data" / "alpaca_eval"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    prefs = pd.read_csv(DATA / "preferences.csv.gz")
    board = pd.read_csv(DATA / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", index_col=0)
    p = (prefs["preference"] - 1).to_numpy()
    delta = (prefs["len_output_2"] - prefs["len_output_1"]).to_numpy().astype(float)
    gamma = item_difficulty(prefs["model"], prefs["instruction_idx"], p, delta)
    rows = []
    for model, g in prefs.groupby("model"):
        if model not in board.index:
            continue
        r = length_controlled(
            str(model),
            (g["preference"] - 1).to_numpy(),
            (g["len_output_2"] - g["len_output_1"]).to_numpy(),
            g["instruction_idx"].map(gamma).to_numpy(),
            resamples=args.resamples,
        )
        published = board.loc[model, "length_controlled_winrate"]
        rows.append((model, 100 * r.win_rate, 100 * r.lc_win_rate, 100 * r.ci_low,
                     100 * r.ci_high, published, r.length_slope))  # fmt: skip
    table = pd.DataFrame(rows, columns=["system", "raw", "lc", "low", "high", "published", "phi"])
    table["off"] = table["lc"] - table["published"]
    print(f"{len(table)} systems against gpt4_1106_preview (AlpacaEval 2, weighted GPT-4 Turbo):")
    for name, col in (("ours (length-controlled)", "lc"), ("raw win rate", "raw")):
        rho = spearmanr(table[col], table["published"]).statistic
        tau = kendalltau(table[col], table["published"]).statistic
        mad = np.abs(table[col] - table["published"]).mean()
        print(f"  {name:<26} Spearman {rho:.3f}, Kendall {tau:.3f}, mean |diff| {mad:.2f} points")
    inside = ((table["low"] <= table["published"]) & (table["published"] <= table["high"])).mean()
    print(f"  published value inside our 95% interval: {inside:.0%} of systems")
    print(f"  judge's length slope phi: median {table['phi'].median():.2f} logits")
    # What `judge compare --control length --baseline gpt4_1106_preview` computes on the same
    # preferences (calibration.style_control: the difficulties shrunk by a prior, the bootstrap
    # by Newton's method).
    judged = pd.DataFrame(
        {
            "item_id": prefs["instruction_idx"],
            "system_a": prefs["model"],
            "system_b": "gpt4_1106_preview",
            "score_a": prefs["preference"] - 1,
            "length_a": prefs["len_output_2"],
            "length_b": prefs["len_output_1"],
        }
    )
    judged = judged[judged["system_a"] != "gpt4_1106_preview"]
    compared = style_controlled(
        judged, ["length"], baseline="gpt4_1106_preview", resamples=args.resamples
    )
    plain = pd.Series({r.system: 100 * r.controlled for r in compared.systems})
    both = table.set_index("system").join(plain.rename("plain"), how="inner")
    rho = spearmanr(both["plain"], both["published"]).statistic
    tau = kendalltau(both["plain"], both["published"]).statistic
    mad = np.abs(both["plain"] - both["published"]).mean()
    print(f"  {'judge compare --control':<26} Spearman {rho:.3f}, Kendall {tau:.3f}, mean |diff| "
          f"{mad:.2f} points (--baseline gpt4_1106_preview)")  # fmt: skip
    print("  furthest from the published value:")
    for _, r in table.reindex(table["off"].abs().sort_values(ascending=False).index)[:5].iterrows():
        print(f"    {r['system']:<36} ours {r['lc']:5.1f} [{r['low']:.1f}, {r['high']:.1f}], "
              f"published {r['published']:5.1f}, raw {r['raw']:5.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
