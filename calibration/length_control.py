"""Length-controlled win rates: how often a system would beat the baseline if its responses
were as long as the baseline's, by the generalised linear model of AlpacaEval 2 (Dubois et al.,
"Length-Controlled AlpacaEval", 2024).

For system m against baseline b on item x, with p the judge's preference for m (in [0, 1]):

    logit P(m beats b | x) = a_m + phi_m * tanh(d_mx / sd_m) + psi_m * gamma_x

d_mx is the length difference (m's response minus b's, in characters), sd_m its standard
deviation over m's items, gamma_x the item's difficulty. The length-controlled win rate sets
the length term to zero and averages over the items:

    LC_m = mean_x sigmoid(a_m + psi_m * gamma_x)

Assumptions, stated because the number depends on them: the length effect is the same bounded
(tanh) function of the standardised difference on every item; difficulty enters linearly on
the logit scale; items are exchangeable. Fitted here by maximum likelihood with the judge's
soft preferences as targets (a cross-entropy, not a rounding to wins), and the difficulty
gamma_x estimated from every system's preferences at once (a two-way logistic model:
logit = theta_m + gamma_x + phi_m tanh(d_mx / sd_m), gamma centred). AlpacaEval ships its own
difficulties and regularises each fit towards "gamed" baselines (verbose and concise versions
of the baseline) with L1 and cross-validation; neither the difficulties nor the gamed
annotations are public files, so its published numbers are approached, not reproduced.

Pure numpy/scipy: no LLM, no judge. `phi_m` is the judge's length preference against this
baseline (positive: longer wins)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

_RIDGE = 1e-4
"""A whisper of L2 on the slopes: keeps a system with no length variation finite."""


@dataclass(frozen=True)
class LengthControlled:
    system: str
    n: int
    """Items with a preference."""
    win_rate: float
    """Raw: the mean preference, in [0, 1]."""
    lc_win_rate: float
    """With the length term set to zero, in [0, 1]."""
    length_slope: float
    """phi: the logit change from tanh(1) of a standard deviation longer and up (the judge's
    length preference against the baseline; 0: none)."""
    intercept: float
    difficulty_slope: float
    ci_low: float
    ci_high: float
    """Percentile interval of `lc_win_rate` over bootstrap resamples of the items (the model
    refitted on each; the difficulties and the length scale held at the full data's)."""
    level: float
    resamples: int
    seed: int
    method: str = "AlpacaEval-2 length-controlled GLM, soft-label maximum likelihood"


def _soft_logistic_fit(x: np.ndarray, p: np.ndarray, ridge: np.ndarray) -> np.ndarray:
    """Coefficients minimising the cross-entropy of sigmoid(x @ w) against soft targets p."""

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        value = -(p * log_expit(z) + (1 - p) * log_expit(-z)).sum() + 0.5 * (ridge * w * w).sum()
        grad = x.T @ (expit(z) - p) + ridge * w
        return float(value), grad

    start = np.zeros(x.shape[1])
    result = minimize(loss, start, jac=True, method="L-BFGS-B")
    return np.asarray(result.x)


def _length_feature(delta: np.ndarray) -> np.ndarray:
    sd = delta.std(ddof=1) if delta.size > 1 else 0.0
    return np.tanh(delta / sd) if sd > 0 else np.zeros_like(delta, dtype=float)


def item_difficulty(
    systems: Sequence[str],
    items: Sequence[int],
    preference: np.ndarray,
    delta: np.ndarray,
    *,
    shrink: float = 0.0,
    features: np.ndarray | None = None,
    feature_ridge: float = _RIDGE,
) -> dict[int, float]:
    """gamma_x: each item's effect on every system's log-odds of beating the baseline,
    estimated jointly with a per-system intercept and length slope; centred at 0. Items are
    hashable ids; rows with a missing preference are left out. `shrink`: an L2 penalty on
    gamma (a normal prior of variance 1 / shrink), so an item judged against few systems is
    pulled towards 0 rather than to +-infinity; 0 is AlpacaEval's unpenalised fit.
    `features`: more covariates (rows x k, e.g. style), each with a slope per system, so the
    difficulties do not absorb them; `feature_ridge` is the L2 penalty on their slopes."""
    sys_arr, item_arr = np.asarray(systems), np.asarray(items)
    keep = ~np.isnan(preference)
    sys_arr, item_arr, p, d = sys_arr[keep], item_arr[keep], preference[keep], delta[keep]
    sys_names, s_idx = np.unique(sys_arr, return_inverse=True)
    item_ids, i_idx = np.unique(item_arr, return_inverse=True)
    length = np.empty_like(d, dtype=float)
    for s in range(len(sys_names)):
        mask = s_idx == s
        length[mask] = _length_feature(d[mask])
    extra = np.empty((len(p), 0)) if features is None else np.asarray(features, float)[keep]
    covariates = np.column_stack([length, extra])
    n_s, n_i, n_k = len(sys_names), len(item_ids), covariates.shape[1]
    penalty = np.r_[_RIDGE, np.full(n_k - 1, feature_ridge)][:, None]  # per slope row

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        theta, gamma = w[:n_s], w[n_s * (1 + n_k) :]
        slopes = w[n_s : n_s * (1 + n_k)].reshape(n_k, n_s)
        z = theta[s_idx] + (slopes[:, s_idx].T * covariates).sum(axis=1) + gamma[i_idx]
        r = expit(z) - p
        value = -(p * log_expit(z) + (1 - p) * log_expit(-z)).sum()
        # Centring gamma (its mean is not identified beside the intercepts), by a penalty.
        value += 0.5 * len(p) * gamma.mean() ** 2 + 0.5 * (penalty * slopes * slopes).sum()
        value += 0.5 * shrink * (gamma @ gamma)
        slope_grad = [
            np.bincount(s_idx, r * covariates[:, k], n_s) + penalty[k] * slopes[k]
            for k in range(n_k)
        ]
        grad = np.concatenate(
            [
                np.bincount(s_idx, r, n_s),
                *slope_grad,
                np.bincount(i_idx, r, n_i) + len(p) * gamma.mean() / n_i + shrink * gamma,
            ]
        )
        return float(value), grad

    result = minimize(loss, np.zeros(n_s * (1 + n_k) + n_i), jac=True, method="L-BFGS-B")
    gamma = result.x[n_s * (1 + n_k) :]
    gamma = gamma - gamma.mean()
    return {
        item.item() if hasattr(item, "item") else item: float(g)
        for item, g in zip(item_ids, gamma, strict=True)
    }


def length_controlled(
    system: str,
    preference: np.ndarray,
    delta: np.ndarray,
    difficulty: np.ndarray,
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> LengthControlled:
    """One system against the baseline: `preference` (P(system better), NaN where missing),
    `delta` (its response length minus the baseline's), `difficulty` (gamma of each row's
    item), aligned by row, one row an item."""
    keep = ~np.isnan(preference)
    p, d, g = preference[keep], delta[keep].astype(float), difficulty[keep]
    x = np.column_stack([np.ones_like(p), _length_feature(d), g])
    ridge = np.array([0.0, _RIDGE, _RIDGE])
    w = _soft_logistic_fit(x, p, ridge)
    lc = float(expit(w[0] + w[2] * g).mean())
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(p.size, np.full(p.size, 1.0 / p.size), size=resamples)
    boot = _refit_weighted(x, p, counts.astype(float), ridge, w)
    low, high = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return LengthControlled(
        system=system,
        n=int(p.size),
        win_rate=float(p.mean()),
        lc_win_rate=lc,
        length_slope=float(w[1]),
        intercept=float(w[0]),
        difficulty_slope=float(w[2]),
        ci_low=float(low),
        ci_high=float(high),
        level=level,
        resamples=resamples,
        seed=seed,
    )


def _refit_weighted(
    x: np.ndarray, p: np.ndarray, counts: np.ndarray, ridge: np.ndarray, start: np.ndarray
) -> np.ndarray:
    """The length-controlled win rate of each resample (rows of `counts`: how often each item
    was drawn), the model refitted by Newton's method for all resamples at once (3 x 3
    systems; from the full-data fit, a few steps converge)."""
    w = np.tile(start, (counts.shape[0], 1))
    eye = np.diag(ridge)
    for _ in range(25):
        q = expit(w @ x.T)  # resamples x items
        grad = (counts * (q - p)) @ x + w * ridge
        hess = np.einsum("bi,ij,ik->bjk", counts * q * (1 - q), x, x) + eye
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        w = w - step
        if np.abs(step).max() < 1e-10:
            break
    q0 = expit(w[:, [0]] + w[:, [2]] * x[None, :, 2])
    return (counts * q0).sum(axis=1) / counts.sum(axis=1)
