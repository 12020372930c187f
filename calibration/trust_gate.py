"""The trust gate: two questions, answered apart, then one decision.

**Can this judge stand in for a human?** Two tests of the same idea: the judge is compared with
the humans on the same units, not with an absolute bar.

* Non-inferiority against the human ceiling: on the keys with two or more human labels, the
  judge's leave-one-human-out alpha minus the humans' own alpha (a paired cluster-bootstrap
  interval). Human-level when the interval's lower bound is at or above -`ceiling_margin`
  (a one-sided test at (1 - confidence) / 2); better than the humans when the lower bound is
  above +`ceiling_margin` (the judge agrees with the human consensus by more than the margin
  better than the humans agree with each other: labels noisier than the judge); below humans
  when even its upper bound is under -`ceiling_margin`; inconclusive in between; not enough
  evidence with fewer than `min_units` such keys.
* The alternative annotator test (`calibration.annotator_test`, Calderon et al. 2025) where
  annotators are identified and share enough keys.

  The judge is human-level when every test that could run passed (better than the humans
  when, besides, the ceiling test says so), below humans when the non-inferiority interval lies
  below the margin, inconclusive otherwise.

**Are the labels reliable?** The humans' alpha against Krippendorff's conventions (2004,
sec. 11.3.4): lower bound >= 0.8 to rely on the labels, >= 0.667 for tentative conclusions.
Unreliable labels are a warning about the task or the rubric, not a verdict on the judge: no
judge can be shown to agree with labels better than they agree with each other.

**Decision.** Trusted: human-level (or better) on reliable labels. Untrusted: the judge is
clearly below the humans, or shows no signal (the judge-human alpha's interval reaches 0), or
fails the shuffled-label control (its agreement is not above that of its own labels permuted
across keys, which keeps its label frequencies up to orientation and breaks the link to the
item; a moved pairwise label is read in a random orientation, see `shuffle_control`).
Provisional: everything else: human-level on labels that are not reliable, or too little
evidence either way. Too few units never makes a judge untrusted. An untrusted stratum with at
least `min_units` units caps the overall verdict at provisional.

Why `ceiling_margin` = 0.1 (alpha units): a margin must exceed the sampling error of the gap at
the label counts people have, or a judge exactly as good as a human fails for lack of power.
For a judge that behaves as one more human, 400 keys x 3 humans, the gap's 95% interval has a
half-width of 0.04-0.06, and its lower bound clears -0.05 in only 30-65% of 40 seeds, -0.10 in
75-98% (humans right 70-95% of the time; scripts/gate_table.py measures it). And 0.1 is
below the 0.133 between Krippendorff's two conventions: labels from a judge that loses less than
the margin stay within one reliability class of the humans'.

Beware: a judge that copies one annotator looks better than the humans, since the
leave-one-human-out comparison pairs it with that annotator's labels too; the same holds for a
judge trained on the labels it is calibrated against. The gate cannot see this.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from calibration.annotator_test import (
    AnnotatorTest,
    Scoring,
    Status,
    alternative_annotator_test,
)
from calibration.estimate import Estimate
from calibration.labels import JoinedLabels, content_flipped
from calibration.thresholds import GateThresholds

Verdict = Literal["trusted", "provisional", "untrusted"]
StandInOutcome = Literal[
    "better than humans", "human-level", "inconclusive", "below humans", "not enough evidence"
]
Reliability = Literal["reliable", "tentative", "unreliable", "unknown"]

CONTROL_PERMUTATIONS = 999
CONTROL_LEVEL = 0.05


@dataclass(frozen=True)
class GateCheck:
    name: str
    """units, signal, control, ceiling, annotators, labels or strata."""
    status: Status
    message: str


@dataclass(frozen=True)
class NonInferiority:
    outcome: StandInOutcome
    margin: float
    keys: int
    """Keys with two or more human labels: the units of the comparison."""
    gap: Estimate | None
    """Judge leave-one-human-out alpha - human alpha, paired; None without a human ceiling."""
    items_needed: int | None
    """Keys with two human labels that would settle it: for too few keys, `min_units`; when
    inconclusive, the count at which the interval's lower bound would clear the margin if the
    gap stayed as it is (the half-width shrinks as 1/sqrt(n))."""
    message: str


@dataclass(frozen=True)
class StandIn:
    """Can this judge stand in for a human?"""

    outcome: StandInOutcome
    non_inferiority: NonInferiority
    annotators: AnnotatorTest | None


@dataclass(frozen=True)
class LabelReliability:
    """Are the labels themselves reliable? About the task and rubric, not the judge."""

    outcome: Reliability
    human_alpha: Estimate | None
    message: str


@dataclass(frozen=True)
class ShuffleControl:
    """The judge against its own labels permuted across keys (a permutation test)."""

    agreement: float
    """Share of human labels the judge agrees with."""
    shuffled: float
    """The same share, averaged over the permutations."""
    p_value: float
    """(1 + permutations at least as high) / (permutations + 1); the floor is 1 / (B + 1)."""
    permutations: int
    seed: int


@dataclass(frozen=True)
class GateVerdict:
    verdict: Verdict
    reasons: tuple[str, ...]
    """What failed or lacked evidence: why the verdict is not better. Only that."""
    passed: tuple[str, ...]
    """The checks that passed."""
    notes: tuple[str, ...]
    """Checks that did not apply (e.g. no identified annotators)."""
    stand_in: StandIn
    labels: LabelReliability
    control: ShuffleControl | None
    checks: tuple[GateCheck, ...]
    thresholds: GateThresholds

    def lines(self) -> list[str]:
        """The gate as text: the verdict, the two questions, then what failed and passed."""
        lines = [
            f"Gate: {self.verdict.upper()}",
            f"  can the judge stand in for a human? {self.stand_in.outcome}",
            f"  are the labels reliable? {self.labels.outcome}",
        ]
        for title, messages in (("why not better", self.reasons), ("passed", self.passed)):
            if messages:
                lines += [f"  {title}:"] + [f"    - {m}" for m in messages]
        return lines + [f"  note: {m}" for m in self.notes]


def _fmt(e: Estimate) -> str:
    if e.value is None or e.ci_low is None or e.ci_high is None:
        return f"undefined ({e.reason})"
    return f"{e.value:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]"


def non_inferiority(
    gap: Estimate | None, keys: int, margin: float, min_units: int
) -> NonInferiority:
    """The judge's leave-one-human-out alpha against the humans', with margin `margin`."""

    def result(outcome: StandInOutcome, needed: int | None, message: str) -> NonInferiority:
        return NonInferiority(outcome, margin, keys, gap, needed, message)

    if gap is None or keys == 0:
        return result(
            "not enough evidence",
            min_units,
            "no key has two human labels, so there is no human ceiling to compare the judge "
            f"with: have >= {min_units} keys labelled by two or more annotators",
        )
    if keys < min_units:
        return result(
            "not enough evidence",
            min_units,
            f"only {keys} keys have two human labels (< min_units {min_units}): label "
            f"{min_units - keys} more keys by a second annotator",
        )
    if gap.value is None or gap.ci_low is None or gap.ci_high is None:
        return result("not enough evidence", None, f"the gap to the human ceiling is {_fmt(gap)}")
    shown = f"judge LOHO alpha - human alpha {_fmt(gap)} on {keys} keys, margin {margin:g}"
    title = "the judge against the human ceiling"
    if gap.ci_low > margin:
        # Possible only when the humans disagree more than an accurate judge does; also what a
        # judge copying one annotator looks like (module docstring).
        return result(
            "better than humans",
            None,
            f"{title}: better than the humans (the interval lies above +{margin:g}), {shown}",
        )
    if gap.ci_low >= -margin:
        return result("human-level", None, f"{title}: human-level, {shown}")
    if gap.ci_high < -margin:
        return result("below humans", None, f"{title}: below humans, {shown}")
    needed = None
    half = gap.value - gap.ci_low
    if gap.value > -margin and half > 0:
        needed = math.ceil(keys * (half / (gap.value + margin)) ** 2)
    more = f"; about {needed} keys would settle it at this gap" if needed else ""
    return result(
        "inconclusive",
        needed,
        f"inconclusive, the interval reaches below -{margin:g}: {shown}{more}",
    )


def _stand_in(ni: NonInferiority, annotators: AnnotatorTest | None) -> StandIn:
    ran = ["human-level" if ni.outcome == "better than humans" else ni.outcome]
    if annotators is not None and annotators.status in ("passed", "failed"):
        ran.append("human-level" if annotators.status == "passed" else "inconclusive")
    ran = [o for o in ran if o != "not enough evidence"]
    outcome: StandInOutcome
    if not ran:
        outcome = "not enough evidence"
    elif "below humans" in ran:
        outcome = "below humans"
    elif all(o == "human-level" for o in ran):
        outcome = "better than humans" if ni.outcome == "better than humans" else "human-level"
    else:
        outcome = "inconclusive"
    return StandIn(outcome, ni, annotators)


def label_reliability(human_alpha: Estimate | None, t: GateThresholds) -> LabelReliability:
    if human_alpha is None or human_alpha.value is None or human_alpha.ci_low is None:
        why = "no key has two human labels" if human_alpha is None else human_alpha.reason
        return LabelReliability("unknown", human_alpha, f"label reliability unknown ({why})")
    shown = f"humans among themselves alpha {_fmt(human_alpha)}"
    if human_alpha.ci_low >= t.labels_reliable:
        return LabelReliability(
            "reliable", human_alpha, f"{shown}: lower bound reaches {t.labels_reliable:g}"
        )
    warning = "a warning about the task or rubric, not a verdict on the judge"
    if human_alpha.ci_low >= t.labels_tentative:
        return LabelReliability(
            "tentative",
            human_alpha,
            f"{shown}: lower bound reaches {t.labels_tentative:g} but not "
            f"{t.labels_reliable:g}: the labels support tentative conclusions only ({warning})",
        )
    return LabelReliability(
        "unreliable",
        human_alpha,
        f"{shown}: lower bound below {t.labels_tentative:g}: the labels are unreliable ({warning})",
    )


def shuffle_control(
    human_counts: np.ndarray, judge_code: np.ndarray, seed: int, mirror: np.ndarray | None = None
) -> ShuffleControl | None:
    """Agreement of the judge with each human label, against the same with the judge's labels
    permuted across keys (`CONTROL_PERMUTATIONS` permutations, seeded). `mirror` (pairwise): the
    category permutation a <-> b (`JoinedLabels.mirror`); each moved label then takes a random
    orientation in the key it lands on.

    Why the random orientation: the null is "the judge's verdict carries no information about
    the item". A pairwise label means "the first-listed system wins", and which system is listed
    first is an accident of the names (keys are oriented alphabetically), so moving a label to
    another key *as written* gives it a meaning the names choose: the reference distribution, and
    with it the p-value, would change when a system is renamed. Under the null the orientation a
    verdict is read in carries no information either, so the reference draws it at random: each
    key receives the label of a random other key, read in either orientation with probability
    1/2. The unit stays the key (each key gets one label, as observed); permuting the doubled
    rows of alpha (each key and its mirror as separate units) would instead give a key two
    independent labels, averaging away half the null's variance and making p too small. The
    observed agreement counts each key once and does not depend on orientation. Keys are put in
    the orientation their content sorts first (as `calibration.labels` orders them), so with a
    given seed the draws, not only their distribution, are the same under any naming."""
    total = human_counts.sum()
    n = len(judge_code)
    if total == 0 or n < 2:
        return None
    if mirror is not None:
        flip = content_flipped(judge_code, human_counts, mirror)
        judge_code = np.where(flip, mirror[judge_code], judge_code)
        human_counts = np.where(flip[:, None], human_counts[:, mirror], human_counts)
    rows = np.arange(n)
    observed = human_counts[rows, judge_code].sum() / total
    rng = np.random.default_rng(seed)
    shuffled = np.empty(CONTROL_PERMUTATIONS)
    chunk = max(1, min(CONTROL_PERMUTATIONS, 2_000_000 // n))
    for start in range(0, CONTROL_PERMUTATIONS, chunk):
        b = min(chunk, CONTROL_PERMUTATIONS - start)
        perms = rng.permuted(np.tile(judge_code, (b, 1)), axis=1)
        if mirror is not None:
            perms = np.where(rng.random((b, n)) < 0.5, mirror[perms], perms)
        shuffled[start : start + b] = human_counts[rows, perms].sum(axis=1) / total
    p = (1 + int(np.sum(shuffled >= observed))) / (CONTROL_PERMUTATIONS + 1)
    return ShuffleControl(float(observed), float(shuffled.mean()), p, CONTROL_PERMUTATIONS, seed)


_STATUS: dict[str, Status] = {
    "better than humans": "passed",
    "human-level": "passed",
    "below humans": "failed",
    "inconclusive": "failed",
    "reliable": "passed",
    "tentative": "failed",
    "unreliable": "failed",
    "unknown": "not enough evidence",
    "not enough evidence": "not enough evidence",
}
"""Check status of a stand-in or label-reliability outcome (labels short of reliable fail)."""


def evaluate_gate(
    judge_alpha: Estimate,
    *,
    n_units: int,
    ceiling_keys: int = 0,
    alpha_gap: Estimate | None = None,
    human_alpha: Estimate | None = None,
    annotators: AnnotatorTest | None = None,
    control: ShuffleControl | None = None,
    thresholds: GateThresholds | None = None,
    strata: Sequence[tuple[str, GateVerdict, int]] = (),
) -> GateVerdict:
    """The decision (module docstring) from the judge-human alpha over `n_units` keys, the
    ceiling gap over `ceiling_keys` keys with two or more human labels, the humans' alpha, the
    alternative annotator test, the shuffled-label control and per-stratum verdicts
    `(name, verdict, units)`."""
    t = thresholds or GateThresholds()
    checks: list[GateCheck] = []
    enough = n_units >= t.min_units

    def check(name: str, status: Status, message: str) -> None:
        checks.append(GateCheck(name, status, message))

    def failing(name: str, message: str) -> None:
        # With too few units a failure says little: it is reported, but as lacking evidence.
        if enough:
            check(name, "failed", message)
        else:
            check(name, "not enough evidence", f"{message} (only {n_units} units)")

    if not enough:
        check(
            "units",
            "not enough evidence",
            f"only {n_units} labelled units (< min_units {t.min_units}): label "
            f"{t.min_units - n_units} more",
        )
    alpha = f"judge-human alpha {_fmt(judge_alpha)}"
    if judge_alpha.value is None or judge_alpha.ci_low is None:
        failing("signal", f"no signal: {alpha}")
    elif judge_alpha.ci_high is not None and judge_alpha.ci_high < 0:
        failing("signal", f"no signal: {alpha}, below chance (the interval lies under 0)")
    elif judge_alpha.ci_low <= 0:
        failing("signal", f"no signal: {alpha}, the interval includes 0")
    else:
        check("signal", "passed", f"signal: {alpha}, above 0")

    if control is not None:
        shown = (
            f"agreement {control.agreement:.3f} vs {control.shuffled:.3f} with its labels "
            f"shuffled across keys (p {control.p_value:.3g}, {control.permutations} permutations)"
        )
        if control.p_value <= CONTROL_LEVEL:
            check("control", "passed", f"shuffled-label control: {shown}")
        else:
            failing("control", f"shuffled-label control failed: {shown}")

    ni = non_inferiority(alpha_gap, ceiling_keys, t.ceiling_margin, t.min_units)
    check("ceiling", _STATUS[ni.outcome], ni.message)
    if annotators is not None:
        check("annotators", annotators.status, annotators.message)
    stand_in = _stand_in(ni, annotators)

    labels = label_reliability(human_alpha, t)
    check("labels", _STATUS[labels.outcome], labels.message)

    bad = [name for name, v, units in strata if v.verdict == "untrusted" and units >= t.min_units]
    if bad:
        shown = ", ".join(bad[:6]) + (f" and {len(bad) - 6} more" if len(bad) > 6 else "")
        check("strata", "failed", f"untrusted strata ({len(bad)}): {shown}")

    failed = {c.name for c in checks if c.status == "failed"}
    verdict: Verdict
    if failed & {"signal", "control"} or stand_in.outcome == "below humans":
        verdict = "untrusted"
    elif (
        stand_in.outcome in ("human-level", "better than humans")
        and labels.outcome == "reliable"
        and enough
        and "strata" not in failed
    ):
        verdict = "trusted"
    else:
        verdict = "provisional"
    return GateVerdict(
        verdict,
        tuple(c.message for c in checks if c.status in ("failed", "not enough evidence")),
        tuple(c.message for c in checks if c.status == "passed"),
        tuple(c.message for c in checks if c.status == "not applicable"),
        stand_in,
        labels,
        control,
        tuple(checks),
        t,
    )


def stratum_gate(
    joined: JoinedLabels,
    mask: np.ndarray,
    judge_alpha: Estimate,
    *,
    ceiling_keys: int,
    alpha_gap: Estimate | None,
    human_alpha: Estimate | None,
    scoring: Scoring,
    thresholds: GateThresholds,
    seed: int,
) -> GateVerdict:
    """The gate of one stratum (`mask` over `joined.keys`): runs the alternative annotator test
    and the shuffled-label control on its keys, then `evaluate_gate`."""
    index = np.flatnonzero(mask)
    comparisons = joined.comparisons
    comparisons = comparisons[comparisons["key"].isin(index)]
    annotators = alternative_annotator_test(
        comparisons.assign(key=pd.Series(comparisons["key"]).map(_position(index))),
        scoring=scoring,
        epsilon=thresholds.annotator_margin,
        min_items=thresholds.annotator_min_items,
        identified=not joined.summary.annotator_per_row,
    )
    control = shuffle_control(
        joined.human_counts[mask], joined.judge_code[mask], seed, joined.mirror
    )
    return evaluate_gate(
        judge_alpha,
        n_units=int(mask.sum()),
        ceiling_keys=ceiling_keys,
        alpha_gap=alpha_gap,
        human_alpha=human_alpha,
        annotators=annotators,
        control=control,
        thresholds=thresholds,
    )


def _position(index: np.ndarray) -> dict[int, int]:
    return {int(k): i for i, k in enumerate(index)}
