"""Length-controlled win rates (calibration.length_control; issue 19, part 3).

References: scikit-learn's LogisticRegression (no penalty) fitted on the soft preferences
written as two weighted rows each (the standard way to fit a soft-label logistic model with a
hard-label solver), for the fit itself; a simulation with planted length preference and equal
quality, for what the correction removes; AlpacaEval 2's published length-controlled win rates
(data/alpaca_eval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv), approached from the
bundled preferences (the shipped difficulties and the gamed-baseline annotations AlpacaEval
fits with are not public files, so exact values are out of reach: see the module docstring).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression

from calibration.length_control import item_difficulty, length_controlled

DATA = Path(__file__).resolve().parent.parent / "data" / "alpaca_eval"


def _planted(seed: int, n: int = 600, phi: float = 1.5, quality: float = 0.0) -> pd.DataFrame:
    """One system against the baseline: equal quality (`quality` = 0) but a judge that
    prefers longer responses by `phi` logits at tanh(1 sd); soft preferences drawn around
    the model's probability."""
    rng = np.random.default_rng(seed)
    gamma = rng.normal(0, 1, n)
    delta = rng.normal(300, 600, n)
    z = quality + phi * np.tanh(delta / delta.std(ddof=1)) + 0.5 * gamma
    p = np.clip(expit(z) + rng.normal(0, 0.05, n), 0, 1)
    return pd.DataFrame({"item": np.arange(n), "p": p, "delta": delta, "gamma": gamma})


def test_the_fit_is_sklearns_soft_label_logistic_regression() -> None:
    data = _planted(1)
    ours = length_controlled(
        "m", data["p"].to_numpy(), data["delta"].to_numpy(), data["gamma"].to_numpy()
    )
    feature = np.tanh(data["delta"] / data["delta"].std(ddof=1))
    x = np.column_stack([np.ones(len(data)), feature, data["gamma"]])
    # Each soft target p as a row labelled 1 with weight p and one labelled 0 with 1 - p.
    model = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-10, max_iter=10_000)
    model.fit(
        np.vstack([x, x]),
        np.r_[np.ones(len(data)), np.zeros(len(data))],
        sample_weight=np.r_[data["p"], 1 - data["p"]],
    )
    w = model.coef_[0]
    assert [ours.intercept, ours.length_slope, ours.difficulty_slope] == pytest.approx(
        list(w), abs=2e-3
    )
    assert ours.lc_win_rate == pytest.approx(expit(w[0] + w[2] * data["gamma"]).mean(), abs=1e-4)


def test_the_interval_is_the_percentile_bootstrap_of_sklearn_refits() -> None:
    data = _planted(6, n=300)
    p, delta, gamma = data["p"].to_numpy(), data["delta"].to_numpy(), data["gamma"].to_numpy()
    ours = length_controlled("m", p, delta, gamma, resamples=300, seed=11)
    # The same resamples (items drawn with replacement, as counts), each refitted by sklearn.
    counts = np.random.default_rng(11).multinomial(len(p), np.full(len(p), 1 / len(p)), 300)
    x = np.column_stack([np.ones(len(p)), np.tanh(delta / delta.std(ddof=1)), gamma])
    lcs = []
    for c in counts:
        model = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-10, max_iter=10_000)
        model.fit(np.vstack([x, x]), np.r_[np.ones(len(p)), np.zeros(len(p))],
                  sample_weight=np.r_[c * p, c * (1 - p)])  # fmt: skip
        w = model.coef_[0]
        lcs.append((c * expit(w[0] + w[2] * gamma)).sum() / c.sum())
    low, high = np.quantile(lcs, [0.025, 0.975])
    assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), abs=2e-3)
    assert ours.ci_low < ours.lc_win_rate < ours.ci_high
    assert (ours.resamples, ours.seed, ours.level) == (300, 11, 0.95)


def test_a_planted_length_preference_is_removed_and_measured() -> None:
    data = _planted(2, phi=1.5, quality=0.0)
    result = length_controlled(
        "m", data["p"].to_numpy(), data["delta"].to_numpy(), data["gamma"].to_numpy()
    )
    # Longer on most items, so the raw win rate is well above a half; at equal length the
    # planted quality is equal: the controlled rate comes back to about a half.
    assert result.win_rate > 0.55 and result.win_rate - result.lc_win_rate > 0.06
    assert abs(result.lc_win_rate - 0.5) < 0.04
    assert result.length_slope == pytest.approx(1.5, abs=0.2)
    # No length preference planted: nothing to remove, and none measured.
    fair = _planted(3, phi=0.0, quality=0.4)
    plain = length_controlled(
        "m", fair["p"].to_numpy(), fair["delta"].to_numpy(), fair["gamma"].to_numpy()
    )
    assert abs(plain.length_slope) < 0.15
    assert abs(plain.lc_win_rate - plain.win_rate) < 0.02


def test_rows_in_any_order_and_items_under_any_names_give_the_same_numbers() -> None:
    rng = np.random.default_rng(4)
    frames = []
    for system, phi, q in (("a", 1.0, 0.3), ("b", 0.5, -0.2), ("c", 1.5, 0.0)):
        one = _planted(int(rng.integers(1000)), n=300, phi=phi, quality=q)
        frames.append(one.assign(system=system))
    table = pd.concat(frames, ignore_index=True)

    def rates(t: pd.DataFrame) -> dict[str, float]:
        gamma = item_difficulty(t["system"], t["item"], t["p"].to_numpy(), t["delta"].to_numpy())
        out = {}
        for system, g in t.groupby("system"):
            r = length_controlled(
                str(system),
                g["p"].to_numpy(),
                g["delta"].to_numpy(),
                g["item"].map(gamma).to_numpy(),
            )
            out[str(system)] = r.lc_win_rate
        return out

    base = rates(table)
    shuffled = table.sample(frac=1, random_state=5).reset_index(drop=True)
    renamed = table.assign(item=table["item"].map(lambda i: 10_000 - 7 * i))
    assert rates(shuffled) == pytest.approx(base, abs=1e-4)
    assert rates(renamed) == pytest.approx(base, abs=1e-4)


def test_alpaca_eval_lc_win_rates_are_approached_from_the_bundled_preferences() -> None:
    prefs = pd.read_csv(DATA / "preferences.csv.gz")
    board = pd.read_csv(DATA / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", index_col=0)
    p = (prefs["preference"] - 1).to_numpy()
    delta = (prefs["len_output_2"] - prefs["len_output_1"]).to_numpy().astype(float)
    gamma = item_difficulty(prefs["model"], prefs["instruction_idx"], p, delta)
    ours, published, raw = [], [], []
    for model, rows in prefs.groupby("model"):
        if model not in board.index:
            continue
        r = length_controlled(
            str(model),
            (rows["preference"] - 1).to_numpy(),
            (rows["len_output_2"] - rows["len_output_1"]).to_numpy(),
            rows["instruction_idx"].map(gamma).to_numpy(),
            resamples=20,
        )
        ours.append(100 * r.lc_win_rate)
        raw.append(100 * r.win_rate)
        published.append(board.loc[model, "length_controlled_winrate"])
    ours_a, pub_a, raw_a = np.array(ours), np.array(published), np.array(raw)
    assert len(ours) == 57
    # Measured on this data: Spearman 0.977, mean absolute difference 1.27 points (the raw
    # win rates: 0.961 and 4.77 points).
    assert spearmanr(ours_a, pub_a).statistic >= 0.97
    assert np.abs(ours_a - pub_a).mean() <= 1.5
    assert np.abs(ours_a - pub_a).mean() < np.abs(raw_a - pub_a).mean() / 3
