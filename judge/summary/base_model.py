"""What every part of `summary.json` is built from: the strict, frozen model base, and the
estimate with its interval that the comparison, the calibration and the audit all quote."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SummaryModel(BaseModel):
    """Every section of summary.json: strict (an unknown field is an error) and frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Estimate(SummaryModel):
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    method: str
    seed: int | None
    resamples: int
    confidence: float
    reason: str | None
    undefined_resamples: int
