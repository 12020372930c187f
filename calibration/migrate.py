"""Moving a finished run to a new judge without judging everything again (issue 32, item 5).

The new judge re-judges the *calibration items* (those with human labels) and a seeded random
sample of the run's other items. Its estimate of a past comparison on **all** items uses the
old judge as a predictor: per stratum h (labelled, other) of N_h items, n_h of them re-judged,

    theta_new = sum_h N_h / N * ( mean_h(old) + mean_{S_h}(new - old) )

the difference estimator of two-phase sampling (Cochran 1977, 12.6; PPI with lambda = 1).
It is unbiased for the new judge's mean on all items whenever each stratum's re-judged items
are a simple random sample of it; the better the old judge predicts the new one, the smaller
its variance: (1/n) Var(new - (1 - f) old) + (1 - f)^2 / (N - n) Var(old) per stratum,
f = n/N. The labelled items are a stratum of their own because people choose what they
label: they need not be like the other items, and the estimator does not assume they are.

The interval resamples items within four cells, (stratum) x (re-judged or not), keeping each
cell's size, which is the bootstrap of the two-phase design (the re-judged items and the rest
are independent samples of the items). It is one mean over items: an item that was re-judged
carries old + N_h / n_h (new - old), the others old, so the run's own bootstrap
(`calibration.pairs.paired_difference`: orientation-free, rows in canonical order, the t or
sign test where the resamples cannot resolve the p-value) gives the interval and the p-value,
and "told apart" is Holm's over the same family of pairs the old run compared, as everywhere.

Also here: which items to re-judge (`choose_items`), how the two judges map onto each other on
the re-judged keys (`judge_mapping`: agreement, Krippendorff's alpha, a confusion table), and
each judge against the humans on the re-judged labelled items (`against_humans`, the trust
gate). Pure numpy/pandas; knows no LLM.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd

from calibration.bootstrap import PairedBootstrapResult
from calibration.calibrate import CalibrationReport, calibrate
from calibration.estimate import Agreement, Estimate
from calibration.labels import natural_key
from calibration.pairs import PairComparison, holm_family, paired_difference
from calibration.resampling import Method
from calibration.trust_gate import GateThresholds

Stratum = Literal["labelled", "other"]
STRATA: tuple[Stratum, ...] = ("labelled", "other")
Change = Literal["flips", "loses", "gains", "unchanged", "not estimable"]
CHANGES: tuple[Change, ...] = ("flips", "loses", "gains", "unchanged", "not estimable")
MAPPING_LABELS = ("ahead", "behind", "tie")
"""The confusion table's labels, in each pair's own terms: the system the old run had ahead
won, the other one won, or a tie (so the table does not depend on what systems are called)."""


# --------------------------------------------------------------------------- the design


@dataclass(frozen=True)
class Design:
    """Which of a run's items the new judge re-judges: every item's stratum, and the chosen."""

    strata: pd.Series
    """Item id -> stratum (`labelled` or `other`), every item of the run once."""
    chosen: frozenset[str]
    seed: int

    def size(self, stratum: Stratum) -> tuple[int, int]:
        """(items, chosen items) of `stratum`."""
        ids = self.strata.index[self.strata == stratum]
        return len(ids), sum(1 for i in ids if i in self.chosen)


def choose_items(
    labelled: Iterable[str],
    others: Iterable[str],
    *,
    labelled_n: int | None,
    sample_n: int,
    seed: int,
) -> Design:
    """A seeded random sample of `labelled_n` labelled items (None: all) and of `sample_n`
    other items. Each stratum draws from a seed of its own, in the items' natural order, and
    takes the first n of one permutation, so the choice does not depend on the order the items
    came in, a larger n keeps the smaller n's items (they are not paid for again), and
    changing one stratum's n leaves the other's choice as it was."""
    pools = [sorted(set(map(str, ids)), key=natural_key) for ids in (labelled, others)]
    overlap = set(pools[0]) & set(pools[1])
    if overlap:
        raise ValueError(f"items both labelled and not: {sorted(overlap)[:3]}")
    wanted = [len(pools[0]) if labelled_n is None else labelled_n, sample_n]
    chosen: set[str] = set()
    streams = np.random.SeedSequence(seed).spawn(len(STRATA))
    for name, pool, n, stream in zip(STRATA, pools, wanted, streams, strict=True):
        if not 0 <= n <= len(pool):
            raise ValueError(f"{n} {name} items asked for, {len(pool)} available")
        order = np.random.default_rng(stream).permutation(len(pool))
        chosen.update(pool[i] for i in order[:n])
    strata = pd.Series(
        [STRATA[0]] * len(pools[0]) + [STRATA[1]] * len(pools[1]),
        index=pools[0] + pools[1],
        dtype=object,
    )
    return Design(strata, frozenset(chosen), seed)


# --------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class PastComparison:
    """One comparison as the old run reported it, `a` the system it had ahead."""

    a: str
    b: str
    mean_diff: float
    ci_low: float | None
    ci_high: float | None
    told_apart: bool


@dataclass(frozen=True)
class Moved:
    """One past comparison, estimated again with the new judge (a - b, net win rate)."""

    past: PastComparison
    old_mean: float
    """The old judge's a - b on the items recomputed from its verdicts (equals `past`'s)."""
    items: int
    """Items with an old verdict on the pair: the population the estimate is for."""
    rejudged: int
    """Of those, items with a new verdict too (the sample behind the correction)."""
    new_missing: int
    """Chosen items the new judge gave no verdict on the pair (left out of the sample)."""
    new: PairComparison | None
    """The new judge's a - b on all items, Holm-adjusted with the other pairs; None when a
    stratum has items but no re-judged one (`reason`)."""
    shift: PairedBootstrapResult | None
    """new - old on all items: sum_h N_h / N mean_{S_h}(new - old), with its interval."""
    change: Change
    reason: str | None = None


def _scores(table: pd.DataFrame) -> pd.DataFrame:
    """Judgments (item_id, system_a, system_b, winner: a system, `tie` or missing) as one row
    per key named in sorted order, `s`: the first-named system's score (1, 0.5, 0; NaN
    without a verdict)."""
    a, b = table["system_a"].astype(str), table["system_b"].astype(str)
    flip = (a > b).to_numpy()
    winner = table["winner"].astype(object).where(table["winner"].notna(), None)
    first = np.where(flip, b, a)
    second = np.where(flip, a, b)
    s = np.where(
        winner == first,
        1.0,
        np.where(winner == second, 0.0, np.where(winner == "tie", 0.5, np.nan)),
    )
    odd = np.isnan(s) & winner.notna().to_numpy()
    if odd.any():
        at = int(np.flatnonzero(odd)[0])
        raise ValueError(
            f"row {at}: winner {winner.iloc[at]!r} is neither {first[at]!r}, {second[at]!r} nor tie"
        )
    out = pd.DataFrame(
        {"item_id": table["item_id"].astype(str).to_numpy(), "x": first, "y": second, "s": s}
    )
    if out.duplicated(["item_id", "x", "y"]).any():
        raise ValueError("a key (item, pair of systems) is judged twice: give one judgment per key")
    return out


def _pair_diffs(scores: pd.DataFrame, a: str, b: str) -> pd.Series:
    """Item id -> a's net win over b (1, 0, -1), verdicts only."""
    x, y = sorted((a, b))
    rows = scores[(scores["x"] == x) & (scores["y"] == y) & scores["s"].notna()]
    s = rows["s"].to_numpy() if x == a else 1 - rows["s"].to_numpy()
    return pd.Series(2 * s - 1, index=rows["item_id"].to_numpy())


