"""`summary.json` as a typed model: what a run holds (counts, judges, blinding), and once
analysed its comparison, calibration and decision.

The outputs step builds the first part, the analysis the rest; the report, the console and the
service read fields of this model. Every model forbids unknown keys and has no defaults for
what the analysis always writes, so a renamed or missing field fails a test instead of
printing "n/a" on a page.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, model_validator

from judge.config.run_config import AggregateConfig, JudgeSpec, PairsConfig, stand_in_notice
from judge.summary.alignment import RubricAlignment
from judge.summary.audit import Audit
from judge.summary.base_model import Estimate, SummaryModel
from judge.summary.canary import Canaries, CanarySetup
from judge.summary.controlled import Controlled
from judge.summary.cost import RunCosts
from judge.summary.decision import Answer as Answer
from judge.summary.decision import DataOverview, Decision
from judge.summary.decision import Neighbour as Neighbour
from judge.summary.decision import RankedNeighbour as RankedNeighbour
from judge.summary.decision import SelfPreferenceCheck as SelfPreferenceCheck
from judge.summary.gate import Agreement, GateOutcome, TrustGate

# --------------------------------------------------------------------------- the run


class RubricRef(SummaryModel):
    id: str
    version: int
    hash: str


class Environment(SummaryModel):
    packages: dict[str, str]
    platform: str
    python: str
    recorded_at: str


class RunInfo(SummaryModel):
    name: str
    question: str | None
    rubric: RubricRef
    judges: list[JudgeSpec]
    orders: Literal["both", "AB"]
    pairs: PairsConfig
    allow_same_family: bool
    seeds: dict[str, int]
    environment: Environment
    config_hash: str
    simulated: bool
    """A judge is the built-in simulator or replays recorded verdicts: the console, the report
    and the service say so wherever the results appear (`notice`)."""

    @model_validator(mode="before")
    @classmethod
    def _simulated_before_it_was_recorded(cls, data: Any) -> Any:
        # Summaries written before the field existed: the same rule over their judges.
        if isinstance(data, dict) and "simulated" not in data and "judges" in data:
            specs = [
                JudgeSpec.model_validate(j) if isinstance(j, dict) else j for j in data["judges"]
            ]
            data = {**data, "simulated": any(s.stand_in for s in specs)}
        return data

    def notice(self) -> str | None:
        """What a reader must know before any number of a simulated or replayed run."""
        return stand_in_notice(self.judges)


class Counts(SummaryModel):
    items: int
    blinded: int
    pairs: int
    requests: int
    responses: int
    verdicts: int
    parse_failures: int
    errors: int
    cached: int
    pending: int


class ScrubCounts(SummaryModel):
    by_rule: dict[str, int]
    by_system: dict[str, int]
    by_system_rule: dict[str, dict[str, int]]
    by_kind: dict[str, int] = Field(default_factory=dict)
    """plain / disguised / self_introduction / signature (`judge.blinding.scrubber.KINDS`)."""
    responses: int
    responses_changed: int
    total: int


class InjectionCounts(SummaryModel):
    """Responses whose text addresses the judge (`judge.blinding.injection`), flagged at prepare and
    judged as written. The per-response rules stay in the store (`InjectionReport.flags`)."""

    responses: int
    flagged: int
    by_rule: dict[str, int]
    """Flagged responses per rule, every rule of `judge.blinding.injection.RULES` present."""
    by_system: dict[str, int]
    by_system_rule: dict[str, dict[str, int]]


class SystemCost(SummaryModel):
    responses: int
    latency_median_s: float | None
    latency_known: int
    cost_usd_total: float | None
    cost_usd_mean: float | None
    cost_known: int


class JudgeBehaviour(SummaryModel):
    judge: str
    requests: int
    verdicts: int
    parse_failures: int
    errors: int
    pending: int
    cached: int
    cost_usd: float | None
    latency_median_s: float | None
    parse_failure_rate: float | None
    position_consistency: float | None
    first_slot_win_rate: float | None
    tie_rate: float | None
    verbosity_preference: float | None
    same_family_requests: int


class WinCount(SummaryModel):
    wins: int
    losses: int
    ties: int
    n: int
    win_rate: float | None


class MeanScore(SummaryModel):
    n: int
    mean_score: float


# --------------------------------------------------------------------------- comparison


class Ranked(SummaryModel):
    system: str
    n_items: int
    estimate: float
    ci_low: float | None
    ci_high: float | None
    """None: the Bradley-Terry interval is not estimable (`bradley_terry.not_estimable`)."""
    rank: int


class PairDiff(SummaryModel):
    a: str
    b: str
    stratum: str | None
    mean_diff: float
    ci_low: float | None
    ci_high: float | None
    """None with the spread: a comparison on one item (a stratum, say) has no interval."""
    ci: float
    method: str
    percentile: tuple[float | None, float | None]
    bca: tuple[float | None, float | None] | None
    se: float | None
    wins: int
    losses: int
    ties: int
    p_value: float | None
    p_method: Literal["bootstrap", "sign", "t", "normal"]
    """Where `p_value` comes from: the bootstrap where it resolves it, else the exact sign test
    (win/loss/tie units) or Student's t test (`t`; `normal`, the normal approximation from 30
    units on, in summaries written before December 2026)."""
    p_floor: float
    """1/(resamples+1): the smallest p-value the bootstrap alone can give."""
    p_floor_limited: bool
    """`p_value` is `p_floor`: the p-value is below it (and `p_holm` an upper bound)."""
    n: int
    n_units: int
    n_strata: int
    resamples: int
    seed: int
    algorithm: str
    p_holm: float | None
    p_holm_bound: bool
    """`p_holm` is an upper bound: set by a pair whose p-value is the bootstrap's floor (this
    one, or one before it in Holm's order that it was raised to match)."""
    told_apart: bool
    """Holm-adjusted p-value below 1 - ci: the one meaning of "told apart"."""
    unpaired_items: int

    def winner_first(self) -> PairDiff:
        """The pair with the system ahead as `a` (a difference that is not negative): the
        bounds negated and swapped, wins and losses exchanged; the p-values are two-sided and
        stay as they are."""
        if self.mean_diff >= 0:
            return self
        percentile = (_negated(self.percentile[1]), _negated(self.percentile[0]))
        bca = None if self.bca is None else (_negated(self.bca[1]), _negated(self.bca[0]))
        return self.model_copy(
            update={
                "a": self.b,
                "b": self.a,
                "mean_diff": -self.mean_diff,
                "ci_low": _negated(self.ci_high),
                "ci_high": _negated(self.ci_low),
                "percentile": percentile,
                "bca": bca,
                "wins": self.losses,
                "losses": self.wins,
            }
        )


