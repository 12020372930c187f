"""pass@k: the unbiased estimator of Chen et al. (2021), vectorised, with a bootstrap over tasks.

Chen et al., "Evaluating Large Language Models Trained on Code", arXiv:2107.03374, eq. (1):
with n samples per task of which c pass, pass@k = 1 - C(n - c, k) / C(n, k), averaged over
tasks. Their numerically stable form is 1 - prod_{i = n-c+1}^{n} (1 - k / i); we take it in
log space with a cumulative sum over i, so a whole array of tasks costs one pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from calibration.bootstrap import bootstrap_mean
from calibration.jsonable import jsonable
from calibration.resampling import Method


def _as_counts(x: Any, what: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
            raise ValueError(f"{what} must be whole numbers")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"{what} must be integers, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def pass_at_k(n: Any, c: Any, k: Any) -> np.ndarray | float:
    """Unbiased pass@k per task; `n`, `c`, `k` broadcast against each other.

    n: samples drawn for the task, c: samples that passed, k: budget (1 <= k <= n).
    Returns a float for scalar input, else an array of the broadcast shape.
    """
    n_, c_, k_ = np.broadcast_arrays(_as_counts(n, "n"), _as_counts(c, "c"), _as_counts(k, "k"))
    if (n_ < 1).any():
        raise ValueError("n (samples per task) must be >= 1")
    if ((c_ < 0) | (c_ > n_)).any():
        raise ValueError("c (passing samples) must lie in [0, n]")
    if ((k_ < 1) | (k_ > n_)).any():
        raise ValueError("k must lie in [1, n]: pass@k is unbiased only for k <= n samples")
    out = np.ones(n_.shape, dtype=np.float64)
    # With fewer than k failures every k-subset contains a pass.
    finite = (n_ - c_) >= k_
    for kk in np.unique(k_[finite]):
        sel = finite & (k_ == kk)
        top = int(n_[sel].max())
        # L[i] = sum_{j=kk+1}^{i} log(1 - kk/j); terms with j <= kk never enter because
        # n - c >= kk there.
        j = np.arange(1, top + 1, dtype=np.float64)
        terms = np.where(j > kk, np.log1p(-kk / np.maximum(j, kk + 1)), 0.0)
        cum = np.concatenate([[0.0], np.cumsum(terms)])
        log_ratio = cum[n_[sel]] - cum[n_[sel] - c_[sel]]
        out[sel] = -np.expm1(log_ratio)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class PassAtKResult:
    """Mean pass@k over tasks with a bootstrap interval over tasks."""

    k: int
    pass_at_k: float
    ci_low: float
    ci_high: float
    ci: float
    method: str
    se: float
    n_tasks: int
    resamples: int
    seed: int
    per_task: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self)


def pass_at_k_interval(
    n: Any,
    c: Any,
    k: int,
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    strata: Any = None,
    method: Method = "percentile",
) -> PassAtKResult:
    """pass@k averaged over tasks, with a bootstrap interval over tasks (stratified if asked).

    Only the tasks are resampled; each task's estimate already averages over its n samples.
    To compare two systems on the same tasks, pass both per-task arrays from `pass_at_k` to
    `paired_bootstrap`.
    """
    per_task = np.atleast_1d(pass_at_k(n, c, k))
    res = bootstrap_mean(
        per_task, seed=seed, resamples=resamples, ci=ci, strata=strata, method=method
    )
    return PassAtKResult(
        k=int(k),
        pass_at_k=res.mean,
        ci_low=res.ci_low,
        ci_high=res.ci_high,
        ci=ci,
        method=method,
        se=res.se,
        n_tasks=len(per_task),
        resamples=resamples,
        seed=seed,
        per_task=per_task,
    )
