"""The length- and style-controlled win rates of `summary.json` (`compare.control`;
`calibration.style_control`): beside the raw win rates, what the judge's taste for long and
formatted answers was worth to each system."""

from __future__ import annotations

from judge.summary.base_model import SummaryModel


class ControlledRate(SummaryModel):
    system: str
    judgments: int
    items: int
    win_rate: float
    win_low: float | None
    win_high: float | None
    controlled: float
    """The win rate with the length (and markdown) terms at zero."""
    ci_low: float | None
    ci_high: float | None
    shift: float
    """controlled - win_rate (negative: length or formatting helped the system win)."""
    shift_low: float | None
    shift_high: float | None
    coefficients: dict[str, float]
    """Logits: `length` is the judge's length preference (phi), `headers` / `lists` / `bold`
    the markdown ones."""
    longer: float | None
    """Share of its judgments in which the system's response was the longer."""
    shorter: float | None
    """... the shorter."""


class ControlledDifference(SummaryModel):
    a: str
    b: str
    difference: float
    ci_low: float | None
    ci_high: float | None


class Controlled(SummaryModel):
    controls: list[str]
    baseline: str | None
    """None: each system against all the others it met."""
    systems: list[ControlledRate]
    differences: list[ControlledDifference]
    resamples: int
    seed: int
    level: float
    notes: list[str]
    """Systems whose controlled rate extrapolates (almost always longer, or shorter)."""
    formula: str
    assumptions: list[str]
