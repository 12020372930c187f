"""`migrate.json`: what `judge migrate` measured when a run's judge was replaced (typed, strict:
the printed lines and migrate.md read these fields, `judge.report.migration_page`)."""

from __future__ import annotations

from typing import Literal

from judge.summary.base_model import Estimate, SummaryModel
from judge.summary.gate import Agreement, TrustGate

Change = Literal["flips", "loses", "gains", "unchanged", "not estimable"]
"""flips: the new estimate points the other way; loses / gains: told apart before and not now,
or the reverse (Holm-adjusted, as the run's "told apart"); not estimable: a stratum of the
pair's items has no re-judged one."""


class Stratum(SummaryModel):
    items: int
    """The run's items in this stratum (labelled: with human labels)."""
    rejudged: int
    """The seeded sample of them the new judge judged."""


class Design(SummaryModel):
    labelled: Stratum
    other: Stratum
    seed: int
    human_labels: str | None
    """The labels that made an item `labelled`; None: the run has none (the sample is all)."""


class OldDiff(SummaryModel):
    """The old run's comparison as its summary.json gives it (a: the system it had ahead)."""

    mean_diff: float
    ci_low: float | None
    ci_high: float | None
    told_apart: bool


class NewDiff(SummaryModel):
    """The new judge's estimate of a - b on all the pair's items (difference estimator)."""

    mean_diff: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_method: str
    p_holm: float
    told_apart: bool


class Shift(SummaryModel):
    """new - old on all the pair's items, with its interval."""

    mean_diff: float
    ci_low: float | None
    ci_high: float | None


class MovedPair(SummaryModel):
    a: str
    b: str
    old: OldDiff
    new: NewDiff | None
    shift: Shift | None
    items: int
    """Items with an old verdict on the pair: what the estimate is for."""
    rejudged: int
    """Of those, items with a new verdict (the sample behind the correction)."""
    new_missing: int
    """Chosen items on which the new judge gave no verdict on the pair."""
    change: Change
    reason: str | None


class JudgeMapping(SummaryModel):
    """Old judge against new on the keys both judged."""

    keys: int
    agreement: Agreement
    alpha: Estimate
    kappa: Estimate
    labels: list[str]
    """Rows: the old judge's verdict; columns: the new judge's; in each pair's terms (ahead:
    the system the old run had ahead won)."""
    confusion: list[list[int]]


class AgainstHumans(SummaryModel):
    """One judge against the human labels on the re-judged labelled keys both judges judged."""

    judge: str
    keys: int
    labels: int
    alpha: Estimate
    agreement: Agreement | Estimate
    gate: TrustGate


class Migration(SummaryModel):
    old_run: str
    new_run: str
    """The run dir the new judge's verdicts are in (a run like any other: report, store)."""
    old_judge: str
    new_judge: str
    old_stand_in: Literal["simulated", "replayed"] | None
    new_stand_in: Literal["simulated", "replayed"] | None
    """`simulated`: the built-in simulator judged (planted behaviour, not a model's)."""
    notice: str | None
    """Said first and last wherever these results appear, when a judge is a stand-in."""
    design: Design
    requests: int
    """The new run's judge requests (both orders of every pair of the chosen items)."""
    sent: int
    """Of those, sent by this invocation (0 when every one was answered before, or cached)."""
    cost_usd: float | None
    mapping: JudgeMapping
    humans: list[AgainstHumans]
    """The old judge, then the new one; empty without labelled items (`notes` says)."""
    comparisons: list[MovedPair]
    changes: dict[str, int]
    """How many comparisons each `Change` names (every change listed, zeros included)."""
    resamples: int
    seed: int
    ci: float
    method: str
    notes: list[str]
