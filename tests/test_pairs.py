"""Many systems: Holm's adjustment, every pair (or each against a baseline), the win-rate matrix.

References: Holm (1979) worked by hand; the win-rate matrix of shifted columns counted by hand.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calibration.pairs import all_pairs, holm, win_rate_matrix


def test_holm_worked_example() -> None:
    # Holm (1979): sort p ascending, multiply the i-th (1-based) by m - i + 1, take running
    # maxima, cap at 1. p = (.01, .04, .03, .005): sorted .005 .01 .03 .04 -> x4 x3 x2 x1 =
    # .02 .03 .06 .04 -> running max .02 .03 .06 .06, back in input order:
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])
    assert holm([]).shape == (0,)


def test_all_pairs_and_win_rate_matrix() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(size=300)
    wide = pd.DataFrame(
        {"x": base + 0.5, "y": base + rng.normal(0, 0.3, 300), "z": base - 0.5},
        index=pd.Index(range(300), name="item_id"),
    )
    wide.loc[:9, "z"] = np.nan  # z lacks ten items
    res = all_pairs(wide, seed=1, resamples=2_000)
    pairs = {(c.a, c.b): c for c in res.comparisons}
    assert set(pairs) == {("x", "y"), ("x", "z"), ("y", "z")}
    assert pairs[("x", "z")].unpaired_items == 10 and pairs[("x", "z")].result.n == 290
    assert all(c.p_holm >= c.result.p_value for c in res.comparisons)
    assert pairs[("x", "z")].result.mean_diff == pytest.approx(1.0)
    assert res.win_rates.loc["x", "z"] == 1.0 and res.win_rates.loc["z", "x"] == 0.0
    m = win_rate_matrix(wide)
    assert m.loc["x", "y"] + m.loc["y", "x"] == pytest.approx(1.0)
    against = all_pairs(wide, seed=1, resamples=500, baseline="y")
    assert {(c.a, c.b) for c in against.comparisons} == {("x", "y"), ("z", "y")}
