"""The trust gate's part of `summary.json`: can the judge stand in for a human, are the labels
reliable, and the decision. `judge.summary.run_summary` re-exports what the rest of the summary
uses."""

from __future__ import annotations

from typing import Literal

from judge.summary.base_model import Estimate, SummaryModel


class Agreement(Estimate):
    agree: int
    comparisons: int


CheckStatus = Literal["passed", "failed", "not enough evidence", "not applicable"]
StandInOutcome = Literal[
    "better than humans", "human-level", "inconclusive", "below humans", "not enough evidence"
]


class GateCheck(SummaryModel):
    name: str
    status: CheckStatus
    message: str


class Thresholds(SummaryModel):
    ceiling_margin: float
    annotator_margin: float
    annotator_min_items: int
    labels_tentative: float
    labels_reliable: float
    min_units: int


class AnnotatorResult(SummaryModel):
    annotator: str
    items: int
    judge_advantage: float
    annotator_advantage: float
    p_value: float
    p_adjusted: float
    rejected: bool


class AnnotatorTest(SummaryModel):
    """The alternative annotator test (Calderon et al. 2025)."""

    status: CheckStatus
    message: str
    scoring: Literal["accuracy", "negative RMSE"]
    epsilon: float
    q: float
    min_items: int
    annotators: list[AnnotatorResult]
    too_few_items: int
    winning_rate: float | None
    advantage_probability: float | None
    items_needed: int | None


class NonInferiority(SummaryModel):
    outcome: StandInOutcome
    margin: float
    keys: int
    gap: Estimate | None
    items_needed: int | None
    message: str


class StandIn(SummaryModel):
    """Can this judge stand in for a human?"""

    outcome: StandInOutcome
    non_inferiority: NonInferiority
    annotators: AnnotatorTest | None


class LabelReliability(SummaryModel):
    """Are the human labels reliable? (About the task and rubric, not the judge.)"""

    outcome: Literal["reliable", "tentative", "unreliable", "unknown"]
    human_alpha: Estimate | None
    message: str


class ShuffleControl(SummaryModel):
    agreement: float
    shuffled: float
    p_value: float
    permutations: int
    seed: int


class TrustGate(SummaryModel):
    verdict: Literal["trusted", "provisional", "untrusted"]
    reasons: list[str]
    """What failed or lacked evidence, only that."""
    passed: list[str]
    notes: list[str]
    stand_in: StandIn
    labels: LabelReliability
    control: ShuffleControl | None
    checks: list[GateCheck]
    thresholds: Thresholds


class GateOutcome(SummaryModel):
    """One pass/fail check of a run: a `compare.gates` expression, or a canary's."""

    expression: str
    passed: bool
    value: float | None
    """What the check compared: a gate's left-hand side, a canary's win rate."""
    ci_low: float | None
    ci_high: float | None
    """The interval of the statistic `value` comes from (a canary's Wilson interval); None
    when a gate's left-hand side is a number."""
    reason: str
