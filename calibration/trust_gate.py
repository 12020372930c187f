"""The trust gate: may this judge stand in for the humans, and how far?

Verdicts, with every reason spelled out:

* `untrusted`: the judge-human alpha's lower bound is under `alpha_use`, or the judge agrees
  with humans less than humans agree with each other by more than `ceiling_margin`, or there
  are fewer than `min_units` labelled units;
* `trusted`: the lower bound reaches `alpha_rely`, a human ceiling exists, and even the lower
  bound of the (judge - human) ceiling gap is within the margin;
* `provisional`: everything in between.

Defaults follow Krippendorff (2004, sec. 11.3.4): alpha >= 0.8 to rely on data, >= 0.667
for tentative conclusions; applied to the interval's lower bound, not the point value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from calibration.estimate import Estimate

Verdict = Literal["trusted", "provisional", "untrusted"]
_RANK: dict[Verdict, int] = {"untrusted": 0, "provisional": 1, "trusted": 2}


class GateThresholds(BaseModel):
    """Thresholds of the trust gate (config key `calibration.gate`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    alpha_use: float = Field(0.667, ge=-1.0, le=1.0)
    """Lower CI bound of the judge-human Krippendorff alpha needed to use the judge at all."""
    alpha_rely: float = Field(0.8, ge=-1.0, le=1.0)
    """Lower CI bound of the judge-human alpha needed to rely on the judge (trusted)."""
    ceiling_margin: float = Field(0.05, ge=0.0, le=1.0)
    """How far the judge's leave-one-human-out alpha may fall below the humans' own alpha."""
    min_units: int = Field(30, ge=1)
    """Fewer labelled units than this and the judge cannot be trusted: intervals are too wide."""

    @model_validator(mode="after")
    def _ordered(self) -> GateThresholds:
        if self.alpha_use > self.alpha_rely:
            raise ValueError(
                f"alpha_use ({self.alpha_use}) must not exceed alpha_rely ({self.alpha_rely})"
            )
        return self


@dataclass(frozen=True)
class GateCheck:
    name: str
    outcome: Verdict
    """The best verdict this check allows."""
    message: str


@dataclass(frozen=True)
class GateVerdict:
    verdict: Verdict
    reasons: tuple[str, ...]
    """Why the verdict is what it is: the failing checks first, then notes."""
    checks: tuple[GateCheck, ...]
    thresholds: GateThresholds

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "checks": [vars(c).copy() for c in self.checks],
            "thresholds": self.thresholds.model_dump(),
        }


def _fmt(e: Estimate) -> str:
    if e.value is None:
        return f"undefined ({e.reason})"
    return f"{e.value:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]"


def evaluate_gate(
    judge_alpha: Estimate,
    *,
    n_units: int,
    alpha_gap: Estimate | None = None,
    human_alpha: Estimate | None = None,
    thresholds: GateThresholds | None = None,
    strata: Sequence[tuple[str, GateVerdict, int]] = (),
) -> GateVerdict:
    """Gate verdict from the judge-human alpha, the ceiling gap (judge LOHO alpha - human
    alpha, paired interval) and, optionally, per-stratum verdicts `(name, verdict, units)`:
    a stratum with enough units that is untrusted caps the overall verdict at provisional."""
    t = thresholds or GateThresholds()
    checks: list[GateCheck] = []
    notes: list[str] = []

    def check(name: str, outcome: Verdict, message: str) -> None:
        checks.append(GateCheck(name, outcome, message))

    if n_units < t.min_units:
        check("units", "untrusted", f"only {n_units} labelled units (< min_units {t.min_units})")

    alpha, low = f"judge-human alpha {_fmt(judge_alpha)}", judge_alpha.ci_low
    if judge_alpha.value is None or low is None:
        check("alpha", "untrusted", alpha)
    elif low < t.alpha_use:
        check("alpha", "untrusted", f"{alpha}: lower bound below alpha_use {t.alpha_use}")
    elif low < t.alpha_rely:
        check(
            "alpha",
            "provisional",
            f"{alpha}: lower bound reaches alpha_use {t.alpha_use} "
            f"but not alpha_rely {t.alpha_rely}",
        )
    else:
        check("alpha", "trusted", f"{alpha}: lower bound reaches alpha_rely {t.alpha_rely}")

    if alpha_gap is None or alpha_gap.value is None or alpha_gap.ci_low is None:
        why = "no unit has two or more human labels" if alpha_gap is None else alpha_gap.reason
        check("ceiling", "provisional", f"no human ceiling to compare with ({why})")
    elif alpha_gap.value < -t.ceiling_margin:
        check(
            "ceiling",
            "untrusted",
            "judge agrees with humans less than they agree with each "
            f"other: alpha gap {_fmt(alpha_gap)} below -{t.ceiling_margin}",
        )
    elif alpha_gap.ci_low < -t.ceiling_margin:
        check(
            "ceiling",
            "provisional",
            f"alpha gap to the human ceiling {_fmt(alpha_gap)}: "
            f"within the margin {t.ceiling_margin}, but the interval reaches below it",
        )
    else:
        check(
            "ceiling",
            "trusted",
            f"alpha gap to the human ceiling {_fmt(alpha_gap)}: "
            f"within the margin {t.ceiling_margin}",
        )

    bad = [name for name, v, units in strata if v.verdict == "untrusted" and units >= t.min_units]
    if bad:
        shown = ", ".join(bad[:6]) + (f" and {len(bad) - 6} more" if len(bad) > 6 else "")
        check("strata", "provisional", f"untrusted strata ({len(bad)}): {shown}")

    human_high = None if human_alpha is None else human_alpha.ci_high
    if human_alpha is not None and human_high is not None and human_high < t.alpha_use:
        notes.append(
            f"note: humans among themselves reach alpha {_fmt(human_alpha)}, below "
            "alpha_use too: the labels, not only the judge, are unreliable at this threshold"
        )
    verdict: Verdict = min((c.outcome for c in checks), key=_RANK.__getitem__)
    failing = [c.message for c in checks if c.outcome != "trusted"]
    passing = [c.message for c in checks if c.outcome == "trusted"]
    return GateVerdict(verdict, tuple(failing + passing + notes), tuple(checks), t)
