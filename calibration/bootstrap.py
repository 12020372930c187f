"""Paired comparison of two systems' per-item scores: bootstrap intervals, p-values,
wins/losses/ties, and one system's mean or win rate with its interval.

Everything resamples *units*: items, or clusters of rows when `clusters` is given, within strata
when `strata` is given; the engine (units, the gather and counts algorithms, percentile and BCa
intervals) is `calibration.resampling`. Many systems at once: `calibration.pairs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from calibration.jsonable import jsonable
from calibration.resampling import (
    Algorithm,
    Method,
    as_values,
    interval,
    make_units,
    resample_mean,
    standard_error,
    tested_p_value,
)

# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class PairedBootstrapResult:
    """Mean of per-item differences a - b with a bootstrap interval over items (or clusters).

    `wins`/`losses`/`ties` count units (items, or clusters when given) whose mean difference is
    positive/negative/zero; `n` counts rows. `ci_low`/`ci_high` are the `method` interval; both
    the percentile and BCa intervals are kept. `p_value` is two-sided for "no difference", from
    `p_method` ("bootstrap", "sign" or "t": `calibration.resampling` says which, when);
    `p_floor_limited` says it is the bootstrap's floor `p_floor` = 1/(resamples+1), so the
    p-value is below it.
    """

    mean_diff: float
    ci_low: float
    ci_high: float
    ci: float
    method: str
    percentile: tuple[float, float]
    bca: tuple[float, float]
    se: float
    wins: int
    losses: int
    ties: int
    p_value: float
    p_method: str
    p_floor: float
    p_floor_limited: bool
    n: int
    n_units: int
    n_strata: int
    resamples: int
    seed: int
    algorithm: str
    replicates: np.ndarray = field(repr=False, compare=False)

    @property
    def p_below_level(self) -> bool:
        """This pair's own, unadjusted p-value is below 1 - ci. That is "told apart" only for a
        family of one; among several pairs "told apart" is Holm's
        (`calibration.pairs.PairComparison.told_apart`)."""
        return bool(self.p_value < 1 - self.ci)

    def negated(self) -> PairedBootstrapResult:
        """The same comparison as b - a: the interval and the counts turned round."""
        return replace(
            self,
            mean_diff=-self.mean_diff,
            ci_low=-self.ci_high,
            ci_high=-self.ci_low,
            percentile=(-self.percentile[1], -self.percentile[0]),
            bca=(-self.bca[1], -self.bca[0]),
            wins=self.losses,
            losses=self.wins,
            replicates=-self.replicates,
        )

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self)


@dataclass(frozen=True)
class MeanResult:
    """Mean of one system's per-item values with a bootstrap interval over items (or clusters)."""

    mean: float
    ci_low: float
    ci_high: float
    ci: float
    method: str
    se: float
    n: int
    n_units: int
    n_strata: int
    resamples: int
    seed: int
    algorithm: str
    replicates: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self)


@dataclass(frozen=True)
class WinRateResult:
    """Share of comparisons won (ties count half) with the analytic and bootstrap uncertainty.

    `se` is the sample standard deviation (ddof=1) of per-unit scores over sqrt(units), the
    standard error AlpacaEval publishes; `ci_low`/`ci_high` come from the bootstrap.
    """

    win_rate: float
    se: float
    ci_low: float
    ci_high: float
    ci: float
    method: str
    wins: int
    losses: int
    ties: int
    n: int
    n_units: int
    resamples: int
    seed: int
    algorithm: str

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self)


# --------------------------------------------------------------------------- public functions


