"""A cascade of judges with a guarantee on agreement with humans ("Trust or Escalate", Jung et
al., ICLR 2025): judges ordered by cost; each decides the items on which its confidence passes
a threshold, the rest go to the next judge and, after the last, to humans. Each judge's
threshold is calibrated on human-labelled items so that, with probability at least 1 - delta,
its agreement with the humans on the items it decides is at least `target`.

Calibration, per level, on the labelled items that reach it, ordered by confidence: candidate
decided sets (the m most confident items, for m from `first_size` up to all of them in `grid`
steps; chosen from the confidences and the label count only, never from the labels) from the
smallest to the largest are tested in that fixed order, each with the exact binomial test of
"disagreement on the items at or above its lowest confidence exceeds 1 - target"; the sequence
stops at the first set not rejected at delta / levels, and the level keeps the last one
rejected (fixed-sequence testing controls the error of the whole sequence at that level; the
union bound over levels gives the cascade's 1 - delta). A level with no rejected set decides
nothing, and says why: too few labels to certify any threshold (with the count that could),
or a judge that disagrees too often even where it is surest. The guarantee is about new items
exchangeable with the calibration items.

Where the sequence starts decides its power: one failed test ends it. The smallest set that
could pass at all (target^m <= delta / levels: 22 items at 0.9 and 0.1) must be free of any
disagreement, which a judge 98% right when confident misses one time in three; a grid of
quantiles starting at the top 5% needs about 440 labels before its first set is that large.
The sequence starts instead at the smallest set that passes with half the allowed
disagreement (`first_size`: 38 items at 0.9 and 0.1, one disagreement allowed, which a judge
98% right when confident passes 82% of the time), whatever the number of labels.

Knows no LLM: a judge is a name, its labels and confidences are arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import bdtr


@dataclass(frozen=True)
class Level:
    judge: str
    confidence: np.ndarray
    """Per item: the judge's confidence in its label (higher: surer)."""
    label: np.ndarray
    """Per item: the judge's label (compared with the human label by equality)."""
    cost: float | None = None
    """Per item it is asked about (every item that reaches it)."""

    def rows(self, idx: np.ndarray) -> Level:
        """The same judge on the items `idx` (a calibration or a test split)."""
        return Level(self.judge, self.confidence[idx], self.label[idx], self.cost)


@dataclass(frozen=True)
class Threshold:
    judge: str
    threshold: float | None
    """Decides items with confidence >= this; None: decides nothing."""
    calibration_items: int
    """Labelled items that reached this level with a label from its judge."""
    decided: int
    """Of those, decided at this threshold."""
    agreement: float | None
    """Agreement with humans on the calibration items it decided."""
    p_value: float | None
    reason: str | None = None
    """Why it decides nothing (None when it decides some items)."""
    labels_needed: int | None = None
    """Labelled items reaching this level that the first test needs, when it had fewer."""


@dataclass(frozen=True)
class Cascade:
    levels: tuple[Threshold, ...]
    target: float
    delta: float


def _has_label(level: Level) -> np.ndarray:
    """Items the level's judge gave a label (None or NaN: it did not)."""
    return np.array([not pd.isna(label) for label in np.asarray(level.label, dtype=object)])


def _binomial_p(errors: int, n: int, allowed: float) -> float:
    """P(at most `errors` disagreements among n) if the disagreement rate were `allowed`: small
    when the data show a rate below it."""
    return float(bdtr(errors, n, allowed))


def first_size(target: float, level: float) -> int:
    """The fewest items whose binomial test of "disagreement exceeds 1 - target" is rejected
    at `level` when they disagree at half that rate (module docstring)."""
    allowed = 1 - target
    m = 1
    while bdtr(math.floor(m * allowed / 2), m, allowed) > level:
        m += 1
    return m


