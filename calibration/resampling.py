"""The bootstrap engine under every comparison interval: units, resampling, intervals, p-values.

Everything resamples *units*: items, or clusters of rows when `clusters` is given (so that both
orders and all judges of an item move together), within strata when `strata` is given. The
statistic is always a mean over rows, i.e. sum of the resampled units' sums over the sum of their
sizes, which for one row per item is the plain mean.

Two exact resampling algorithms, chosen per call:

* ``gather``: draw unit indices in blocks of about 2**17 and sum the gathered unit sums. Blocks
  have their own child seed, so they can run on several threads (numpy releases the GIL in both
  the integer generation and the gather) and the result is independent of the thread count.
* ``counts``: when units take few distinct values (win/tie/loss verdicts, differences of 1-5
  rubric scores) the resampled mean depends only on how often each distinct value is drawn, and
  those counts are multinomial. Drawing K counts instead of n indices is exact and costs K binomial
  draws per resample instead of n index draws.

P-values (`tested_p_value`), two-sided for "the mean is 0":

* ``bootstrap`` wherever the bootstrap can measure it: the smallest 1 - level at which the
  reported interval excludes 0, so "p < 1 - ci" and "the interval excludes 0" agree.
* The bootstrap cannot measure a p-value below 1/(B+1) (B resamples): when no resample falls on
  0 or beyond it, the interval excludes 0 at every level the bootstrap resolves, and the p-value
  only says how far. Holm multiplies it by up to the number of pairs, so a floor of 1/(B+1)
  would keep clearly different systems from being told apart (190 pairs x 1/1001 = 0.19). There
  the p-value comes from the statistic's own distribution instead:
  - ``sign``: every unit's difference is a win, a loss or a tie (+c, -c or 0, units of equal
    size: verdicts, or a constant score gap). Then "mean 0" is "wins and losses equally likely",
    and the exact sign test (wins ~ Binomial(wins + losses, 1/2)) tests it at any n.
  - ``t``: otherwise, Student's t test of the mean: |mean| / SE against t with units - strata
    degrees of freedom, SE the mean's linearised standard error with each stratum's variance
    on n - 1 (for one row per item and no strata, exactly `scipy.stats.ttest_1samp`). The
    bootstrap's own tail is the normal one with the variance on n, and Holm decides far out in
    it (|z| of 3.5-4.5 for 190-780 pairs): at 50 items that tail is 2-3 times too thin (a
    p-value of 0.00022 where the t test gives 0.00055), enough for 20 equal systems to be told
    apart 8% of the time at a 5% family-wise level. Releases before 2026-12 used the normal
    tail from 30 units and bootstrapped smaller pairs again.
  - the p-value stays at the floor, flagged `floor_limited`, only when no spread is left to
    test with (one unit per stratum); `calibration.pairs` then bootstraps such pairs again
    with enough resamples for their family (`family_resamples`).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import bdtr, ndtr, ndtri, stdtr

Method = Literal["percentile", "bca"]
Algorithm = Literal["auto", "gather", "counts"]

# Draws per block: index array (1 MiB) + gathered values stay in L2. Measured best between
# 2**16 and 2**18 in bench/bootstrap.py; larger blocks spill to memory and get slower.
_BLOCK = 1 << 17
# A multinomial cell costs about 50-100 ns against 3-4 ns per index draw + gather (measured),
# so counts win when units outnumber distinct values by more than this factor.
_COUNTS_COST = 25
# Below this many draws a thread pool (about 0.2 ms to start) costs more than it saves;
# above it even one pool thread beats the main thread (see _gather_replicates).
_THREAD_MIN_DRAWS = 1 << 18
# Strata smaller than this are drawn together in one broadcast call: a separate
# `integers` call per tiny stratum is dominated by call overhead.
_SMALL_STRATUM = 64


def default_workers() -> int:
    """Threads for the gather algorithm: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# --------------------------------------------------------------------------- units


