"""Corrected estimates: exact formulas on small cases, and coverage by simulation with a
known true win rate and a judge of known sensitivity / specificity."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.correction import ppi_mean, ppi_win_rate, rogan_gladen

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
    var = (0.6 * 0.4 / 50 + 0.7**2 * 0.1875 / 8 + 0.3**2 * 0.1875 / 4) / 0.25
    assert est.value - est.ci_low == pytest.approx(1.959964 * np.sqrt(var), rel=1e-5)
    assert est.ci_high == 1.0  # the upper end, 1.26, is clipped to the unit interval


def test_rogan_gladen_undefined_when_judge_is_chance() -> None:
    human = np.array([1, 1, 0, 0], dtype=bool)
    est = rogan_gladen([True, False], np.array([1, 0, 1, 0], dtype=bool), human)
    assert est.value is None and "no better than chance" in est.reason
    one_class = rogan_gladen([True], [True, True], [True, True])
    assert one_class.value is None and "human-negative" in one_class.reason


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