@dataclass(frozen=True)
class MigratedMean:
    """The difference estimator of one mean over items (module docstring)."""

    estimate: PairedBootstrapResult | None
    """theta_new: sum_h N_h / N (mean_h(old) + mean_{S_h}(new - old)), its interval and
    p-value for "theta_new is 0"; None when a stratum has items but none re-judged
    (`reason`)."""
    shift: PairedBootstrapResult | None
    """theta_new - mean(old): sum_h N_h / N mean_{S_h}(new - old), with its interval."""
    old_mean: float
    items: int
    rejudged: int
    """Items with both values (the sample behind the correction)."""
    new_missing: int
    """Chosen items without a new value (left out of the sample: assumed missing at random)."""
    reason: str | None = None


def migrated_mean(
    old: pd.Series,
    new: pd.Series,
    design: Design,
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    method: Method = "percentile",
) -> MigratedMean:
    """The new judge's mean on every item of `old` (item id -> the old judge's value), from
    `new` (item id -> the new judge's value on the re-judged items; missing or NaN elsewhere)
    and the old values. An item re-judged carries old + N_h / n_h (new - old), the others
    old, and the cells (stratum x re-judged) are resampled apart, keeping their sizes."""
    items = old.index.to_numpy(dtype=object)
    stratum = design.strata.reindex(items).to_numpy(dtype=object)
    if pd.isna(stratum).any():
        raise ValueError(f"item {items[pd.isna(stratum)][0]!r} has a value but no stratum")
    old_v = old.to_numpy(dtype=float)
    new_v = new.reindex(items).to_numpy(dtype=float)
    chosen = np.fromiter((i in design.chosen for i in items), bool, len(items))
    sampled = chosen & ~np.isnan(new_v)
    weight = np.zeros(len(items))
    reason = None
    for h in STRATA:
        in_h = stratum == h
        n_h = int((sampled & in_h).sum())
        if in_h.any() and n_h == 0:
            reason = f"none of its {int(in_h.sum())} {h} items has a new verdict"
        elif n_h:
            weight[sampled & in_h] = in_h.sum() / n_h
    delta = np.where(sampled, new_v - old_v, 0.0)
    cells = np.array(
        [f"{h}/{'re-judged' if s else 'kept'}" for h, s in zip(stratum, sampled, strict=True)]
    )
    common = {"seed": seed, "resamples": resamples, "ci": ci, "method": method}

    def boot(values: np.ndarray) -> PairedBootstrapResult:
        zero = np.zeros(len(values))
        return paired_difference(values, zero, items=items, strata=cells, **common)

    return MigratedMean(
        estimate=None if reason else boot(old_v + weight * delta),
        shift=None if reason else boot(weight * delta),
        old_mean=float(old_v.mean()),
        items=len(items),
        rejudged=int(sampled.sum()),
        new_missing=int((chosen & np.isnan(new_v)).sum()),
        reason=reason,
    )


