"""Agreement statistics with cluster-bootstrap intervals, each returned as a typed `Estimate`.

Intervals are percentile intervals over `resamples` cluster-bootstrap resamples of units
(rows, or `clusters` when several observations belong to one unit), drawn from
`numpy.random.default_rng(seed)`. Every statistic that is a function of per-unit sums
(agreement counts, confusion matrices, Krippendorff's coincidences) is resampled as
multiplicities times per-unit sums: one matrix product per chunk of resamples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Literal

import krippendorff
import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats

from calibration.bootstrap_alpha import (
    LEVELS,
    AlphaUnits,
    Level,
    bootstrap_alpha,
    domain_for_level,
    resample_index_chunks,
    resampled_sums,
    units_from_value_counts,
)
from calibration.labels import JoinedLabels, join_labels, natural_key

Missing = Literal["error", "as_label"]
Weights = Literal["linear", "quadratic"] | None
_MISSING = "<missing>"


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


@dataclass(frozen=True)
class ConfusionMatrix:
    labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    """counts[i][j]: comparisons where the judge said labels[i] and the human labels[j]."""
    rows: str = "judge"
    columns: str = "human"

    def to_dict(self) -> dict:
        return asdict(self)


# --- interval plumbing ---------------------------------------------------------------------


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
    **counts: int,
) -> Estimate:
    """Point value with the percentile interval of its resample values (undefined resamples,
    NaN, are left out and counted)."""
    ok = boot[np.isfinite(boot)]
    lo = hi = None
    if ok.size:
        q = (1.0 - confidence) / 2.0
        lo, hi = (float(v) for v in np.quantile(ok, [q, 1.0 - q]))
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


def _check_common(resamples: int, confidence: float) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


# --- Krippendorff's alpha ------------------------------------------------------------------


def krippendorff_alpha(
    reliability_data: object,
    level: Level = "nominal",
    *,
    value_domain: Sequence | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Krippendorff's alpha of raters x units data (NaN / None = missing), point value from
    the `krippendorff` package, interval from a bootstrap over units.

    Strings are allowed for the nominal level, and for the ordinal level with an ordered
    `value_domain`. Data with no pairable unit, or whose pairable values are all equal, give
    `value=None` and a reason instead of an exception.
    """
    _check_common(resamples, confidence)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    arr = np.asarray(reliability_data, dtype=object)
    if arr.ndim != 2:
        raise ValueError(f"reliability data must be raters x units (2-D), got shape {arr.shape}")
    missing = pd.isna(arr)
    present = arr[~missing]
    domain = _domain(present, level, value_domain)
    codes = np.full(arr.shape, -1, dtype=np.int64)
    codes[~missing] = _encode(present, domain)
    n_units, k = arr.shape[1], len(domain)
    unit = np.broadcast_to(np.arange(n_units), arr.shape)[~missing]
    counts = np.zeros((n_units, k), dtype=np.int64)
    np.add.at(counts, (unit, codes[~missing]), 1)
    return alpha_from_counts(
        counts, domain, level, resamples=resamples, seed=seed, confidence=confidence
    )


def _domain(present: np.ndarray, level: Level, value_domain: Sequence | None) -> np.ndarray:
    if value_domain is not None:
        domain = np.asarray(value_domain, dtype=object)
        unknown = set(present.tolist()) - set(domain.tolist())
        if unknown:
            raise ValueError(f"values outside value_domain: {sorted(map(str, unknown))[:5]}")
        return domain
    numeric = all(isinstance(v, int | float | np.number) for v in present.tolist())
    if not numeric and level != "nominal":
        raise ValueError(f"{level} alpha of non-numeric labels needs an ordered value_domain")
    return np.unique(present.astype(float) if numeric else present.astype(str))


def _encode(values: np.ndarray, domain: np.ndarray) -> np.ndarray:
    index = {v: i for i, v in enumerate(domain.tolist())}
    try:
        return np.array([index[v] for v in values.tolist()], dtype=np.int64)
    except KeyError:
        as_str = {str(v): i for i, v in enumerate(domain.tolist())}
        return np.array([as_str[str(v)] for v in values.tolist()], dtype=np.int64)


