"""The Decision section's gate sentences (`judge.report.decision_section`) on gates whose numbers
are
set by hand: what more human labels would do, said the way the non-inferiority test decides it
(`calibration.trust_gate.non_inferiority`: the interval narrows around the gap as keys grow)."""

from __future__ import annotations

from calibration.estimate import Estimate
from calibration.jsonable import jsonable
from calibration.trust_gate import evaluate_gate
from judge.report.decision_section import _gate_explanation
from judge.summary import TrustGate


def _est(value: float | None, low: float | None, high: float | None) -> Estimate:
    return Estimate(value, low, high, 100, "test", 0, 1000)


def _explained(gap: Estimate, keys: int = 100) -> str:
    gate = evaluate_gate(
        _est(0.5, 0.4, 0.6), n_units=keys, ceiling_keys=keys, alpha_gap=gap, human_alpha=None
    )
    data = jsonable(gate) | {"thresholds": gate.thresholds.model_dump()}
    return " ".join(_gate_explanation(TrustGate.model_validate(data)))


def test_a_gap_beyond_the_margin_would_be_settled_as_below_the_humans() -> None:
    # Gap -0.15 with margin 0.1: the interval [-0.25, -0.05] reaches above -0.1, so it is
    # inconclusive; narrowed around -0.15 it would end below -0.1, i.e. "below humans".
    text = _explained(_est(-0.15, -0.25, -0.05))
    assert "more human labels would show it below the humans if the gap held" in text
    assert "would not settle" not in text


def test_a_gap_inside_the_margin_says_how_many_keys_would_show_it_human_level() -> None:
    # Gap -0.02, half-width 0.1: keys x (0.1 / (-0.02 + 0.1))^2 = 100 x 1.5625 -> 157.
    text = _explained(_est(-0.02, -0.12, 0.08))
    assert "about 157 keys with two human labels would show it human-level" in text


def test_a_gap_on_the_margin_is_not_settled_by_more_labels() -> None:
    text = _explained(_est(-0.1, -0.2, 0.0))
    assert "the gap sits on the margin" in text


def test_too_few_keys_say_how_many_and_an_undefined_gap_says_why() -> None:
    few = _explained(_est(-0.02, -0.12, 0.08), keys=10)
    assert "about 30 keys labelled by two annotators are needed" in few
    undefined = _explained(_est(None, None, None))
    assert "about 0" not in undefined
    assert "It could not be compared with the humans: the gap to the human ceiling" in undefined
