"""The alternative annotator test: could the judge replace one of the human annotators?

Calderon, Reichart & Dror (2025), "The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs", ACL 2025 (arXiv:2501.10970), sec. 3,
and the authors' README / notebook (github.com/nitaytech/AltTest). The procedure, as used here:

1. Only keys (instances) labelled by two or more annotators count.
2. For each annotator j, on each key i that j labelled, the others are the labels of the other
   annotators on that key. The alignment score of a label x is its mean similarity to the
   others' labels: accuracy (share of the others giving the same label) for nominal labels,
   minus the root mean squared difference for scores (the paper's ACC and -RMSE).
3. Indicators: W_f = 1 when the judge's score is >= annotator j's, W_h = 1 when j's is >= the
   judge's (a tie credits both, as in the authors' code).

   Repeated labels (an annotator labelling a key more than once; the paper has none) are
   resolved by content, as the rest of `calibrate` treats them: each counts as one vote, so an
   annotator's repeats all stand among the others of the other annotators, and annotator j's
   indicators on key i are averaged over j's repeats (the key keeps weight one in j's test).
   Keeping one of them would make the result depend on the order of the table's rows.
4. H0_j: rho_f <= rho_h - epsilon, the judge's advantage probability falling short of j's by
   the margin or more; H1_j the reverse. One-sided paired t-test on d_i = W_h - W_f against
   epsilon (H1: mean(d) < epsilon), df = n_j - 1.
5. Annotators with fewer than `min_items` such keys are left out (the paper: at least 30, for
   the t-test's normal approximation); the p-values of the rest are corrected with
   Benjamini-Yekutieli at q = 0.05 (the annotators' tests share keys, so they are dependent).
6. Winning rate omega = share of the tested annotators whose H0 is rejected; the judge passes
   when omega >= 0.5. The average advantage probability rho = mean over annotators of rho_f.

Epsilon is the paper's cost-benefit margin: 0.2 for experts, 0.15 for skilled annotators, 0.1
for crowd workers (README FAQ). The default here is 0.1, the strictest of the three: the gate
does not know who the annotators were, and the paper advises a smaller epsilon when
inter-annotator agreement is low.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import stdtr

from calibration.thresholds import EPSILON, MIN_ITEMS

Status = Literal["passed", "failed", "not enough evidence", "not applicable"]
Scoring = Literal["accuracy", "negative RMSE"]

Q = 0.05
MIN_ANNOTATORS = 2
WINNING_RATE = 0.5


@dataclass(frozen=True)
class AnnotatorResult:
    annotator: str
    items: int
    """Keys this annotator labelled that carry at least one other human label."""
    judge_advantage: float
    """rho_f: share of those keys where the judge aligns with the others at least as well."""
    annotator_advantage: float
    """rho_h: share where the annotator aligns with the others at least as well as the judge."""
    p_value: float
    """One-sided paired t-test of H0: rho_f <= rho_h - epsilon."""
    p_adjusted: float
    """Benjamini-Yekutieli adjusted p-value over the tested annotators."""
    rejected: bool
    """H0 rejected at q: the judge may replace this annotator."""


@dataclass(frozen=True)
class AnnotatorTest:
    status: Status
    message: str
    scoring: Scoring
    epsilon: float
    q: float
    min_items: int
    annotators: tuple[AnnotatorResult, ...]
    """The tested annotators (those with at least `min_items` shared keys)."""
    too_few_items: int
    """Annotators left out for sharing fewer than `min_items` keys with another annotator."""
    winning_rate: float | None
    advantage_probability: float | None
    items_needed: int | None
    """When there is not enough evidence: how many more keys the two best-covered annotators
    should both label (each needs `min_items` keys shared with another annotator)."""


def one_sided_p(d: np.ndarray, epsilon: float) -> float:
    """p-value of the one-sample t-test H0: mean(d) >= epsilon against H1: mean(d) < epsilon.

    A constant d (no variance) is decided by its mean: p = 0 below epsilon, 1 otherwise, the
    limit of the t statistic (scipy returns nan there)."""
    n = len(d)
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1)) if n > 1 else 0.0
    if sd == 0.0:
        return 0.0 if mean < epsilon else 1.0
    t = (mean - epsilon) / (sd / np.sqrt(n))
    return float(stdtr(n - 1, t))


def benjamini_yekutieli(p: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted p-values and rejections of the Benjamini-Yekutieli step-up procedure (valid
    under any dependence): the k-th smallest p is compared with k q / (m c(m)),
    c(m) = 1 + 1/2 + ... + 1/m; adjusted p_(k) = min over j >= k of m c(m) p_(j) / j, at most 1.
    """
    p = np.asarray(p, dtype=float)
    m = len(p)
    if m == 0:
        return p.copy(), np.zeros(0, dtype=bool)
    order = np.argsort(p, kind="stable")
    c = float(np.sum(1.0 / np.arange(1, m + 1)))
    scaled = p[order] * m * c / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted, adjusted <= q