@dataclass(frozen=True)
class Units:
    """Resampling units (items or clusters), grouped by stratum."""

    sums: np.ndarray  # per unit: sum of its rows' values
    sizes: np.ndarray | None  # per unit: number of rows; None when all units have `size` rows
    size: int
    bounds: tuple[tuple[int, int], ...]  # [start, stop) of each stratum in `sums`
    n_rows: int

    @property
    def n(self) -> int:
        return len(self.sums)

    @property
    def means(self) -> np.ndarray:
        return self.sums / (self.sizes if self.sizes is not None else self.size)


def _codes(labels: Any, n: int, what: str) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.shape != (n,):
        raise ValueError(f"{what} has shape {arr.shape}; expected one label per row ({n},)")
    codes, _ = pd.factorize(arr, use_na_sentinel=True)
    if (codes < 0).any():
        raise ValueError(f"{what} has {(codes < 0).sum()} missing labels; label every row")
    return codes


def as_values(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if len(arr) == 0:
        raise ValueError(f"{what} is empty: nothing to compare")
    bad = ~np.isfinite(arr)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{what} has {bad.sum()} missing or non-finite values (first at row {first}); "
            "drop those items from both systems or score them explicitly"
        )
    return arr


def make_units(values: np.ndarray, strata: Any = None, clusters: Any = None) -> Units:
    n = len(values)
    if clusters is None:
        sums, sizes, size = values, None, 1
        unit_strata = _codes(strata, n, "strata") if strata is not None else None
    else:
        codes = _codes(clusters, n, "clusters")
        k = int(codes.max()) + 1
        sums = np.bincount(codes, weights=values, minlength=k)
        counts = np.bincount(codes, minlength=k)
        # Equal cluster sizes (e.g. 2 orders x 3 judges everywhere) keep the denominator
        # constant, which saves a second gather per draw.
        sizes, size = (None, int(counts[0])) if (counts == counts[0]).all() else (counts, 0)
        unit_strata = None
        if strata is not None:
            row_strata = _codes(strata, n, "strata")
            unit_strata = np.empty(k, dtype=np.int64)
            unit_strata[codes] = row_strata
            if (unit_strata[codes] != row_strata).any():
                raise ValueError(
                    "a cluster spans several strata; strata must be constant within a cluster"
                )
    if unit_strata is None:
        return Units(sums, sizes, size, ((0, len(sums)),), n)
    order = np.argsort(unit_strata, kind="stable")
    edges = np.concatenate([[0], np.cumsum(np.bincount(unit_strata[order]))])
    bounds = tuple((int(a), int(b)) for a, b in pairwise(edges) if b > a)
    return Units(sums[order], None if sizes is None else sizes[order], size, bounds, n)


# --------------------------------------------------------------------------- resampling


# Per stratum: distinct unit sums, their sizes, and how many units take each.
_Atoms = list[tuple[np.ndarray, np.ndarray, np.ndarray]]


def _atoms(units: Units) -> _Atoms:
    """Per stratum: distinct (sum, size) unit values and how many units take each."""
    out = []
    for start, stop in units.bounds:
        s = units.sums[start:stop]
        if units.sizes is None:
            vals, counts = np.unique(s, return_counts=True)
            out.append((vals, np.full(len(vals), float(units.size)), counts))
        else:
            pairs, counts = np.unique(
                np.column_stack([s, units.sizes[start:stop]]), axis=0, return_counts=True
            )
            out.append((pairs[:, 0], pairs[:, 1], counts))
    return out


