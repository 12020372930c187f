"""Many systems: paired bootstraps of every pair (or each against a baseline), Holm-adjusted
together, and the win-rate matrix."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

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
            "p_holm": jsonable(self.p_holm),
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
    res = paired_bootstrap(
        x,
        y,
        seed=seed,
        resamples=resamples,
        ci=ci,
        strata=None if strata is None else strata.loc[sub.index].to_numpy(),
        clusters=None if clusters is None else clusters.loc[sub.index].to_numpy(),
        method=method,
        workers=workers,
    )
    return res, int((scores[a].notna() | scores[b].notna()).sum() - both.sum())


def holm_family(
    done: Sequence[tuple[str, str, PairedBootstrapResult, int]], stratum: str | None = None
) -> list[PairComparison]:
    """One family of (a, b, result, unpaired items) as comparisons, Holm-adjusted together."""
    adjusted = holm([r.p_value for _, _, r, _ in done])
    return [
        PairComparison(a, b, r, float(p), u, stratum)
        for (a, b, r, u), p in zip(done, adjusted, strict=True)
    ]


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
    done = []
    for a, b in system_pairs(systems, baseline):
        got = bootstrap_pair(
            scores,
            a,
            b,
            seed=seed,
            resamples=resamples,
            ci=ci,
            strata=strata,
            clusters=clusters,
            method=method,
            workers=workers,
        )
        if got is None:
            raise ValueError(f"systems {a!r} and {b!r} share no scored item")
        done.append((a, b, *got))
    return AllPairsResult(tuple(holm_family(done)), win_rate_matrix(scores))


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
