"""The Decision's "about N items would tell them apart": sized for "told apart" itself (the
Holm-adjusted test), by the kind of test the pair's p-value came from.

References: `scipy.stats.binomtest` for the exact sign test and the standard library's
`statistics.NormalDist` for the normal quantile (neither is what the code under test calls),
and counts worked out by hand from 2 / 2**k for all-win pairs.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from calibration.compare import compare_table
from calibration.pairs import items_to_tell_apart
from judge.report.blocks import Bullets, Para
from judge.report.decision_section import decision_section
from judge.run.analyse import _decision
from judge.summary.run_summary import RunComparison


def test_all_wins_need_the_units_the_sign_test_needs() -> None:
    # 5 wins of 5: 2 / 2**5 = 0.0625 is not below 0.05, 2 / 2**6 = 0.03125 is: 6 items.
    assert binomtest(0, 5).pvalue == pytest.approx(0.0625)
    assert binomtest(0, 6).pvalue == pytest.approx(0.03125)
    got = items_to_tell_apart(diff=1, se=0, n=5, wins=5, losses=0, p_method="sign", level=0.05)
    assert got == (6, "sign")
    # Three pairs, Holm's strictest step 0.05 / 3: 2 / 2**7 = 0.0156 < 0.0167 <= 2 / 2**6.
    got = items_to_tell_apart(
        diff=1, se=0, n=10, wins=10, losses=0, p_method="sign", level=0.05 / 3
    )
    assert got == (7, "sign")
    # 3 ties among 8 items: 6 non-tied units take 6 x 8 / 5 = 9.6 items.
    got = items_to_tell_apart(diff=1, se=0, n=8, wins=5, losses=0, p_method="sign", level=0.05)
    assert got == (10, "sign")


def test_mixed_wins_need_the_first_count_binomtest_rejects() -> None:
    level = 0.01
    got = items_to_tell_apart(
        diff=0.5, se=0.2, n=20, wins=15, losses=5, p_method="sign", level=level
    )
    assert got is not None and got[1] == "sign"
    first = next(
        k for k in range(1, 10_000) if binomtest(math.floor(k * 5 / 20 + 1e-9), k).pvalue < level
    )
    assert got[0] == first  # 20 non-tied units of 20 items: one unit per item


def test_the_normal_approximation_scales_the_bootstrap_se() -> None:
    level = 0.05 / 28
    z = NormalDist().inv_cdf(1 - level / 2)
    got = items_to_tell_apart(
        diff=0.3, se=0.15, n=60, wins=40, losses=20, p_method="normal", level=level
    )
    assert got is not None and got[1] == "normal"
    needed = got[0]

    def p_at(n: int) -> float:  # the same difference, its SE shrinking as 1/sqrt(n)
        return 2 * (1 - NormalDist().cdf(0.3 / (0.15 * math.sqrt(60 / n))))

    assert p_at(needed) < level <= p_at(needed - 1)
    assert needed == math.ceil(60 * (z * 0.15 / 0.3) ** 2)


def test_no_difference_needs_no_count() -> None:
    common = {"se": 0.1, "n": 10, "level": 0.05}
    assert items_to_tell_apart(diff=0, wins=3, losses=3, p_method="normal", **common) is None
    assert items_to_tell_apart(diff=0.1, wins=4, losses=4, p_method="sign", **common) is None
    zero = {"se": 0.0, "n": 10, "level": 0.05}
    assert items_to_tell_apart(diff=0, wins=0, losses=0, p_method="bootstrap", **zero) is None


def _spaced(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(60):
        q = rng.normal(0, 1)
        rows += [(f"i{i}", f"s{k}", q - 0.5 * k + rng.normal(0, 1)) for k in range(8)]
    return pd.DataFrame(rows, columns=["item_id", "system", "score"])


def test_a_pair_not_told_apart_needs_more_items_than_it_has() -> None:
    # Eight systems 0.5 apart on 60 items: s5 - s6 is 0.312 [0.015, 0.626], its unadjusted
    # interval excludes 0 but Holm's p is 0.109. The count from that interval said 58 items,
    # fewer than the 60 that did not tell them apart.
    report = compare_table(_spaced(1), kind="scores", resamples=2_000, seed=1)
    decision = _decision(
        RunComparison.model_validate({"judge": "j", **report.to_dict()}), None, None
    )
    pairs = len(report.comparisons)
    assert {n.told_apart for n in decision.neighbours} == {True, False}
    for n in decision.neighbours:
        assert n.items_needed is not None and n.items_needed_test == "normal"
        assert n.items_needed_level == pytest.approx(0.05 / pairs)
        assert n.items_needed > n.n if not n.told_apart else n.items_needed <= n.n
    (s5,) = [n for n in decision.neighbours if (n.upper, n.lower) == ("s5", "s6")]
    assert not s5.told_apart and s5.ci_low > 0


def _page(rows: list[tuple[str, str, float]]) -> tuple[list[str], str]:
    """The Decision's bullets and its note on what the item counts assume."""
    table = pd.DataFrame(rows, columns=["item_id", "system", "score"])
    report = compare_table(table, kind="scores", resamples=1_000, seed=1)
    decision = _decision(
        RunComparison.model_validate({"judge": "j", **report.to_dict()}), None, None
    )
    analysis = SimpleNamespace(
        decision=decision, same_family=None, calibration=None, canaries=None, gates=list
    )
    summary = SimpleNamespace(run=SimpleNamespace(judges=[]))  # a judge no one simulated
    blocks = decision_section(summary, analysis)  # type: ignore[arg-type]
    (bullets,) = [b for b in blocks if isinstance(b, Bullets)]
    (note,) = [b.text for b in blocks if isinstance(b, Para) and b.text.startswith("Item counts")]
    return bullets.items, note


def test_zero_width_intervals_get_a_count_from_the_sign_test() -> None:
    # Every item one point apart: the interval has no width and the p-value is the sign test's.
    constant = [
        (f"i{i}", s, float(i % 7) + d) for i in range(10) for s, d in (("big", 2), ("small", 1))
    ]
    (_, told), note = _page(constant)
    assert "None" not in told and "told apart" in told and "by the sign test" in note
    # 10 wins of 10, one pair: told apart, and 6 items would do (2 / 2**6 < 0.05).
    assert "(about 6 items would still tell them apart)" in told
    five = [(f"i{i}", s, float(i) + d) for i in range(5) for s, d in (("big", 1), ("small", 0))]
    (_, short), note = _page(five)
    # 5 wins of 5: p = 0.0625, not told apart; a sixth win would give 0.03125.
    assert "not told apart (about 6 items would tell them apart)" in short
    assert "if the difference and its spread per item held" in note and "sign test" in note