def _indicators(table: pd.DataFrame, numeric: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per label row of `table` (key, annotator, human, judge): W_f and W_h against the labels of
    the other annotators on its key, and how many those are (0: nobody else labelled the key).
    Sums over the other annotators are the key's sums less the annotator's own (repeats too)."""
    key = table["key"].to_numpy()
    own = table.groupby(["key", "annotator"], sort=False).ngroup().to_numpy()

    def others_sum(values: np.ndarray) -> np.ndarray:
        return np.bincount(key, weights=values)[key] - np.bincount(own, weights=values)[own]

    others = np.rint(others_sum(np.ones(len(table)))).astype(np.int64)
    if numeric:
        h = table["human"].to_numpy(float)
        f = table["judge"].to_numpy(float)
        s1, s2 = others_sum(h), others_sum(h * h)
        n = np.maximum(others, 1)

        def mean_square(x: np.ndarray) -> np.ndarray:
            return (s2 - 2 * x * s1 + others * x * x) / n

        judge, human = -mean_square(f), -mean_square(h)
        # Sums of squares in floating point: treat differences at rounding level as ties.
        tol = 1e-9 * np.maximum(1.0, np.abs(judge) + np.abs(human))
        diff = np.where(np.abs(judge - human) <= tol, 0.0, judge - human)
    else:
        codes, _ = pd.factorize(pd.concat([table["human"], table["judge"]]).astype(str), sort=True)
        h, f = codes[: len(table)], codes[len(table) :]
        k = int(codes.max()) + 1
        # Same denominator (the others on the key): compare counts of matching labels.
        by_key = np.bincount(key * k + h, minlength=(key.max() + 1) * k)
        by_own = np.bincount(own * k + h, minlength=(own.max() + 1) * k)
        diff = (by_key[key * k + f] - by_own[own * k + f]) - (
            by_key[key * k + h] - by_own[own * k + h]
        )
    return (diff >= 0).astype(float), (diff <= 0).astype(float), others


def alternative_annotator_test(
    comparisons: pd.DataFrame,
    *,
    scoring: Scoring,
    epsilon: float = EPSILON,
    q: float = Q,
    min_items: int = MIN_ITEMS,
    identified: bool = True,
) -> AnnotatorTest:
    """The alt-test (module docstring) on `JoinedLabels.comparisons` rows (key, annotator,
    human, judge) of one stratum. `identified=False`: the annotator column was made up (one
    per row), so nobody can be followed across keys and the test does not apply."""
    table = comparisons[["key", "annotator", "human", "judge"]]
    names = table["annotator"].unique()

    def result(status: Status, message: str, **kw: Any) -> AnnotatorTest:
        values = {
            "annotators": (),
            "too_few_items": 0,
            "winning_rate": None,
            "advantage_probability": None,
            "items_needed": None,
        }
        values.update(kw)
        return AnnotatorTest(status, message, scoring, epsilon, q, min_items, **values)

    if not identified:
        return result(
            "not applicable",
            "alternative annotator test: the human table names no annotators (each row counted "
            "as its own), so no annotator can be followed across keys; add an annotator column",
        )
    if len(names) < MIN_ANNOTATORS:
        return result(
            "not applicable",
            f"alternative annotator test: it needs two or more annotators (found {len(names)})",
        )
    table = _per_annotator_key(table, scoring)
    if table.empty:
        return result(
            "not enough evidence",
            f"alternative annotator test: not enough evidence; no key has labels of two "
            f"annotators: label >= {min_items} keys by two annotators",
            too_few_items=len(names),
            items_needed=min_items,
        )
    items = table.groupby("annotator", sort=True).size()
    tested = items[items >= min_items]
    if len(tested) < MIN_ANNOTATORS:
        message, needed = _shortfall(items, min_items)
        return result(
            "not enough evidence",
            message,
            too_few_items=len(items) - len(tested),
            items_needed=needed,
        )
    results, rejected = _tested(table, tested.index, epsilon, q)
    omega = float(np.mean(rejected))
    rho = float(np.mean([r.judge_advantage for r in results]))
    passed = omega >= WINNING_RATE
    shared = f"{min(r.items for r in results)}-{max(r.items for r in results)}"
    return result(
        "passed" if passed else "failed",
        f"alternative annotator test: the judge could replace {int(rejected.sum())} of "
        f"{len(results)} annotators (winning rate {omega:.2f}, {WINNING_RATE} needed; epsilon "
        f"{epsilon:g}, Benjamini-Yekutieli q {q:g}; {shared} shared keys per annotator); "
        f"advantage probability {rho:.3f}",
        annotators=results,
        too_few_items=len(items) - len(tested),
        winning_rate=omega,
        advantage_probability=rho,
    )


def _per_annotator_key(table: pd.DataFrame, scoring: Scoring) -> pd.DataFrame:
    """One row per (annotator, key) on keys another annotator labelled too: W_f and W_h
    averaged over the annotator's repeats."""
    w_f, w_h, others = _indicators(table, numeric=scoring == "negative RMSE")
    shared = others > 0
    return (
        table[shared]
        .assign(w_f=w_f[shared], w_h=w_h[shared])
        .groupby(["annotator", "key"], sort=True)[["w_f", "w_h"]]
        .mean()
        .reset_index()
    )


def _shortfall(items: pd.Series, min_items: int) -> tuple[str, int]:
    """Why fewer than `MIN_ANNOTATORS` annotators can be tested, and how many more keys the
    two best-covered annotators should both label."""
    best = items.sort_values(ascending=False).head(MIN_ANNOTATORS)
    second = int(best.iloc[-1]) if len(best) >= MIN_ANNOTATORS else 0
    needed = min_items - second
    shown = ", ".join(f"{a}: {n}" for a, n in best.items()) or "none"
    message = (
        f"alternative annotator test: not enough evidence; it needs {MIN_ANNOTATORS} "
        f"annotators with >= {min_items} keys shared with another annotator (best covered: "
        f"{shown}): label {needed} more keys by both"
    )
    return message, needed


def _tested(
    table: pd.DataFrame, tested: pd.Index, epsilon: float, q: float
) -> tuple[tuple[AnnotatorResult, ...], np.ndarray]:
    """Each tested annotator's one-sided test, Benjamini-Yekutieli adjusted over all of them;
    with the rejections."""
    rows = []
    for name in tested:
        group = table[table["annotator"] == name]
        d = group["w_h"].to_numpy() - group["w_f"].to_numpy()
        rows.append((str(name), len(group), group["w_f"].mean(), group["w_h"].mean(), d))
    p = np.array([one_sided_p(d, epsilon) for *_, d in rows])
    adjusted, rejected = benjamini_yekutieli(p, q)
    results = tuple(
        AnnotatorResult(name, n, float(rf), float(rh), float(pv), float(pa), bool(r))
        for (name, n, rf, rh, _), pv, pa, r in zip(rows, p, adjusted, rejected, strict=True)
    )
    return results, rejected