def _counts_replicates(units: Units, atoms: _Atoms, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    num = np.zeros(resamples)
    den = np.zeros(resamples)
    for vals, sizes, counts in atoms:
        n_h = int(counts.sum())
        p = counts / n_h
        rows = max(1, _BLOCK // len(vals))  # bounds the (rows, K) count matrix
        for r0 in range(0, resamples, rows):
            r1 = min(resamples, r0 + rows)
            c = rng.multinomial(n_h, p, size=r1 - r0).astype(np.float64)
            num[r0:r1] += c @ vals
            den[r0:r1] += c @ sizes
    return num / den


def _gather_rows(units: Units, rng: np.random.Generator, rows: int) -> np.ndarray:
    """`rows` bootstrap means by index gather, `_BLOCK` draws at a time."""
    num = np.zeros(rows)
    den = np.zeros(rows) if units.sizes is not None else None
    step = max(1, _BLOCK // rows)  # positions per call

    def add(idx: np.ndarray) -> None:
        num[:] += np.take(units.sums, idx).sum(axis=1)
        if den is not None:
            den[:] += np.take(units.sizes, idx).sum(axis=1)

    small_lo: list[np.ndarray] = []
    small_hi: list[np.ndarray] = []
    for start, stop in units.bounds:
        if stop - start < _SMALL_STRATUM and len(units.bounds) > 1:
            small_lo.append(np.full(stop - start, start))
            small_hi.append(np.full(stop - start, stop))
            continue
        for j in range(start, stop, step):
            add(rng.integers(start, stop, size=(rows, min(step, stop - j))))
    if small_lo:
        # Each position draws from its own stratum's [start, stop), broadcast in one call.
        lo, hi = np.concatenate(small_lo), np.concatenate(small_hi)
        for j in range(0, len(lo), step):
            m = len(lo[j : j + step])
            add(rng.integers(lo[j : j + step], hi[j : j + step], size=(rows, m)))
    total = den if den is not None else units.n * units.size
    return num / total


def _gather_replicates(units: Units, resamples: int, seed: int, workers: int) -> np.ndarray:
    rows = max(1, _BLOCK // units.n)
    per_block = max(rows, 64)  # resamples per seeded block; layout depends on n only
    blocks = [(r0, min(resamples, r0 + per_block)) for r0 in range(0, resamples, per_block)]
    seeds = np.random.SeedSequence(seed).spawn(len(blocks))
    out = np.empty(resamples)

    def run(b: int) -> None:
        rng = np.random.Generator(np.random.PCG64(seeds[b]))
        r0, r1 = blocks[b]
        for a in range(r0, r1, rows):
            z = min(r1, a + rows)
            out[a:z] = _gather_rows(units, rng, z - a)

    if units.n * resamples >= _THREAD_MIN_DRAWS:
        # Pool threads even for one worker: a thread's malloc arena keeps the ~1 MiB block
        # temporaries mapped, while glibc trims the main thread's heap after each block and
        # faults it back in (measured: 36k vs 500 minor faults, 2.5x slower on the main thread).
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(blocks)))) as pool:
            list(pool.map(run, range(len(blocks))))
    else:
        for b in range(len(blocks)):
            run(b)
    return out


def _replicates(
    units: Units, resamples: int, seed: int, algorithm: Algorithm, workers: int | None
) -> tuple[np.ndarray, str]:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if algorithm not in ("auto", "gather", "counts"):
        raise ValueError(f"algorithm must be 'auto', 'gather' or 'counts', got {algorithm!r}")
    atoms = _atoms(units) if algorithm != "gather" else []
    distinct = sum(len(v) for v, _, _ in atoms)
    if algorithm == "counts" or (algorithm == "auto" and distinct * _COUNTS_COST <= units.n):
        return _counts_replicates(units, atoms, resamples, seed), "counts"
    w = default_workers() if workers is None else workers
    return _gather_replicates(units, resamples, seed, w), "gather"


# --------------------------------------------------------------------------- intervals


@dataclass(frozen=True)
class Boot:
    """The bootstrap distribution of a mean over units, with both intervals and BCa's terms."""

    estimate: float
    replicates: np.ndarray
    percentile: tuple[float, float]
    bca: tuple[float, float]
    z0: float
    accel: float
    algorithm: str
    units: Units


def _jackknife_accel(units: Units) -> float:
    """BCa acceleration from leave-one-unit-out means (closed form for a ratio of sums)."""
    if units.n < 3:
        return 0.0
    sizes = units.sizes if units.sizes is not None else np.full(units.n, float(units.size))
    return acceleration((units.sums.sum() - units.sums) / (sizes.sum() - sizes))


def acceleration(jackknife: np.ndarray) -> float:
    """BCa's acceleration from a statistic's jackknife values (Efron 1987): their skewness
    over six."""
    dev = jackknife.mean() - jackknife
    denom = 6.0 * (dev @ dev) ** 1.5
    return float((dev**3).sum() / denom) if denom > 0 else 0.0


def bias_correction(reps: np.ndarray, point: float) -> float:
    """BCa's z0: the normal quantile of the share of replicates below the point estimate.
    Half of the ties count as below: discrete statistics put mass on the estimate itself, and
    counting all of it (as scipy does) biases z0 for verdict data."""
    below = _fraction_below(reps, point)
    return float(ndtri(np.clip(below, 0.5 / len(reps), 1 - 0.5 / len(reps))))


def bca_levels(
    point: float, reps: np.ndarray, jackknife: np.ndarray, levels: np.ndarray
) -> np.ndarray:
    """The quantile levels of BCa's interval for any statistic with bootstrap replicates
    `reps` and `jackknife` values; `levels` where it cannot be computed (fewer than three
    jackknife values, or an infinite correction)."""
    if len(jackknife) < 3:
        return levels
    out = _bca_levels(bias_correction(reps, point), acceleration(jackknife), levels)
    return out if np.isfinite(out).all() else levels


def _fraction_below(reps: np.ndarray, x: float, pseudo: float = 0.0) -> float:
    """Share of replicates below x, ties counting half, with `pseudo` extra half-counts.

    Ties are equal up to rounding: the counts algorithm sums in a different order than the
    point estimate, so "equal" means within a few ulps of the values' scale.
    """
    tol = 1e-12 * max(1.0, abs(x), float(np.abs(reps).max()))
    tied = np.abs(reps - x) <= tol
    below = np.sum((reps < x) & ~tied)
    return float((below + 0.5 * tied.sum() + 0.5 * pseudo) / (len(reps) + pseudo))


def _bca_levels(z0: float, accel: float, levels: np.ndarray) -> np.ndarray:
    z = ndtri(levels)
    return ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))


