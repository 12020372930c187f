"""The typed result of every agreement statistic: a value with its bootstrap interval, or the
reason it is undefined on these data."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap interval; `value` is None when the statistic is
    undefined on these data, and `reason` says why."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    """Units: the clusters the bootstrap resamples (items, keys), not observations."""
    method: str
    seed: int | None
    resamples: int = 0
    confidence: float = 0.95
    reason: str | None = None
    undefined_resamples: int = 0
    """Resamples on which the statistic was undefined (left out of the interval)."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Agreement(Estimate):
    """A share of agreeing comparisons, with the counts it is made of."""

    agree: int = 0
    comparisons: int = 0


def undefined(
    n: int, method: str, seed: int | None, confidence: float, reason: str, cls: type = Estimate
) -> Estimate:
    """A statistic that these data do not define, with the reason."""
    return cls(None, None, None, n, method, seed, 0, confidence, reason)


def from_resamples(
    point: float,
    boot: np.ndarray,
    n: int,
    method: str,
    seed: int | None,
    confidence: float,
    cls: type = Estimate,
    jackknife: np.ndarray | None = None,
    **counts: int,
) -> Estimate:
    """Point value with the percentile interval of its resample values (undefined resamples,
    NaN, are left out and counted), or with `jackknife` (the statistic with each unit left
    out) the BCa interval: bias-corrected by the share of resamples below the point value and
    accelerated by the jackknife's skewness (Efron 1987)."""
    ok = boot[np.isfinite(boot)]
    lo = hi = None
    if ok.size:
        q = (1.0 - confidence) / 2.0
        levels = np.array([q, 1.0 - q])
        if jackknife is not None:
            from calibration.resampling import bca_levels

            levels = bca_levels(point, ok, jackknife[np.isfinite(jackknife)], levels)
        lo, hi = (float(v) for v in np.quantile(ok, levels))
    reason = None if ok.size else "every resample undefined"
    return cls(
        float(point),
        lo,
        hi,
        n,
        method,
        seed,
        int(boot.size),
        confidence,
        reason,
        int(boot.size - ok.size),
        **counts,
    )


def check_resampling(resamples: int, confidence: float) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