def calibrate(
    levels: Sequence[Level],
    human: np.ndarray,
    *,
    target: float = 0.9,
    delta: float = 0.1,
    grid: int = 20,
) -> Cascade:
    """Thresholds for `levels` (cheapest first) from the labelled items (`human`, aligned with
    each level's arrays)."""
    if not 0 < target < 1 or not 0 < delta < 1:
        raise ValueError(f"target and delta must be in (0, 1), got {target} and {delta}")
    human = np.asarray(human)
    reaching = np.ones(len(human), dtype=bool)
    out = []
    per_level = delta / len(levels)
    start = first_size(target, per_level)
    for level in levels:
        conf, right = np.asarray(level.confidence, float), np.asarray(level.label) == human
        labelled = _has_label(level)
        # An item the judge gave no label reaches the next level, whatever its confidence.
        idx = np.flatnonzero(reaching & labelled)
        cut = _level_threshold(level.judge, conf, right, idx, target, per_level, start, grid)
        out.append(cut)
        if cut.threshold is not None:
            reaching &= ~(labelled & (conf >= cut.threshold))
    return Cascade(tuple(out), target, delta)


def _level_threshold(
    judge: str,
    conf: np.ndarray,
    right: np.ndarray,
    idx: np.ndarray,
    target: float,
    level: float,
    start: int,
    grid: int,
) -> Threshold:
    """The fixed-sequence test over one level's decided sets (module docstring)."""
    n = idx.size
    if n < start:
        return Threshold(
            judge, None, n, 0, None, None,
            reason=f"not enough labels to certify any threshold: {n} labelled items reach "
            f"{judge}, the first test needs about {start}",
            labels_needed=start,
        )  # fmt: skip
    order = idx[np.argsort(-conf[idx], kind="stable")]
    sizes = np.unique(np.linspace(start, n, num=max(2, grid)).round().astype(int))
    chosen: Threshold | None = None
    for m in sizes:
        value = float(conf[order[m - 1]])
        at = order[conf[order] >= value]  # items tied at the m-th confidence come too
        errors = int((~right[at]).sum())
        p = _binomial_p(errors, len(at), 1 - target)
        if p > level:
            if chosen is None:
                return Threshold(
                    judge, None, n, 0, None, p,
                    reason=f"not good enough: on its {len(at)} most confident labelled items "
                    f"it disagrees with the humans on {errors} ({errors / len(at):.0%}), not "
                    f"shown below the {1 - target:.0%} the target allows (p {p:.2g} > "
                    f"{level:.2g})",
                )  # fmt: skip
            break
        chosen = Threshold(judge, value, n, len(at), 1 - errors / len(at), p)
    assert chosen is not None
    return chosen


@dataclass(frozen=True)
class CascadeOutcome:
    decided_by: np.ndarray
    """Per item: the index of the level that decided it; len(levels) = left to humans."""
    label: np.ndarray
    """Per item: the deciding level's label (None where humans decide)."""
    coverage: tuple[float, ...]
    """Share of the items each level decided."""
    cost: float | None
    """Per item: every level asks the judges it reaches."""


def apply(cascade: Cascade, levels: Sequence[Level]) -> CascadeOutcome:
    n = len(np.asarray(levels[0].confidence))
    decided_by = np.full(n, len(levels))
    label = np.full(n, None, dtype=object)
    open_ = np.ones(n, dtype=bool)
    spent = 0.0
    known = True
    for i, (level, cut) in enumerate(zip(levels, cascade.levels, strict=True)):
        if level.cost is None:
            known = False
        else:
            spent += level.cost * open_.sum()
        if cut.threshold is None:
            continue
        take = open_ & _has_label(level) & (np.asarray(level.confidence, float) >= cut.threshold)
        decided_by[take] = i
        label[take] = np.asarray(level.label, dtype=object)[take]
        open_ &= ~take
    coverage = tuple(float((decided_by == i).mean()) for i in range(len(levels)))
    return CascadeOutcome(decided_by, label, coverage, spent / n if known else None)
