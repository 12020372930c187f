"""Many systems: paired bootstraps of every pair (or each against a baseline), Holm-adjusted
together, and the win-rate matrix.

"Told apart" has one meaning: the pair's Holm-adjusted p-value is below 1 - ci, the level of
the reported intervals (`PairComparison.told_apart`); ranks come from the same tests
(`calibration.ranks`). A pair whose p-value is the bootstrap's floor 1/(B+1) while
floor x pairs > level / 2 is bootstrapped again with `family_resamples` resamples, so that the
floor never decides Holm's answer (see `calibration.resampling` for which p-value is used).

A pair's result does not depend on what the systems are called or on the order of the rows:
rows are resampled in the order of their (stratum, cluster, item) labels, and the difference in
the orientation its data picks, turned round afterwards (`paired_difference`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import bdtr, ndtri

from calibration.bootstrap import PairedBootstrapResult, paired_bootstrap
from calibration.jsonable import jsonable
from calibration.resampling import Method


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


def family_resamples(pairs: int, level: float) -> int:
    """The fewest resamples B whose p-value floor 1/(B+1), times the number of pairs, is at most
    half the level: a pair at the floor is then told apart at whichever step of Holm's."""
    return max(1, math.ceil(2 * pairs / level) - 1)


def items_to_tell_apart(
    *, diff: float, se: float, n: int, wins: int, losses: int, p_method: str, level: float
) -> tuple[int, str] | None:
    """The items at which the same difference, with the same spread per item, would give a
    p-value below `level`, and the test that count is for ("normal" or "sign"); None when no
    number of items would (no difference, or as many wins as losses).

    The same kind of test as the p-value: where it is the sign test, or the interval has no
    width (every unit the same difference: the bootstrap SE is 0), the exact sign test with
    wins and losses in the same proportion, the fewest non-tied units k with
    2 P(Binomial(k, 1/2) <= the losses' share of k) < level, scaled to items by
    n / (wins + losses); else the normal approximation with the bootstrap SE, which shrinks as
    1/sqrt(n): n (z se / |diff|)^2 with z = Phi^-1(1 - level / 2).
    """
    z = float(ndtri(1 - level / 2))
    if p_method == "sign" or not (math.isfinite(se) and se > 0):
        if wins == losses:
            return None
        share = min(wins, losses) / (wins + losses)
        # The normal approximation to the sign test says where to look; the exact count is
        # within a small factor of it (searched exactly below a few million units).
        rough = (z / 2 / (0.5 - share)) ** 2
        k = np.arange(1, int(4 * rough) + 64)
        if len(k) > 1 << 22:
            return math.ceil(rough * n / (wins + losses)), "sign"
        below = np.flatnonzero(2 * bdtr(np.floor(share * k + 1e-9), k, 0.5) < level)
        return math.ceil(int(k[below[0]]) * n / (wins + losses)), "sign"
    if diff == 0:
        return None
    return math.ceil(n * (z * se / abs(diff)) ** 2), "normal"


@dataclass(frozen=True)
class PairComparison:
    """One pair of systems: `result` is for a - b on the items both have."""

    a: str
    b: str
    result: PairedBootstrapResult
    p_holm: float
    unpaired_items: int  # items scored for only one of the two, left out of this pair
    stratum: str | None = None
    p_holm_bound: bool = False
    """`p_holm` is an upper bound: Holm's value here is set by a pair whose p-value is the
    bootstrap's floor (this one, or one before it that it was raised to match)."""

    @property
    def told_apart(self) -> bool:
        """Holm-adjusted p-value below 1 - ci: the one meaning of "told apart"."""
        return bool(self.p_holm < 1 - self.result.ci)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "stratum": self.stratum,
            **self.result.to_dict(),
            "p_holm": jsonable(self.p_holm),
            "p_holm_bound": self.p_holm_bound,
            "told_apart": self.told_apart,
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
            "win_rates": jsonable(self.win_rates),
        }


def system_pairs(systems: Sequence[str], baseline: str | None) -> Iterator[tuple[str, str]]:
    """All pairs (a before b in `systems`), or every other system against the baseline."""
    if baseline is None:
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                yield a, b
    else:
        for a in systems:
            if a != baseline:
                yield a, baseline


def canonical_codes(labels: Any) -> np.ndarray:
    """Codes 0..k-1 for the labels, numbered in the order of their text: the same numbering
    whatever order the rows came in, so resampling by code draws the same units."""
    return pd.factorize(pd.Series(np.asarray(labels)).astype(str), sort=True)[0]


def canonical_rows(*labels: Any) -> np.ndarray:
    """Row order sorted by the labels (first label first), compared as text."""
    keys = [canonical_codes(x) for x in labels]
    return np.lexsort(keys[::-1])


