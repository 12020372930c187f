"""Active label selection (`calibration.active`) against references computed here: known
values, properties over generated inputs, and Monte Carlo checks of the sampling design."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from calibration.active import (
    DEFAULT_FLOOR,
    first_n,
    inclusion,
    priorities,
    sampling_weights,
    vote_uncertainty,
)

FEW = settings(max_examples=60, deadline=None)
TOL_SE = 4.5  # Monte Carlo tolerance in standard errors (two-sided p about 7e-6 per check)

score = st.floats(0.0, 1.0, allow_nan=False)
votes = st.lists(st.lists(score, max_size=6), min_size=1, max_size=12)
# No subnormal uncertainties: (1 - uniform) * u underflows to 0 at u = 5e-324 (weights then
# average below 1); vote_uncertainty never yields one (it is >= sqrt(floor), or exactly 0).
positive = st.floats(0.0, 10.0, allow_nan=False, allow_subnormal=False)
uncertainties = st.lists(positive, min_size=1, max_size=40)
uniform_share = st.floats(0.01, 1.0, allow_nan=False)


# (a) vote_uncertainty


@pytest.mark.parametrize("floor", [DEFAULT_FLOOR, 0.0, 0.1])
def test_vote_uncertainty_known_values(floor: float) -> None:
    got = vote_uncertainty([[1, 1], [0, 0, 0], [1, 0], [], [0.5, 0.5], [1, 1, 0]], floor=floor)
    # p (1 - p): unanimous 0, split or tie or no vote 1/4, two wins in three 2/9.
    want = [floor, floor, 0.25 + floor, 0.25 + floor, 0.25 + floor, 2 / 9 + floor]
    np.testing.assert_allclose(got, np.sqrt(want), rtol=1e-12)


def test_vote_uncertainty_default_floor_is_005() -> None:
    assert vote_uncertainty([[1.0, 1.0]])[0] == pytest.approx(math.sqrt(0.05))


@pytest.mark.parametrize("bad", [[1.5], [-0.1, 0.5], [float("nan")], [float("inf")]])
def test_vote_uncertainty_rejects_non_scores(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="unit 1"):
        vote_uncertainty([[1.0], bad])


def test_vote_uncertainty_rejects_negative_floor() -> None:
    with pytest.raises(ValueError, match="floor"):
        vote_uncertainty([[1.0]], floor=-0.01)


@FEW
@given(votes, st.floats(0.0, 1.0))
def test_vote_uncertainty_matches_the_mean_vote(units: list[list[float]], floor: float) -> None:
    got = vote_uncertainty(units, floor=floor)
    for value, unit in zip(got, units, strict=True):
        p = statistics.fmean(unit) if unit else 0.5
        assert value == pytest.approx(math.sqrt(p * (1 - p) + floor), rel=1e-9, abs=1e-12)
        assert math.sqrt(floor) - 1e-12 <= value <= math.sqrt(0.25 + floor) + 1e-12


# (b) sampling_weights


@FEW
@given(uncertainties, uniform_share)
def test_sampling_weights_mean_one_floor_and_proportional(u: list[float], share: float) -> None:
    w = sampling_weights(u, uniform=share)
    u_arr = np.asarray(u)
    assert w.shape == u_arr.shape
    assert w.mean() == pytest.approx(1.0, rel=1e-9)
    assert (w >= share - 1e-12).all()
    if u_arr.mean() > 0:
        # Beyond the uniform share, w is proportional to u: (w - share) / u the same for all
        # (cross-multiplied, so a zero u needs no division), and that constant is
        # (1 - share) / mean(u).
        excess = w - share
        np.testing.assert_allclose(excess * u_arr.max(), u_arr * excess.max(), atol=1e-9)
        np.testing.assert_allclose(excess.sum(), (1 - share) * len(u), rtol=1e-9, atol=1e-9)


@FEW
@given(st.floats(0.0, 5.0, allow_subnormal=False), st.integers(1, 30), uniform_share)
def test_sampling_weights_constant_uncertainty_is_uniform(c: float, n: int, share: float) -> None:
    np.testing.assert_allclose(sampling_weights([c] * n, uniform=share), np.ones(n), rtol=1e-12)


def test_sampling_weights_known_values() -> None:
    # mean u = 1: w = 0.8 u + 0.2.
    np.testing.assert_allclose(
        sampling_weights([0.5, 1.0, 1.5], uniform=0.2), [0.6, 1.0, 1.4], rtol=1e-12
    )
    assert sampling_weights([], uniform=0.2).size == 0


@pytest.mark.parametrize("share", [0.0, -0.1, 1.01, float("nan")])
def test_sampling_weights_rejects_a_bad_uniform_share(share: float) -> None:
    with pytest.raises(ValueError, match="uniform"):
        sampling_weights([0.1, 0.2], uniform=share)


@pytest.mark.parametrize("u", [[0.1, -0.2], [0.1, float("nan")], [float("inf")]])
def test_sampling_weights_rejects_bad_uncertainties(u: list[float]) -> None:
    with pytest.raises(ValueError, match="uncertainties"):
        sampling_weights(u, uniform=0.2)


# (c) priorities and inclusion probabilities


def test_keys_times_weight_are_uniform() -> None:
    w = np.array([0.2, 0.7, 1.0, 3.0])
    keys = priorities(np.tile(w, 5000), np.random.default_rng(1)).reshape(5000, 4)
    u = keys * w
    assert (u > 0).all() and (u <= 1).all()
    for j in range(len(w)):
        assert stats.kstest(u[:, j], "uniform").pvalue > 1e-3


def test_inclusion_frequency_at_a_fixed_threshold() -> None:
    """Unit i's key U_i / w_i falls below a fixed t with probability min(1, t w_i)."""
    draws, t = 20_000, 0.15
    w = np.array([0.2, 0.5, 1.0, 2.0, 5.0, 6.0, 10.0])  # t w: 0.03 ... 0.75, then >= 1
    keys = priorities(np.tile(w, draws), np.random.default_rng(2)).reshape(draws, len(w))
    freq = (keys < t).mean(axis=0)
    want = np.minimum(1.0, t * w)
    np.testing.assert_allclose(inclusion(w, t), want, rtol=1e-12)
    se = np.sqrt(want * (1 - want) / draws)
    assert (np.abs(freq - want) <= TOL_SE * se).all(), (freq, want)
    assert (freq[want == 1.0] == 1.0).all()  # a certainty unit is never missed


