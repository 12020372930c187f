"""Paired comparison of systems' per-item scores: bootstrap intervals, p-values, wins/losses/ties.

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
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, is_dataclass
from itertools import pairwise
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

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


def _jsonable(value: Any) -> Any:
    """Plain JSON types for results: NaN and inf become None, numpy scalars Python numbers."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields(value) if f.repr}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, pd.DataFrame):
        return {str(i): _jsonable(row.to_dict()) for i, row in value.iterrows()}
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def default_workers() -> int:
    """Threads for the gather algorithm: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# --------------------------------------------------------------------------- units


@dataclass(frozen=True)
class _Units:
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


def _as_values(values: Any, what: str) -> np.ndarray:
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


def _make_units(values: np.ndarray, strata: Any = None, clusters: Any = None) -> _Units:
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
        return _Units(sums, sizes, size, ((0, len(sums)),), n)
    order = np.argsort(unit_strata, kind="stable")
    edges = np.concatenate([[0], np.cumsum(np.bincount(unit_strata[order]))])
    bounds = tuple((int(a), int(b)) for a, b in pairwise(edges) if b > a)
    return _Units(sums[order], None if sizes is None else sizes[order], size, bounds, n)


# --------------------------------------------------------------------------- resampling


# Per stratum: distinct unit sums, their sizes, and how many units take each.
_Atoms = list[tuple[np.ndarray, np.ndarray, np.ndarray]]


def _atoms(units: _Units) -> _Atoms:
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


def _counts_replicates(units: _Units, atoms: _Atoms, resamples: int, seed: int) -> np.ndarray:
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


def _gather_rows(units: _Units, rng: np.random.Generator, rows: int) -> np.ndarray:
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


def _gather_replicates(units: _Units, resamples: int, seed: int, workers: int) -> np.ndarray:
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
    units: _Units, resamples: int, seed: int, algorithm: Algorithm, workers: int | None
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
class _Boot:
    estimate: float
    replicates: np.ndarray
    percentile: tuple[float, float]
    bca: tuple[float, float]
    z0: float
    accel: float
    algorithm: str
    units: _Units


def _jackknife_accel(units: _Units) -> float:
    """BCa acceleration from leave-one-unit-out means (closed form for a ratio of sums)."""
    if units.n < 3:
        return 0.0
    sizes = units.sizes if units.sizes is not None else np.full(units.n, float(units.size))
    theta = (units.sums.sum() - units.sums) / (sizes.sum() - sizes)
    dev = theta.mean() - theta
    denom = 6.0 * (dev @ dev) ** 1.5
    return float((dev**3).sum() / denom) if denom > 0 else 0.0


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


def _bootstrap(
    values: np.ndarray,
    *,
    resamples: int,
    seed: int,
    ci: float,
    strata: Any,
    clusters: Any,
    algorithm: Algorithm,
    workers: int | None,
) -> _Boot:
    if not 0 < ci < 1:
        raise ValueError(f"ci must be between 0 and 1, got {ci}")
    units = _make_units(values, strata, clusters)
    reps, chosen = _replicates(units, resamples, seed, algorithm, workers)
    estimate = float(values.mean())
    alpha = (1 - ci) / 2
    if units.n < 2:
        # One unit resamples to itself: no spread to estimate, so no interval either.
        nan2 = (math.nan, math.nan)
        return _Boot(estimate, reps, nan2, nan2, math.nan, math.nan, chosen, units)
    pct = np.quantile(reps, [alpha, 1 - alpha])
    # Half of the ties count as below: discrete statistics put mass on the estimate itself,
    # and counting all of it (as scipy does) biases z0 for verdict data.
    below = _fraction_below(reps, estimate)
    z0 = float(ndtri(np.clip(below, 0.5 / len(reps), 1 - 0.5 / len(reps))))
    accel = _jackknife_accel(units)
    levels = _bca_levels(z0, accel, np.array([alpha, 1 - alpha]))
    bca = np.quantile(reps, levels) if np.isfinite(levels).all() else pct
    return _Boot(
        estimate,
        reps,
        (float(pct[0]), float(pct[1])),
        (float(bca[0]), float(bca[1])),
        z0,
        accel,
        chosen,
        units,
    )


def _p_value(boot: _Boot, method: Method) -> float:
    """Two-sided p-value for "mean is 0", consistent with the reported interval.

    The p-value is the smallest 1 - ci at which the `method` interval would exclude 0, so
    `p_value < 1 - ci` agrees with "the interval excludes 0" up to quantile interpolation.
    One is added to the counts so that a finite bootstrap never reports p = 0.
    """
    if boot.units.n < 2:
        return math.nan
    below = _fraction_below(boot.replicates, 0.0, pseudo=1.0)
    if method == "percentile":
        return float(min(1.0, 2 * min(below, 1 - below)))
    # BCa maps level b to quantile Phi(z0 + (z0 + z_b) / (1 - a (z0 + z_b))); invert at 0.
    w = ndtri(below) - boot.z0
    z = w / (1 + boot.accel * w) - boot.z0 if 1 + boot.accel * w > 0 else ndtri(below)
    return float(min(1.0, 2 * min(ndtr(z), 1 - ndtr(z))))


def _boot_se(boot: _Boot) -> float:
    """Bootstrap standard error: the sd of the replicates (undefined for one unit)."""
    if boot.units.n < 2 or len(boot.replicates) < 2:
        return math.nan
    return float(boot.replicates.std(ddof=1))


def _interval(boot: _Boot, method: Method) -> tuple[float, float]:
    if method == "percentile":
        return boot.percentile
    if method == "bca":
        return boot.bca
    raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class PairedBootstrapResult:
    """Mean of per-item differences a - b with a bootstrap interval over items (or clusters).

    `wins`/`losses`/`ties` count units (items, or clusters when given) whose mean difference is
    positive/negative/zero; `n` counts rows. `ci_low`/`ci_high` are the `method` interval; both
    the percentile and BCa intervals are kept. `p_value` is two-sided for "no difference".
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
    n: int
    n_units: int
    n_strata: int
    resamples: int
    seed: int
    algorithm: str
    replicates: np.ndarray = field(repr=False, compare=False)

    @property
    def distinguishable(self) -> bool:
        """True when the interval excludes 0: the sample tells the two systems apart."""
        return self.ci_low > 0 or self.ci_high < 0

    def to_dict(self) -> dict[str, Any]:
        return {**_jsonable(self), "distinguishable": self.distinguishable}


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
        return _jsonable(self)


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
        return _jsonable(self)


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
    arr = _as_values(values, "values")
    boot = _bootstrap(
        arr,
        resamples=resamples,
        seed=seed,
        ci=ci,
        strata=strata,
        clusters=clusters,
        algorithm=algorithm,
        workers=workers,
    )
    lo, hi = _interval(boot, method)
    return MeanResult(
        mean=boot.estimate,
        ci_low=lo,
        ci_high=hi,
        ci=ci,
        method=method,
        se=_boot_se(boot),
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
    a = _as_values(scores_a, "scores_a")
    b = _as_values(scores_b, "scores_b")
    if a.shape != b.shape:
        raise ValueError(
            f"scores_a has {len(a)} rows and scores_b {len(b)}: score the same items in the "
            "same order"
        )
    diff = a - b
    boot = _bootstrap(
        diff,
        resamples=resamples,
        seed=seed,
        ci=ci,
        strata=strata,
        clusters=clusters,
        algorithm=algorithm,
        workers=workers,
    )
    lo, hi = _interval(boot, method)
    unit = boot.units.means
    return PairedBootstrapResult(
        mean_diff=boot.estimate,
        ci_low=lo,
        ci_high=hi,
        ci=ci,
        method=method,
        percentile=boot.percentile,
        bca=boot.bca,
        se=_boot_se(boot),
        wins=int((unit > 0).sum()),
        losses=int((unit < 0).sum()),
        ties=int((unit == 0).sum()),
        p_value=_p_value(boot, method),
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
    s = _as_values(scores, "scores")
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
    unit = _make_units(s, None, clusters).means
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


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values, in the input order."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


# --------------------------------------------------------------------------- many systems


@dataclass(frozen=True)
class PairComparison:
    """One pair of systems: `result` is for a - b on the items both have."""

    a: str
    b: str
    result: PairedBootstrapResult
    p_holm: float
    unpaired_items: int  # items scored for only one of the two, left out of this pair
    stratum: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "stratum": self.stratum,
            **self.result.to_dict(),
            "p_holm": _jsonable(self.p_holm),
            "unpaired_items": self.unpaired_items,
        }


@dataclass(frozen=True)
class AllPairsResult:
    """Every pair of systems, Holm-adjusted across the pairs, and the win-rate matrix."""

    comparisons: tuple[PairComparison, ...]
    win_rates: pd.DataFrame = field(compare=False)

    def table(self) -> pd.DataFrame:
        return pd.DataFrame([c.to_dict() for c in self.comparisons])

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparisons": [c.to_dict() for c in self.comparisons],
            "win_rates": _jsonable(self.win_rates),
        }


