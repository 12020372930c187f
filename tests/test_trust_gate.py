"""The trust gate, alone and at the end of `calibrate`: a shuffled judge is untrusted, a
judge as good as the humans is trusted, a stratum where the judge fails is named."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from calibration.agreement import cohen_kappa
from calibration.calibrate import calibrate, shuffled_judge
from calibration.estimate import Estimate
from calibration.labels import join_labels, load_mt_bench, normalise
from calibration.simulate import SimulatedJudge, simulated_labels
from calibration.trust_gate import GateThresholds, GateVerdict, ShuffleControl, evaluate_gate
from tests.helpers import MT_BENCH


def _est(value: float, low: float, high: float) -> Estimate:
    return Estimate(value, low, high, 500, "test", 0, 1000)


RELIABLE = _est(0.85, 0.82, 0.88)
UNRELIABLE = _est(0.47, 0.42, 0.52)
SIGNAL = _est(0.6, 0.55, 0.65)


def test_thresholds_are_strict_config() -> None:
    assert GateThresholds().model_dump() == {
        "ceiling_margin": 0.1,
        "annotator_margin": 0.1,
        "annotator_min_items": 30,
        "labels_tentative": 0.667,
        "labels_reliable": 0.8,
        "min_units": 30,
    }
    with pytest.raises(ValidationError, match="extra"):
        GateThresholds(ceiling_margn=0.1)  # type: ignore[call-arg]
    # Removed keys name their replacement (the judge is no longer held to an absolute alpha).
    with pytest.raises(
        ValidationError, match=r"alpha_use was removed \(.*\); use labels_tentative"
    ):
        GateThresholds(alpha_use=0.667)  # type: ignore[call-arg]
    with pytest.raises(
        ValidationError, match=r"alpha_rely was removed \(.*\); use labels_reliable"
    ):
        GateThresholds(alpha_rely=0.8)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="must not exceed labels_reliable"):
        GateThresholds(labels_tentative=0.9, labels_reliable=0.8)


@pytest.mark.parametrize(
    ("alpha", "gap", "human", "units", "verdict", "stand_in", "failed"),
    [
        # Human-level on reliable labels: trusted.
        (SIGNAL, _est(0.0, -0.04, 0.04), RELIABLE, 500, "trusted", "human-level", set()),
        # The whole interval above +margin: better than the humans, and trusted.
        (SIGNAL, _est(0.2, 0.15, 0.25), RELIABLE, 500, "trusted", "better than humans", set()),
        # Above 0 but reaching under +margin: human-level, not better.
        (SIGNAL, _est(0.12, 0.05, 0.19), RELIABLE, 500, "trusted", "human-level", set()),
        # Human-level on unreliable labels (MT-Bench's case): provisional, and the labels,
        # not the judge, are what failed.
        (SIGNAL, _est(0.0, -0.04, 0.04), UNRELIABLE, 500, "provisional", "human-level", {"labels"}),
        # Clearly below the humans: the whole interval under -margin.
        (SIGNAL, _est(-0.3, -0.35, -0.25), RELIABLE, 500, "untrusted", "below humans", {"ceiling"}),
        # Inconclusive: the interval straddles -margin.
        (
            SIGNAL,
            _est(-0.05, -0.12, 0.02),
            RELIABLE,
            500,
            "provisional",
            "inconclusive",
            {"ceiling"},
        ),
        # No signal: the judge-human alpha interval reaches 0, whatever else holds.
        (
            _est(0.05, -0.01, 0.1),
            _est(0.0, -0.04, 0.04),
            RELIABLE,
            500,
            "untrusted",
            "human-level",
            {"signal"},
        ),
    ],
)
def test_gate_decisions(alpha, gap, human, units, verdict, stand_in, failed) -> None:
    result = evaluate_gate(
        alpha, n_units=units, ceiling_keys=units, alpha_gap=gap, human_alpha=human
    )
    assert result.verdict == verdict
    assert result.stand_in.outcome == stand_in
    assert {c.name for c in result.checks if c.status == "failed"} == failed
    # Reasons hold only what failed (or lacked evidence); what passed has its own list.
    assert set(result.reasons) == {
        c.message for c in result.checks if c.status in ("failed", "not enough evidence")
    }
    assert set(result.passed) == {c.message for c in result.checks if c.status == "passed"}
    assert not set(result.reasons) & set(result.passed)


def test_inconclusive_gap_says_how_many_keys_would_settle_it() -> None:
    # Gap -0.05 with lower half-width 0.07 on 400 keys, margin 0.1: the lower bound clears
    # -0.1 once the half-width shrinks to 0.05, i.e. n = 400 * (0.07 / 0.05)^2 = 784.
    result = evaluate_gate(
        SIGNAL,
        n_units=400,
        ceiling_keys=400,
        alpha_gap=_est(-0.05, -0.12, 0.0),
        human_alpha=RELIABLE,
    )
    assert result.stand_in.non_inferiority.items_needed == 784


def test_too_few_units_is_never_untrusted() -> None:
    # 12 units, an alpha whose interval reaches 0 and no ceiling: not enough evidence.
    result = evaluate_gate(_est(0.1, -0.3, 0.5), n_units=12)
    assert result.verdict == "provisional"
    assert result.stand_in.outcome == "not enough evidence"
    assert result.stand_in.non_inferiority.items_needed == 30
    assert {c.status for c in result.checks} == {"not enough evidence"}
    assert any("label 18 more" in r for r in result.reasons)


def _human_level(**kw) -> GateVerdict:
    """The gate of a human-level judge with signal, on 500 keys of reliable labels."""
    gap = _est(0.0, -0.04, 0.04)
    return evaluate_gate(
        SIGNAL, n_units=500, ceiling_keys=500, alpha_gap=gap, human_alpha=RELIABLE, **kw
    )


def test_a_failed_shuffled_label_control_makes_the_judge_untrusted() -> None:
    result = _human_level(control=ShuffleControl(0.40, 0.39, 0.31, 999, 0))
    assert result.verdict == "untrusted"
    assert [c.name for c in result.checks if c.status == "failed"] == ["control"]


def test_untrusted_stratum_caps_a_trusted_judge() -> None:
    bad = evaluate_gate(_est(0.1, -0.05, 0.2), n_units=40)
    tiny = evaluate_gate(_est(0.1, -0.05, 0.2), n_units=10)
    assert (bad.verdict, tiny.verdict) == ("untrusted", "provisional")
    result = _human_level(
        strata=[("lang=ur", bad, 40), ("lang=xx", bad, 10), ("lang=yy", tiny, 10)]
    )
    # Strata below min_units do not count against the judge (their intervals say little).
    assert result.verdict == "provisional"
    assert result.reasons == ("untrusted strata (1): lang=ur",)


def _synthetic(seed: int, keys: int = 600, bad_keys: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Three humans per key copying a true label 95% of the time; a judge as accurate,
    except on the last `bad_keys` keys (stratum lang=ur) where it answers at random."""
    rng = np.random.default_rng(seed)
    outcomes = np.array(["a", "b", "tie"])
    truth = rng.choice(outcomes, p=[0.45, 0.4, 0.15], size=keys)
    lang = np.where(np.arange(keys) < keys - bad_keys, "en", "ur")
    human_truth = np.repeat(truth, 3)
    human = np.where(rng.random(3 * keys) < 0.95, human_truth, rng.choice(outcomes, 3 * keys))
    judge = np.where(
        rng.random(keys) < np.where(lang == "ur", 0.0, 0.95), truth, rng.choice(outcomes, keys)
    )
    items = [f"i{k}" for k in range(keys)]
    judge_table = pd.DataFrame(
        {"item_id": items, "system_a": "x", "system_b": "y", "winner": judge, "lang": lang}
    )
    human_table = pd.DataFrame(
        {
            "item_id": np.repeat(items, 3),
            "system_a": "x",
            "system_b": "y",
            "winner": human,
            "annotator": np.tile(["h1", "h2", "h3"], keys),
        }
    )
    return judge_table, human_table


