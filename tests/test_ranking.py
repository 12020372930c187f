"""Bradley–Terry, tied ranks and leaderboard transfer.

References: a direct scipy.optimize fit of the Bradley–Terry log-likelihood written out in the
test (Bradley & Terry 1952; ties as half wins); scipy.stats.kendalltau (tau-b, exact p-value)
and scipy.stats.spearmanr; brute-force enumeration of all orderings for permutation p-values.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from calibration.ranking import (
    bradley_terry,
    kendall_tau_b,
    leaderboard_transfer,
    pairwise_win_rates,
    spearman_rho,
)
from calibration.ranks import interval_overlap_ranks


def _judgments(true: dict[str, float], n: int, seed: int, tie: float = 0.1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = list(true)
    rows = []
    for item in range(n):
        a, b = rng.choice(len(names), 2, replace=False)
        p = 1 / (1 + math.exp(-(true[names[a]] - true[names[b]])))
        u = rng.random()
        score = 0.5 if u < tie else (1.0 if rng.random() < p else 0.0)
        rows.append((f"i{item}", names[a], names[b], score))
    return pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "score_a"])


def _reference_fit(df: pd.DataFrame) -> dict[str, float]:
    # Reference: maximise sum_rows s log sigmoid(b_a - b_b) + (1 - s) log sigmoid(b_b - b_a)
    # directly with BFGS (last strength pinned to 0), then centre to sum 0.
    names = sorted(set(df["system_a"]) | set(df["system_b"]))
    ix = {n: i for i, n in enumerate(names)}
    a = df["system_a"].map(ix).to_numpy()
    b = df["system_b"].map(ix).to_numpy()
    s = df["score_a"].to_numpy()

    def nll(x: np.ndarray) -> float:
        beta = np.append(x, 0.0)
        d = beta[a] - beta[b]
        return float(np.sum(s * np.logaddexp(0, -d) + (1 - s) * np.logaddexp(0, d)))

    fit = optimize.minimize(nll, np.zeros(len(names) - 1), method="BFGS", options={"gtol": 1e-9})
    beta = np.append(fit.x, 0.0)
    return dict(zip(names, beta - beta.mean(), strict=True))


def test_bradley_terry_matches_direct_likelihood_fit() -> None:
    df = _judgments({"a": 1.0, "b": 0.4, "c": 0.0, "d": -0.3, "e": -1.1}, 400, seed=1)
    ref = _reference_fit(df)
    res = bradley_terry(df, seed=2, resamples=300)
    for name, strength in zip(res.systems, res.strength, strict=True):
        assert strength == pytest.approx(ref[name], abs=1e-5)
    # Probability scores (weighted preferences) are the same likelihood with fractional s.
    soft = df.assign(score_a=np.clip(df["score_a"] * 0.8 + 0.1, 0, 1))
    ref = _reference_fit(soft)
    res = bradley_terry(soft, seed=2, resamples=50)
    for name, strength in zip(res.systems, res.strength, strict=True):
        assert strength == pytest.approx(ref[name], abs=1e-5)


def test_bradley_terry_intervals_ranks_and_anchor() -> None:
    true = {"a": 1.5, "b": 1.4, "c": 0.0, "d": -1.5}
    df = _judgments(true, 1_500, seed=3)
    res = bradley_terry(df, seed=4, resamples=500, anchor="c")
    table = res.table().set_index("system")
    assert table.loc["c", "strength"] == 0.0
    for name in true:
        row = table.loc[name]
        assert row["ci_low"] <= row["strength"] <= row["ci_high"]
    # Strengths order the systems; ranks come from the paired tests (calibration.ranks).
    assert set(table.index[:2]) == {"a", "b"} and list(table.index[2:]) == ["c", "d"]
    assert "rank" not in table.columns
    assert res.probability("a", "d") > 0.9
    again = bradley_terry(df, seed=4, resamples=500, anchor="c")
    assert again.ci_low == res.ci_low
    json.dumps(res.to_dict())


def test_bradley_terry_without_finite_mle() -> None:
    # "a" never loses: the likelihood increases without bound (Zermelo 1929; Ford 1957).
    df = pd.DataFrame(
        {
            "item_id": [1, 2, 3, 4],
            "system_a": ["a", "a", "b", "c"],
            "system_b": ["b", "c", "c", "b"],
            "score_a": [1.0, 1.0, 1.0, 1.0],
        }
    )
    with pytest.raises(ValueError, match="prior=1"):
        bradley_terry(df, seed=0, resamples=10)
    res = bradley_terry(df, seed=0, resamples=200, prior=1.0)
    assert res.systems[int(np.argmax(res.strength))] == "a"
    assert res.degenerate_resamples == 0  # the prior makes every resample finite


def test_bradley_terry_needs_a_connected_design() -> None:
    df = pd.DataFrame(
        {
            "item_id": [1, 2, 3, 4],
            "system_a": ["a", "b", "c", "d"],
            "system_b": ["b", "a", "d", "c"],
            "score_a": [1.0, 1.0, 1.0, 0.5],
        }
    )
    with pytest.raises(ValueError, match="'a' and 'c' are linked by no chain"):
        bradley_terry(df, seed=0, prior=1.0)


def test_degenerate_resamples_are_counted() -> None:
    # Few items: some resamples drop every loss of a system; they are fitted with a tiny prior
    # (far tails) and counted rather than breaking the bootstrap.
    df = _judgments({"a": 2.0, "b": 0.0, "c": -2.0}, 60, seed=6, tie=0.0)
    res = bradley_terry(df, seed=1, resamples=300)
    assert res.degenerate_resamples > 0
    assert np.isfinite(res.replicates).all()


def test_pairwise_win_rates() -> None:
    df = pd.DataFrame(
        {
            "item_id": [1, 1, 2, 3],
            "system_a": ["x", "y", "x", "z"],
            "system_b": ["y", "x", "y", "x"],
            "score_a": [1.0, 0.5, 0.0, 1.0],
        }
    )
    m = pairwise_win_rates(df)
    assert m.loc["x", "y"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert m.loc["y", "x"] == pytest.approx(1 - m.loc["x", "y"])
    assert m.loc["z", "x"] == 1.0 and math.isnan(m.loc["y", "z"])


def test_interval_overlap_ranks_close_overlap_transitively() -> None:
    # The rule for public leaderboards (intervals, no paired tests).
    est = [5, 4, 3, 2, 1]
    lo = [4.5, 3.5, 2.9, 0.0, 0.0]
    hi = [5.5, 4.6, 3.1, 2.5, 1.5]
    # 1 and 2 overlap; 3 stands alone; 4 and 5 overlap -> ranks 1, 1, 3, 4, 4.
    np.testing.assert_array_equal(interval_overlap_ranks(est, lo, hi), [1, 1, 3, 4, 4])
    # A chain: 1 overlaps 2, 2 overlaps 3, so all three share rank 1 although 1 and 3 do not.
    np.testing.assert_array_equal(
        interval_overlap_ranks([3, 2, 1], [2.5, 1.5, 0.5], [3.5, 2.6, 1.6]), [1] * 3
    )


def test_kendall_and_spearman_match_scipy_with_ties() -> None:
    # Reference: scipy.stats.kendalltau (variant "b", the default) and scipy.stats.spearmanr,
    # both with tied values on both sides.
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(0, 4, 12).astype(float)
        y = x + rng.integers(-2, 3, 12)
        assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
        assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


_PUBLIC = dict(zip("abcdefg", [82.1, 79.4, 78.8, 76.0, 74.3, 71.9, 68.2], strict=True))
_MINE = dict(zip("abcdefg", [0.74, 0.80, 0.62, 0.78, 0.66, 0.70, 0.58], strict=True))


def test_transfer_on_the_reading_example() -> None:
    # The example arrays of rank-transfer-public-benchmarks.txt. References: scipy's tau-b
    # and its exact p-value (no ties, n = 7: all 5040 orderings); Spearman's permutation p by
    # brute force over the same 5040 orderings with scipy.stats.spearmanr as the statistic.
    res = leaderboard_transfer(_PUBLIC, _MINE, seed=0)
    x, y = list(_PUBLIC.values()), list(_MINE.values())
    ref_tau = stats.kendalltau(x, y, method="exact")
    assert res.exact and res.permutations == 5040
    assert res.kendall_tau_b == pytest.approx(ref_tau.statistic)
    assert res.p_kendall == pytest.approx(ref_tau.pvalue, abs=1e-12)
    rho = stats.spearmanr(x, y).statistic
    null = [
        stats.spearmanr(x, [y[i] for i in p]).statistic for p in itertools.permutations(range(7))
    ]
    assert res.spearman == pytest.approx(rho)
    assert res.p_spearman == pytest.approx(np.mean(np.abs(null) >= abs(rho) - 1e-12))
    moved = {m.system: m.places for m in res.moved}
    assert moved == {"a": -2.0, "c": -3.0, "d": 2.0, "f": 2.0}


def test_transfer_ties_systems_inside_each_others_interval() -> None:
    intervals = {
        "b": (0.785, 0.815),
        "d": (0.765, 0.795),  # overlaps b
        "a": (0.725, 0.755),
        "f": (0.69, 0.73),  # overlaps a
        "e": (0.645, 0.675),
        "c": (0.60, 0.65),  # overlaps e
        "g": (0.565, 0.595),
    }
    res = leaderboard_transfer(_PUBLIC, _MINE, seed=0, our_intervals=intervals)
    ranks = dict(zip(res.systems, res.our_rank, strict=True))
    assert ranks == {"b": 1.5, "d": 1.5, "a": 3.5, "f": 3.5, "e": 5.5, "c": 5.5, "g": 7.0}
    # Reference: scipy's tau-b on the tied ranks (ties on our side only).
    x = [_PUBLIC[s] for s in res.systems]
    y = [-ranks[s] for s in res.systems]
    assert res.kendall_tau_b == pytest.approx(stats.kendalltau(x, y).statistic)
    # Overlapping everywhere chains everything into one tie: no ordering left to correlate.
    wide = {s: (0.5, 0.9) for s in _MINE}
    flat = leaderboard_transfer(_PUBLIC, _MINE, seed=0, our_intervals=wide)
    assert math.isnan(flat.spearman) and math.isnan(flat.p_kendall)


def test_transfer_sampled_permutations_approach_exact() -> None:
    rng = np.random.default_rng(1)
    names = [f"s{i}" for i in range(8)]
    pub = dict(zip(names, rng.normal(size=8), strict=True))
    ours = {k: v + rng.normal(0, 0.8) for k, v in pub.items()}
    exact = leaderboard_transfer(pub, ours, seed=0, permutations=50_000)  # 8! = 40320
    sampled = leaderboard_transfer(pub, ours, seed=0, permutations=20_000)
    assert exact.exact and not sampled.exact
    sd = math.sqrt(exact.p_kendall * (1 - exact.p_kendall) / 20_000)
    assert sampled.p_kendall == pytest.approx(exact.p_kendall, abs=5 * sd + 1e-4)
    assert exact.p_kendall == pytest.approx(
        stats.kendalltau(list(pub.values()), list(ours.values()), method="exact").pvalue
    )


def test_transfer_orientation_and_left_out() -> None:
    pub = {"a": 1, "b": 2, "c": 3, "x": 4}  # a rank-like column: lower is better
    ours = {"a": 0.9, "b": 0.8, "c": 0.7, "y": 0.1}
    res = leaderboard_transfer(pub, ours, seed=0, public_higher_is_better=False)
    assert res.spearman == pytest.approx(1.0) and res.left_out == ("x", "y")
    with pytest.raises(ValueError, match="at least 3 systems"):
        leaderboard_transfer({"a": 1, "b": 2}, {"a": 1, "b": 2}, seed=0)


def test_bradley_terry_interval_not_estimable_when_most_resamples_have_no_fit() -> None:
    # s0 > s1 > s2 on every item except two: q1, where s1 beats s0 (s0's only loss), and q2,
    # where s2 beats s1 (s2's only win). A resample of the 5 items lacks q1 or q2 with
    # probability 1 - (1 - 2 (4/5)^5 + (3/5)^5) = 0.58; then s0 never loses or s2 never wins,
    # and no finite fit exists (Zermelo's condition): far more than the 2.5% tail.
    scores = {"q1": (0.0, 1.0, 1.0), "q2": (1.0, 0.0, 1.0)}
    rows = [
        (item, a, b, scores.get(item, (1.0, 1.0, 1.0))[k])
        for item in ("q1", "q2", "q3", "q4", "q5")
        for k, (a, b) in enumerate([("s0", "s1"), ("s1", "s2"), ("s0", "s2")])
    ]
    table = pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "score_a"])
    bt = bradley_terry(table, seed=0, resamples=1000)
    assert 520 < bt.degenerate_resamples < 640  # 580 expected; binomial s.d. 16
    assert bt.ci_low == (None, None, None) and bt.ci_high == (None, None, None)
    assert f"{bt.degenerate_resamples} of 1000 resamples" in bt.not_estimable
    assert bt.strength[0] > bt.strength[1] > bt.strength[2]  # the fit still orders them
    # Twenty copies of the same items: every resample holds a q1 and a q2 (the chance that
    # one of 100 draws misses all 20 copies of q1 is 2 * 0.8^100, about 4e-10).
    copies = [table.assign(item_id=table["item_id"] + f"-{k}") for k in range(20)]
    enough = bradley_terry(pd.concat(copies), seed=0, resamples=200)
    assert enough.not_estimable is None and None not in enough.ci_low