def bootstrap_mean(
    values: Any,
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    strata: Any = None,
    clusters: Any = None,
    method: Method = "percentile",
    algorithm: Algorithm = "auto",
    workers: int | None = None,
) -> MeanResult:
    """Mean of `values` with a bootstrap interval (stratified / clustered as for paired)."""
    arr = as_values(values, "values")
    boot = resample_mean(
        arr,
        resamples=resamples,
        seed=seed,
        ci=ci,
        strata=strata,
        clusters=clusters,
        algorithm=algorithm,
        workers=workers,
    )
    lo, hi = interval(boot, method)
    return MeanResult(
        mean=boot.estimate,
        ci_low=lo,
        ci_high=hi,
        ci=ci,
        method=method,
        se=standard_error(boot),
        n=len(arr),
        n_units=boot.units.n,
        n_strata=len(boot.units.bounds),
        resamples=resamples,
        seed=seed,
        algorithm=boot.algorithm,
        replicates=boot.replicates,
    )


def paired_bootstrap(
    scores_a: Any,
    scores_b: Any,
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    strata: Any = None,
    clusters: Any = None,
    method: Method = "percentile",
    algorithm: Algorithm = "auto",
    workers: int | None = None,
) -> PairedBootstrapResult:
    """Paired bootstrap of the mean difference `scores_a - scores_b`, row by row.

    Rows are paired observations (same item, same order, same judge). `clusters` labels rows
    that must be resampled together (all orders and judges of one item); `strata` labels
    strata resampled separately, keeping each stratum's size fixed. `seed` seeds a
    `numpy.random.SeedSequence`; the same seed gives the same result on any thread count.
    """
    a = as_values(scores_a, "scores_a")
    b = as_values(scores_b, "scores_b")
    if a.shape != b.shape:
        raise ValueError(
            f"scores_a has {len(a)} rows and scores_b {len(b)}: score the same items in the "
            "same order"
        )
    diff = a - b
    boot = resample_mean(
        diff,
        resamples=resamples,
        seed=seed,
        ci=ci,
        strata=strata,
        clusters=clusters,
        algorithm=algorithm,
        workers=workers,
    )
    lo, hi = interval(boot, method)
    unit = boot.units.means
    p = tested_p_value(boot, method)
    return PairedBootstrapResult(
        mean_diff=boot.estimate,
        ci_low=lo,
        ci_high=hi,
        ci=ci,
        method=method,
        percentile=boot.percentile,
        bca=boot.bca,
        se=standard_error(boot),
        wins=int((unit > 0).sum()),
        losses=int((unit < 0).sum()),
        ties=int((unit == 0).sum()),
        p_value=p.value,
        p_method=p.method,
        p_floor=p.floor,
        p_floor_limited=p.floor_limited,
        n=len(diff),
        n_units=boot.units.n,
        n_strata=len(boot.units.bounds),
        resamples=resamples,
        seed=seed,
        algorithm=boot.algorithm,
        replicates=boot.replicates,
    )


def win_rate(
    scores: Any,
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    strata: Any = None,
    clusters: Any = None,
    method: Method = "percentile",
    workers: int | None = None,
) -> WinRateResult:
    """Win rate from per-comparison scores in [0, 1] (1 win, 0.5 tie, 0 loss, or a
    probability-weighted preference) with AlpacaEval's standard error and a bootstrap interval.
    """
    s = as_values(scores, "scores")
    if ((s < 0) | (s > 1)).any():
        raise ValueError("win-rate scores must lie in [0, 1] (1 = win, 0.5 = tie, 0 = loss)")
    res = bootstrap_mean(
        s,
        seed=seed,
        resamples=resamples,
        ci=ci,
        strata=strata,
        clusters=clusters,
        method=method,
        workers=workers,
    )
    unit = make_units(s, None, clusters).means
    se = float(unit.std(ddof=1) / math.sqrt(len(unit))) if len(unit) > 1 else math.nan
    return WinRateResult(
        win_rate=res.mean,
        se=se,
        ci_low=res.ci_low,
        ci_high=res.ci_high,
        ci=ci,
        method=method,
        wins=int((unit > 0.5).sum()),
        losses=int((unit < 0.5).sum()),
        ties=int((unit == 0.5).sum()),
        n=len(s),
        n_units=len(unit),
        resamples=resamples,
        seed=seed,
        algorithm=res.algorithm,
    )
