"""The decision's part of `summary.json`: the answer to the run's question, the leader and the
ranking's neighbouring pairs, and the judge's trust verdict (`judge.run.analyse._decision`,
`judge.run.answer`). `judge.summary.run_summary` re-exports it."""

from __future__ import annotations

from typing import Literal

from judge.summary.base_model import SummaryModel


class DataOverview(SummaryModel):
    strata: dict[str, dict[str, int]]
    many_valued: dict[str, int]
    systems: int
    judges: int


class Neighbour(SummaryModel):
    upper: str
    lower: str
    diff: float
    ci_low: float | None
    ci_high: float | None
    """None when the pair's comparison has no interval (one item)."""
    n: int
    told_apart: bool
    """The pair's Holm-adjusted p-value is below 1 - ci (in its stratum's family for a
    stratum)."""
    p_holm: float | None


class RankedNeighbour(Neighbour):
    items_needed: int | None
    """Items that would tell the pair apart if its difference and spread per item held; None
    when no number would (no difference)."""
    items_needed_level: float
    """The p-value `items_needed` is sized for: (1 - ci) / the pairs compared, below which
    Holm's adjustment tells a pair apart at any step."""
    items_needed_test: Literal["normal", "sign"] | None
    """The test the count is for, the kind the pair's p-value came from: the normal
    approximation with the bootstrap SE, or the exact sign test."""


class SelfPreferenceCheck(SummaryModel):
    target: str
    judge: float
    humans: float
    corrected: float | None


class Answer(SummaryModel):
    """The run's one-sentence answer to its question, by the rule `judge.run.answer` states."""

    outcome: Literal["yes", "no", "ranked", "not settled"]
    """`ranked`: the leader is told apart, and no `compare.gates` say what yes would mean."""
    text: str
    """The sentence, its numbers formatted as the report formats them."""


class Decision(SummaryModel):
    answer: Answer
    self_preference_check: SelfPreferenceCheck | None
    leader: str | None
    leader_tied_with: list[str]
    ordered_by: Literal["ranking", "win rate"]
    """`ranking`: the comparison's ranking (Bradley-Terry, ranks from the paired tests); `win
    rate`: it had no fit (a system that never lost, say), so the systems are ordered by their
    mean paired win rate against the others."""
    neighbours: list[RankedNeighbour]
    neighbours_by_stratum: dict[str, list[Neighbour | None]]
    gate: str
    """The calibration gate's verdict (trusted, provisional, untrusted), or "not
    calibrated"."""
    trusted: bool
    trust_reason: str
    """Why, in one line without numbers (`judge.run.answer.trust_reason`)."""
