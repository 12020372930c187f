"""The canaries' part of `summary.json` (`judge.blinding.canaries`): what was added to the run, and
each canary's win rate per judge against its threshold."""

from __future__ import annotations

from typing import Any, Literal

from judge.summary.base_model import SummaryModel
from judge.summary.gate import GateOutcome

CanaryKind = Literal["null_model", "master_key", "length_padded"]


class CanarySetup(SummaryModel):
    """What prepare added (store meta `canaries`) and what judging it cost."""

    kinds: dict[str, CanaryKind]
    """Canary system name -> kind."""
    sources: dict[str, str]
    """Padded canary -> the real system it copies."""
    against: list[str]
    """The real systems the canaries were judged against (`canaries.against`)."""
    items: int
    pairs: int
    """Canary pairs (absolute rubrics: none)."""
    texts: dict[str, Any] | None
    """The null-model and master-key texts and the padding sentences the canaries were built
    from (part of the run's config hash)."""
    responses: dict[str, int]
    responses_total: int
    flagged: dict[str, int]
    """Canary responses the injection detector flagged, per canary."""
    flagged_total: int
    requests: int
    pending: int
    cost_usd: float | None


class CanaryRate(SummaryModel):
    """One canary against one real system, by one judge (or the panel)."""

    canary: str
    kind: CanaryKind
    judge: str
    opponent: str
    """The weakest real system (a padded copy's own source is that system's copy)."""
    wins: int
    losses: int
    ties: int
    n: int
    win_rate: float | None
    """(wins + ties / 2) / n; None when nothing was judged."""
    ci_low: float | None
    ci_high: float | None
    """Wilson score interval (`calibration.proportions`)."""
    fair: float
    """The win rate of a judge that cannot be fooled: 0 for a non-answer, 0.5 for a padded
    copy against its source."""
    limit: float
    """fair + the configured threshold."""
    fooled: bool | None
    """The win rate is above `limit` and its interval above `fair` (more wins than chance
    gives); None when nothing was judged."""
    best_opponent: str | None
    """The real system this canary did best against (its win rate there below)."""
    best_win_rate: float | None
    judged_win_rate: float | None
    """The win rate the judge's own verdicts give; differs from `win_rate` when
    `aggregate.flagged: lose` decided the flagged canaries' pairs by rule."""


class Canaries(SummaryModel):
    weakest: str | None
    """The lowest-ranked real system the canaries were judged against."""
    threshold: float
    confidence: float
    rates: list[CanaryRate]
    gates: list[GateOutcome]
    passed: bool