def test_calibrate_trusts_a_judge_as_good_as_the_humans() -> None:
    judge, human = _synthetic(1)
    report = calibrate(judge, human, kind="pairwise", resamples=500, seed=1)
    assert report.gate.verdict == "trusted", report.gate.reasons
    assert report.overall.ceiling.alpha_gap.ci_low > -0.05


def test_calibrate_names_the_stratum_where_the_judge_fails() -> None:
    judge, human = _synthetic(1, bad_keys=80)
    report = calibrate(judge, human, kind="pairwise", strata=["lang"], resamples=300)
    verdicts = {s.stratum["lang"]: s.gate.verdict for s in report.strata}
    assert verdicts == {"en": "trusted", "ur": "untrusted"}
    assert "untrusted strata (1): lang=ur" in report.gate.reasons
    # Overall the random stratum pulls the gap to the ceiling across the margin
    # (inconclusive), and the untrusted stratum caps the verdict: provisional, not trusted.
    assert report.gate.stand_in.outcome == "inconclusive"
    assert report.gate.verdict == "provisional"


@pytest.mark.parametrize(
    ("judge", "items", "accuracy", "verdict", "stand_in"),
    [
        # A perfect judge is never untrusted: trusted when the labels are reliable, else
        # provisional (humans right 70% / 85% of the time agree only to alpha ~0.3 / ~0.56).
        # Beside such noisy humans it agrees with their consensus by more than the margin
        # better than they agree with each other: better than the humans, not merely level.
        ("perfect", 200, 0.70, "provisional", "better than humans"),
        ("perfect", 200, 0.85, "provisional", "better than humans"),
        ("perfect", 200, 0.95, "trusted", "human-level"),
        # One more human: human-level (600 items give both tests their power).
        ("human-level", 600, 0.85, "provisional", "human-level"),
        ("human-level", 600, 0.95, "trusted", "human-level"),
        ("random", 200, 0.70, "untrusted", "below humans"),
        ("random", 200, 0.95, "untrusted", "below humans"),
    ],
)
def test_simulated_judges_of_known_quality(
    judge: SimulatedJudge, items: int, accuracy: float, verdict: str, stand_in: str
) -> None:
    judge_table, human_table = simulated_labels(items, [accuracy] * 3, judge, seed=3)
    report = calibrate(judge_table, human_table, kind="pairwise", resamples=200, seed=3)
    assert (report.gate.verdict, report.gate.stand_in.outcome) == (verdict, stand_in)
    if judge == "random":
        failed = {c.name for c in report.gate.checks if c.status == "failed"}
        assert {"signal", "control", "ceiling"} <= failed


