"""Paired bootstrap: gather and counts engines, percentile and BCa intervals, p-values, win rates.

References: scipy.stats.bootstrap (independent implementation); the closed-form bootstrap
variance of a mean (Efron & Tibshirani 1993, "An Introduction to the Bootstrap", sec. 5.2:
the ideal bootstrap standard error of a mean is sqrt(sum((x - mean)^2)) / n); exact enumeration
of every resample of a tiny sample.
"""

from __future__ import annotations

import itertools
import json
import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from calibration.bootstrap import bootstrap_mean, paired_bootstrap, win_rate


def _correlated(n: int, seed: int, shift: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b = rng.gamma(2.0, 1.0, n)  # skewed, so percentile and BCa differ a little
    return b + shift + rng.normal(0, 1, n), b


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_interval_matches_scipy_paired_bootstrap(method: str) -> None:
    # Reference: scipy.stats.bootstrap((a, b), mean(a - b), paired=True), an independent
    # implementation. Both are Monte Carlo estimates of the same ideal interval, so they may
    # differ by Monte Carlo error only. Derivation of the tolerance: an endpoint at the 2.5%
    # quantile from R resamples has sd sqrt(p (1 - p) / R) / f(q) with f(q) = phi(1.96) / se
    # = 0.0584 / se, i.e. 0.0189 se at R = 20,000; the difference of two independent runs has
    # sd 0.027 se, and 4 sd is 0.11 se.
    a, b = _correlated(300, seed=11)
    r = 20_000
    ours = paired_bootstrap(a, b, seed=5, resamples=r, method=method)
    ref = stats.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=r,
        method="percentile" if method == "percentile" else "BCa",
        rng=np.random.default_rng(6),
    )
    tol = 0.11 * ref.standard_error
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, abs=tol)
    # Standard error from R replicates: relative sd 1 / sqrt(2 (R - 1)) = 0.5% per run.
    assert ours.se == pytest.approx(ref.standard_error, rel=0.03)
    assert ours.mean_diff == pytest.approx(np.mean(a - b), rel=1e-12)


@pytest.mark.parametrize("algorithm", ["gather", "counts"])
def test_standard_error_matches_closed_form(algorithm: str) -> None:
    # Reference: Efron & Tibshirani (1993) sec. 5.2: the ideal bootstrap variance of a mean of
    # n values is var0(x) / n (ddof = 0); stratified, it is sum_h (n_h / n)^2 var0_h / n_h;
    # with equal-size clusters, var0(cluster means) / clusters. R = 20,000 replicates estimate
    # the sd with relative sd 0.5%, so 3% is 6 sd.
    rng = np.random.default_rng(3)
    d = rng.integers(-2, 3, 2_000).astype(float)  # few values, so "counts" applies
    res = bootstrap_mean(d, seed=1, resamples=20_000, algorithm=algorithm)
    assert res.algorithm == algorithm
    assert res.se == pytest.approx(math.sqrt(d.var() / len(d)), rel=0.03)

    strata = np.repeat(["en", "ur", "ru"], [1_000, 600, 400])
    d = d + np.where(strata == "en", 3.0, 0.0)  # strata that differ in mean
    res = bootstrap_mean(d, seed=2, resamples=20_000, strata=strata, algorithm=algorithm)
    var = 0.0
    for s in ("en", "ur", "ru"):
        x = d[strata == s]
        var += (len(x) / len(d)) ** 2 * x.var() / len(x)
    assert res.se == pytest.approx(math.sqrt(var), rel=0.03)
    assert res.n_strata == 3

    clusters = np.repeat(np.arange(500), 4)
    means = pd.Series(d).groupby(clusters).mean().to_numpy()
    res = bootstrap_mean(d, seed=3, resamples=20_000, clusters=clusters, algorithm=algorithm)
    assert res.se == pytest.approx(math.sqrt(means.var() / len(means)), rel=0.03)
    assert res.n_units == 500


@pytest.mark.parametrize("algorithm", ["gather", "counts"])
def test_bootstrap_distribution_matches_exact_enumeration(algorithm: str) -> None:
    # Reference: for n = 5 values the ideal bootstrap distribution is exact: all 5^5 = 3125
    # equally likely index tuples. Compare P(mean* <= t) at several t within 5 binomial sd.
    d = np.array([-1.0, 0.0, 0.0, 1.0, 1.0])
    exact = np.array([np.mean(d[list(idx)]) for idx in itertools.product(range(5), repeat=5)])
    r = 40_000
    reps = bootstrap_mean(d, seed=9, resamples=r, algorithm=algorithm).replicates
    for t in (-0.6, -0.2, 0.0, 0.2, 0.4, 0.6):
        p = (exact <= t + 1e-12).mean()
        assert (reps <= t + 1e-12).mean() == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / r))