def _pairs(systems: Sequence[str], baseline: str | None) -> Iterator[tuple[str, str]]:
    """All pairs (a before b in `systems`), or every other system against the baseline."""
    if baseline is None:
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                yield a, b
    else:
        for a in systems:
            if a != baseline:
                yield a, baseline


def pair_comparisons(
    scores: pd.DataFrame,
    pairs: Sequence[tuple[str, str]],
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    strata: pd.Series | None = None,
    clusters: pd.Series | None = None,
    method: Method = "percentile",
    workers: int | None = None,
    stratum: str | None = None,
) -> tuple[list[PairComparison], list[tuple[str, str]]]:
    """Paired bootstrap of the given pairs of columns of a wide table, Holm-adjusted together.

    Returns the comparisons and the pairs skipped because the two systems share no item.
    """
    done: list[tuple[str, str, PairedBootstrapResult, int]] = []
    skipped: list[tuple[str, str]] = []
    for a, b in pairs:
        both = scores[a].notna() & scores[b].notna()
        if not both.any():
            skipped.append((a, b))
            continue
        sub = scores.loc[both]
        res = paired_bootstrap(
            sub[a].to_numpy(),
            sub[b].to_numpy(),
            seed=seed,
            resamples=resamples,
            ci=ci,
            strata=None if strata is None else strata.loc[sub.index].to_numpy(),
            clusters=None if clusters is None else clusters.loc[sub.index].to_numpy(),
            method=method,
            workers=workers,
        )
        unpaired = int((scores[a].notna() | scores[b].notna()).sum() - both.sum())
        done.append((a, b, res, unpaired))
    adjusted = holm([r.p_value for _, _, r, _ in done])
    return [
        PairComparison(a, b, r, float(p), u, stratum)
        for (a, b, r, u), p in zip(done, adjusted, strict=True)
    ], skipped


