"""Krippendorff's alpha from per-unit coincidence contributions, and a fast cluster bootstrap.

Krippendorff's coincidence matrix is a sum over units, and alpha depends on the data only
through that matrix (for the ordinal level, through its marginals as well). A bootstrap
resample of units is therefore a vector of unit multiplicities `w`, and the resampled
coincidence matrix is `w @ U`, where row `u` of `U` is unit u's contribution. One matrix
product per chunk of resamples replaces one `krippendorff.alpha` call per resample.

Columns of `U` (K = number of values in the domain):

* nominal / interval / ratio: `[d_u, m_u1 .. m_uK]`, where `d_u = sum_ck o_uck * delta_ck` is
  the unit's observed-disagreement mass and `m_uc = sum_k o_uck` its pairable values;
* ordinal: the K*K flattened coincidences `o_uck`, because the ordinal distance depends on
  the (resampled) marginals and cannot be folded into a per-unit scalar.

Expected disagreement needs only the marginals: `E = sum_ck n_c n_k delta_ck`, and
`alpha = 1 - (n - 1) * sum(o * delta) / E`, which is the package's `1 - D_o / D_e`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")

# ~5e5 cells per chunk keeps the index matrix in cache: measured 3-4x faster than 4e6.
_CHUNK_CELLS = 500_000


@dataclass(frozen=True)
class AlphaUnits:
    """Each unit's contribution to Krippendorff's coincidence matrix, ready to be resampled."""

    level: Level
    domain: np.ndarray
    """The sorted values (numeric) or category codes the coincidences are indexed by."""
    columns: np.ndarray | sp.csr_matrix
    """One row per unit; layout in the module docstring."""
    pairable_units: int
    """Units with at least two pairable values (the others contribute nothing)."""

    @property
    def n_units(self) -> int:
        return int(self.columns.shape[0])

    def totals(self) -> np.ndarray:
        """Column sums over all units: the point estimate's input, shape (1, p)."""
        return np.asarray(self.columns.sum(axis=0)).reshape(1, -1)

    def alpha(self, sums: np.ndarray) -> np.ndarray:
        """Alpha for each row of summed columns (NaN where expected disagreement is zero)."""
        k = len(self.domain)
        sums = np.atleast_2d(np.asarray(sums, dtype=float))
        step = max(1, _CHUNK_CELLS // (k * k))
        if self.level == "ordinal" and len(sums) > step:
            # The ordinal distances are (rows, K, K): bound their memory.
            return np.concatenate(
                [self.alpha(sums[i : i + step]) for i in range(0, len(sums), step)]
            )
        if self.level == "ordinal":
            o = sums.reshape(-1, k, k)
            marg = o.sum(axis=2)
            delta = _ordinal_delta(marg)
            observed = np.einsum("bck,bck->b", o, delta)
            expected = np.einsum("bc,bck,bk->b", marg, delta, marg)
        else:
            observed = sums[:, 0]
            marg = sums[:, 1:]
            expected = _expected(marg, self.level, self.domain)
        n = marg.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = 1.0 - (n - 1.0) * observed / expected
        # Expected disagreement of (numerically) zero: every pairable value equal, undefined.
        out[~(expected > 1e-12 * np.maximum(n, 1.0) ** 2)] = np.nan
        return out


def jackknife_alpha(units: AlphaUnits) -> np.ndarray:
    """Alpha with each unit left out in turn (NaN where undefined): a row subtracted from the
    totals, a chunk of units at a time, for BCa's acceleration."""
    totals = units.totals()
    k = len(units.domain)
    step = max(
        1, _CHUNK_CELLS // max(1, units.columns.shape[1] * (k if units.level == "ordinal" else 1))
    )
    out = []
    for start in range(0, units.n_units, step):
        block = units.columns[start : start + step]
        dense = block.toarray() if sp.issparse(block) else np.asarray(block, dtype=float)
        out.append(units.alpha(totals - dense))
    return np.concatenate(out) if out else np.array([])


def domain_for_level(domain: np.ndarray, level: Level) -> np.ndarray:
    """The numbers alpha sees: codes 0..K-1 where only identity (nominal) or rank (ordinal)
    matters, so string labels work; the values themselves for interval and ratio."""
    if level in ("nominal", "ordinal"):
        return np.arange(len(domain))
    return np.asarray(domain, dtype=float)


def _delta(domain: np.ndarray, level: Level) -> np.ndarray:
    """The fixed distance matrix for nominal, interval and ratio (the package's metrics)."""
    v = domain.astype(float)
    if level == "nominal":
        return 1.0 - np.eye(len(v))
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        s = v[:, None] + v[None, :]
        d = np.divide(v[:, None] - v[None, :], s, out=np.zeros_like(s), where=s != 0)
        return d**2
    raise ValueError(f"no fixed distance for level {level!r}")


def _ordinal_delta(marg: np.ndarray) -> np.ndarray:
    """Ordinal distances per row of marginals, shape (B, K, K), as in Krippendorff (2011):
    (sum of n_g for g between c and k, inclusive, minus (n_c + n_k) / 2) squared."""
    k = marg.shape[1]
    cum = np.concatenate([np.zeros((marg.shape[0], 1)), np.cumsum(marg, axis=1)], axis=1)
    idx = np.arange(k)
    lo = np.minimum(idx[:, None], idx[None, :])
    hi = np.maximum(idx[:, None], idx[None, :])
    between = cum[:, hi + 1] - cum[:, lo]
    return (between - (marg[:, :, None] + marg[:, None, :]) / 2.0) ** 2


def _expected(marg: np.ndarray, level: Level, domain: np.ndarray) -> np.ndarray:
    """sum_ck n_c n_k delta_ck per row, with closed forms where they exist (O(K) not O(K^2))."""
    n = marg.sum(axis=1)
    if level == "nominal":
        return n**2 - (marg**2).sum(axis=1)
    v = domain.astype(float)
    if level == "interval":
        return 2.0 * (n * (marg @ v**2) - (marg @ v) ** 2)
    return np.einsum("bc,ck,bk->b", marg, _delta(domain, level), marg)


def units_from_value_counts(
    counts: np.ndarray, domain: np.ndarray, level: Level, *, mirror: np.ndarray | None = None
) -> AlphaUnits:
    """Standard Krippendorff units: `counts[u, c]` = how many coders gave unit u value c.

    A unit with m >= 2 values contributes (c c^T - diag(c)) / (m - 1); others nothing.
    `mirror` (a permutation of the values, e.g. a <-> b of pairwise labels): each unit also
    contributes its mirror image, in its own row, so the two are resampled together.
    """
    if mirror is not None:
        units = units_from_value_counts(counts, domain, level)
        image = units_from_value_counts(np.asarray(counts)[:, mirror], domain, level)
        return AlphaUnits(level, units.domain, units.columns + image.columns, units.pairable_units)
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1)
    pairable = m >= 2
    scale = np.divide(1.0, m - 1.0, out=np.zeros_like(m), where=pairable)
    if level == "ordinal":
        k = counts.shape[1]
        rows = []
        # Chunked so n * K^2 never materialises at once for wide domains.
        step = max(1, _CHUNK_CELLS // max(k * k, 1))
        for start in range(0, len(counts), step):
            c = counts[start : start + step]
            o = c[:, :, None] * c[:, None, :]
            o[:, np.arange(k), np.arange(k)] -= c
            o *= scale[start : start + step, None, None]
            rows.append(sp.csr_matrix(o.reshape(len(c), k * k)))
        columns: np.ndarray | sp.csr_matrix = sp.vstack(rows, format="csr")
    else:
        d = _observed_mass(counts, domain, level) * scale
        columns = np.column_stack([d, counts * pairable[:, None]])
    return AlphaUnits(level, np.asarray(domain), columns, int(pairable.sum()))


def _observed_mass(counts: np.ndarray, domain: np.ndarray, level: Level) -> np.ndarray:
    """c^T delta c per unit (delta's diagonal is zero, so the -diag(c) term drops out)."""
    m = counts.sum(axis=1)
    if level == "nominal":
        return m**2 - (counts**2).sum(axis=1)
    v = domain.astype(float)
    if level == "interval":
        return 2.0 * (m * (counts @ v**2) - (counts @ v) ** 2)
    return ((counts @ _delta(domain, level)) * counts).sum(axis=1)


def units_from_pairs(
    unit: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    weight: np.ndarray,
    n_units: int,
    domain: np.ndarray,
    level: Level,
) -> AlphaUnits:
    """Units made of two-coder comparisons: comparison i puts `weight[i]` on o[x_i, y_i] and on
    o[y_i, x_i] of unit `unit[i]` (x, y are indices into `domain`).

    This is how a judge is compared with several human labels of one unit: one comparison
    per human label, all of a unit's comparisons resampled together.
    """
    k = len(domain)
    unit, x, y = (np.asarray(a, dtype=np.int64) for a in (unit, x, y))
    weight = np.asarray(weight, dtype=float)
    if level == "ordinal":
        flat = np.concatenate([x * k + y, y * k + x])
        columns: np.ndarray | sp.csr_matrix = sp.csr_matrix(
            (np.concatenate([weight, weight]), (np.concatenate([unit, unit]), flat)),
            shape=(n_units, k * k),
        )
    else:
        delta = _delta(np.asarray(domain), level)
        d = np.bincount(unit, weights=2.0 * weight * delta[x, y], minlength=n_units)
        marg = np.bincount(unit * k + x, weights=weight, minlength=n_units * k)
        marg += np.bincount(unit * k + y, weights=weight, minlength=n_units * k)
        columns = np.column_stack([d, marg.reshape(n_units, k)])
    pairable = int(np.unique(unit[weight > 0]).size)
    return AlphaUnits(level, np.asarray(domain), columns, pairable)


def resample_index_chunks(n: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Bootstrap draws of n unit indices with replacement, `resamples` rows in total, yielded
    in chunks of shape (b, n). The weight chunks below are made from these same draws, so a
    seed gives the same resamples whichever form a statistic consumes."""
    chunk = max(1, min(resamples, _CHUNK_CELLS // max(n, 1)))
    done = 0
    while done < resamples:
        b = min(chunk, resamples - done)
        yield rng.integers(0, n, size=(b, n))
        done += b


def resample_weight_chunks(
    n: int, resamples: int, rng: np.random.Generator
) -> Iterator[np.ndarray]:
    """Bootstrap multiplicities of n units (row r: how often each unit is drawn in resample
    r), in chunks of shape (b, n)."""
    for idx in resample_index_chunks(n, resamples, rng):
        b = len(idx)
        flat = (idx + (np.arange(b) * n)[:, None]).ravel()
        yield np.bincount(flat, minlength=b * n).reshape(b, n).astype(float)


def resampled_sums(
    columns: np.ndarray | sp.spmatrix, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Column sums of `columns` over `resamples` cluster-bootstrap resamples of its rows."""
    n = columns.shape[0]
    out = np.empty((resamples, columns.shape[1]))
    done = 0
    for w in resample_weight_chunks(n, resamples, rng):
        # dense @ sparse goes through the sparse operand's transpose.
        s = (columns.T @ w.T).T if sp.issparse(columns) else w @ columns
        out[done : done + len(w)] = np.asarray(s)
        done += len(w)
    return out


def resampled_block_sums(
    blocks: dict[str, np.ndarray | sp.spmatrix], resamples: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """`resampled_sums` of several per-unit blocks (same rows) in ONE pass: the weights are
    drawn once, and every statistic built from these sums shares the same resamples."""
    names = list(blocks)
    if any(sp.issparse(b) for b in blocks.values()):
        stacked: np.ndarray | sp.spmatrix = sp.hstack(
            [sp.csr_matrix(blocks[k]) for k in names], format="csr"
        )
    else:
        stacked = np.hstack([np.asarray(blocks[k], dtype=float) for k in names])
    sums = resampled_sums(stacked, resamples, rng)
    edges = np.cumsum([0] + [blocks[k].shape[1] for k in names])
    return {k: sums[:, edges[i] : edges[i + 1]] for i, k in enumerate(names)}


def alpha_from_weights(units: AlphaUnits, weights: np.ndarray) -> np.ndarray:
    """Alpha for given unit multiplicities (rows of `weights`): a resample's alpha without
    drawing it, e.g. to check a resample against the package on the repeated data."""
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    cols = units.columns
    sums = (cols.T @ weights.T).T if sp.issparse(cols) else weights @ cols
    return units.alpha(np.asarray(sums))


def bootstrap_alpha(units: AlphaUnits, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Alpha of each of `resamples` cluster-bootstrap resamples of the units (NaN when a
    resample has no variation)."""
    return units.alpha(resampled_sums(units.columns, resamples, rng))
