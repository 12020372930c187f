"""Corrected estimates: exact formulas on small cases, and coverage by simulation with a
known true win rate and a judge of known sensitivity / specificity."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.correction import ppi_mean, ppi_win_rate, wilson
from calibration.rogan_gladen import rogan_gladen

RUNS = 2000  # binomial s.e. of a 95% coverage over 2,000 runs: 0.5 points


def test_ppi_formula_and_its_special_cases() -> None:
    # Angelopoulos et al. (2023) / PPI++: theta = lam mean(f~) + mean(y - lam f).
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.5, 0.0])
    f = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    fu = np.array([1.0, 1.0, 0.0, 1.0, 0.5, 1.0, 0.0, 1.0])
    plain = ppi_mean(y, f, fu, lam=1.0)
    assert plain.value == pytest.approx(fu.mean() + (y - f).mean())
    var = (y - f).var(ddof=1) / 6 + fu.var(ddof=1) / 8
    assert plain.ci_high - plain.value == pytest.approx(1.959964 * np.sqrt(var), rel=1e-5)
    classical = ppi_mean(y, f, fu, lam=0.0)
    assert classical.value == pytest.approx(y.mean())
    tuned = ppi_mean(y, f, fu)
    f_all = np.r_[f, fu]
    lam = np.cov(y, f)[0, 1] / ((1 + 6 / 8) * f_all.var(ddof=1))
    assert tuned.lam == pytest.approx(np.clip(lam, 0, 1))
    assert tuned.raw.value == pytest.approx(f_all.mean())
    assert tuned.human_only.value == pytest.approx(y.mean())
    assert tuned.n == 6 and tuned.n_judged == 14


def test_ppi_edge_cases() -> None:
    only_labeled = ppi_mean([1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [])
    assert only_labeled.value == pytest.approx(2 / 3) and only_labeled.lam == 0.0
    assert "no judge-only units" in only_labeled.reason
    too_few = ppi_mean([1.0], [1.0], [0.0, 1.0])
    assert too_few.value is None and "at least 2" in too_few.reason
    with pytest.raises(ValueError, match="f_unlabeled: position 1 is missing"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [1.0, float("nan")])


def test_ppi_win_rate_maps_labels() -> None:
    est = ppi_win_rate(["a", "tie", "b"], ["a", "a", "b"], ["tie", "a"], target="x over y")
    ref = ppi_mean([1.0, 0.5, 0.0], [1.0, 1.0, 0.0], [0.5, 1.0])
    assert est.value == pytest.approx(ref.value) and est.target == "x over y"
    with pytest.raises(ValueError, match="'draw' is not a, b or tie"):
        ppi_win_rate(["a", "draw"], ["a", "b"], ["a"])


def test_rogan_gladen_formula() -> None:
    # Rogan & Gladen (1978): pi = (p + Sp - 1) / (Se + Sp - 1). Labelled: 8 human positives
    # (judge says 6 positive: Se = 0.75), 4 negatives (judge 3 negative: Sp = 0.75).
    human = np.array([1] * 8 + [0] * 4, dtype=bool)
    judge_l = np.array([1] * 6 + [0] * 2 + [0] * 3 + [1], dtype=bool)
    judge_u = np.array([1] * 30 + [0] * 20, dtype=bool)  # p = 0.6
    est = rogan_gladen(judge_u, judge_l, human)
    assert est.sensitivity.value == 0.75 and est.specificity.value == 0.75
    assert est.value == pytest.approx((0.6 + 0.75 - 1) / 0.5)
    assert est.raw.value == pytest.approx((30 + 7) / 62)
    # So few labels leave the Youden index indistinguishable from 0 at 95%: Fieller's set is
    # unbounded, the interval all of [0, 1].
    assert (est.ci_low, est.ci_high) == (0.0, 1.0)


def test_rogan_gladen_interval_is_fiellers_set() -> None:
    # 40 human positives (judge 36 positive: Se 0.9), 60 negatives (judge 48 negative: Sp
    # 0.8), 1,000 unlabelled with 400 positive: pi = (0.4 + 0.8 - 1) / 0.7 = 0.2857.
    human = np.array([1] * 40 + [0] * 60, dtype=bool)
    judge_l = np.array([1] * 36 + [0] * 4 + [0] * 48 + [1] * 12, dtype=bool)
    judge_u = np.array([1] * 400 + [0] * 600, dtype=bool)
    est = rogan_gladen(judge_u, judge_l, human)
    assert est.value == pytest.approx(0.2 / 0.7)
    # Independent of the quadratic formula: the set of pi in [0, 1] where Fieller's statistic
    # (num - pi J)^2 / (V_p + pi^2 V_Se + (1 - pi)^2 V_Sp) <= z^2, found on a fine grid, with
    # half a pseudo-success and half a pseudo-failure in each proportion.
    se, sp, p = 36.5 / 41, 48.5 / 61, 400.5 / 1001
    grid = np.linspace(0, 1, 200_001)
    stat = (p + sp - 1 - grid * (se + sp - 1)) ** 2 / (
        p * (1 - p) / 1001 + grid**2 * se * (1 - se) / 41 + (1 - grid) ** 2 * sp * (1 - sp) / 61
    )
    inside = grid[stat <= 1.959963984540054**2]
    assert est.ci_low == pytest.approx(inside.min(), abs=1e-5)
    assert est.ci_high == pytest.approx(inside.max(), abs=1e-5)
    assert 0.0 < est.ci_low < est.value < est.ci_high < 1.0


def test_rogan_gladen_undefined_when_judge_is_chance() -> None:
    human = np.array([1, 1, 0, 0], dtype=bool)
    est = rogan_gladen([True, False], np.array([1, 0, 1, 0], dtype=bool), human)
    assert est.value is None and "no better than chance" in est.reason
    # No human-negative labelled unit: specificity rests on the pseudo-counts alone, which the
    # estimate says, and the interval is wide.
    one_class = rogan_gladen([True], [True, True], [True, True])
    assert "0 human-negative" in one_class.reason
    assert one_class.ci_high - one_class.ci_low > 0.5


def _simulate(seed: int, runs: int, n_all: int, pi: float, sens: float, spec: float):
    """`runs` datasets at once: truth ~ Bernoulli(pi); judge positive with prob. Se among
    positives and 1 - Sp among negatives. One explicit Generator for the whole batch."""
    rng = np.random.default_rng(seed)
    truth = rng.random((runs, n_all)) < pi
    judge = np.where(truth, rng.random((runs, n_all)) < sens, rng.random((runs, n_all)) >= spec)
    return truth, judge


def test_corrected_intervals_cover_the_true_win_rate() -> None:
    # 2,000 items judged, the first 300 also labelled by a human; true win rate 0.6; a
    # lenient judge (Se 0.9, Sp 0.7) whose raw win rate is 0.6*0.9 + 0.4*0.3 = 0.66.
    pi, n_all, n = 0.6, 2000, 300
    truth, judge = _simulate(20240601, RUNS, n_all, pi, 0.9, 0.7)
    ppi_cover = rg_cover = raw_cover = 0
    raw, ppi, rg, eff = [], [], [], []
    for y, j in zip(truth, judge, strict=True):
        p = ppi_mean(y[:n].astype(float), j[:n].astype(float), j[n:].astype(float))
        r = rogan_gladen(j[n:], j[:n], y[:n])
        ppi_cover += p.ci_low <= pi <= p.ci_high
        rg_cover += r.ci_low <= pi <= r.ci_high
        raw_cover += p.raw.ci_low <= pi <= p.raw.ci_high
        raw.append(p.raw.value)
        ppi.append(p.value)
        rg.append(r.value)
        eff.append(p.effective_human_n)
    # Measured: PPI++ 0.9450, Rogan-Gladen 0.9505, raw 0.0000 (seed 20240601).
    assert 0.93 <= ppi_cover / RUNS <= 0.97
    assert 0.93 <= rg_cover / RUNS <= 0.97
    assert raw_cover / RUNS < 0.05
    assert np.mean(raw) == pytest.approx(0.66, abs=0.002)  # biased by the judge's errors
    assert np.mean(ppi) == pytest.approx(pi, abs=0.002)
    assert np.mean(rg) == pytest.approx(pi, abs=0.003)
    # The judge is worth more human labels than were collected (300).
    assert np.mean(eff) > 400


def test_ppi_covers_win_rate_with_ties() -> None:
    # Three outcomes (a / tie / b as 1 / 0.5 / 0): true mean 0.55; the judge over-calls 'a'.
    rng = np.random.default_rng(7)
    runs, n_all, n = 1000, 1500, 250
    truth = rng.choice([1.0, 0.5, 0.0], p=[0.45, 0.2, 0.35], size=(runs, n_all))
    flip = rng.random((runs, n_all))
    judge = np.where(flip < 0.75, truth, np.where(flip < 0.92, 1.0, 0.5))
    cover = sum(
        (e := ppi_mean(y[:n], j[:n], j[n:])).ci_low <= 0.55 <= e.ci_high
        for y, j in zip(truth, judge, strict=True)
    )
    # Measured: 0.943 (the raw judge mean is 0.623).
    assert 0.93 <= cover / runs <= 0.97


# --- intervals inside [0, 1] (issue 12, item 5) -----------------------------------------


@pytest.mark.parametrize("n", [1, 5, 9, 50, 300])
def test_proportion_intervals_are_wilson_as_statsmodels_computes_it(n: int) -> None:
    from statsmodels.stats.proportion import proportion_confint

    for k in range(n + 1):
        low, high = wilson(k / n, n, 1.959963984540054)
        ref = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert (low, high) == pytest.approx(ref, abs=1e-12)
    # The human-only and judge-only rates of a win rate are those intervals too.
    est = ppi_win_rate(["a"] * 7 + ["b"] * 2, ["a"] * 9, ["a"] * 20 + ["b"] * 11)
    ref_h = proportion_confint(7, 9, alpha=0.05, method="wilson")
    ref_r = proportion_confint(29, 40, alpha=0.05, method="wilson")
    assert (est.human_only.ci_low, est.human_only.ci_high) == pytest.approx(ref_h)
    assert (est.raw.ci_low, est.raw.ci_high) == pytest.approx(ref_r)


def test_nine_agreeing_labels_give_an_honest_interval() -> None:
    # The audit's case: 9 labels, all "a", the judge "a" everywhere -> 1.000 [1.000, 1.000].
    est = ppi_win_rate(["a"] * 9, ["a"] * 9, ["a"] * 40)
    assert est.value == 1.0 and est.ci_high == 1.0
    # The judge carries no variance (lam = 0) and the estimate sits on the bound, where the
    # effective sample size is undefined: the labels' count stands in (Korn & Graubard 1998),
    # so the interval is Wilson's for 9 of 9, as statsmodels computes it: [0.70, 1].
    from statsmodels.stats.proportion import proportion_confint

    assert est.lam == 0.0
    assert (est.ci_low, est.ci_high) == pytest.approx(
        proportion_confint(9, 9, alpha=0.05, method="wilson")
    )
    assert 0.6 < est.ci_low < 0.8


def test_ppi_interval_by_hand_with_pseudo_observations() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.5, 0.0])
    f = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    fu = np.array([1.0, 1.0, 0.0, 1.0, 0.5, 1.0, 0.0, 1.0])
    est = ppi_mean(y, f, fu, lam=0.7, bounds=(0.0, 1.0))
    assert est.value == pytest.approx(0.7 * fu.mean() + (y - 0.7 * f).mean())
    # By hand: the corners (0,0), (0,1), (1,0), (1,1) join the labelled units, (0) and (1) the
    # unlabelled ones, each with weight 12 / 6 labels = 2 (12 / labels, at least 1/10);
    # variances weighted by frequency.
    # The interval is Wilson's at the effective sample size value (1 - value) / var (Korn &
    # Graubard 1998), computed by statsmodels from a fractional count.
    from statsmodels.stats.proportion import proportion_confint

    r = np.r_[y - 0.7 * f, [0.0, -0.7, 1.0, 0.3]]
    pseudo = 12 / 6
    w = np.r_[np.ones(6), [pseudo] * 4]
    rm = (w * r).sum() / w.sum()
    u, wu = np.r_[fu, [0.0, 1.0]], np.r_[np.ones(8), [pseudo, pseudo]]
    um = (wu * u).sum() / wu.sum()
    var = (w * (r - rm) ** 2).sum() / (w.sum() - 1) / w.sum()
    var += 0.49 * (wu * (u - um) ** 2).sum() / (wu.sum() - 1) / wu.sum()
    n_eff = est.value * (1 - est.value) / var
    ref = proportion_confint(est.value * n_eff, n_eff, alpha=0.05, method="wilson")
    assert (est.ci_low, est.ci_high) == pytest.approx(ref, rel=1e-9)
    with pytest.raises(ValueError, match="outside bounds"):
        ppi_mean([2.0, 0.0], [1.0, 0.0], [1.0], bounds=(0.0, 1.0))


@pytest.mark.parametrize(("pi", "n"), [(0.05, 50), (0.95, 50), (0.5, 100)])
def test_corrected_intervals_stay_in_the_unit_interval_and_cover(pi: float, n: int) -> None:
    # 300 datasets per cell (the script runs 1,000 in 54 cells): intervals never leave
    # [0, 1], never have zero width, and cover within Monte Carlo error of 95% (s.e. 1.3
    # points at 300 datasets; 92-98% is about two s.e. either side, the 93-97% at
    # 1,000). An undefined estimate counts as a miss.
    runs = 300
    truth, judge = _simulate(int(pi * 1000) + n, runs, 1000, pi, 0.9, 0.8)
    cover = {"ppi": 0, "rg": 0}
    for y, j in zip(truth, judge, strict=True):
        hl, jl, ju = np.where(y[:n], "a", "b"), np.where(j[:n], "a", "b"), np.where(j[n:], "a", "b")
        for name, e in (
            ("ppi", ppi_win_rate(hl, jl, ju)),
            ("rg", rogan_gladen(j[n:], j[:n], y[:n])),
        ):
            if e.value is None:  # e.g. Rogan-Gladen: the one human positive missed
                assert "no better than chance" in e.reason
                continue
            assert 0.0 <= e.ci_low <= e.value <= e.ci_high <= 1.0
            assert e.ci_high > e.ci_low
            cover[name] += e.ci_low <= pi <= e.ci_high
    for name, hits in cover.items():
        assert 0.92 <= hits / runs <= 0.98, (name, hits / runs)


# --- known inclusion probabilities (issue 12, item 7) -----------------------------------


def test_ipw_estimate_by_hand() -> None:
    # Zrnic & Candes (2024) with the residual mean in ratio (Hajek) form: theta = lam
    # mean(f over all N) + sum_l w_i (y_i - lam f_i) / sum_l w_i, w = 1 / pi; Var = sum_l
    # w_i^2 (r_i - rbar)^2 / (sum w)^2 + lam^2 Var(f) / N.
    y, f, fu = [1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0, 0.0]
    prob = [0.5, 0.25, 0.8]
    est = ppi_mean(y, f, fu, lam=0.6, inclusion=prob)
    w = [1 / p for p in prob]
    r = [1 - 0.6, 0 - 0.6, 1 - 0.0]
    rbar = sum(wi * ri for wi, ri in zip(w, r, strict=True)) / sum(w)
    f_all = f + fu
    assert est.value == pytest.approx(0.6 * sum(f_all) / 8 + rbar)
    var = sum(wi**2 * (ri - rbar) ** 2 for wi, ri in zip(w, r, strict=True)) / sum(w) ** 2
    var += 0.36 * np.var(f_all, ddof=1) / 8
    half = 1.959964 * np.sqrt(var)
    assert est.ci_high - est.value == pytest.approx(half, rel=1e-5)
    # Equal probabilities: the weighted form is PPI's, Var(y - lam f) (n - 1) / n^2 + ...
    same = ppi_mean(y, f, fu, lam=0.6, inclusion=[0.4, 0.4, 0.4])
    plain_mean = 0.6 * sum(f_all) / 8 + sum(r) / 3
    assert same.value == pytest.approx(plain_mean)
    with pytest.raises(ValueError, match="2 probabilities for 3"):
        ppi_mean(y, f, fu, inclusion=[0.5, 0.5])
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        ppi_mean(y, f, fu, inclusion=[0.5, 0.0, 1.0])


def test_ipw_removes_the_bias_of_labels_chosen_unequally() -> None:
    # Labels are drawn with probability 0.3 where the judge says "a" and 0.05 where it says
    # "b": the labelled units over-represent the judge's "a" calls. Unweighted PPI++ is then
    # biased; weighted by the known probabilities it is not, and its intervals cover.
    rng = np.random.default_rng(1012)  # not the simulation's seed: that would tie the draws
    runs, n_all, pi = 300, 3000, 0.4
    truth, judge = _simulate(12, runs, n_all, pi, 0.8, 0.7)
    plain, weighted, cover = [], [], 0
    for y, j in zip(truth, judge, strict=True):
        prob = np.where(j, 0.3, 0.05)
        chosen = rng.random(n_all) < prob
        yl, fl, fu = y[chosen].astype(float), j[chosen].astype(float), j[~chosen].astype(float)
        plain.append(ppi_mean(yl, fl, fu).value)
        e = ppi_mean(yl, fl, fu, inclusion=prob[chosen], bounds=(0.0, 1.0))
        weighted.append(e.value)
        cover += e.ci_low <= pi <= e.ci_high
    # The unweighted estimate's bias: P(y | judge a) is over-weighted. Measured: plain
    # mean 0.47, IPW mean 0.40, IPW coverage 0.95 (seed 12).
    assert abs(np.mean(plain) - pi) > 0.04
    assert np.mean(weighted) == pytest.approx(pi, abs=0.01)
    assert 0.92 <= cover / runs <= 0.98


@pytest.mark.parametrize("pi", [0.05, 0.95])
def test_an_accurate_judge_at_thirty_labels_is_covered_near_the_bounds(pi: float) -> None:
    """Se = Sp = 0.95, 30 labels, rates 0.05 and 0.95: a handful of labels holds 0 or 1 of the
    judge's errors, and with a fixed tenth of a pseudo-label per corner the interval covered
    88%. 400 datasets (s.e. about 1 point); measured 95.7-96.6% at 1,000."""
    runs, n = 400, 30
    truth, judge = _simulate(int(pi * 100) + 7, runs, 2000, pi, 0.95, 0.95)
    hits = 0
    for y, j in zip(truth, judge, strict=True):
        e = ppi_win_rate(
            np.where(y[:n], "a", "b"), np.where(j[:n], "a", "b"), np.where(j[n:], "a", "b")
        )
        hits += e.ci_low is not None and e.ci_low <= pi <= e.ci_high
    assert 0.93 <= hits / runs <= 0.99, hits / runs
