"""pass@k against Chen et al. (2021), "Evaluating Large Language Models Trained on Code",
arXiv:2107.03374, eq. (1): pass@k = E_tasks[1 - C(n - c, k) / C(n, k)].

References: exact rational arithmetic with math.comb (the definition itself), the worked
example n = 200, c = 20 (pass@1 = c / n = 0.1; pass@10 = 1 - C(180, 10) / C(200, 10) =
0.66023), and unbiasedness: for c ~ Binomial(n, p), E[pass@k] = 1 - (1 - p)^k exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from calibration.bootstrap import bootstrap_mean, paired_bootstrap
from calibration.passk import pass_at_k, pass_at_k_interval


def _exact(n: int, c: int, k: int) -> float:
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def test_worked_example_n200_c20() -> None:
    assert pass_at_k(200, 20, 1) == pytest.approx(0.1, rel=1e-12)
    assert pass_at_k(200, 20, 10) == pytest.approx(_exact(200, 20, 10), rel=1e-12)
    assert round(pass_at_k(200, 20, 10), 3) == 0.660
    assert pass_at_k(200, 20, 100) == pytest.approx(_exact(200, 20, 100), rel=1e-12)


def test_vectorised_matches_exact_rationals() -> None:
    rng = np.random.default_rng(0)
    n = rng.integers(1, 400, 3_000)
    c = rng.integers(0, n + 1)
    k = np.minimum(n, rng.choice([1, 5, 10, 100], size=3_000))
    got = pass_at_k(n, c, k)
    want = np.array([_exact(*t) for t in zip(n.tolist(), c.tolist(), k.tolist(), strict=True)])
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-15)


def test_edge_cases() -> None:
    assert pass_at_k(10, 0, 3) == 0.0
    assert pass_at_k(10, 10, 3) == 1.0
    assert pass_at_k(10, 8, 3) == 1.0  # only 2 failures: every 3-subset holds a pass
    assert pass_at_k(10, 1, 10) == 1.0
    assert pass_at_k(1, 1, 1) == 1.0 and pass_at_k(1, 0, 1) == 0.0
    np.testing.assert_allclose(pass_at_k(20, [0, 1, 2], [1, 1, 1]), [0.0, 0.05, 0.1])
    with pytest.raises(ValueError, match="k must lie in"):
        pass_at_k(5, 1, 6)
    with pytest.raises(ValueError, match="c \\(passing samples\\)"):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError, match="whole numbers"):
        pass_at_k(5.5, 1, 1)


@pytest.mark.parametrize(("n", "k", "p"), [(10, 1, 0.3), (20, 5, 0.1), (200, 10, 0.02)])
def test_estimator_is_unbiased(n: int, k: int, p: float) -> None:
    # Chen et al.'s claim: averaging over c ~ Binomial(n, p) gives 1 - (1 - p)^k exactly,
    # unlike the plug-in 1 - (1 - c/n)^k.
    c = np.arange(n + 1)
    weights = stats.binom.pmf(c, n, p)
    assert weights @ pass_at_k(n, c, k) == pytest.approx(1 - (1 - p) ** k, rel=1e-10)
    plug_in = weights @ (1 - (1 - c / n) ** k)
    assert k == 1 or abs(plug_in - (1 - (1 - p) ** k)) > 1e-3


def test_interval_over_tasks() -> None:
    rng = np.random.default_rng(1)
    n = np.full(164, 50)  # HumanEval has 164 tasks
    c = rng.binomial(50, rng.beta(0.5, 1.5, 164))
    res = pass_at_k_interval(n, c, 10, seed=3, resamples=4_000)
    per_task = pass_at_k(n, c, 10)
    assert res.pass_at_k == pytest.approx(per_task.mean())
    assert res.ci_low < res.pass_at_k < res.ci_high and res.n_tasks == 164
    # Same seed, same numbers as bootstrapping the per-task values directly.
    ref = bootstrap_mean(per_task, seed=3, resamples=4_000)
    assert (res.ci_low, res.ci_high) == (ref.ci_low, ref.ci_high)
    # Comparing two systems on the same tasks is a paired bootstrap of per-task values.
    other = pass_at_k(n, np.minimum(50, c + rng.integers(0, 3, 164)), 10)
    diff = paired_bootstrap(other, per_task, seed=3, resamples=2_000)
    assert diff.mean_diff >= 0 and diff.losses == 0