def test_coverage_on_simulated_data_with_known_difference() -> None:
    # Known truth: d = a - b with E[d] = 0.1, for skewed continuous scores and for verdicts
    # with P(win, tie, loss) = (.45, .2, .35), i.e. E[2v - 1] = 0.1. Over 1,000 seeds the 95%
    # interval must cover the truth in 93-97% of them (binomial sd at 95% is 0.7%, so the band
    # is about +-3 sd). Measured: 95.0% percentile and BCa, 94.7% percentile on verdicts.
    n, r = 200, 2_000
    covered = {"percentile": 0, "bca": 0, "verdicts": 0}
    for s in range(1_000):
        rng = np.random.default_rng(10_000 + s)
        base = rng.gamma(2.0, 1.0, n)
        res = paired_bootstrap(base + 0.1 + rng.normal(0, 1, n), base, seed=s, resamples=r)
        covered["percentile"] += res.ci_low <= 0.1 <= res.ci_high
        covered["bca"] += res.bca[0] <= 0.1 <= res.bca[1]
        v = rng.choice([1.0, 0.5, 0.0], size=n, p=[0.45, 0.2, 0.35])
        res = paired_bootstrap(v, 1 - v, seed=s, resamples=r)
        covered["verdicts"] += res.ci_low <= 0.1 <= res.ci_high
    rates = {k: v / 1_000 for k, v in covered.items()}
    assert all(0.93 <= x <= 0.97 for x in rates.values()), rates


# --------------------------------------------------------------------------- structure


def test_clusters_move_together() -> None:
    # Two orders per item that agree: as clusters they are one unit, so the interval is the
    # one-row-per-item interval exactly (same seed, same unit draws); as independent rows
    # the interval is too narrow by about sqrt(2).
    a, b = _correlated(400, seed=1)
    one = paired_bootstrap(a, b, seed=4, resamples=4_000)
    rows_a, rows_b = np.repeat(a, 2), np.repeat(b, 2)
    clustered = paired_bootstrap(
        rows_a, rows_b, seed=4, resamples=4_000, clusters=np.repeat(np.arange(400), 2)
    )
    np.testing.assert_allclose(clustered.replicates, one.replicates, rtol=1e-12)
    assert (clustered.n, clustered.n_units) == (800, 400)
    naive = paired_bootstrap(rows_a, rows_b, seed=4, resamples=4_000)
    assert naive.se == pytest.approx(one.se / math.sqrt(2), rel=0.1)


def test_unequal_clusters_and_strata_together() -> None:
    rng = np.random.default_rng(2)
    clusters = rng.integers(0, 300, 1_000)
    strata = np.where(clusters < 100, "en", "ur")
    a, b = rng.normal(0.2, 1, 1_000), rng.normal(0, 1, 1_000)
    res = paired_bootstrap(a, b, seed=1, resamples=2_000, clusters=clusters, strata=strata)
    assert res.n_strata == 2 and res.n_units == len(np.unique(clusters))
    assert res.ci_low < res.mean_diff < res.ci_high
    with pytest.raises(ValueError, match="spans several strata"):
        paired_bootstrap(a, b, seed=1, clusters=clusters, strata=rng.choice(["x", "y"], 1_000))


def test_stratified_resampling_keeps_stratum_sizes() -> None:
    # Constant within each stratum: with stratum sizes fixed every resample has the same mean,
    # so the interval has zero width; ignoring strata it does not.
    d = np.repeat([1.0, -1.0], [30, 70])
    strata = np.repeat(["a", "b"], [30, 70])
    res = paired_bootstrap(d, np.zeros(100), seed=1, resamples=2_000, strata=strata)
    assert res.ci_low == res.ci_high == pytest.approx(-0.4)
    assert paired_bootstrap(d, np.zeros(100), seed=1, resamples=2_000).ci_high > -0.3


def test_many_small_strata_use_one_broadcast_draw() -> None:
    rng = np.random.default_rng(0)
    strata = np.repeat(np.arange(500), 6)  # 500 strata of 6 rows
    d = rng.normal(size=3_000) + strata % 3
    res = bootstrap_mean(d, seed=1, resamples=4_000, strata=strata, algorithm="gather")
    # sum_h (6 / 3000)^2 var0_h / 6
    var = pd.Series(d).groupby(strata).var(ddof=0).sum() * 6 / 3_000**2
    assert res.se == pytest.approx(math.sqrt(var), rel=0.05)