def _negated(x: float | None) -> float | None:
    return None if x is None else -x


class BradleyTerryRow(SummaryModel):
    system: str
    strength: float
    ci_low: float | None
    ci_high: float | None


class BradleyTerry(SummaryModel):
    systems: list[str]
    strength: list[float]
    ci_low: list[float | None]
    ci_high: list[float | None]
    ci: float
    n_items: int
    n_rows: int
    resamples: int
    seed: int
    prior: float
    anchor: str | None
    degenerate_resamples: int
    method: str
    not_estimable: str | None
    """Why the intervals are None (most resamples had no finite fit)."""
    table: list[BradleyTerryRow]


class Comparison(SummaryModel):
    """`comparisons` and `by_stratum` hold each pair winner-first (`PairDiff.winner_first`),
    as the report shows them."""

    kind: Literal["pairwise", "scores"]
    systems: list[str]
    baseline: str | None
    by: str | None
    resamples: int
    seed: int
    ci: float
    method: str
    n_items: int
    n_rows: int
    ranking: list[Ranked]
    comparisons: list[PairDiff]
    by_stratum: list[PairDiff]
    win_rates: dict[str, dict[str, float | None]] | None
    bradley_terry: BradleyTerry | None
    gates: list[GateOutcome]
    gates_passed: bool
    notes: list[str]
    controlled: Controlled | None = None
    """`compare.control` (pairwise runs): win rates controlled for length and markdown."""


def mean_win_rates(comparison: Comparison) -> dict[str, float]:
    """Each system's mean paired win rate against the others it was compared with (the
    ordering used when the ranking has no finite fit); systems with none left out."""
    means = {}
    for system, row in (comparison.win_rates or {}).items():
        known = [v for v in row.values() if v is not None]
        if known:
            means[system] = sum(known) / len(known)
    return means


class RunComparison(Comparison):
    judge: str | None
    """Whose judgments were compared (the panel, or the only judge)."""


class WinRate(SummaryModel):
    system: str
    win_rate: float
    ci_low: float
    ci_high: float
    judgments: int
    items: int


class WinRatesByStratum(SummaryModel):
    by: str
    strata: dict[str, list[WinRate]]


class SameFamily(SummaryModel):
    systems: list[str]
    flagged_pairs: int
    cross_family_pairs: int
    cross_family_only: Comparison | None


# --------------------------------------------------------------------------- calibration


class Ceiling(SummaryModel):
    keys: int
    human_alpha: Estimate
    judge_alpha_loho: Estimate
    alpha_gap: Estimate
    human_agreement: Agreement | Estimate | None = None
    judge_agreement_loho: Agreement | Estimate | None = None
    agreement_gap: Estimate | None = None


class Confusion(SummaryModel):
    labels: list[str]
    counts: list[list[int]]
    rows: str
    columns: str


class StratumAgreement(SummaryModel):
    stratum: dict[str, str]
    keys: int
    labels: int
    metrics: dict[str, Agreement | Estimate]
    """alpha, kappa, agreement_s1/s2 (pairwise) or spearman, kendall_tau_b, ... (scores)."""
    ceiling: Ceiling | None
    confusion: Confusion | None
    gate: TrustGate


class Examples(SummaryModel):
    count: int
    examples: list[str]


