"""How many human labels active selection saves at equal interval width, and whether the
intervals cover, by simulation on MT-Bench and on a judge with planted errors.

    .venv/bin/python scripts/active_labels.py [--reps 200] [--seed 0] [--json PATH]

(about 100 s on one core at the defaults; the time is `ppi_mean`, called per pair.)

Ways to spend a budget of n human labels over a pool of judged keys, each estimating
every system pair's human win rate (one interval per pair, 95%):

* **uniform**: a simple random sample of n keys, PPI++ with its Wilson interval
  (`ppi_mean` without `inclusion`: the product's uniform path);
* **active**: weights `sampling_weights(vote_uncertainty(votes), uniform=0.2)` from the
  judge's votes, sequential Poisson sampling order (`priorities`; Ohlsson 1998, "Sequential
  Poisson sampling", J. Official Statistics 14: 355-362), the first n keys (`first_n`) and
  the inverse-probability-weighted PPI of Zrnic & Candes (2024, "Active Statistical
  Inference", ICML) with its normal interval truncated to [0, 1];
* **uniform-IPW**: every weight 1 through the same `first_n` / inverse-probability path. Its
  sample is uniform's (the same uniform draws), so uniform vs uniform-IPW is the effect of the
  estimator and interval of the inverse-probability path alone, and uniform-IPW vs active the
  effect of the allocation alone;
* diagnostics: active and uniform-IPW again with lam fixed at 1 instead of PPI++'s tuning
  (which `ppi_mean` computes from the unweighted labelled units also on the weighted path),
  to tell what the allocation buys from what the tuning does to it.

Active's (and uniform-IPW's) mean width across pairs and repetitions is measured on a grid of
budgets; the budget n_a giving uniform's mean width at n_u is interpolated linearly in
(log n, log width) (width ~ n^-1/2), and saving = 1 - n_a / n_u, with a bootstrap s.e. over
repetitions. Coverage: the share of pair x repetition intervals containing the pair's true
rate; an undefined interval (fewer than 2 labels in a pair) counts as a miss and as width 1.

The bounds printed with each dataset are first-order (one mean over the pool, lam = 1,
e_i = E[(Y - f)^2] of key i): 1 - (E sqrt e)^2 / E e for weights proportional to sqrt(e)
known key by key (no judge can know that), the same with e averaged within the judge's
verdict class (the best any weights computed from the verdict can do), and 1 - E[e / w] / E e
for the weights w actually used.

MT-Bench: the 1,633 keys (question, turn, model pair) with at least one expert vote; f is
GPT-4's score (decisive 1 / 0, tie and "tie (inconsistent)" 1/2); each labelled key's label
is one of its expert votes drawn at random (a human labels once); the truth is the mean over
the pair's keys of the mean expert vote. Planted: a simulated judge whose uncertainty does
flag its errors (design printed with the table).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from calibration.active import (
    DEFAULT_UNIFORM,
    Draw,
    first_n,
    priorities,
    sampling_weights,
    vote_uncertainty,
)
from calibration.correction import ppi_mean

MT_BENCH = Path(__file__).resolve().parent.parent / "data" / "mt_bench"
UNIFORM_BUDGETS = (150, 300, 600)
GRID = (75, 100, 125, 150, 200, 250, 300, 400, 500, 600, 750, 900, 1100, 1300, 1600)
BOOTSTRAP = 500
_SCORE = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (inconsistent)": 0.5}
# GPT-4's two presentation orders as votes for `vote_uncertainty`: only the published
# verdict survives, so an inconsistent pair of orders is one win each.
_VOTES = {"model_a": [1.0, 1.0], "model_b": [0.0, 0.0], "tie": [0.5, 0.5]}
_VOTES["tie (inconsistent)"] = [1.0, 0.0]
_FLIP = {"model_a": "model_b", "model_b": "model_a"}


@dataclass(frozen=True)
class Pool:
    """Judged keys, their pairs, and how a repetition draws their human labels."""

    name: str
    design: list[str]
    """Lines describing the data, printed above its table."""
    pairs: list[str]
    members: list[np.ndarray]
    """Key indices of each pair."""
    f: np.ndarray
    votes: list[list[float]]
    verdict: np.ndarray
    """The judge's verdict class per key (decisive / tie / inconsistent)."""
    truth: np.ndarray
    """Per pair: the human win rate the intervals should contain."""
    e: np.ndarray
    """Per key: E[(Y - f)^2], the judge's expected squared error against one human label."""
    draw: Callable[[np.random.Generator], np.ndarray]
    """One human label per key."""


