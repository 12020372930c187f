"""Agreement statistics with cluster-bootstrap intervals, each returned as a typed `Estimate`.

Cohen's kappa, raw agreement and confusion matrices of paired labels; rank correlations and
mean signed bias of scores; MT-Bench's pairwise agreement. Krippendorff's alpha is
`calibration.alpha`; the `Estimate` type is `calibration.estimate`.

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

import numpy as np
import pandas as pd
import scipy.sparse as sp

from calibration.bootstrap_alpha import resample_index_chunks, resampled_sums
from calibration.estimate import Agreement, Estimate, check_resampling, from_resamples, undefined
from calibration.labels import JoinedLabels, join_labels, natural_key

Missing = Literal["error", "as_label"]
Weights = Literal["linear", "quadratic"] | None
_MISSING = "<missing>"


@dataclass(frozen=True)
class ConfusionMatrix:
    labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    """counts[i][j]: comparisons where the judge said labels[i] and the human labels[j]."""
    rows: str = "judge"
    columns: str = "human"

    def to_dict(self) -> dict:
        return asdict(self)


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


def _kappa_weights(k: int, weights: Weights, values: Sequence[float] | None) -> np.ndarray:
    """Disagreement weights between categories: by their `values` when given (a score scale),
    else by their positions."""
    v = np.arange(k, dtype=float) if values is None else np.asarray(values, dtype=float)
    if len(v) != k:
        raise ValueError(f"{len(v)} values for {k} categories")
    if weights is None:
        return 1.0 - np.eye(k)
    if weights == "linear":
        return np.abs(v[:, None] - v[None, :])
    if weights == "quadratic":
        return (v[:, None] - v[None, :]) ** 2
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def kappa_from_confusion(
    confusion: np.ndarray, weights: Weights = None, values: Sequence[float] | None = None
) -> np.ndarray:
    """Cohen's kappa (Cohen 1960; weighted: Cohen 1968) of each (K, K) confusion matrix in a
    stack: 1 - sum(w * observed) / sum(w * expected), expected from the margins. Weighted
    kappa weighs a disagreement by the distance of the categories' `values` (default: their
    positions 0..K-1)."""
    o = np.asarray(confusion, dtype=float)
    o = o.reshape((-1, *o.shape[-2:]))
    w = _kappa_weights(o.shape[-1], weights, values)
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
    """Cohen's kappa between two label sequences (categories: `labels`, default the sorted
    distinct values).

    `weights` linear or quadratic: a disagreement weighs |u - v| or (u - v)^2, where u, v are
    the label values when every label is a number (pass the full scale as `labels` to show
    unused levels; a 1-5 scale nobody scored 3 on keeps the distance 2 between 2 and 4), and
    their positions in `labels` otherwise (ordered text labels).

    Pairwise verdicts (a / b / tie) are labels like any other here: this function does not
    know which system is `a`, so it counts them in the orientation given. `calibrate` counts
    them in both (see `calibration.calibrate`)."""
    check_resampling(resamples, confidence)
    x, y, cats = _paired(a, b, missing, labels)
    if weights is not None and _MISSING in cats:
        raise ValueError("weighted kappa needs ordered labels; missing verdicts have no position")
    numeric = all(
        isinstance(c, int | float | np.integer | np.floating) and not isinstance(c, bool)
        for c in cats
    )
    unit, n = _cluster_index(clusters, len(x))
    k = len(cats)
    cols = sp.csr_matrix((np.ones(len(x)), (unit, x * k + y)), shape=(n, k * k))
    method = f"cohen kappa ({weights or 'unweighted'}); percentile cluster bootstrap over units"
    values = [float(c) for c in cats] if numeric else None
    point = kappa_from_confusion(np.asarray(cols.sum(axis=0)).reshape(k, k), weights, values)[0]
    if not np.isfinite(point):
        reason = "expected disagreement is zero (both sides use one and the same label)"
        return undefined(n, method, seed, confidence, reason)
    sums = resampled_sums(cols, resamples, np.random.default_rng(seed))
    boot = kappa_from_confusion(sums.reshape(-1, k, k), weights, values)
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
    check_resampling(resamples, confidence)
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
    from scipy import stats  # rank correlations only: not every run's cost

    check_resampling(resamples, confidence)
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
    from scipy import stats  # rank correlations only: not every run's cost

    check_resampling(resamples, confidence)
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
    check_resampling(resamples, confidence)
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
    check_resampling(resamples, confidence)
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