def _in_range(c: PairComparison) -> PairComparison:
    """The estimate and its interval clipped to [-1, 1], where a net win rate lies: with few
    items re-judged, old + N/n (new - old) can overshoot (an interval cut to the parameter's
    range covers whenever the uncut one does); the p-value is the uncut statistic's."""
    r = c.result

    def cut(x: float) -> float:
        return float(np.clip(x, -1.0, 1.0)) if np.isfinite(x) else x

    clipped = replace(
        r,
        mean_diff=cut(r.mean_diff),
        ci_low=cut(r.ci_low),
        ci_high=cut(r.ci_high),
        percentile=(cut(r.percentile[0]), cut(r.percentile[1])),
        bca=(cut(r.bca[0]), cut(r.bca[1])),
    )
    return replace(c, result=clipped)


def _change(past: PastComparison, new: PairComparison | None) -> Change:
    """Sign flips first (the new estimate points the other way), then told apart lost or
    gained: "told apart" is the Holm-adjusted test on both sides."""
    if new is None:
        return "not estimable"
    if past.mean_diff != 0 and np.sign(new.result.mean_diff) == -np.sign(past.mean_diff):
        return "flips"
    if past.told_apart and not new.told_apart:
        return "loses"
    if new.told_apart and not past.told_apart:
        return "gains"
    return "unchanged"


def moved_comparisons(
    old: pd.DataFrame,
    new: pd.DataFrame,
    design: Design,
    past: Sequence[PastComparison],
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
    method: Method = "percentile",
) -> tuple[Moved, ...]:
    """Each past comparison estimated with the new judge on all items (module docstring).
    `old`, `new`: judgments, item_id, system_a, system_b, winner (a system's name, `tie`, or
    missing), one per key; the new judge's on the chosen items. The estimates are
    Holm-adjusted together, as the old run's were."""
    old_s, new_s = _scores(old), _scores(new)
    common = {"seed": seed, "ci": ci, "method": method}
    diffs = {}
    for p in past:
        old_d = _pair_diffs(old_s, p.a, p.b)
        if old_d.empty:
            raise ValueError(f"the old judge has no verdict on {p.a} vs {p.b}")
        diffs[(p.a, p.b)] = (old_d, _pair_diffs(new_s, p.a, p.b))
    laid = {
        (p.a, p.b): migrated_mean(*diffs[(p.a, p.b)], design, resamples=resamples, **common)
        for p in past
    }

    def rerun(a: str, b: str, n: int) -> tuple[PairedBootstrapResult, int] | None:
        again = migrated_mean(*diffs[(a, b)], design, resamples=n, **common).estimate
        return None if again is None else (again, 0)

    done = [(a, b, m.estimate, 0) for (a, b), m in laid.items() if m.estimate is not None]
    family = {(c.a, c.b): _in_range(c) for c in holm_family(done, rerun=rerun)}
    out = []
    for p in past:
        m, new_c = laid[(p.a, p.b)], family.get((p.a, p.b))
        out.append(
            Moved(
                past=p,
                old_mean=m.old_mean,
                items=m.items,
                rejudged=m.rejudged,
                new_missing=m.new_missing,
                new=new_c,
                shift=m.shift,
                change=_change(p, new_c),
                reason=m.reason,
            )
        )
    return tuple(out)


# --------------------------------------------------------------------------- the two judges


