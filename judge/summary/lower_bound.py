"""The number a CI gate reads from a run's summary: the lower confidence bound of one system's
win rate over another (ties count half), never the point estimate.

Which estimate, in this order:

* `corrected`: the run is calibrated against human labels (`calibration.corrected`), so the
  win rate is the PPI++ estimate of what the humans would have said, the judge's bias taken
  out, with the Wilson interval at its effective sample size (`calibration.correction`). A
  judge that disagrees with the humans widens this interval rather than moving it, so its
  lower bound is the claim the labels support.
* `judge`: no labels, so the judge's own paired comparison (`comparison.comparisons`): the
  net win rate d over items (both orders and every judge of an item resampled together)
  read as a win rate, (1 + d) / 2, interval included. It covers the sampling of items, not
  the judge's bias; the gate says so.

A lower bound that cannot be given (a pair with one item, a pair no human labelled) is None
with the reason: a gate on it fails, since a missing interval is no evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judge.errors import ConfigError
from judge.summary.run_summary import Analysis, Corrected, PairDiff, RunSummary

BoundSource = Literal["corrected", "judge"]


@dataclass(frozen=True)
class WinRateBound:
    """`system`'s win rate over `over` (ties half) with its interval, and where it comes
    from. The interval is two-sided at `confidence`, so `ci_low` is a one-sided bound at
    (1 + confidence) / 2 (97.5% for the 95% intervals of a run)."""

    system: str
    over: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    source: BoundSource
    n: int
    """`corrected`: the human-labelled units of the pair; `judge`: the items compared."""
    n_judged: int
    """Items with a judgment of the pair (`corrected` uses the unlabelled ones too)."""
    method: str
    judge: str | None
    """Whose judgments: the run's only judge, or its panel."""
    reason: str | None = None
    """Why there is no interval (then `ci_low` is None)."""
    warning: str | None = None
    """`corrected`: the labelled units differ from the rest beyond chance (the correction
    assumes a random subset)."""


def win_rate_bound(summary: RunSummary, system: str, over: str) -> WinRateBound:
    """`system`'s win rate over `over` as a gate reads it: the human-corrected estimate when
    the run has labels, else the judge's paired comparison. A pairwise run only; an error
    naming the pairs compared when this one is not among them."""
    analysis = summary.analysed()
    comparison = analysis.comparison
    if comparison.kind != "pairwise":
        raise ConfigError(
            f"run {summary.run.name!r} scores responses on an absolute scale: a win rate gate "
            "needs a pairwise rubric"
        )
    pair, ahead = _pair(analysis, system, over)
    calibration = analysis.calibration
    if calibration is not None:
        return _corrected(calibration.corrected, pair, system, over, comparison.judge)
    return _judged(pair, ahead, system, over, comparison.judge)


def _pair(analysis: Analysis, system: str, over: str) -> tuple[PairDiff, bool]:
    """The comparison's pair of the two systems, and whether it holds `system` first (the
    summary holds each pair winner first)."""
    comparison = analysis.comparison
    for c in comparison.comparisons:
        if (c.a, c.b) in ((system, over), (over, system)):
            return c, c.a == system
    known = sorted(comparison.systems)
    pairs = ", ".join(f"{c.a} vs {c.b}" for c in comparison.comparisons) or "none"
    unknown = [s for s in (system, over) if s not in known]
    what = (
        f"{' and '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a system of the run "
        f"({', '.join(known)})"
        if unknown
        else f"the run did not compare {system} with {over} (pairs.mode)"
    )
    raise ConfigError(f"win rate of {system} over {over}: {what}; the pairs compared: {pairs}")


def _judged(pair: PairDiff, ahead: bool, system: str, over: str, judge: str | None) -> WinRateBound:
    """The net win rate d of `system` over `over` read as a win rate, (1 + d) / 2, as
    `winrate(a, b)` in a gate; the pair the other way round has -d, its bounds swapped."""

    def rate(d: float | None) -> float | None:
        return None if d is None else (1.0 + (d if ahead else -d)) / 2.0

    low, high = (pair.ci_low, pair.ci_high) if ahead else (pair.ci_high, pair.ci_low)
    return WinRateBound(
        system=system,
        over=over,
        estimate=rate(pair.mean_diff),
        ci_low=rate(low),
        ci_high=rate(high),
        confidence=pair.ci,
        source="judge",
        n=pair.n_units,
        n_judged=pair.n_units,
        method=f"paired bootstrap over items ({pair.method}, {pair.resamples} resamples)",
        judge=judge,
        reason=None if pair.ci_low is not None else f"one item ({pair.n_units}): no interval",
    )


def _corrected(
    corrected: list[Corrected], pair: PairDiff, system: str, over: str, judge: str | None
) -> WinRateBound:
    """The PPI++ win rate of the pair, `system` first: a win rate of the other way round is
    one minus it, and its Wilson interval turns over with it."""
    found = next((c for c in corrected if set(c.systems) == {system, over}), None)
    if found is None:
        return WinRateBound(
            system=system,
            over=over,
            estimate=None,
            ci_low=None,
            ci_high=None,
            confidence=pair.ci,
            source="corrected",
            n=0,
            n_judged=pair.n_units,
            method="PPI++",
            judge=judge,
            reason=f"no human label of {system} vs {over}: label some of its items",
        )
    ahead = found.systems[0] == system

    def turned(x: float | None) -> float | None:
        return x if x is None or ahead else 1.0 - x

    return WinRateBound(
        system=system,
        over=over,
        estimate=turned(found.value),
        ci_low=turned(found.ci_low if ahead else found.ci_high),
        ci_high=turned(found.ci_high if ahead else found.ci_low),
        confidence=found.confidence,
        source="corrected",
        n=found.n,
        n_judged=found.n_judged,
        method=found.method,
        judge=judge,
        reason=(found.reason or "no interval") if found.ci_low is None else None,
        warning=found.subset_warning,
    )