def resample_mean(
    values: np.ndarray,
    *,
    resamples: int,
    seed: int,
    ci: float,
    strata: Any,
    clusters: Any,
    algorithm: Algorithm,
    workers: int | None,
) -> Boot:
    """Resample the units of `values` (clusters, within strata) and summarise the means."""
    if not 0 < ci < 1:
        raise ValueError(f"ci must be between 0 and 1, got {ci}")
    units = make_units(values, strata, clusters)
    reps, chosen = _replicates(units, resamples, seed, algorithm, workers)
    estimate = float(values.mean())
    alpha = (1 - ci) / 2
    if units.n < 2:
        # One unit resamples to itself: no spread to estimate, so no interval either.
        nan2 = (math.nan, math.nan)
        return Boot(estimate, reps, nan2, nan2, math.nan, math.nan, chosen, units)
    pct = np.quantile(reps, [alpha, 1 - alpha])
    z0 = bias_correction(reps, estimate)
    accel = _jackknife_accel(units)
    levels = _bca_levels(z0, accel, np.array([alpha, 1 - alpha]))
    bca = np.quantile(reps, levels) if np.isfinite(levels).all() else pct
    return Boot(
        estimate,
        reps,
        (float(pct[0]), float(pct[1])),
        (float(bca[0]), float(bca[1])),
        z0,
        accel,
        chosen,
        units,
    )


def percentile_p(replicates: np.ndarray) -> float:
    """Two-sided p-value for "the statistic is 0" from its bootstrap replicates: the smallest
    1 - ci at which the percentile interval would exclude 0 (one added to the counts)."""
    below = _fraction_below(np.asarray(replicates, dtype=float), 0.0, pseudo=1.0)
    return float(min(1.0, 2 * min(below, 1 - below)))


def p_value(boot: Boot, method: Method) -> float:
    """Two-sided p-value for "mean is 0", consistent with the reported interval.

    The p-value is the smallest 1 - ci at which the `method` interval would exclude 0, so
    `p_value < 1 - ci` agrees with "the interval excludes 0" up to quantile interpolation.
    One is added to the counts so that a finite bootstrap never reports p = 0.
    """
    if boot.units.n < 2:
        return math.nan
    below = _fraction_below(boot.replicates, 0.0, pseudo=1.0)
    if method == "percentile":
        return percentile_p(boot.replicates)
    # BCa maps level b to quantile Phi(z0 + (z0 + z_b) / (1 - a (z0 + z_b))); invert at 0.
    w = ndtri(below) - boot.z0
    z = w / (1 + boot.accel * w) - boot.z0 if 1 + boot.accel * w > 0 else ndtri(below)
    return float(min(1.0, 2 * min(ndtr(z), 1 - ndtr(z))))