def _key(row: dict) -> tuple[tuple, str]:
    a, b, winner = row["model_a"], row["model_b"], row["winner"]
    if a > b:
        a, b, winner = b, a, _FLIP.get(winner, winner)
    return (row["question_id"], row["turn"], a, b), winner


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def mt_bench_pool() -> Pool:
    judge = dict(_key(r) for r in _read(MT_BENCH / "gpt4_pair.jsonl"))
    human: dict[tuple, list[float]] = {}
    for row in _read(MT_BENCH / "human.jsonl"):
        if row["judge"].startswith("expert_"):
            key, winner = _key(row)
            human.setdefault(key, []).append(_SCORE[winner])
    keys = sorted(k for k in human if k in judge)
    pair_of = [f"{k[2]} vs {k[3]}" for k in keys]
    pairs = sorted(set(pair_of))
    pair_index = np.array([pairs.index(p) for p in pair_of])
    winners = [judge[k] for k in keys]
    f = np.array([_SCORE[w] for w in winners])
    verdict = np.array(
        [
            "inconsistent" if w == "tie (inconsistent)" else w if w == "tie" else "decisive"
            for w in winners
        ]
    )
    counts = np.array([len(human[k]) for k in keys])
    padded = np.zeros((len(keys), counts.max()))
    for i, k in enumerate(keys):
        padded[i, : counts[i]] = human[k]
    mean_vote = padded.sum(axis=1) / counts
    e = np.array([np.mean((np.array(human[k]) - fi) ** 2) for k, fi in zip(keys, f, strict=True)])
    members = [np.flatnonzero(pair_index == j) for j in range(len(pairs))]

    def draw(rng: np.random.Generator) -> np.ndarray:
        pick = (rng.random(len(keys)) * counts).astype(int)
        return padded[np.arange(len(keys)), pick]

    design = [
        f"{len(keys):,} keys with >= 1 expert vote ({int(counts.sum()):,} votes), "
        f"{len(pairs)} system pairs; label = one random expert vote per key",
        "E(Y - f)^2 below is against that one vote (the experts' own disagreement included)",
    ]
    return Pool(
        "MT-Bench (GPT-4 pairwise vs expert votes)",
        design,
        pairs,
        members,
        f,
        [_VOTES[w] for w in winners],
        verdict,
        np.array([mean_vote[m].mean() for m in members]),
        e,
        draw,
    )


# Planted judge. Clear keys: both orders name the same winner and the human agrees with
# probability U(0.94, 1) (3% errors on average); hard keys: the orders disagree or say tie
# and the human is close to a coin flip. Pairs differ in how often the judge names system_a.
_PLANTED_KEYS = 500
_PLANTED_LEAN = (0.1, 0.25, 0.4, 0.6, 0.75, 0.9)
_SHARE_INCONSISTENT, _SHARE_TIE = 0.15, 0.10
_CLEAR_AGREE = (0.94, 1.0)
_HARD_P = (0.2, 0.8)


def planted_pool(rng: np.random.Generator) -> Pool:
    n_pairs = len(_PLANTED_LEAN)
    pair_index = np.repeat(np.arange(n_pairs), _PLANTED_KEYS)
    n = len(pair_index)
    u = rng.random(n)
    verdict = np.where(
        u < _SHARE_INCONSISTENT,
        "inconsistent",
        np.where(u < _SHARE_INCONSISTENT + _SHARE_TIE, "tie", "decisive"),
    )
    says_a = rng.random(n) < np.asarray(_PLANTED_LEAN)[pair_index]
    agree = rng.uniform(*_CLEAR_AGREE, n)
    p = np.where(
        verdict == "decisive", np.where(says_a, agree, 1 - agree), rng.uniform(*_HARD_P, n)
    )
    f = np.where(verdict == "decisive", says_a.astype(float), 0.5)
    votes = [
        [1.0, 0.0] if v == "inconsistent" else [fi, fi] for v, fi in zip(verdict, f, strict=True)
    ]
    e = p * (1 - f) ** 2 + (1 - p) * f**2
    members = [np.flatnonzero(pair_index == j) for j in range(n_pairs)]
    design = [
        f"{n:,} keys in {n_pairs} pairs of {_PLANTED_KEYS}; human label Bernoulli(p_i), "
        f"p_i known; the judge names system_a on clear keys with probability "
        f"{', '.join(f'{q:g}' for q in _PLANTED_LEAN)} by pair",
        f"planted errors: clear keys (orders agree on a winner, "
        f"{1 - _SHARE_INCONSISTENT - _SHARE_TIE:.0%}): the human disagrees with probability "
        f"U({1 - _CLEAR_AGREE[1]:g}, {1 - _CLEAR_AGREE[0]:g}), mean "
        f"{1 - np.mean(_CLEAR_AGREE):.0%}; hard keys (orders disagree "
        f"{_SHARE_INCONSISTENT:.0%}, tie {_SHARE_TIE:.0%}): f = 1/2 and the human picks "
        f"system_a with probability U{_HARD_P}, so (Y - f)^2 = 1/4 always",
    ]
    return Pool(
        "Planted judge (uncertainty flags its errors)",
        design,
        [f"pair {j + 1}" for j in range(n_pairs)],
        members,
        f,
        votes,
        verdict,
        np.array([p[m].mean() for m in members]),
        e,
        lambda g: (g.random(n) < p).astype(float),
    )