def test_shuffled_perfect_judge_is_untrusted() -> None:
    judge, human = simulated_labels(200, [0.95] * 3, "perfect", seed=3)
    shuffled = shuffled_judge(judge, kind="pairwise", seed=4)
    report = calibrate(shuffled, human, kind="pairwise", resamples=200, seed=3)
    assert report.gate.verdict == "untrusted"
    assert report.gate.control is not None and report.gate.control.p_value > 0.05


def test_too_few_labels_is_not_enough_evidence_not_untrusted() -> None:
    judge, human = simulated_labels(20, [0.7] * 3, "random", seed=5)
    report = calibrate(judge, human, kind="pairwise", resamples=200)
    assert report.gate.verdict == "provisional"
    assert report.gate.stand_in.outcome == "not enough evidence"
    assert report.gate.stand_in.non_inferiority.items_needed == 30
    annotators = report.gate.stand_in.annotators
    assert annotators is not None and annotators.status == "not enough evidence"
    assert annotators.items_needed == 10  # each annotator shares 20 keys; 30 are needed


@pytest.fixture(scope="module")
def mt_bench() -> tuple[pd.DataFrame, pd.DataFrame]:
    return load_mt_bench(
        MT_BENCH / "human.jsonl",
        MT_BENCH / "gpt4_pair.jsonl",
        questions_path=MT_BENCH / "question.jsonl",
    )


def test_shuffled_judge_is_untrusted(mt_bench) -> None:
    judge, human = mt_bench
    shuffled = shuffled_judge(judge, kind="pairwise", seed=1)
    # The same verdicts in the wrong places, each read in a random orientation (which system
    # sorts first is a matter of names): ties stay ties, and about half the a/b labels flip.
    before = normalise(judge, "pairwise", "judge")["label"].value_counts()
    after = shuffled["winner"].value_counts()
    assert after["tie"] == before["tie"]
    assert after["a"] + after["b"] == before["a"] + before["b"]
    assert abs(after["a"] - (before["a"] + before["b"]) / 2) < 4 * (len(judge) ** 0.5) / 2
    report = calibrate(shuffled, human, kind="pairwise", resamples=300)
    assert report.gate.verdict == "untrusted"
    failed = {c.name for c in report.gate.checks if c.status == "failed"}
    assert failed == {"signal", "control", "ceiling", "annotators", "labels"}
    assert report.gate.stand_in.outcome == "below humans"
    assert abs(report.overall.metrics["alpha"].value) < 0.05
    assert report.overall.ceiling.alpha_gap.ci_high < -0.3