@dataclass(frozen=True)
class PValue:
    """A two-sided p-value and where it came from (see the module docstring)."""

    value: float
    method: str  # "bootstrap", "sign" or "t" ("normal" in results of earlier releases)
    floor: float  # 1/(B+1): the smallest p-value the bootstrap alone can give
    floor_limited: bool  # `value` is that floor: the p-value is below it


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test of "wins and losses are equally likely" (ties left out)."""
    n = wins + losses
    if n == 0:
        return 1.0
    # Binomial(n, 1/2) is symmetric: both tails at least as extreme as the smaller count.
    return float(min(1.0, 2 * bdtr(min(wins, losses), n, 0.5)))


def _signs(units: Units) -> tuple[int, int] | None:
    """(wins, losses) when every unit is +c, -c or 0 with one c and one size, else None."""
    if units.sizes is not None:
        return None  # unequal clusters: the mean weighs units unequally, the sign test not
    means = units.means
    tol = 1e-12 * max(1.0, float(np.abs(means).max()))
    nonzero = means[np.abs(means) > tol]
    if len(nonzero) and np.ptp(np.abs(nonzero)) > tol:
        return None
    return int((nonzero > 0).sum()), int((nonzero < 0).sum())


def tested_p_value(boot: Boot, method: Method) -> PValue:
    """The p-value a pair is tested with: the bootstrap's where it resolves it, else the sign
    test or the normal approximation (module docstring)."""
    reps = boot.replicates
    floor = 1.0 / (len(reps) + 1)
    p = p_value(boot, method)
    if boot.units.n < 2 or boot.estimate == 0:
        return PValue(p, "bootstrap", floor, False)
    tol = 1e-12 * max(1.0, abs(boot.estimate), float(np.abs(reps).max()))
    across = reps <= tol if boot.estimate > 0 else reps >= -tol
    if across.any():
        return PValue(p, "bootstrap", floor, False)
    signs = _signs(boot.units)
    if signs is not None:
        return PValue(sign_test(*signs), "sign", floor, False)
    se, df = linearised_se(boot.units, boot.estimate)
    if df >= 1 and se > 0:
        # Far out the tail underflows to 0; a p-value is never 0, so the smallest positive
        # double stands for "smaller than anything printed".
        p = max(float(2 * stdtr(df, -abs(boot.estimate) / se)), float(np.finfo(np.float64).tiny))
        return PValue(p, "t", floor, False)
    return PValue(floor, "bootstrap", floor, True)


def linearised_se(units: Units, estimate: float) -> tuple[float, int]:
    """The standard error of the mean over units (a ratio of sums when units differ in size)
    with each stratum's variance on n_h - 1, and its degrees of freedom (units - strata with
    two or more units). The bootstrap's variance is the same sum on n_h."""
    sizes = units.sizes if units.sizes is not None else np.full(units.n, float(units.size))
    residuals = units.sums - estimate * sizes
    total, df = 0.0, 0
    for start, stop in units.bounds:
        n_h = stop - start
        if n_h < 2:
            continue
        part = residuals[start:stop]
        total += n_h / (n_h - 1) * float(((part - part.mean()) ** 2).sum())
        df += n_h - 1
    return math.sqrt(total) / float(sizes.sum()), df


def standard_error(boot: Boot) -> float:
    """Bootstrap standard error: the sd of the replicates (undefined for one unit)."""
    if boot.units.n < 2 or len(boot.replicates) < 2:
        return math.nan
    return float(boot.replicates.std(ddof=1))


def interval(boot: Boot, method: Method) -> tuple[float, float]:
    if method == "percentile":
        return boot.percentile
    if method == "bca":
        return boot.bca
    raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