class OrderCounts(SummaryModel):
    both_orders: int
    disagreed: int
    one_order: int
    decided: int = 0
    """Judgments (each order apart) naming a winner (0 in summaries written before it)."""
    first_won: int = 0
    """Of those, won by the response shown first."""


class JoinCounts(SummaryModel):
    judge_keys: int
    human_keys: int
    human_labels: int
    matched_keys: int
    matched_labels: int
    judge_only: Examples
    human_only: Examples
    judge_no_verdict: Examples
    repeated_labels: int
    judge_orders: OrderCounts | None
    """How the judge table's two presentation orders were combined (None: no `order`
    column; a run's own judgments are combined already)."""
    annotator_per_row: bool
    """The human labels have no `annotator` column: each row counted as its own annotator."""
    unknown_systems: list[str]
    """Systems the human labels name and the run never judged (their labels join nothing)."""
    unknown_system_labels: int
    judge_systems: list[str]
    chosen_actively: bool = False
    """The labels carry inclusion probabilities (an active labelling task): the corrected
    estimates are inverse-probability weighted."""


class Corrected(SummaryModel):
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    method: str
    seed: int | None
    confidence: float
    raw: Estimate
    human_only: Estimate
    effective_human_n: float | None
    n_judged: int
    target: str
    systems: list[str]
    lam: float | None
    sensitivity: Estimate | None
    specificity: Estimate | None
    reason: str | None
    subset_p: float | None
    """p-value of the check that the labelled units are like the unlabelled ones."""
    subset_warning: str | None
    """Set when they differ beyond chance (the correction assumes a random subset)."""


class Calibration(SummaryModel):
    human_labels: str
    kind: Literal["pairwise", "absolute"]
    level: str
    overall: StratumAgreement
    strata: list[StratumAgreement]
    gate: TrustGate
    join: JoinCounts
    corrected: list[Corrected]
    resamples: int
    seed: int
    confidence: float


class SharedAgreement(SummaryModel):
    agree: int
    comparisons: int
    value: float | None


class PublishedAgreement(SummaryModel):
    stratum: dict[str, str]
    agreement_s1: SharedAgreement
    agreement_s2: SharedAgreement


class Literature(SummaryModel):
    published: str
    keys: int
    run_keys: int
    shared_keys: int
    identical_verdicts: int
    agreement: list[PublishedAgreement]


GateKind = Literal["compare", "canary"]


class Analysis(SummaryModel):
    """What `analyse_run` adds to a run's summary."""

    comparison: RunComparison
    win_rates: list[WinRate] | None
    win_rates_by_stratum: WinRatesByStratum | None
    same_family: SameFamily | None
    calibration: Calibration | None
    literature: Literature | None
    data: DataOverview
    decision: Decision
    audit: Audit
    canaries: Canaries | None = None
    """None for runs without `canaries:` (and runs analysed before canaries existed)."""
    alignment: RubricAlignment | None = None
    """What `judge align --rejudge` measured (held-out items only); None if it never ran."""

    def gates(self) -> list[tuple[GateKind, GateOutcome]]:
        """Every configured check: the `compare.gates` expressions, then the canaries' (one
        per canary and judge)."""
        canary = self.canaries.gates if self.canaries is not None else []
        return [("compare", g) for g in self.comparison.gates] + [("canary", g) for g in canary]


# --------------------------------------------------------------------------- the summary


class RunSummary(SummaryModel):
    run: RunInfo
    counts: Counts
    scrub: ScrubCounts | None
    injection: InjectionCounts | None = None
    """None for runs prepared before the injection detector existed."""
    canary_setup: CanarySetup | None = None
    """The run's canaries and what judging them cost; None without `canaries:`."""
    skipped_pairs: int
    system_costs: dict[str, SystemCost]
    judges: dict[str, JudgeBehaviour]
    costs: RunCosts | None = None
    """What the judges spent (`judge.summary.cost`); None in summaries written before it."""
    systems: dict[str, dict[str, WinCount]] | dict[str, dict[str, MeanScore]]
    """Per judge (and panel), per system: plain win counts, or mean scores."""
    aggregate: AggregateConfig
    analysis: Analysis | None = None
    """None until the run is complete and analysed."""

    @property
    def complete(self) -> bool:
        return self.counts.pending == 0

    def analysed(self) -> Analysis:
        """The analysis; an error (not a silent "n/a") when the run has none."""
        if self.analysis is None:
            raise ValueError(f"run {self.run.name!r} has not been analysed")
        return self.analysis

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: the analysis' sections at the top level beside the run's."""
        data = self.model_dump(
            mode="json", exclude={"analysis": True, "run": {"judges": {"__all__": {"api_key"}}}}
        )
        if self.analysis is not None:
            data.update(self.analysis.model_dump(mode="json"))
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        base = {k: v for k, v in data.items() if k not in Analysis.model_fields}
        sections = {k: v for k, v in data.items() if k in Analysis.model_fields}
        if sections:
            base["analysis"] = sections
        return cls.model_validate(base)

    @classmethod
    def from_json(cls, text: str) -> RunSummary:
        return cls.from_dict(json.loads(text))