def test_same_seed_same_result_on_any_thread_count() -> None:
    a, b = _correlated(3_000, seed=2)
    one = paired_bootstrap(a, b, seed=7, resamples=2_000, workers=1)
    two = paired_bootstrap(a, b, seed=7, resamples=2_000, workers=2)
    np.testing.assert_array_equal(one.replicates, two.replicates)
    other = paired_bootstrap(a, b, seed=8, resamples=2_000, workers=2)
    assert not np.array_equal(one.replicates, other.replicates)


def test_memory_is_bounded_for_a_million_items() -> None:
    # An unchunked index matrix would hold n x resamples int64: 1M x 40 = 320 MB. Chunked, the
    # call allocates O(n) for the differences, unit sums and jackknife (a few 8 MB arrays) plus
    # fixed-size blocks, whatever the number of resamples. numpy reports to tracemalloc.
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=1_000_000), rng.normal(size=1_000_000)
    tracemalloc.start()
    try:
        res = paired_bootstrap(a, b, seed=0, resamples=40)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.algorithm == "gather" and peak < 64 * 2**20


def test_wins_losses_ties_and_typed_result() -> None:
    a = np.array([3, 4, 5, 2, 2, 1], dtype=float)
    b = np.array([2, 4, 1, 2, 3, 1], dtype=float)
    res = paired_bootstrap(a, b, seed=0, resamples=500)
    assert (res.wins, res.losses, res.ties, res.n) == (2, 1, 3, 6)
    d = res.to_dict()
    assert d["seed"] == 0 and d["resamples"] == 500 and d["method"] == "percentile"
    assert "replicates" not in d and d["p_method"] in ("bootstrap", "sign", "normal")
    json.dumps(d)


def test_p_value_agrees_with_interval() -> None:
    # The p-value is the smallest 1 - ci at which the interval excludes 0, so at ci = 0.95
    # "p < 0.05" and "the interval excludes 0" agree away from the boundary.
    for shift, method in itertools.product((0.0, 0.05, 0.15, 0.3), ("percentile", "bca")):
        a, b = _correlated(200, seed=int(shift * 100), shift=shift)
        res = paired_bootstrap(a, b, seed=1, resamples=4_000, method=method)
        excludes = res.ci_low > 0 or res.ci_high < 0
        if abs(res.p_value - 0.05) > 0.01:
            assert (res.p_value < 0.05) == excludes, (shift, method, res.p_value)
    # No resample crosses 0: the bootstrap only says p < 1/1000; every item is a win, so the
    # exact sign test gives the p-value (reference: scipy.stats.binomtest).
    far = paired_bootstrap(np.full(50, 1.0), np.zeros(50), seed=1, resamples=999)
    assert far.p_method == "sign" and far.p_floor == pytest.approx(1 / 1000)
    assert far.p_value == pytest.approx(stats.binomtest(50, 50).pvalue, rel=1e-12)
    same = paired_bootstrap(np.ones(50), np.ones(50), seed=1, resamples=999)
    assert same.p_value == 1.0 and not same.p_below_level


def test_input_errors_name_the_fix() -> None:
    with pytest.raises(ValueError, match="same items in the same order"):
        paired_bootstrap([1, 2, 3], [1, 2], seed=0)
    with pytest.raises(ValueError, match=r"non-finite values \(first at row 1\)"):
        paired_bootstrap([1, np.nan, 3], [1, 2, 3], seed=0)
    with pytest.raises(ValueError, match="ci must be between 0 and 1"):
        paired_bootstrap([1, 2], [1, 2], seed=0, ci=95)


def test_win_rate_standard_error_is_the_sample_one() -> None:
    s = np.array([1, 1, 0.5, 0, 1, 0.75, 0.25, 1.0])
    res = win_rate(s, seed=0, resamples=2_000)
    assert res.win_rate == pytest.approx(s.mean())
    assert res.se == pytest.approx(s.std(ddof=1) / math.sqrt(len(s)))
    assert (res.wins, res.ties, res.losses) == (5, 1, 2)


def test_single_unit_has_no_interval() -> None:
    res = paired_bootstrap([1.0, 1.0], [0.0, 0.0], seed=0, resamples=100, clusters=["x", "x"])
    assert res.n_units == 1 and math.isnan(res.ci_low) and math.isnan(res.p_value)
    assert not res.p_below_level and math.isnan(res.se)