@pytest.mark.parametrize("t", [0.0, -1.0, float("nan")])
def test_inclusion_rejects_a_non_positive_threshold(t: float) -> None:
    with pytest.raises(ValueError, match="threshold"):
        inclusion([1.0], t)


@pytest.mark.parametrize("w", [[1.0, 0.0], [1.0, -0.5]])
def test_priorities_reject_non_positive_weights(w: list[float]) -> None:
    with pytest.raises(ValueError, match="weights"):
        priorities(w, np.random.default_rng(0))


# (d) Horvitz-Thompson with first_n's probabilities


def test_horvitz_thompson_is_unbiased_unit_by_unit() -> None:
    """E[1{i chosen} / pi_i] = 1 for every unit, hence an unbiased total for any y.

    Sequential Poisson sampling's probabilities min(1, t w_i) are usually presented as an
    approximation (Ohlsson 1998: the sample size is fixed, unlike Poisson sampling's, so the
    realised inclusion probabilities differ slightly from them). With t the (n+1)-th smallest
    key, however, the Horvitz-Thompson estimator is exactly unbiased: it is priority sampling
    (Duffield, Lund & Thorup 2007, J. ACM 54(6)), where conditional on the other units' keys
    unit i is chosen iff its key is below the n-th smallest of theirs, t' say, which is then
    the threshold; P(U_i / w_i < t') = min(1, t' w_i), the probability used. So no bias is
    allowed beyond the Monte Carlo error.
    """
    draws, n = 20_000, 8
    u = np.r_[np.linspace(0.05, 1.0, 30), [3.0, 4.0, 6.0, 8.0, 12.0]]
    w = sampling_weights(u, uniform=0.2)  # some units get t w >= 1: certainty units
    y = 1.0 + 3.0 * np.sin(np.arange(len(w)))  # any values: not proportional to w
    rng = np.random.default_rng(3)
    ratio = np.zeros((draws, len(w)))
    for r in range(draws):
        d = first_n(priorities(w, rng), w, n)
        ratio[r, d.chosen] = 1.0 / d.probability
    assert (ratio.max(axis=0) >= 1.0).all()  # every unit was drawn at least once
    se = ratio.std(axis=0, ddof=1) / np.sqrt(draws)
    assert (np.abs(ratio.mean(axis=0) - 1.0) <= TOL_SE * se).all()
    total = ratio @ y
    se_total = total.std(ddof=1) / np.sqrt(draws)
    assert abs(total.mean() - y.sum()) <= TOL_SE * se_total