def paired_difference(
    x: np.ndarray,
    y: np.ndarray,
    *,
    items: Any,
    strata: Any = None,
    clusters: Any = None,
    **kwargs: Any,
) -> PairedBootstrapResult:
    """`paired_bootstrap` of x - y, independent of the systems' names and the rows' order.

    Rows are put in the order of their (stratum, cluster, item) labels, so the same units are
    drawn whatever order the table came in; the difference is resampled with its sum positive
    (if it is 0: its first nonzero unit sum), so a - b and b - a are the same draws turned round.
    """
    order = canonical_rows(*(v for v in (strata, clusters, items) if v is not None))
    x, y = np.asarray(x, dtype=np.float64)[order], np.asarray(y, dtype=np.float64)[order]
    strata = None if strata is None else np.asarray(strata)[order]
    clusters = None if clusters is None else np.asarray(clusters)[order]
    d = x - y
    sums = d if clusters is None else np.bincount(pd.factorize(clusters)[0], weights=d)
    total = float(sums.sum())
    nonzero = np.flatnonzero(sums)
    flip = total < 0 or (total == 0 and len(nonzero) > 0 and sums[nonzero[0]] < 0)
    first, second = (y, x) if flip else (x, y)
    res = paired_bootstrap(first, second, strata=strata, clusters=clusters, **kwargs)
    return res.negated() if flip else res


def bootstrap_pair(
    scores: pd.DataFrame,
    a: str,
    b: str,
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    strata: pd.Series | None = None,
    clusters: pd.Series | None = None,
    method: Method = "percentile",
    workers: int | None = None,
    wins: bool = False,
) -> tuple[PairedBootstrapResult, int] | None:
    """Paired bootstrap of columns a - b of a wide table on the items both have, and the number
    of items only one of them has; None when they share no item.

    `wins`: resample a's wins instead (1 win, 0.5 tie, 0 loss against 0.5), so the result is
    a's win rate - 1/2. `strata`/`clusters` are Series on the table's index.
    """
    both = scores[a].notna() & scores[b].notna()
    if not both.any():
        return None
    sub = scores.loc[both]
    x, y = sub[a].to_numpy(), sub[b].to_numpy()
    if wins:
        x, y = (1 + np.sign(x - y)) / 2, np.full(len(x), 0.5)
    res = paired_difference(
        x,
        y,
        items=sub.index.to_numpy(),
        seed=seed,
        resamples=resamples,
        ci=ci,
        strata=None if strata is None else strata.loc[sub.index].to_numpy(),
        clusters=None if clusters is None else clusters.loc[sub.index].to_numpy(),
        method=method,
        workers=workers,
    )
    return res, int((scores[a].notna() | scores[b].notna()).sum() - both.sum())


Done = tuple[str, str, PairedBootstrapResult, int]
Rerun = Callable[[str, str, int], "tuple[PairedBootstrapResult, int] | None"]


def holm_family(
    done: Sequence[Done], stratum: str | None = None, rerun: Rerun | None = None
) -> list[PairComparison]:
    """One family of (a, b, result, unpaired items) as comparisons, Holm-adjusted together.

    `rerun(a, b, resamples)` bootstraps a pair again: pairs whose p-value is the bootstrap's
    floor get `family_resamples` resamples when floor x pairs > level / 2.
    """
    sized = []
    for a, b, r, u in done:
        need = family_resamples(len(done), 1 - r.ci)
        got = rerun(a, b, need) if rerun and r.p_floor_limited and need > r.resamples else None
        sized.append((a, b, *got) if got is not None else (a, b, r, u))
    p_values = [r.p_value for _, _, r, _ in sized]
    adjusted = holm(p_values)
    bounds = _holm_bounds(p_values, [r.p_floor_limited for _, _, r, _ in sized])
    return [
        PairComparison(a, b, r, float(p), u, stratum, bool(bound))
        for (a, b, r, u), p, bound in zip(sized, adjusted, bounds, strict=True)
    ]


def _holm_bounds(p_values: Sequence[float], limited: Sequence[bool]) -> np.ndarray:
    """Which Holm-adjusted values are upper bounds: Holm's value is the largest (pairs - j) p
    over the steps j up to the pair's own, and it is a bound when that largest term comes from
    a p-value that is itself one (the bootstrap's floor). A value capped at 1 is not."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.zeros(m, dtype=bool)
    top, from_floor = -1.0, False
    for step, k in enumerate(order):
        if stepped[step] > top:
            top, from_floor = stepped[step], bool(limited[k])
        elif stepped[step] == top:
            from_floor = from_floor or bool(limited[k])
        out[k] = from_floor and top < 1.0
    return out


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

    def run(a: str, b: str, n: int) -> tuple[PairedBootstrapResult, int] | None:
        return bootstrap_pair(
            scores,
            a,
            b,
            seed=seed,
            resamples=n,
            ci=ci,
            strata=strata,
            clusters=clusters,
            method=method,
            workers=workers,
        )

    done = []
    for a, b in system_pairs(systems, baseline):
        got = run(a, b, resamples)
        if got is None:
            raise ValueError(f"systems {a!r} and {b!r} share no scored item")
        done.append((a, b, *got))
    return AllPairsResult(tuple(holm_family(done, rerun=run)), win_rate_matrix(scores))


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