@dataclass(frozen=True)
class JudgeMapping:
    """Old judge against new on the keys both judged: how often they agree, chance-corrected
    (alpha and kappa: `calibration.calibrate` with the old judge's verdicts as the labels,
    both orientations of every pair, intervals over keys), and the confusion table."""

    keys: int
    agreement: Agreement
    """Share of keys with the same verdict, ties counting (MT-Bench's S1)."""
    alpha: Estimate
    kappa: Estimate
    labels: tuple[str, ...]
    """`MAPPING_LABELS`: rows are the old judge's verdict, columns the new judge's."""
    confusion: tuple[tuple[int, ...], ...]


def _keyed(table: pd.DataFrame, keys: pd.DataFrame) -> pd.DataFrame:
    """`table`'s judgments of `keys` (item_id, x, y: sorted names), with a verdict."""
    s = _scores(table)
    s = s[s["s"].notna()]
    return s.merge(keys, on=["item_id", "x", "y"], how="inner")


def _as_labels(scores: pd.DataFrame) -> pd.DataFrame:
    """Sorted keys back as item_id, system_a, system_b, winner."""
    winner = np.where(
        scores["s"] == 1.0, scores["x"], np.where(scores["s"] == 0.0, scores["y"], "tie")
    )
    return pd.DataFrame(
        {
            "item_id": scores["item_id"].to_numpy(),
            "system_a": scores["x"].to_numpy(),
            "system_b": scores["y"].to_numpy(),
            "winner": winner,
        }
    )


def _both_judged(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The keys (item_id, x, y) both judges gave a verdict on."""
    o, n = _scores(old), _scores(new)
    key = ["item_id", "x", "y"]
    return o[o["s"].notna()][key].merge(n[n["s"].notna()][key], on=key, how="inner")


def judge_mapping(
    old: pd.DataFrame,
    new: pd.DataFrame,
    past: Sequence[PastComparison],
    *,
    seed: int,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> JudgeMapping:
    """The old and the new judge on the keys both judged (`JudgeMapping`); `past` orients
    each pair for the confusion table."""
    keys = _both_judged(old, new)
    if keys.empty:
        raise ValueError("no key has a verdict from both judges: nothing to map")
    o, n = _keyed(old, keys), _keyed(new, keys)
    report = calibrate(
        _as_labels(n),
        _as_labels(o),
        kind="pairwise",
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )
    both = o.merge(n, on=["item_id", "x", "y"], suffixes=("_old", "_new"))
    ahead = {tuple(sorted((p.a, p.b))): p.a for p in past}
    first_ahead = np.array(
        [ahead.get((x, y), x) == x for x, y in zip(both["x"], both["y"], strict=True)]
    )

    def label(s: pd.Series) -> np.ndarray:
        s_ahead = np.where(first_ahead, s.to_numpy(), 1 - s.to_numpy())
        return np.where(s_ahead == 1.0, 0, np.where(s_ahead == 0.0, 1, 2))

    counts = np.zeros((3, 3), dtype=int)
    np.add.at(counts, (label(both["s_old"]), label(both["s_new"])), 1)
    metrics = report.overall.metrics
    s1 = metrics["agreement_s1"]
    if not isinstance(s1, Agreement):
        raise TypeError("calibrate gave agreement_s1 without its counts")
    return JudgeMapping(
        keys=len(keys),
        agreement=s1,
        alpha=metrics["alpha"],
        kappa=metrics["kappa"],
        labels=MAPPING_LABELS,
        confusion=tuple(tuple(int(v) for v in row) for row in counts),
    )


def against_humans(
    old: pd.DataFrame,
    new: pd.DataFrame,
    human: pd.DataFrame,
    items: Collection[str],
    *,
    gate: GateThresholds | None = None,
    seed: int,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[CalibrationReport, CalibrationReport]:
    """The old judge and the new one against the human labels (item_id, system_a, system_b,
    winner [+ annotator]) on the same keys: those of `items` (the re-judged labelled items)
    that both judges gave a verdict on, so the two trust gates differ only by the judge."""
    wanted = {str(i) for i in items}
    keys = _both_judged(old, new)
    keys = keys[keys["item_id"].isin(wanted)]
    people = human[human["item_id"].astype(str).isin(wanted)]
    if keys.empty or people.empty:
        raise ValueError("no re-judged labelled key has a verdict from both judges")
    common = {
        "kind": "pairwise",
        "gate": gate,
        "seed": seed,
        "resamples": resamples,
        "confidence": confidence,
    }
    return (
        calibrate(_as_labels(_keyed(old, keys)), people, **common),  # type: ignore[arg-type]
        calibrate(_as_labels(_keyed(new, keys)), people, **common),  # type: ignore[arg-type]
    )