@dataclass(frozen=True)
class Method:
    name: str
    active: bool
    """Weights from the judge's votes (else all 1: a simple random sample)."""
    weighted: bool
    """Pass the inclusion probabilities to `ppi_mean` (the inverse-probability path)."""
    lam: float | None = None
    """None: PPI++'s own power tuning, as the product runs it."""


METHODS = (
    Method("uniform", active=False, weighted=False),
    Method("active", active=True, weighted=True),
    Method("uniform-IPW", active=False, weighted=True),
    # Diagnostics: the same two IPW designs with lam fixed at 1, which separates what the
    # allocation buys from what the power tuning does to it.
    Method("active lam=1", active=True, weighted=True, lam=1.0),
    Method("uniform-IPW lam=1", active=False, weighted=True, lam=1.0),
)
_STATS = ("width", "covered", "undefined", "lam")


def _intervals(pool: Pool, y: np.ndarray, draw: Draw, method: Method) -> np.ndarray:
    """Per pair: interval width, whether it covers, whether it is undefined, and lam."""
    labelled = np.zeros(len(y), dtype=bool)
    labelled[draw.chosen] = True
    prob = np.ones(len(y))
    prob[draw.chosen] = draw.probability
    out = np.zeros((len(_STATS), len(pool.members)))
    for j, idx in enumerate(pool.members):
        lab, rest = idx[labelled[idx]], idx[~labelled[idx]]
        est = ppi_mean(
            y[lab],
            pool.f[lab],
            pool.f[rest],
            lam=method.lam,
            bounds=(0.0, 1.0),
            inclusion=prob[lab] if method.weighted else None,
        )
        if est.ci_low is None or est.ci_high is None or est.lam is None:
            out[:, j] = (1.0, 0.0, 1.0, np.nan)  # a miss of width 1: the reader learns nothing
            continue
        out[:, j] = (
            est.ci_high - est.ci_low,
            est.ci_low <= pool.truth[j] <= est.ci_high,
            0,
            est.lam,
        )
    return out


def simulate(
    pool: Pool, reps: int, seed: list[int], budgets: tuple[int, ...], grid: tuple[int, ...]
) -> dict[str, np.ndarray]:
    """Per method: an array (statistic, repetition, budget, pair); uniform on `budgets`, the
    others on `grid`."""
    n = len(pool.f)
    weights = sampling_weights(vote_uncertainty(pool.votes), uniform=DEFAULT_UNIFORM)
    ones = np.ones(n)
    sizes = {m.name: budgets if m.name == "uniform" else grid for m in METHODS}
    out = {m: np.empty((len(_STATS), reps, len(s), len(pool.members))) for m, s in sizes.items()}
    for r, child in enumerate(np.random.SeedSequence(seed).spawn(reps)):
        label_seed, order_seed = child.spawn(2)
        y = pool.draw(np.random.default_rng(label_seed))
        # The same U_i for every method (common random numbers): differences between methods
        # are not swamped by sampling noise, and uniform-IPW labels exactly uniform's keys.
        keys = {
            True: priorities(weights, np.random.default_rng(order_seed)),
            False: priorities(ones, np.random.default_rng(order_seed)),
        }
        for m in METHODS:
            w = weights if m.active else ones
            # Budgets of one repetition are prefixes of one order, as when annotators stop.
            for b, size in enumerate(sizes[m.name]):
                out[m.name][:, r, b] = _intervals(pool, y, first_n(keys[m.active], w, size), m)
    return out


def equivalent_budget(grid: np.ndarray, widths: np.ndarray, target: float) -> float:
    """Budget at which the mean widths on `grid` reach `target`, linear in (log n, log width);
    inf when even the largest budget is wider, nan when the smallest is already narrower."""
    lw, lg, lt = np.log(widths), np.log(grid), np.log(target)
    if lt < lw.min():
        return float("inf")
    if lt > lw.max():
        return float("nan")
    order = np.argsort(lw)
    return float(np.exp(np.interp(lt, lw[order], lg[order])))


