"""A cascade of judges with a guarantee on agreement with humans ("Trust or Escalate", Jung et
al., ICLR 2025): judges ordered by cost; each decides the items on which its confidence passes
a threshold, the rest go to the next judge and, after the last, to humans. Each judge's
threshold is calibrated on human-labelled items so that, with probability at least 1 - delta,
its agreement with the humans on the items it decides is at least `target`.

Calibration, per level, on the labelled items that reach it: candidate thresholds (a grid of
quantiles of the level's confidences on those items: the top 1/grid of them, the top 2/grid,
...; chosen from the confidences only, never from the labels) from the most to the least
confident are tested in that fixed order, each with the exact binomial test
of "disagreement on the items at or above it exceeds 1 - target"; the sequence stops at the
first threshold not rejected at delta / levels, and the level keeps the last one rejected
(fixed-sequence testing controls the error of the whole sequence at that level; the union
bound over levels gives the cascade's 1 - delta). A level with no rejected threshold decides
nothing. The guarantee is about new items exchangeable with the calibration items.

Knows no LLM: a judge is a name, its labels and confidences are arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binom


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
    return float(binom.cdf(errors, n, allowed))


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
    for level in levels:
        conf, right = np.asarray(level.confidence, float), np.asarray(level.label) == human
        labelled = _has_label(level)
        # An item the judge gave no label reaches the next level, whatever its confidence.
        idx = np.flatnonzero(reaching & labelled)
        order = idx[np.argsort(-conf[idx], kind="stable")]
        chosen: float | None = None
        chosen_p = None
        decided = 0
        agree = None
        # A threshold of the top 1% of a level's items has too few items to be rejected, and
        # the sequence would stop there: the grid starts at the top 1/grid.
        shares = 1 - np.arange(1, grid + 1) / grid
        values = (
            np.unique(np.quantile(conf[idx], shares, method="inverted_cdf"))[::-1]
            if idx.size
            else np.array([])
        )
        for value in values:
            at = order[conf[order] >= value]
            errors = int((~right[at]).sum())
            p = _binomial_p(errors, len(at), 1 - target)
            if p > per_level:
                break
            chosen, chosen_p, decided = float(value), p, len(at)
            agree = 1 - errors / len(at)
        out.append(Threshold(level.judge, chosen, len(idx), decided, agree, chosen_p))
        if chosen is not None:
            reaching &= ~(labelled & (conf >= chosen))
    return Cascade(tuple(out), target, delta)


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
