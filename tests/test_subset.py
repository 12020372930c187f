"""The labelled-subset check: a warning when the labelled units are unlike the rest (issue 12,
item 7), with p-values from hand computations of the tests it names."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from calibration.calibrate import calibrate
from calibration.subset import subset_check


def test_fisher_p_value_by_hand() -> None:
    # Labelled: 8 "a", 2 "b"; unlabelled: 10 "a", 30 "b". Fisher's exact two-sided p sums the
    # hypergeometric probabilities of tables no more likely than the observed one (margins
    # 10 / 40 rows, 18 / 32 columns).
    labeled = ["a"] * 8 + ["b"] * 2
    unlabeled = ["a"] * 10 + ["b"] * 30

    def prob(k: int) -> float:
        return math.comb(18, k) * math.comb(32, 10 - k) / math.comb(50, 10)

    observed = prob(8)
    p = sum(prob(k) for k in range(11) if prob(k) <= observed * (1 + 1e-7))
    check = subset_check(labeled, unlabeled)
    assert check.p_value == pytest.approx(p, rel=1e-9)
    assert check.warning is not None and "verdicts" in check.warning


def test_chi_square_by_hand_and_no_warning_for_a_random_subset() -> None:
    # 3 categories: Pearson's X^2 = sum (O - E)^2 / E with 2 degrees of freedom.
    labeled = ["a"] * 20 + ["b"] * 15 + ["tie"] * 5
    unlabeled = ["a"] * 50 + ["b"] * 40 + ["tie"] * 30
    obs = np.array([[20, 15, 5], [50, 40, 30]])
    exp = obs.sum(axis=1, keepdims=True) * obs.sum(axis=0) / obs.sum()
    x2 = ((obs - exp) ** 2 / exp).sum()
    check = subset_check(labeled, unlabeled)
    assert check.p_value == pytest.approx(math.exp(-x2 / 2), rel=1e-9)  # chi2(2) tail
    assert check.warning is None  # p = 0.14


def test_labels_from_one_presentation_order_are_flagged() -> None:
    verdicts = ["a", "b"] * 20
    check = subset_check(
        verdicts[:10], verdicts[10:], order_labeled=["AB"] * 10, order_unlabeled=["AB", "BA"] * 15
    )
    assert check.warning is not None and "presentation orders" in check.warning
    assert subset_check(["a"] * 5, ["a"] * 9).p_value is None  # one category: nothing to test


def test_the_warning_reaches_the_corrected_estimate() -> None:
    # The humans labelled only items where the judge said "a".
    judge = pd.DataFrame(
        {
            "item_id": [f"q{i}" for i in range(200)],
            "system_a": "x",
            "system_b": "y",
            "winner": ["a" if i < 100 else "b" for i in range(200)],
        }
    )
    human = judge.iloc[:40].assign(annotator="h1")
    report = calibrate(judge, human, kind="pairwise", resamples=100, seed=0)
    (corrected,) = report.corrected
    assert corrected.subset_p is not None and corrected.subset_p < 1e-6
    assert "not a random subset" in corrected.subset_warning
    assert "warning: the labelled units differ" in report.to_text()