def _matched(
    per_rep: dict[str, np.ndarray], grid: np.ndarray, sel: np.ndarray, b: int, n_u: int
) -> np.ndarray:
    """Savings (active, IPW path, allocation, allocation at lam = 1) and the active and
    uniform-IPW budgets matching uniform's mean width at budget index b, over repetitions sel."""
    target = per_rep["uniform"][sel, b].mean()
    target_1 = per_rep["uniform-IPW lam=1"][sel, list(grid).index(n_u)].mean()
    n_a, n_i, n_a1 = (
        equivalent_budget(grid, per_rep[m][sel].mean(axis=0), t)
        for m, t in (("active", target), ("uniform-IPW", target), ("active lam=1", target_1))
    )
    return np.array([1 - n_a / n_u, 1 - n_i / n_u, 1 - n_a / n_i, 1 - n_a1 / n_u, n_a, n_i])


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def savings(
    res: dict[str, np.ndarray], budgets: tuple[int, ...], grid: tuple[int, ...], seed: list[int]
) -> list[dict]:
    """Per uniform budget n_u: the budgets of equal mean width and the savings, each with a
    bootstrap s.e. over repetitions (resampled whole, as the methods share their draws)."""
    g = np.array(grid)
    per_rep = {m: a[0].mean(axis=2) for m, a in res.items()}  # (reps, budgets)
    reps = per_rep["uniform"].shape[0]
    boot = np.random.default_rng(seed).integers(0, reps, (BOOTSTRAP, reps))
    rows = []
    for b, n_u in enumerate(budgets):
        point = _matched(per_rep, g, np.arange(reps), b, n_u)
        draws = np.array([_matched(per_rep, g, sel, b, n_u) for sel in boot])
        finite = np.isfinite(draws[:, :4])
        # inf: more labels than the grid's largest budget; None in the JSON.
        row: dict = {"n_uniform": n_u, "n_active": point[4], "n_uniform_ipw": point[5]}
        for k, name in enumerate(("saving", "ipw_path", "allocation", "allocation_lam1")):
            row[name] = point[k]
            row[f"{name}_se"] = (
                _finite(np.std(draws[finite[:, k], k])) if finite[:, k].any() else None
            )
            row[f"{name}_bootstrap_off_grid"] = int((~finite[:, k]).sum())
        rows.append(row)
    return rows


def bounds(pool: Pool) -> dict[str, float]:
    """First-order savings (module docstring): what the signal allows, and the weights used."""
    e = pool.e
    weights = sampling_weights(vote_uncertainty(pool.votes), uniform=DEFAULT_UNIFORM)
    by_class = np.zeros_like(e)
    for v in np.unique(pool.verdict):
        by_class[pool.verdict == v] = e[pool.verdict == v].mean()
    return {
        "oracle_per_key": float(1 - np.sqrt(e).mean() ** 2 / e.mean()),
        "oracle_verdict": float(1 - np.sqrt(by_class).mean() ** 2 / e.mean()),
        "weights_used": float(1 - (e / weights).mean() / e.mean()),
    }


def _pct(value: float, se: float | None) -> str:
    if not np.isfinite(value):
        return "off grid"
    return f"{value:+.1%}" + ("" if se is None else f" ± {se:.1%}")


def _n(value: float, grid: tuple[int, ...]) -> str:
    if value == float("inf"):
        return f"> {max(grid)}"
    return f"< {min(grid)}" if np.isnan(value) else f"{value:.0f}"


def _cells(a: np.ndarray, b: int, lam: bool = True) -> str:
    """Mean width, coverage (worst pair), undefined count [and mean lam] at budget index b."""
    width, covered, undefined, lam_ = a[:, :, b]
    text = f"{width.mean():.3f} | {covered.mean():.3f} ({covered.mean(axis=0).min():.3f})"
    if lam:
        text += f" | {int(undefined.sum())} | {np.nanmean(lam_):.2f}"
    return text