def all_pairs(
    scores: pd.DataFrame,
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    baseline: str | None = None,
    strata: pd.Series | None = None,
    clusters: pd.Series | None = None,
    method: Method = "percentile",
    workers: int | None = None,
) -> AllPairsResult:
    """Paired bootstrap of every pair (or every system against `baseline`), Holm-adjusted.

    `scores` is wide: one row per item (the index), one column per system, NaN where a system
    has no score; each pair uses the items both systems have and says how many it left out.
    `strata`/`clusters` are Series aligned on the same index. Every pair uses the same `seed`,
    so pairs on the same items see the same resampled items.
    """
    systems = [str(c) for c in scores.columns]
    if baseline is not None and baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not among the systems: {', '.join(systems)}")
    comparisons, skipped = pair_comparisons(
        scores,
        list(_pairs(systems, baseline)),
        seed=seed,
        resamples=resamples,
        ci=ci,
        strata=strata,
        clusters=clusters,
        method=method,
        workers=workers,
    )
    if skipped:
        a, b = skipped[0]
        raise ValueError(f"systems {a!r} and {b!r} share no scored item")
    return AllPairsResult(tuple(comparisons), win_rate_matrix(scores))


def win_rate_matrix(scores: pd.DataFrame) -> pd.DataFrame:
    """Row system's win rate against column system over items both have (ties count half)."""
    values = scores.to_numpy(dtype=np.float64)
    present = ~np.isnan(values)
    k = values.shape[1]
    matrix = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            both = present[:, i] & present[:, j]
            if both.any():
                d = np.sign(values[both, i] - values[both, j])
                matrix[i, j] = (1 + d.mean()) / 2
    cols = [str(c) for c in scores.columns]
    return pd.DataFrame(matrix, index=pd.Index(cols, name="system"), columns=cols)
