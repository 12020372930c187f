"""Rankings: Bradley–Terry from pairwise judgments (strengths as the ordering and effect size;
ranks come from the paired tests, `calibration.ranks`), and leaderboard transfer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import permutations as all_permutations
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit, log_expit

from calibration.jsonable import jsonable
from calibration.pairs import canonical_codes
from calibration.ranks import interval_overlap_ranks

# Virtual ties per compared pair for bootstrap replicates without a finite MLE (some system
# never lost or never won in that resample): small enough to put them in the far tails.
_DEGENERATE_PRIOR = 1e-3


# --------------------------------------------------------------------------- Bradley–Terry


@dataclass(frozen=True)
class _Pairwise:
    systems: tuple[str, ...]
    items: np.ndarray  # item code per row
    i: np.ndarray  # system index of side a
    j: np.ndarray
    s: np.ndarray  # score of side a in [0, 1]
    n_items: int


def _pairwise(judgments: pd.DataFrame) -> _Pairwise:
    need = {"item_id", "system_a", "system_b", "score_a"}
    missing = need - set(judgments.columns)
    if missing:
        raise ValueError(
            f"pairwise judgments need columns {sorted(need)}; missing {sorted(missing)}"
        )
    s = judgments["score_a"].to_numpy(dtype=np.float64)
    if not np.isfinite(s).all() or ((s < 0) | (s > 1)).any():
        raise ValueError("score_a must lie in [0, 1] (1 = a wins, 0.5 = tie, 0 = b wins)")
    a = judgments["system_a"].astype(str).to_numpy()
    b = judgments["system_b"].astype(str).to_numpy()
    if (a == b).any():
        raise ValueError(f"a system is compared with itself: {a[a == b][0]!r}")
    systems = tuple(sorted(set(a) | set(b)))
    index = {name: k for k, name in enumerate(systems)}
    # Items numbered by their ids, not by first appearance: the bootstrap draws item codes,
    # so shuffled rows must give the same codes to draw the same items.
    items = canonical_codes(judgments["item_id"].to_numpy())
    return _Pairwise(
        systems,
        items,
        np.array([index[x] for x in a], dtype=np.int64),
        np.array([index[x] for x in b], dtype=np.int64),
        s,
        int(items.max()) + 1 if len(items) else 0,
    )


def _strongly_connected(wins: np.ndarray) -> np.ndarray:
    """Per (batched) win matrix: does every system beat every other through some chain?

    That is Zermelo's (1929) / Ford's (1957) condition for a finite Bradley–Terry MLE. Checked
    as: system 0 reaches everyone along "beat" edges, and everyone reaches system 0.
    """
    beat = (wins > 0).astype(np.float64)
    batch = beat.reshape(-1, *beat.shape[-2:])

    def reaches_all(adj: np.ndarray) -> np.ndarray:
        seen = np.zeros(adj.shape[:2])
        seen[:, 0] = 1.0
        while True:
            grown = np.minimum(seen + (seen[:, None, :] @ adj)[:, 0, :], 1.0)
            if (grown == seen).all():
                return seen.all(axis=1)
            seen = grown

    ok = reaches_all(batch) & reaches_all(np.swapaxes(batch, 1, 2))
    return ok.reshape(beat.shape[:-2])


def _reachable_from_first(linked: np.ndarray) -> np.ndarray:
    seen = np.zeros(len(linked), dtype=bool)
    seen[0] = True
    while True:
        grown = seen | linked[seen].any(axis=0)
        if (grown == seen).all():
            return seen
        seen = grown


def _fit(wins: np.ndarray, *, tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """Newton's method on the Bradley–Terry log-likelihood, batched over win matrices.

    wins[..., i, j] is i's total score against j. Strengths are on the log-odds scale
    (P(i beats j) = sigmoid(b_i - b_j)) and centred to sum 0. The likelihood is concave, so
    Newton from 0 with step halving on a decrease converges when the MLE exists. Only pairs
    compared somewhere in the batch enter, which keeps sparse designs (everyone against one
    baseline) cheap, and only replicates that have not converged keep iterating.
    """
    batch, k = wins.shape[:-2], wins.shape[-1]
    w = wins.reshape(-1, k, k)
    ii, jj = np.nonzero(np.triu((w + np.swapaxes(w, 1, 2)).sum(axis=0) > 0, 1))
    w_ij, w_ji = w[:, ii, jj], w[:, jj, ii]
    incidence = np.zeros((len(ii), k))
    incidence[np.arange(len(ii)), ii] = 1.0
    incidence[np.arange(len(ii)), jj] = -1.0
    degree = np.abs(incidence)
    diag = np.arange(k)

    def loglik(b: np.ndarray, wij: np.ndarray, wji: np.ndarray) -> np.ndarray:
        d = b[:, ii] - b[:, jj]
        return (wij * log_expit(d) + wji * log_expit(-d)).sum(axis=1)

    beta = np.zeros((len(w), k))
    ll = loglik(beta, w_ij, w_ji)
    active = np.arange(len(w))
    for _ in range(max_iter):
        if len(active) == 0:
            break
        b, wij, wji, cur = beta[active], w_ij[active], w_ji[active], ll[active]
        games = wij + wji
        p = expit(b[:, ii] - b[:, jj])
        grad = (wij - games * p) @ incidence
        h = games * p * (1 - p)
        info = np.zeros((len(b), k, k))
        info[:, ii, jj] = -h
        info[:, jj, ii] = -h
        info[:, diag, diag] = h @ degree
        # Fix the last strength at 0: the likelihood only sees differences.
        step = np.zeros_like(b)
        step[:, :-1] = np.linalg.solve(info[:, :-1, :-1], grad[:, :-1, None])[..., 0]
        scale = np.ones(len(b))
        for _ in range(30):
            trial = b + scale[:, None] * step
            new = loglik(trial, wij, wji)
            worse = new < cur - 1e-12
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        stuck = new < cur - 1e-12  # no ascent even at 2**-30 of the step: stay put
        moved = np.where(stuck[:, None], 0.0, scale[:, None] * step)
        beta[active] = b + moved
        ll[active] = np.where(stuck, cur, new)
        active = active[np.abs(moved).max(axis=1) >= tol]
    beta -= beta.mean(axis=1, keepdims=True)
    return beta.reshape(*batch, k)


@dataclass(frozen=True)
class BradleyTerryResult:
    """Bradley–Terry strengths (log-odds, centred to sum 0 or 0 at `anchor`) with bootstrap
    intervals over items. No ranks: those come from the paired tests (`calibration.ranks`)."""

    systems: tuple[str, ...]
    strength: tuple[float, ...]
    ci_low: tuple[float | None, ...]
    ci_high: tuple[float | None, ...]
    ci: float
    n_items: int
    n_rows: int
    resamples: int
    seed: int
    prior: float
    anchor: str | None
    degenerate_resamples: int  # replicates with no finite MLE, fitted with a tiny prior
    method: str = "bradley-terry mle (newton); percentile bootstrap over items"
    not_estimable: str | None = None
    """Why the intervals are None: more resamples than an interval's tail had no finite fit,
    so an end would describe the stand-in prior, not the data. The strengths still stand."""
    replicates: np.ndarray = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def table(self) -> pd.DataFrame:
        df = pd.DataFrame(
            {
                "system": self.systems,
                "strength": self.strength,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
            }
        )
        return df.sort_values("strength", ascending=False, ignore_index=True)

    def probability(self, a: str, b: str) -> float:
        """Fitted probability that `a` beats `b`."""
        i, j = self.systems.index(a), self.systems.index(b)
        return float(1 / (1 + math.exp(-(self.strength[i] - self.strength[j]))))

    def to_dict(self) -> dict[str, Any]:
        return {**jsonable(self), "table": jsonable(self.table().to_dict(orient="records"))}


def _win_matrix_rows(p: _Pairwise) -> sparse.csr_matrix:
    """Items x (k*k) matrix: each item's contribution to the flattened win matrix."""
    k = len(p.systems)
    rows = np.concatenate([p.items, p.items])
    cols = np.concatenate([p.i * k + p.j, p.j * k + p.i])
    vals = np.concatenate([p.s, 1 - p.s])
    return sparse.csr_matrix((vals, (rows, cols)), shape=(p.n_items, k * k))


