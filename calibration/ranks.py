"""Ranks with honest ties.

`ranks_from_tests` (every comparison of systems): ranks from the same Holm-adjusted paired tests
that say which pairs are told apart (`calibration.pairs`), over an ordering of the systems
(Bradley–Terry strength, or mean score). The rank of s is

    1 + the number of systems above s in the ordering that are told apart from s,

the competition ("1224") ranking the usual leaderboard rule gives — one plus the number of
systems significantly better — raised where needed so that (a) ranks never improve down the
ordering and (b) s ranks below every system told apart from it and above it. When the tests are
transitive (every system told apart from a group is told apart from all of it) the raise never
acts. When they are not — A told apart from C, B from neither — the systems not told apart from
s are no interval of the ordering, and no ranking can tie exactly those: then (b) wins, so two
systems that share a rank are never told apart, while two with different ranks need not be
(B and C above differ because A is told apart from C). There is no chaining: a system shares a
rank only with systems it is not told apart from.

Pairs never tested (baseline mode tests only system-vs-baseline pairs) count as not told apart:
ranks then separate systems only through the baseline, and two systems on the same side of it
share a rank unless the ordering forces otherwise.

`interval_overlap_ranks` is the older rule, kept for public leaderboards, which publish
intervals but no paired tests: systems whose intervals overlap, directly or through a chain,
share a rank.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from calibration.pairs import PairComparison

# Estimates equal up to this (relative) are one place in the ordering: Bradley–Terry fits of
# renamed systems differ in the last digits, and the ranks must not.
_SAME_ESTIMATE = 1e-8


def ranks_from_tests(
    estimates: Mapping[str, float], told_apart: Collection[frozenset[str]]
) -> dict[str, int]:
    """Competition ranks (1 = best) from the ordering by `estimates` (higher is better) and
    the pairs the tests tell apart (module docstring). Systems with equal estimates are one
    place in the ordering, so their order among themselves changes nothing."""
    names = sorted(estimates, key=lambda s: -estimates[s])
    ranks: dict[str, int] = {}
    done: list[str] = []  # systems strictly above the current place
    i = 0
    while i < len(names):
        top = estimates[names[i]]
        tol = _SAME_ESTIMATE * max(1.0, abs(top))
        place = [s for s in names[i:] if top - estimates[s] <= tol]
        floor = max((ranks[t] for t in done), default=1)
        for s in place:
            apart = [t for t in done if frozenset((s, t)) in told_apart]
            ranks[s] = max(1 + len(apart), floor, *(ranks[t] + 1 for t in apart))
        done += place
        i += len(place)
    return ranks


def family_ranks(
    estimates: Mapping[str, float], comparisons: Sequence[PairComparison]
) -> tuple[dict[str, int], list[str]]:
    """`ranks_from_tests` over a Holm family's told-apart pairs, and a note for each of them
    whose paired difference points against the ordering (possible only with non-transitive
    preferences): its ranks follow the ordering."""
    apart = [c for c in comparisons if c.told_apart and c.a in estimates and c.b in estimates]
    notes = []
    for c in apart:
        ahead, behind = (c.a, c.b) if c.result.mean_diff > 0 else (c.b, c.a)
        if estimates[behind] > estimates[ahead]:
            notes.append(
                f"{ahead} is told apart from {behind} and ahead of it in their paired "
                "comparison, but behind it in the ordering (preferences are not transitive); "
                "the ranks follow the ordering"
            )
    return ranks_from_tests(estimates, {frozenset((c.a, c.b)) for c in apart}), notes


def interval_overlap_ranks(estimates: Any, ci_low: Any, ci_high: Any) -> np.ndarray:
    """Competition ranks (1 = best) where systems with overlapping intervals are tied.

    Overlap is closed transitively (connected components on the line), so groups are disjoint
    unions of intervals and every member of a higher group is above every member of a lower one.
    For orderings that come with intervals only (public leaderboards); where paired tests
    exist, `ranks_from_tests` is the rule.
    """
    est = np.asarray(estimates, dtype=np.float64)
    lo = np.asarray(ci_low, dtype=np.float64)
    hi = np.asarray(ci_high, dtype=np.float64)
    order = np.lexsort((-est, -lo))  # by lower bound, descending
    group = np.empty(len(est), dtype=np.int64)
    g, floor = -1, math.inf
    for i in order:
        if hi[i] < floor:  # disjoint from everything above: a new group starts
            g += 1
        group[i] = g
        floor = min(floor, lo[i])
    sizes = np.bincount(group, minlength=g + 1)
    above = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return above[group] + 1