def test_gpt4_on_mt_bench_is_as_good_as_the_experts_but_the_task_is_unreliable(mt_bench) -> None:
    # GPT-4 matches the expert ceiling (gap ~0, within the margin) but the experts agree only
    # to alpha 0.467 among themselves: provisional, and the labels, not the judge, are the
    # warning. (Before issue 12 the gate held the judge to alpha 0.667 and said UNTRUSTED.)
    # The alternative annotator test does not pass: 26 experts share 30-131 keys each, too
    # few for its t-tests at epsilon 0.1 (the paper's MT-Bench judges fail it too).
    judge, human = mt_bench
    report = calibrate(judge, human, kind="pairwise", strata=["turn", "category"], resamples=300)
    ceiling = report.overall.ceiling
    assert ceiling.keys == 734
    # Both orientations: 0.46713, the package on the doubled votes (tests/test_orientation.py);
    # data/mt_bench/SOURCE.md's 0.46712 counts the alphabetical orientation only.
    assert ceiling.human_alpha.value == pytest.approx(0.46713, abs=5e-6)
    assert ceiling.alpha_gap.ci_low < 0 < ceiling.alpha_gap.ci_high
    gate = report.gate
    status = {c.name: c.status for c in gate.checks}
    assert status == {
        "signal": "passed",
        "control": "passed",
        "ceiling": "passed",
        "annotators": "failed",
        "labels": "failed",
    }
    assert gate.stand_in.non_inferiority.outcome == "human-level"
    assert gate.labels.outcome == "unreliable"
    assert gate.verdict == "provisional"
    assert not any("human-level" in r for r in gate.reasons)  # a pass is not a reason
    assert any("human-level" in p for p in gate.passed)
    assert [s.stratum for s in report.strata][:3] == [
        {"turn": "1"},
        {"turn": "2"},
        {"category": "coding"},
    ]
    summary = report.join
    assert (summary.matched_keys, summary.matched_labels, summary.judge_only.count) == (
        1633,
        2668,
        767,
    )
    assert summary.human_only.count == 0 and summary.judge_no_verdict.count == 0
    assert len(report.corrected) == 15  # one PPI++ win rate per system pair
    payload = json.loads(json.dumps(report.to_dict()))
    assert payload["gate"]["verdict"] == "provisional"
    assert payload["gate"]["stand_in"]["annotators"]["winning_rate"] == 0.0
    assert payload["overall"]["metrics"]["agreement_s1"]["agree"] == 1757
    text = report.to_text()
    assert "Gate: PROVISIONAL" in text and "Human ceiling (734 keys" in text
    assert "are the labels reliable? unreliable" in text


def test_calibrate_absolute_scores() -> None:
    rng = np.random.default_rng(3)
    items, systems = [f"i{k}" for k in range(150)], ["s", "t"]
    truth = {(i, s): int(rng.integers(1, 6)) for i in items for s in systems}
    human = pd.DataFrame(
        [
            {
                "item_id": i,
                "system": s,
                "annotator": a,
                "score": int(np.clip(v + rng.integers(-1, 2) * (rng.random() < 0.3), 1, 5)),
            }
            for (i, s), v in truth.items()
            for a in ("h1", "h2")
        ]
    )
    # A lenient judge: one point higher 40% of the time; the first 100 items labelled only.
    judge = pd.DataFrame(
        [
            {"item_id": i, "system": s, "score": min(5, v + int(rng.random() < 0.4))}
            for (i, s), v in truth.items()
        ]
    )
    human = human[human["item_id"].isin(items[:100])]
    report = calibrate(judge, human, kind="absolute", strata=["system"], resamples=200)
    m = report.overall.metrics
    assert set(m) == {
        "alpha",
        "exact_agreement",
        "human_exact_agreement",
        "spearman",
        "kendall_tau_b",
        "mean_bias",
        "kappa_quadratic",
    }
    assert 0.2 < m["mean_bias"].value < 0.5 and m["spearman"].value > 0.7
    assert report.level == "interval" and report.join.judge_only.count == 100
    assert [c.target for c in report.corrected] == ["mean score of s", "mean score of t"]
    assert all(c.raw.value > c.value for c in report.corrected)  # the correction removes lenience
    json.dumps(report.to_dict())


def test_calibrate_rejects_disjoint_tables() -> None:
    judge, human = _synthetic(2, keys=40)
    with pytest.raises(ValueError, match="no key has both a usable judgment and a human label"):
        calibrate(judge.assign(item_id="other-" + judge["item_id"]), human, kind="pairwise")


def test_calibrate_joint_resamples_equal_the_single_statistic_functions() -> None:
    # calibrate draws one set of key resamples per stratum for all statistics; with the same
    # seed, cohen_kappa over the same comparisons (clustered by key) draws the same ones.
    # calibrate's kappa counts each comparison in both orientations (a <-> b, mirror copy in
    # the same key): the reference gets the doubled comparisons, mirror copies appended.
    judge, human = _synthetic(4, keys=200)
    report = calibrate(judge, human, kind="pairwise", resamples=200, seed=9)
    joined = join_labels(judge, human, kind="pairwise")
    key, cat = np.nonzero(joined.human_counts)
    reps = joined.human_counts[key, cat]
    x, y = np.repeat(joined.judge_code[key], reps), np.repeat(cat, reps)
    swap = np.array([1, 0, 2])  # a <-> b, tie stays
    ref = cohen_kappa(
        np.r_[x, swap[x]],
        np.r_[y, swap[y]],
        labels=range(3),
        clusters=np.tile(np.repeat(key, reps), 2),
        resamples=200,
        seed=9,
    )
    got = report.overall.metrics["kappa"]
    assert (got.value, got.ci_low, got.ci_high) == pytest.approx(
        (ref.value, ref.ci_low, ref.ci_high)
    )