def alpha_from_counts(
    counts: np.ndarray,
    domain: np.ndarray,
    level: Level,
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Alpha from per-unit value counts (`counts[u, c]` coders gave unit u value domain[c])."""
    counts = np.asarray(counts)
    numeric_domain = domain_for_level(domain, level)
    units = units_from_value_counts(counts, numeric_domain, level)
    est, _ = alpha_with_resamples(
        units,
        package_alpha(counts, numeric_domain, level),
        method=f"krippendorff alpha ({level}); percentile cluster bootstrap over units",
        seed=seed,
        resamples=resamples,
        confidence=confidence,
    )
    return est


def package_alpha(counts: np.ndarray, domain: np.ndarray, level: Level) -> float | None:
    """The package's value, or None where it would raise or divide by zero (we say why)."""
    pairable = counts[counts.sum(axis=1) >= 2]
    if len(pairable) == 0 or np.count_nonzero(pairable.sum(axis=0)) < 2:
        return None
    return float(
        krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)
    )


def alpha_with_resamples(
    units: AlphaUnits,
    point: float | None,
    *,
    method: str,
    seed: int,
    resamples: int,
    confidence: float,
    sums: np.ndarray | None = None,
) -> tuple[Estimate, np.ndarray | None]:
    """Alpha of prepared units and its resample values (kept for paired differences).

    `point`: the package's value when available; None falls back to the coincidence matrix
    (identical where both exist: tests check it). `sums`: resampled column sums drawn by
    the caller (shared with other statistics); drawn here from `seed` when None."""
    n = units.pairable_units
    if n == 0:
        reason = "no unit has values from two or more raters: alpha needs pairable values"
        return undefined(n, method, seed, confidence, reason), None
    value = units.alpha(units.totals())[0] if point is None else point
    if not np.isfinite(value):
        reason = (
            "every pairable value is the same: expected disagreement is zero, so alpha is "
            "undefined (perfect agreement on a constant cannot be told from chance)"
        )
        return undefined(n, method, seed, confidence, reason), None
    if sums is None:
        boot = bootstrap_alpha(units, resamples, np.random.default_rng(seed))
    else:
        boot = units.alpha(sums)
    return from_resamples(float(value), boot, n, method, seed, confidence), boot


# --- paired labels: kappa, raw agreement, confusion ----------------------------------------


def _paired(
    a: object, b: object, missing: Missing, labels: Sequence | None
) -> tuple[np.ndarray, np.ndarray, list]:
    """Encode two label sequences on one category list (sorted unless `labels` is given;
    a missing verdict, when allowed, is the last category)."""
    sa = pd.Series(list(np.asarray(a, dtype=object)), dtype=object)
    sb = pd.Series(list(np.asarray(b, dtype=object)), dtype=object)
    if len(sa) != len(sb):
        raise ValueError(f"a and b differ in length ({len(sa)} vs {len(sb)})")
    for name, s in (("a", sa), ("b", sb)):
        if missing == "error" and s.isna().any():
            pos = int(np.flatnonzero(s.isna().to_numpy())[0])
            raise ValueError(
                f"{name}[{pos}] is missing; pass missing='as_label' to count a missing "
                "verdict as its own label (never equal to a present one)"
            )
    present = pd.unique(pd.concat([sa.dropna(), sb.dropna()]))
    if labels is None:
        try:
            labels = sorted(present)
        except TypeError:  # mixed types: a stable, readable order
            labels = sorted(present, key=str)
    cats = list(labels) + ([_MISSING] if sa.isna().any() or sb.isna().any() else [])
    index = {v: i for i, v in enumerate(cats)}
    unknown = [v for v in present if v not in index]
    if unknown:
        raise ValueError(f"labels outside `labels`: {unknown[:5]}")
    codes = [s.map(index).where(s.notna(), index.get(_MISSING, -1)) for s in (sa, sb)]
    return codes[0].to_numpy(np.int64), codes[1].to_numpy(np.int64), cats


def _cluster_index(clusters: object | None, n: int) -> tuple[np.ndarray, int]:
    if clusters is None:
        return np.arange(n), n
    codes, uniques = pd.factorize(pd.Series(list(np.asarray(clusters, dtype=object))))
    if len(codes) != n:
        raise ValueError(f"clusters has {len(codes)} entries for {n} observations")
    return codes.astype(np.int64), len(uniques)


