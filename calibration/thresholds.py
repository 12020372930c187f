"""The trust gate's settings (config key `calibration.gate`), apart from the gate itself: a
run config reads them, and loading a config must not load the statistics (numpy, scipy,
pandas) with them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

EPSILON = 0.1
"""Default epsilon of the alternative annotator test (`calibration.annotator_test`)."""
MIN_ITEMS = 30
"""Keys an annotator must share with another to be tested (`calibration.annotator_test`)."""

REMOVED_KEYS = {
    "alpha_use": (
        "labels_tentative",
        "the gate no longer holds the judge to an absolute alpha; Krippendorff's 0.667 now "
        "applies to the humans' alpha, as a warning about the labels",
    ),
    "alpha_rely": (
        "labels_reliable",
        "the judge is compared with the humans, with margin ceiling_margin; Krippendorff's 0.8 "
        "now applies to the humans' alpha",
    ),
}
"""Gate config keys that were removed: (what replaces them, why)."""


def _reject_removed_keys(data: Any) -> Any:
    """A removed gate key is an error naming its replacement (run configs read this model too,
    as `calibration.gate`)."""
    if isinstance(data, dict):
        for key, (replacement, why) in REMOVED_KEYS.items():
            if key in data:
                raise ValueError(f"{key} was removed ({why}); use {replacement}")
    return data


class GateThresholds(BaseModel):
    """Settings of the trust gate (config key `calibration.gate`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    ceiling_margin: float = Field(0.1, ge=0.0, le=1.0)
    """Non-inferiority margin: how far the judge's leave-one-human-out alpha may fall below the
    humans' own alpha (why 0.1: the docstring of `calibration/trust_gate.py`)."""
    annotator_margin: float = Field(EPSILON, ge=0.0, le=1.0)
    """Epsilon of the alternative annotator test (Calderon et al. 2025: 0.2 for experts, 0.15
    for skilled annotators, 0.1 for crowd workers; the default is the strictest)."""
    annotator_min_items: int = Field(MIN_ITEMS, ge=2)
    """Keys an annotator must share with another annotator to be tested (the paper: 30)."""
    labels_tentative: float = Field(0.667, ge=-1.0, le=1.0)
    """Lower CI bound of the humans' alpha below which the labels are unreliable."""
    labels_reliable: float = Field(0.8, ge=-1.0, le=1.0)
    """Lower CI bound of the humans' alpha needed to rely on the labels (and so to trust)."""
    min_units: int = Field(30, ge=1)
    """Fewer labelled units (or keys with two human labels) than this: not enough evidence."""

    _removed = model_validator(mode="before")(_reject_removed_keys)

    @model_validator(mode="after")
    def _ordered(self) -> GateThresholds:
        if self.labels_tentative > self.labels_reliable:
            raise ValueError(
                f"labels_tentative ({self.labels_tentative}) must not exceed labels_reliable "
                f"({self.labels_reliable})"
            )
        return self