def bradley_terry(
    judgments: pd.DataFrame,
    *,
    seed: int,
    resamples: int = 1_000,
    ci: float = 0.95,
    prior: float = 0.0,
    anchor: str | None = None,
) -> BradleyTerryResult:
    """Fit Bradley–Terry by maximum likelihood, ties as half wins; bootstrap over items.

    `judgments` has one row per judgment, or per unblinded verdict (one order, one judge):
    item_id, system_a, system_b, score_a (1, 0.5, 0, or a probability). All rows of an item
    move together in the bootstrap. `prior` adds that many virtual ties to every compared
    pair (0 = plain MLE).
    """
    p = _pairwise(judgments)
    k = len(p.systems)
    if anchor is not None and anchor not in p.systems:
        raise ValueError(f"anchor {anchor!r} is not among the systems: {', '.join(p.systems)}")
    per_item = _win_matrix_rows(p)
    total = np.asarray(per_item.sum(axis=0)).reshape(k, k)
    compared = (total + total.T) > 0
    if not _strongly_connected(compared.astype(np.float64)):
        apart = p.systems[int(np.flatnonzero(~_reachable_from_first(compared))[0])]
        raise ValueError(
            f"no Bradley–Terry ranking across groups never compared with each other "
            f"({p.systems[0]!r} and {apart!r} are linked by no chain of judgments); "
            "rank each group separately or judge pairs that connect them"
        )
    virtual = prior / 2 * compared
    if not _strongly_connected(total + virtual):
        raise ValueError(
            "no finite Bradley–Terry fit: some systems never lost (or never won) against the "
            "rest, or were never compared with them; pass prior=1 to add one virtual tie per "
            "compared pair"
        )
    beta = _fit(total + virtual)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    reps = np.empty((resamples, k))
    degenerate = 0
    rows = max(1, (1 << 22) // max(p.n_items, k * k))
    offsets_cache: dict[int, np.ndarray] = {}
    for r0 in range(0, resamples, rows):
        r = min(rows, resamples - r0)
        idx = rng.integers(0, p.n_items, size=(r, p.n_items))
        off = offsets_cache.setdefault(r, (np.arange(r) * p.n_items)[:, None])
        counts = np.bincount((idx + off).ravel(), minlength=r * p.n_items)
        counts = counts.reshape(r, p.n_items).astype(np.float64)
        wins = np.asarray((per_item.T @ counts.T).T).reshape(r, k, k) + virtual
        ok = _strongly_connected(wins)
        degenerate += int((~ok).sum())
        wins[~ok] += _DEGENERATE_PRIOR / 2 * compared
        reps[r0 : r0 + r] = _fit(wins)
    if anchor is not None:
        a = p.systems.index(anchor)
        beta = beta - beta[a]
        reps = reps - reps[:, [a]]
    alpha = (1 - ci) / 2
    lo, hi = np.quantile(reps, [alpha, 1 - alpha], axis=0)
    # A resample without a finite MLE puts some strength at the far end the stand-in prior
    # allows. Once such resamples outnumber an interval's tail, (1 - ci) / 2 of them, that
    # end is the prior's, not the data's: [-2.5, 7.6] on 5 items, say.
    reason = None
    if degenerate > alpha * resamples:
        reason = (
            f"{degenerate} of {resamples} resamples have no finite fit (a system never lost or "
            f"never won in them), more than the {alpha:.1%} an interval end may rest on: "
            "judge more items"
        )
    return BradleyTerryResult(
        systems=p.systems,
        strength=tuple(float(x) for x in beta),
        ci_low=tuple(None if reason else float(x) for x in lo),
        ci_high=tuple(None if reason else float(x) for x in hi),
        ci=ci,
        n_items=p.n_items,
        n_rows=len(p.s),
        resamples=resamples,
        seed=seed,
        prior=prior,
        anchor=anchor,
        degenerate_resamples=degenerate,
        not_estimable=reason,
        replicates=reps,
    )


def pairwise_win_rates(judgments: pd.DataFrame) -> pd.DataFrame:
    """Row system's mean score against column system over all judgments of the pair."""
    p = _pairwise(judgments)
    k = len(p.systems)
    score = np.zeros((k, k))
    games = np.zeros((k, k))
    np.add.at(score, (p.i, p.j), p.s)
    np.add.at(score, (p.j, p.i), 1 - p.s)
    np.add.at(games, (p.i, p.j), 1)
    np.add.at(games, (p.j, p.i), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = np.where(games > 0, score / games, np.nan)
    names = list(p.systems)
    return pd.DataFrame(matrix, index=pd.Index(names, name="system"), columns=names)


# --------------------------------------------------------------------------- transfer


def kendall_tau_b(x: Any, y: Any) -> float:
    """Kendall's tau-b (ties corrected on both sides), O(k^2) for small k."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    i, j = np.triu_indices(len(x), 1)
    return _tau_b(np.sign(x[i] - x[j]), np.sign(y[i] - y[j])[None, :])[0]


def _tau_b(sx: np.ndarray, sy: np.ndarray) -> np.ndarray:
    # tau-b = sum(sx*sy) / sqrt(untied_x * untied_y); the tie counts do not change when y is
    # permuted, so permutations only recompute the numerator.
    denom = math.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy[0])))
    return (sy @ sx) / denom if denom > 0 else np.full(len(sy), math.nan)


def _average_ranks(values: Any) -> np.ndarray:
    """Ranks from 1, ties given their average (`scipy.stats.rankdata`'s default), without
    loading scipy.stats: it is half a second of every run's analysis."""
    return pd.Series(np.asarray(values, dtype=float)).rank(method="average").to_numpy()


def spearman_rho(x: Any, y: Any) -> float:
    """Spearman's rho with average ranks for ties (Pearson correlation of the ranks)."""
    rx, ry = _average_ranks(x), _average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denom = math.sqrt(float(rx @ rx) * float(ry @ ry))
    return float(rx @ ry / denom) if denom > 0 else math.nan


@dataclass(frozen=True)
class Moved:
    system: str
    public_rank: float
    our_rank: float

    @property
    def places(self) -> float:
        """Positive when the system ranks better with us than publicly."""
        return self.public_rank - self.our_rank


@dataclass(frozen=True)
class TransferResult:
    """How far a public ordering of systems predicts ours (ranks: 1 = best, ties averaged)."""

    systems: tuple[str, ...]
    public_rank: tuple[float, ...]
    our_rank: tuple[float, ...]
    spearman: float
    kendall_tau_b: float
    p_spearman: float  # two-sided permutation p-values
    p_kendall: float
    permutations: int
    exact: bool  # all k! orderings enumerated rather than sampled
    seed: int
    moved: tuple[Moved, ...]  # systems 2 or more places apart
    left_out: tuple[str, ...]  # in only one of the two orderings

    def table(self) -> pd.DataFrame:
        df = pd.DataFrame(
            {"system": self.systems, "public_rank": self.public_rank, "our_rank": self.our_rank}
        )
        df["moved"] = df["public_rank"] - df["our_rank"]
        return df.sort_values("public_rank", ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        out = jsonable(self)
        out["moved"] = [{**jsonable(m), "places": m.places} for m in self.moved]
        return out


def _grouped_values(
    values: Mapping[str, float],
    intervals: Mapping[str, tuple[float, float]] | None,
    systems: list[str],
    higher_is_better: bool,
) -> np.ndarray:
    """Values oriented so higher is better, with interval-tied systems made equal."""
    v = np.array([values[s] for s in systems], dtype=np.float64)
    if not higher_is_better:
        v = -v
    if intervals is None:
        return v
    missing = [s for s in systems if s not in intervals]
    if missing:
        raise ValueError(f"no interval for {', '.join(missing)}")
    lo = np.array([intervals[s][0] for s in systems], dtype=np.float64)
    hi = np.array([intervals[s][1] for s in systems], dtype=np.float64)
    if not higher_is_better:
        lo, hi = -hi, -lo
    return -interval_overlap_ranks(v, lo, hi).astype(np.float64)


def leaderboard_transfer(
    public: Mapping[str, float],
    ours: Mapping[str, float],
    *,
    seed: int,
    public_intervals: Mapping[str, tuple[float, float]] | None = None,
    our_intervals: Mapping[str, tuple[float, float]] | None = None,
    public_higher_is_better: bool = True,
    our_higher_is_better: bool = True,
    permutations: int = 10_000,
) -> TransferResult:
    """Rank agreement between a public leaderboard and our evaluation of the same systems.

    Systems whose intervals overlap (in either ordering, when intervals are given) are tied
    before ranking, because their relative order is arbitrary. The p-values come from a
    permutation test of our ordering against the public one: exact over all k! orderings when
    k! <= `permutations`, otherwise `permutations` random orderings.
    """
    systems = sorted(set(public) & set(ours))
    left_out = tuple(sorted(set(public) ^ set(ours)))
    k = len(systems)
    if k < 3:
        raise ValueError(f"need at least 3 systems in both orderings, got {k}")
    pv = _grouped_values(public, public_intervals, systems, public_higher_is_better)
    ov = _grouped_values(ours, our_intervals, systems, our_higher_is_better)
    # Rank 1 = best, ties averaged.
    pr, orank = _average_ranks(-pv), _average_ranks(-ov)
    rho, tau = spearman_rho(pv, ov), kendall_tau_b(pv, ov)

    exact = math.factorial(k) <= permutations
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    i, j = np.triu_indices(k, 1)
    sx = np.sign(pv[i] - pv[j])
    rx = pr - pr.mean()
    ry = orank - orank.mean()
    rho_denom = math.sqrt(float(rx @ rx) * float(ry @ ry))
    hits_rho = hits_tau = total = 0
    tol = 1e-12
    chunk = max(1, (1 << 22) // max(1, len(i)))

    def batches() -> Any:
        if exact:
            perms = np.array(list(all_permutations(range(k))), dtype=np.int64)
            for c in range(0, len(perms), chunk):
                yield perms[c : c + chunk]
        else:
            for c in range(0, permutations, chunk):
                n = min(chunk, permutations - c)
                yield rng.permuted(np.tile(np.arange(k), (n, 1)), axis=1)

    for perm in batches():
        oy = ov[perm]
        taus = _tau_b(sx, np.sign(oy[:, i] - oy[:, j]))
        rhos = (ry[perm] @ rx) / rho_denom if rho_denom > 0 else np.full(len(perm), np.nan)
        hits_tau += int((np.abs(taus) >= abs(tau) - tol).sum())
        hits_rho += int((np.abs(rhos) >= abs(rho) - tol).sum())
        total += len(perm)
    if exact:
        p_rho, p_tau = hits_rho / total, hits_tau / total
    else:  # the observed ordering counts as one of the permutations
        p_rho, p_tau = (hits_rho + 1) / (total + 1), (hits_tau + 1) / (total + 1)
    # One side entirely tied: the coefficients and their p-values are undefined.
    p_rho = math.nan if math.isnan(rho) else p_rho
    p_tau = math.nan if math.isnan(tau) else p_tau
    moved = tuple(
        Moved(s, float(a), float(b))
        for s, a, b in sorted(zip(systems, pr, orank, strict=True), key=lambda t: t[1])
        if abs(a - b) >= 2
    )
    return TransferResult(
        systems=tuple(systems),
        public_rank=tuple(float(x) for x in pr),
        our_rank=tuple(float(x) for x in orank),
        spearman=rho,
        kendall_tau_b=float(tau),
        p_spearman=float(p_rho),
        p_kendall=float(p_tau),
        permutations=total,
        exact=exact,
        seed=seed,
        moved=moved,
        left_out=left_out,
    )