def _kappa_weights(k: int, weights: Weights) -> np.ndarray:
    i = np.arange(k)
    if weights is None:
        return 1.0 - np.eye(k)
    if weights == "linear":
        return np.abs(i[:, None] - i[None, :]).astype(float)
    if weights == "quadratic":
        return ((i[:, None] - i[None, :]) ** 2).astype(float)
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def kappa_from_confusion(confusion: np.ndarray, weights: Weights = None) -> np.ndarray:
    """Cohen's kappa (Cohen 1960; weighted: Cohen 1968) of each (K, K) confusion matrix in a
    stack: 1 - sum(w * observed) / sum(w * expected), expected from the margins."""
    o = np.asarray(confusion, dtype=float)
    o = o.reshape((-1, *o.shape[-2:]))
    w = _kappa_weights(o.shape[-1], weights)
    total = o.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        e = o.sum(axis=2)[:, :, None] * o.sum(axis=1)[:, None, :] / total[:, None, None]
        den = (w * e).sum(axis=(1, 2))
        out = 1.0 - (w * o).sum(axis=(1, 2)) / den
    out[~(den > 1e-12)] = np.nan
    return out


def cohen_kappa(
    a: object,
    b: object,
    weights: Weights = None,
    *,
    labels: Sequence | None = None,
    clusters: object | None = None,
    missing: Missing = "error",
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Cohen's kappa between two label sequences; `weights` linear or quadratic over the
    positions of `labels` (default: sorted distinct values), as in the weighted kappa."""
    _check_common(resamples, confidence)
    x, y, cats = _paired(a, b, missing, labels)
    if weights is not None and _MISSING in cats:
        raise ValueError("weighted kappa needs ordered labels; missing verdicts have no position")
    unit, n = _cluster_index(clusters, len(x))
    k = len(cats)
    cols = sp.csr_matrix((np.ones(len(x)), (unit, x * k + y)), shape=(n, k * k))
    method = f"cohen kappa ({weights or 'unweighted'}); percentile cluster bootstrap over units"
    point = kappa_from_confusion(np.asarray(cols.sum(axis=0)).reshape(k, k), weights)[0]
    if not np.isfinite(point):
        reason = "expected disagreement is zero (both sides use one and the same label)"
        return undefined(n, method, seed, confidence, reason)
    sums = resampled_sums(cols, resamples, np.random.default_rng(seed))
    boot = kappa_from_confusion(sums.reshape(-1, k, k), weights)
    return from_resamples(point, boot, n, method, seed, confidence)


def ratio_block(columns: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Per-unit [agree..., comparisons...] columns, in the order of `columns`."""
    return np.column_stack(
        [columns[c][0] for c in columns] + [columns[c][1] for c in columns]
    ).astype(float)


def ratio_estimates(
    columns: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    resamples: int,
    seed: int,
    confidence: float,
    method: Callable[[str], str],
    differences: dict[str, tuple[str, str]] | None = None,
    sums: np.ndarray | None = None,
) -> dict[str, Estimate]:
    """Shares sum(agree) / sum(comparisons) over units (columns: name -> per-unit arrays), all
    from ONE set of resamples, so that `differences` (name -> (first, second)) are paired.

    `sums`: resampled sums of `ratio_block(columns)` drawn by the caller (to share resamples
    with other statistics); drawn here from `seed` when None."""
    names = list(columns)
    block = ratio_block(columns)
    num, den = block[:, : len(names)], block[:, len(names) :]
    tot_num, tot_den = num.sum(axis=0), den.sum(axis=0)
    boot = resampled_sums(block, resamples, np.random.default_rng(seed)) if sums is None else sums
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = boot[:, : len(names)] / boot[:, len(names) :]
    out: dict[str, Estimate] = {}
    for j, name in enumerate(names):
        units = int((den[:, j] > 0).sum())
        if tot_den[j] == 0:
            out[name] = undefined(
                units, method(name), seed, confidence, "no comparisons", Agreement
            )
            continue
        counts = {"agree": round(float(tot_num[j])), "comparisons": round(float(tot_den[j]))}
        value = tot_num[j] / tot_den[j]
        out[name] = from_resamples(
            value, ratios[:, j], units, method(name), seed, confidence, Agreement, **counts
        )
    for name, (first, second) in (differences or {}).items():
        i, j = names.index(first), names.index(second)
        units = int(((den[:, i] > 0) | (den[:, j] > 0)).sum())
        if tot_den[i] == 0 or tot_den[j] == 0:
            out[name] = undefined(units, method(name), seed, confidence, "no comparisons")
            continue
        diff = tot_num[i] / tot_den[i] - tot_num[j] / tot_den[j]
        out[name] = from_resamples(
            diff, ratios[:, i] - ratios[:, j], units, method(name), seed, confidence
        )
    return out


def raw_agreement(
    a: object,
    b: object,
    *,
    clusters: object | None = None,
    missing: Missing = "error",
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Agreement:
    """Share of positions where a and b carry the same label. With `missing='as_label'` a
    missing verdict is a label of its own: wrong against a gold label, equal to another
    missing one (LLMBar's convention for positional agreement)."""
    _check_common(resamples, confidence)
    x, y, _ = _paired(a, b, missing, None)
    unit, n = _cluster_index(clusters, len(x))
    agree = np.bincount(unit, weights=(x == y).astype(float), minlength=n)
    total = np.bincount(unit, minlength=n).astype(float)
    est = ratio_estimates(
        {"raw": (agree, total)},
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        method=lambda _: "raw agreement; percentile cluster bootstrap over units",
    )
    return est["raw"]  # type: ignore[return-value]


def confusion_matrix(
    judge: object, human: object, *, labels: Sequence | None = None
) -> ConfusionMatrix:
    """Counts of (judge label, human label); missing verdicts are a `<missing>` row/column."""
    x, y, cats = _paired(judge, human, "as_label", labels)
    k = len(cats)
    counts = np.bincount(x * k + y, minlength=k * k).reshape(k, k)
    return ConfusionMatrix(tuple(map(str, cats)), tuple(tuple(int(v) for v in r) for r in counts))


# --- scores: correlations and bias ---------------------------------------------------------


def _numeric_pair(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {xa.shape} and {ya.shape}")
    bad = ~(np.isfinite(xa) & np.isfinite(ya))
    if bad.any():
        raise ValueError(f"position {int(np.flatnonzero(bad)[0])} is missing or not finite")
    return xa, ya


def _correlation_undefined(x: np.ndarray, y: np.ndarray) -> str | None:
    if len(x) < 3:
        return f"{len(x)} units: a rank correlation needs at least 3"
    for name, v in (("x", x), ("y", y)):
        if np.ptp(v) == 0:
            return f"{name} is constant: a correlation with a constant is undefined"
    return None


def _row_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))


def spearman(
    x: object, y: object, *, resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> Estimate:
    """Spearman's rho (midranks for ties), point value from scipy, bootstrap over units."""
    _check_common(resamples, confidence)
    xa, ya = _numeric_pair(x, y)
    method = "spearman rho (midranks); percentile bootstrap over units"
    reason = _correlation_undefined(xa, ya)
    if reason:
        return undefined(len(xa), method, seed, confidence, reason)
    point = stats.spearmanr(xa, ya).statistic
    # Ranking each resample row at once: the same draws as the weight-based statistics.
    boot = np.concatenate(
        [
            _row_pearson(stats.rankdata(xa[idx], axis=1), stats.rankdata(ya[idx], axis=1))
            for idx in resample_index_chunks(len(xa), resamples, np.random.default_rng(seed))
        ]
    )
    return from_resamples(point, boot, len(xa), method, seed, confidence)


def kendall_tau_b(
    x: object, y: object, *, resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> Estimate:
    """Kendall's tau-b (tie-corrected), point value from scipy, bootstrap over units."""
    _check_common(resamples, confidence)
    xa, ya = _numeric_pair(x, y)
    method = "kendall tau-b; percentile bootstrap over units"
    reason = _correlation_undefined(xa, ya)
    if reason:
        return undefined(len(xa), method, seed, confidence, reason)
    point = stats.kendalltau(xa, ya, variant="b").statistic
    boot: list[float] = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for idx in resample_index_chunks(len(xa), resamples, np.random.default_rng(seed)):
            # scipy is O(n log n) per resample; tau has no per-unit sum decomposition.
            boot.extend(stats.kendalltau(xa[i], ya[i], variant="b").statistic for i in idx)
    return from_resamples(point, np.asarray(boot, dtype=float), len(xa), method, seed, confidence)


def mean_signed_bias(
    judge: object,
    human: object,
    *,
    clusters: object | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Mean of judge - human over comparisons (positive: the judge scores higher)."""
    _check_common(resamples, confidence)
    j, h = _numeric_pair(judge, human)
    unit, n = _cluster_index(clusters, len(j))
    method = "mean signed bias (judge - human); percentile cluster bootstrap over units"
    if n == 0:
        return undefined(0, method, seed, confidence, "no comparisons")
    diff = np.bincount(unit, weights=j - h, minlength=n)
    count = np.bincount(unit, minlength=n).astype(float)
    boot = resampled_sums(np.column_stack([diff, count]), resamples, np.random.default_rng(seed))
    return from_resamples(
        diff.sum() / count.sum(), boot[:, 0] / boot[:, 1], n, method, seed, confidence
    )


# --- MT-Bench pairwise agreement (Zheng et al. 2023, Table 2) ------------------------------


@dataclass(frozen=True)
class PairwiseAgreement:
    """Judge-vs-human and human-vs-human agreement as the MT-Bench paper defines them.

    S1 counts ties as a label (random = 1/3); S2 drops every comparison in which either side
    is a tie (random = 1/2). Judge vs human: one comparison per human label. Human vs human:
    every unordered pair of human labels on the same key.
    """

    stratum: dict[str, str]
    keys: int
    judge_s1: Agreement
    judge_s2: Agreement
    human_s1: Agreement
    human_s2: Agreement
    by_stratum: tuple[PairwiseAgreement, ...] = ()

    def to_dict(self) -> dict:
        return asdict(self)


def pairwise_columns(
    joined: JoinedLabels, mask: np.ndarray | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-key (agree, comparisons): S1 (and S2 when `tie` is a category) judge vs human and
    human vs human, and the leave-one-human-out pair used by the human ceiling."""
    h = joined.human_counts if mask is None else joined.human_counts[mask]
    jc = joined.judge_code if mask is None else joined.judge_code[mask]
    m = h.sum(axis=1)
    hit = h[np.arange(len(h)), jc]
    pairs_same = (h * (h - 1) / 2).sum(axis=1)
    cols = {
        "judge_s1": (hit, m),
        "human_s1": (pairs_same, m * (m - 1) / 2),
        # LOHO: each human label in turn is replaced by the judge and compared with the other
        # labels: m (m - 1) comparisons per key, exactly as many as ordered human pairs.
        "judge_loho": ((m - 1) * hit, m * (m - 1)),
        "human_loho": (2 * pairs_same, m * (m - 1)),
    }
    if "tie" in joined.categories:
        tie = joined.categories.index("tie")
        decided = m - h[:, tie]
        judge_decided = jc != tie
        cols["judge_s2"] = (np.where(judge_decided, hit, 0), np.where(judge_decided, decided, 0))
        same_decided = pairs_same - h[:, tie] * (h[:, tie] - 1) / 2
        cols["human_s2"] = (same_decided, decided * (decided - 1) / 2)
    return cols


_S_NAMES = {
    "judge_s1": "MT-Bench S1 (ties count), judge vs each human label",
    "judge_s2": "MT-Bench S2 (ties dropped), judge vs each human label",
    "human_s1": "MT-Bench S1 (ties count), every pair of human labels on a key",
    "human_s2": "MT-Bench S2 (ties dropped), every pair of human labels on a key",
}


def pairwise_agreement(
    judge: pd.DataFrame,
    human: pd.DataFrame,
    *,
    by: str | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairwiseAgreement:
    """MT-Bench Table 2 agreement between a judge table and a human label table (formats in
    `calibration.labels`), overall and per value of the key-level column `by` (e.g. `turn`).
    Intervals: cluster bootstrap over keys (all labels of a key move together)."""
    _check_common(resamples, confidence)
    joined = join_labels(judge, human, kind="pairwise", strata=(by,) if by else ())

    def one(mask: np.ndarray, stratum: dict[str, str]) -> PairwiseAgreement:
        cols = pairwise_columns(joined, mask)
        est = ratio_estimates(
            {name: cols[name] for name in _S_NAMES},
            resamples=resamples,
            seed=seed,
            confidence=confidence,
            method=lambda name: f"{_S_NAMES[name]}; percentile cluster bootstrap over keys",
        )
        return PairwiseAgreement(stratum, int(mask.sum()), *(est[name] for name in _S_NAMES))  # type: ignore[arg-type]

    overall = one(np.ones(len(joined.keys), dtype=bool), {})
    if not by:
        return overall
    parts = tuple(
        one((joined.keys[by] == value).to_numpy(), {by: str(value)})
        for value in sorted(joined.keys[by].unique(), key=natural_key)
    )
    return replace(overall, by_stratum=parts)