# (e) invariance under permuting the units


@FEW
@given(
    st.lists(st.floats(0.01, 5.0), min_size=2, max_size=25), st.integers(0, 2**32 - 1), st.data()
)
def test_permuting_units_permutes_weights_and_the_chosen_set(
    u: list[float], seed: int, data: st.DataObject
) -> None:
    u_arr = np.asarray(u)
    perm = np.array(data.draw(st.permutations(range(len(u)))))
    w = sampling_weights(u_arr, uniform=0.2)
    np.testing.assert_allclose(sampling_weights(u_arr[perm], uniform=0.2), w[perm], rtol=1e-12)
    # The uniforms priorities draws, recovered with weights 1 from the same seed.
    unif = priorities(np.ones(len(w)), np.random.default_rng(seed))
    keys = priorities(w, np.random.default_rng(seed))
    np.testing.assert_allclose(keys, unif / w, rtol=1e-12)
    n = data.draw(st.integers(1, len(w)))
    base = first_n(keys, w, n)
    moved = first_n(unif[perm] / w[perm], w[perm], n)
    np.testing.assert_array_equal(perm[moved.chosen], base.chosen)  # same units, same order
    np.testing.assert_allclose(moved.probability, base.probability, rtol=1e-12)
    assert moved.threshold == pytest.approx(base.threshold, rel=1e-12)


def test_vote_uncertainty_is_per_unit() -> None:
    units = [[1.0, 0.0], [1.0, 1.0], [], [0.5], [0.0, 0.0, 1.0]]
    perm = [3, 0, 4, 2, 1]
    np.testing.assert_array_equal(
        vote_uncertainty([units[i] for i in perm]), vote_uncertainty(units)[perm]
    )


# (f) first_n


@FEW
@given(st.lists(st.floats(0.01, 5.0), min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_first_n_all_units_have_probability_one(w: list[float], seed: int) -> None:
    w_arr = np.asarray(w)
    keys = priorities(w_arr, np.random.default_rng(seed))
    d = first_n(keys, w_arr, len(w_arr))
    np.testing.assert_array_equal(d.probability, np.ones(len(w_arr)))
    assert d.threshold == float("inf")
    np.testing.assert_array_equal(np.sort(d.chosen), np.arange(len(w_arr)))
    assert (np.diff(keys[d.chosen]) >= 0).all()


@FEW
@given(st.lists(st.floats(0.01, 5.0), min_size=2, max_size=30), st.data())
def test_first_n_is_the_n_smallest_keys(w: list[float], data: st.DataObject) -> None:
    w_arr = np.asarray(w)
    keys = priorities(w_arr, np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))))
    n = data.draw(st.integers(1, len(w_arr) - 1))
    d = first_n(keys, w_arr, n)
    ordered = sorted(keys)
    assert list(keys[d.chosen]) == ordered[:n]
    assert d.threshold == ordered[n]
    np.testing.assert_allclose(d.probability, np.minimum(1.0, ordered[n] * w_arr[d.chosen]))


@pytest.mark.parametrize("n", [0, -1, 4])
def test_first_n_rejects_n_out_of_range(n: int) -> None:
    w = np.ones(3)
    with pytest.raises(ValueError, match=r"n must lie in 1\.\.3"):
        first_n(priorities(w, np.random.default_rng(0)), w, n)
