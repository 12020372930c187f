"""Pairwise labels with a known truth, to check what the trust gate says of judges whose quality
is known: humans right a given share of the time, and a perfect, human-level or random judge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from calibration.labels import OUTCOMES

SimulatedJudge = Literal["perfect", "human-level", "random"]
TRUTH_SHARES = (0.45, 0.40, 0.15)
"""How often a, b and tie are the true label (roughly MT-Bench's expert votes)."""


def simulated_labels(
    items: int, accuracies: Sequence[float], judge: SimulatedJudge, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(judge table, human table) on `items` pairs, every human labelling every pair.

    Human h gives the true label with probability `accuracies[h]`, otherwise one of the two
    wrong labels at random. The judge is the truth (`perfect`), one more human with the mean
    accuracy (`human-level`) or uniform over a, b, tie (`random`)."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(OUTCOMES), p=TRUTH_SHARES, size=items)

    def noisy(accuracy: float) -> np.ndarray:
        wrong = (truth + rng.integers(1, len(OUTCOMES), size=items)) % len(OUTCOMES)
        return np.where(rng.random(items) < accuracy, truth, wrong)

    humans = [noisy(a) for a in accuracies]
    if judge == "perfect":
        verdict = truth
    elif judge == "human-level":
        verdict = noisy(float(np.mean(accuracies)))
    else:
        verdict = rng.integers(0, len(OUTCOMES), size=items)
    labels = np.asarray(OUTCOMES)
    ids = [f"i{k}" for k in range(items)]
    judge_table = pd.DataFrame(
        {"item_id": ids, "system_a": "x", "system_b": "y", "winner": labels[verdict]}
    )
    human_table = pd.DataFrame(
        {
            "item_id": np.tile(ids, len(humans)),
            "system_a": "x",
            "system_b": "y",
            "winner": labels[np.concatenate(humans)],
            "annotator": np.repeat([f"h{k + 1}" for k in range(len(humans))], items),
        }
    )
    return judge_table, human_table
