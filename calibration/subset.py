"""Is the labelled subset like the rest? The check PPI++ and Rogan-Gladen need and cannot make.

The corrections assume the human-labelled units are a random subset of the judged ones (or
were drawn with known probabilities). Nothing in the labels proves that, but one thing can
refute it: the judge's verdicts are known on every unit, so their distribution on the labelled
units should match the unlabelled ones up to chance. A chi-square test of homogeneity (Fisher's
exact test for a 2 x 2 table, where small counts are the rule) on the verdict categories, and
on the presentation orders when the caller knows them (labels drawn from one order only is
the typical way a subset goes wrong), gives a p-value; below `level` the result carries a
warning. The default level is 0.01, not 0.05, because a run checks every system pair and a
warning should mean something.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SubsetCheck:
    p_value: float | None
    """Smallest p-value of the tests made (None: nothing to compare)."""
    test: str
    warning: str | None
    """Set when the labelled units differ from the unlabelled beyond chance."""


def _table(labeled: Sequence[object], unlabeled: Sequence[object]) -> np.ndarray:
    cats = sorted({str(v) for v in labeled} | {str(v) for v in unlabeled})
    return np.array(
        [[sum(str(v) == c for v in side) for c in cats] for side in (labeled, unlabeled)]
    )


def _p_value(table: np.ndarray) -> tuple[float | None, str]:
    from scipy import stats  # loaded when asked: scipy.stats costs every run half a second

    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2 or (table.sum(axis=1) == 0).any():
        return None, "none (one category, or one side empty)"
    if table.shape == (2, 2):
        return float(stats.fisher_exact(table).pvalue), "Fisher's exact test"
    return float(stats.chi2_contingency(table, correction=False).pvalue), "chi-square test"


def subset_check(
    judge_labeled: Sequence[object],
    judge_unlabeled: Sequence[object],
    *,
    order_labeled: Sequence[object] | None = None,
    order_unlabeled: Sequence[object] | None = None,
    level: float = 0.01,
) -> SubsetCheck:
    """Compare the judge's verdicts (and, if given, the presentation orders) on the labelled
    units with those on the unlabelled ones; warn below `level`."""
    found = []
    p, test = _p_value(_table(judge_labeled, judge_unlabeled))
    if p is not None:
        found.append((p, "the judge's verdicts", test))
    if order_labeled is not None and order_unlabeled is not None:
        p, test = _p_value(_table(order_labeled, order_unlabeled))
        if p is not None:
            found.append((p, "the presentation orders", test))
    if not found:
        return SubsetCheck(None, "none (nothing to compare)", None)
    p, what, test = min(found)
    warning = None
    if p < level:
        warning = (
            f"the labelled units differ from the unlabelled in {what} ({test}, p = {p:.2g}): "
            "they are not a random subset, so the corrected estimate may be biased; label a "
            "random sample, or pass the inclusion probabilities the labels were drawn with"
        )
    return SubsetCheck(p, "; ".join(f"{w}: {t}" for _, w, t in found), warning)