def report(
    pool: Pool,
    res: dict[str, np.ndarray],
    rows: list[dict],
    bnd: dict[str, float],
    budgets: tuple[int, ...],
    grid: tuple[int, ...],
) -> dict:
    weights = sampling_weights(vote_uncertainty(pool.votes), uniform=DEFAULT_UNIFORM)
    k, reps = len(pool.members), res["uniform"].shape[1]
    print(f"\n## {pool.name}: {reps} repetitions, {k} pairs, 95% intervals")
    for line in pool.design:
        print(f"  {line}")
    for v in ("decisive", "tie", "inconsistent"):
        mask = pool.verdict == v
        print(
            f"  judge {v}: {int(mask.sum()):,} keys, E(Y - f)^2 = {pool.e[mask].mean():.3f}, "
            f"sampling weight {weights[mask].mean():.2f}"
        )
    print(f"  true rates by pair: {', '.join(f'{t:.2f}' for t in pool.truth)}")
    print(
        f"  first-order label savings (one mean over the pool, lam = 1): oracle per key "
        f"{bnd['oracle_per_key']:+.1%}; best weights from the judge's verdict "
        f"{bnd['oracle_verdict']:+.1%}; the weights used {bnd['weights_used']:+.1%}"
    )
    print(
        f"\nEqual mean width. Savings = 1 - labels / uniform labels, ± bootstrap s.e. over "
        f"repetitions. IPW path: uniform-IPW vs uniform (same keys, the estimator and interval "
        f"differ); allocation: active vs uniform-IPW; allocation at lam = 1: active vs "
        f"uniform-IPW both with lam fixed at 1. Coverage MC s.e. about "
        f"{np.sqrt(0.95 * 0.05 / (k * reps)):.3f} at 0.95 (worst pair: about "
        f"{np.sqrt(0.95 * 0.05 / reps):.3f})."
    )
    print(
        "| uniform labels | width | coverage (worst pair) | undefined | lam | active labels "
        "| active saving | uniform-IPW labels | IPW path | allocation | allocation at lam = 1 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for b, row in enumerate(rows):
        print(
            f"| {row['n_uniform']} | {_cells(res['uniform'], b)} | "
            f"{_n(row['n_active'], grid)} | {_pct(row['saving'], row['saving_se'])} | "
            f"{_n(row['n_uniform_ipw'], grid)} | {_pct(row['ipw_path'], row['ipw_path_se'])} | "
            f"{_pct(row['allocation'], row['allocation_se'])} | "
            f"{_pct(row['allocation_lam1'], row['allocation_lam1_se'])} |"
        )
    print(
        "\nThe inverse-probability-weighted methods on the budget grid: mean width, coverage "
        "(worst pair), undefined intervals (of pairs x repetitions), mean lam"
    )
    print(
        "| labels | active width | coverage | undefined | lam | uniform-IPW width | coverage "
        "| undefined | lam | active lam=1 width | coverage | uniform-IPW lam=1 width | coverage |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for b, n in enumerate(grid):
        print(
            f"| {n} | {_cells(res['active'], b)} | {_cells(res['uniform-IPW'], b)} | "
            f"{_cells(res['active lam=1'], b, lam=False)} | "
            f"{_cells(res['uniform-IPW lam=1'], b, lam=False)} |"
        )

    def summary(a: np.ndarray, b: int, n: int) -> dict:
        return {
            "n": n,
            "mean_width": float(a[0, :, b].mean()),
            "coverage": float(a[1, :, b].mean()),
            "worst_pair_coverage": float(a[1, :, b].mean(axis=0).min()),
            "undefined": int(a[2, :, b].sum()),
            "mean_lam": float(np.nanmean(a[3, :, b])),
        }

    return {
        "name": pool.name,
        "design": pool.design,
        "pairs": pool.pairs,
        "truth": pool.truth.tolist(),
        "bounds": bnd,
        "equal_width": [
            {k: _finite(v) if isinstance(v, float) else v for k, v in row.items()} for row in rows
        ],
        "methods": {
            m: [summary(a, b, n) for b, n in enumerate(budgets if m == "uniform" else grid)]
            for m, a in res.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.reps < 2:
        parser.error("--reps must be at least 2")
    started = time.perf_counter()
    pools = [mt_bench_pool(), planted_pool(np.random.default_rng([args.seed, 2]))]
    results = []
    for i, pool in enumerate(pools):
        grid = tuple(g for g in GRID if g < len(pool.f))
        res = simulate(pool, args.reps, [args.seed, i], UNIFORM_BUDGETS, grid)
        rows = savings(res, UNIFORM_BUDGETS, grid, [args.seed, i, 1])
        results.append(report(pool, res, rows, bounds(pool), UNIFORM_BUDGETS, grid))
    elapsed = time.perf_counter() - started
    print(f"\n{elapsed:.0f} s")
    if args.json:
        payload = {"reps": args.reps, "seed": args.seed, "seconds": elapsed, "datasets": results}
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
