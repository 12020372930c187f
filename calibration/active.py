"""Choosing which units humans label: sampling weights from the judge's uncertainty, an
open-ended sampling order, and the inclusion probabilities the corrected estimates need.

Active statistical inference (Zrnic & Candes 2024, "Active Statistical Inference", ICML)
labels unit i with probability proportional to sqrt(E[(Y - f)^2 | x_i]), the judge's expected
error there, and weights the labelled residuals by 1 / probability (`calibration.correction`,
`ppi_mean(..., inclusion=...)`), which keeps the estimate unbiased whatever the weights.

* **Uncertainty** (`vote_uncertainty`): a unit's votes (every judge and presentation order,
  each as system_a's score: win 1, tie 1/2, loss 0) read as the judge's predictive
  probability p that system_a wins. Against a human label drawn from that prediction the
  expected squared error of the judge's mean vote is p (1 - p): 0 when every vote agrees on
  a winner, 1/4 when the orders disagree or the judge says tie. `floor` (default 0.05) is
  added because unanimous judges are wrong too; the square root is Zrnic & Candes' rule.
* **Weights** (`sampling_weights`): the uncertainties mixed with a uniform share, w_i =
  (1 - uniform) u_i / mean(u) + uniform, so that every unit keeps a positive probability
  (the estimate's variance has 1 / probability in it).
* **Order** (`priorities`): sequential Poisson sampling (Ohlsson 1998): unit i gets the key
  U_i / w_i with U_i uniform on (0, 1); labelling in increasing key order, the labelled set
  after any number of labels is {i : U_i / w_i < t} for the first unlabelled key t, so each
  unit was included with probability min(1, t w_i) (`inclusion`) — no sample size is fixed in
  advance, annotators can stop at any point and the probabilities are known there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_FLOOR = 0.05
"""Expected squared error assumed for a unit whose votes all agree."""
DEFAULT_UNIFORM = 0.2
"""Share of the sampling weight spread uniformly over all units."""


def vote_uncertainty(
    votes: Sequence[Sequence[float]] | Sequence[np.ndarray], *, floor: float = DEFAULT_FLOOR
) -> np.ndarray:
    """Per unit: sqrt(p (1 - p) + floor), p the mean of its votes (system_a's scores in
    [0, 1]). A unit with no vote (every order failed to parse) counts as p = 1/2: the judge
    said nothing, so it is as uncertain as it can be."""
    if floor < 0:
        raise ValueError(f"floor must be >= 0, got {floor}")
    p = np.empty(len(votes))
    for i, unit in enumerate(votes):
        arr = np.asarray(unit, dtype=float)
        if arr.size and (not np.isfinite(arr).all() or arr.min() < 0 or arr.max() > 1):
            raise ValueError(f"unit {i}: votes must be scores in [0, 1], got {arr.tolist()}")
        p[i] = arr.mean() if arr.size else 0.5
    return np.sqrt(p * (1.0 - p) + floor)


def sampling_weights(uncertainty: Sequence[float] | np.ndarray, *, uniform: float) -> np.ndarray:
    """w_i = (1 - uniform) u_i / mean(u) + uniform: mean 1, each at least `uniform`."""
    u = np.asarray(uncertainty, dtype=float)
    if not 0.0 < uniform <= 1.0:
        raise ValueError(f"uniform must lie in (0, 1], got {uniform}")
    if u.size == 0:
        return u
    if not np.isfinite(u).all() or (u < 0).any():
        raise ValueError("uncertainties must be finite and >= 0")
    mean = u.mean()
    if mean <= 0:  # no unit more uncertain than another: plain uniform sampling
        return np.ones_like(u)
    return (1.0 - uniform) * u / mean + uniform


def priorities(weights: Sequence[float] | np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sequential Poisson sampling keys U_i / w_i (label units in increasing key order)."""
    return sampling_keys(weights, rng.random(len(np.asarray(weights))))


def sampling_keys(
    weights: Sequence[float] | np.ndarray, uniforms: Sequence[float] | np.ndarray
) -> np.ndarray:
    """The keys (1 - u_i) / w_i of given uniform draws u_i in [0, 1) (draws fixed per unit,
    e.g. hashed from its id, make the order independent of the units' order)."""
    w = np.asarray(weights, dtype=float)
    u = np.asarray(uniforms, dtype=float)
    if (w <= 0).any():
        raise ValueError("weights must be > 0: every unit needs a chance of a label")
    if u.shape != w.shape or (u < 0).any() or (u >= 1).any():
        raise ValueError("uniforms: one draw in [0, 1) per weight")
    # 1 - u lies in (0, 1]: a key of exactly 0 would tie every weight.
    return (1.0 - u) / w


def inclusion(weights: Sequence[float] | np.ndarray, threshold: float) -> np.ndarray:
    """min(1, t w_i): the probability that unit i's key falls below the threshold t."""
    if not threshold > 0:
        raise ValueError(f"threshold must be > 0, got {threshold}")
    return np.minimum(1.0, threshold * np.asarray(weights, dtype=float))


@dataclass(frozen=True)
class Draw:
    """The first `n` units of a sampling order with their inclusion probabilities."""

    chosen: np.ndarray
    """Indices of the labelled units, in labelling order."""
    probability: np.ndarray
    """Inclusion probability of each chosen unit (same order)."""
    threshold: float
    """The key of the first unit not chosen (infinite when every unit was)."""


def first_n(keys: np.ndarray, weights: np.ndarray, n: int) -> Draw:
    """The n smallest keys and the probabilities they were drawn with (Ohlsson's threshold:
    the (n+1)-th key). All units chosen: probability 1 each."""
    if not 0 < n <= len(keys):
        raise ValueError(f"n must lie in 1..{len(keys)}, got {n}")
    order = np.argsort(keys, kind="stable")
    chosen = order[:n]
    if n == len(keys):
        return Draw(chosen, np.ones(n), float("inf"))
    threshold = float(keys[order[n]])
    return Draw(chosen, inclusion(weights[chosen], threshold), threshold)
