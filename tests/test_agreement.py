"""Agreement statistics against independent references: the `krippendorff` package, scipy,
scikit-learn, hand-written definitions, and scipy.stats.bootstrap for the intervals."""

from __future__ import annotations

import time

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from calibration.agreement import (
    cohen_kappa,
    confusion_matrix,
    kendall_tau_b,
    mean_signed_bias,
    pairwise_agreement,
    raw_agreement,
    spearman,
)
from calibration.alpha import alpha_from_counts, krippendorff_alpha
from calibration.bootstrap_alpha import (
    LEVELS,
    alpha_from_weights,
    bootstrap_alpha,
    units_from_pairs,
    units_from_value_counts,
)
from calibration.calibrate import calibrate
from calibration.labels import LabelError
from judge.errors import DataError


def _reliability(seed: int, raters: int = 4, units: int = 150, values: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, values + 1, size=units)
    noise = rng.integers(-1, 2, size=(raters, units)) * (rng.random((raters, units)) < 0.4)
    data = np.clip(truth + noise, 1, values).astype(float)
    data[rng.random((raters, units)) < 0.25] = np.nan
    return data


def _counts(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    domain = np.unique(data[~np.isnan(data)])
    return (data.T[..., None] == domain).sum(axis=1), domain


# --- Krippendorff's alpha -----------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_point_equals_package(level: str) -> None:
    # Reference: krippendorff 0.9.0 on the raters x units matrix.
    for seed in range(3):
        data = _reliability(seed)
        est = krippendorff_alpha(data, level, resamples=100, seed=seed)  # type: ignore[arg-type]
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert est.value == pytest.approx(ref, abs=1e-12)
        counts, domain = _counts(data)
        units = units_from_value_counts(
            counts, domain if level in ("interval", "ratio") else np.arange(len(domain)), level
        )  # type: ignore[arg-type]
        # Our coincidence-matrix value (what the bootstrap resamples) agrees with the package.
        assert units.alpha(units.totals())[0] == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_resample_equals_package_on_resampled_columns(level: str) -> None:
    # A bootstrap resample is unit multiplicities; the package sees the repeated columns.
    data = _reliability(7)
    counts, domain = _counts(data)
    dom = domain if level in ("interval", "ratio") else np.arange(len(domain))
    units = units_from_value_counts(counts, dom, level)  # type: ignore[arg-type]
    rng = np.random.default_rng(11)
    for _ in range(5):
        idx = rng.integers(0, data.shape[1], size=data.shape[1])
        weights = np.bincount(idx, minlength=data.shape[1])
        ours = alpha_from_weights(units, weights)[0]
        ref = krippendorff.alpha(reliability_data=data[:, idx], level_of_measurement=level)
        assert ours == pytest.approx(ref, abs=1e-12)


def test_pair_units_equal_package_on_two_coder_units() -> None:
    # Judge vs each human label: every comparison is a unit coded by (judge, that human).
    rng = np.random.default_rng(5)
    key = np.repeat(np.arange(60), rng.integers(1, 4, size=60))
    judge, human = rng.integers(0, 3, size=len(key)), rng.integers(0, 3, size=len(key))
    for level in LEVELS:
        units = units_from_pairs(
            key, judge, human, np.ones(len(key)), 60, np.arange(3.0) + 1, level
        )  # type: ignore[arg-type]
        ref = krippendorff.alpha(
            reliability_data=np.stack([judge, human]) + 1.0, level_of_measurement=level
        )
        assert units.alpha(units.totals())[0] == pytest.approx(ref, abs=1e-12)


def test_alpha_strings_and_codes_agree() -> None:
    data = _reliability(2, values=3)
    labels = np.where(
        np.isnan(data),
        None,
        np.array(["", "bad", "ok", "good"], dtype=object)[np.nan_to_num(data).astype(int)],
    )
    by_str = krippendorff_alpha(labels, "nominal", resamples=50)
    by_num = krippendorff_alpha(data, "nominal", resamples=50)
    assert by_str.value == pytest.approx(by_num.value, abs=1e-12)
    ordinal = krippendorff_alpha(
        labels, "ordinal", value_domain=["bad", "ok", "good"], resamples=50
    )
    assert ordinal.value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"), abs=1e-12
    )
    with pytest.raises(ValueError, match="value_domain"):
        krippendorff_alpha(labels, "ordinal")


def test_alpha_undefined_cases_are_explicit() -> None:
    constant = np.ones((3, 10))
    est = krippendorff_alpha(constant, "nominal")
    assert est.value is None and "expected disagreement is zero" in est.reason
    single = krippendorff_alpha(np.array([[1.0, 2.0, 3.0]]), "interval")
    assert single.value is None and "two or more raters" in single.reason
    # One pairable value only (the other value sits in an unpairable unit).
    lone = krippendorff_alpha(np.array([[1.0, 1.0, 2.0], [1.0, 1.0, np.nan]]), "nominal")
    assert lone.value is None and lone.reason


def test_alpha_bootstrap_is_seeded_and_covers_point() -> None:
    data = _reliability(3, units=300)
    a = krippendorff_alpha(data, "interval", resamples=300, seed=1)
    b = krippendorff_alpha(data, "interval", resamples=300, seed=1)
    c = krippendorff_alpha(data, "interval", resamples=300, seed=2)
    assert a == b and a.ci_low != c.ci_low
    assert a.ci_low < a.value < a.ci_high and a.seed == 1 and a.resamples == 300


@pytest.mark.parametrize("units", [30, 120])
def test_alpha_interval_matches_scipy_bootstrap(units: int) -> None:
    # Independent reference: scipy.stats.bootstrap, BCa, resampling unit columns and calling
    # the package per resample (its jackknife too). Agreement within Monte Carlo error.
    data = _reliability(4, raters=3, units=units)
    ref = stats.bootstrap(
        (np.arange(data.shape[1]),),
        lambda idx: krippendorff.alpha(
            reliability_data=data[:, idx], level_of_measurement="nominal"
        ),
        n_resamples=1000,
        method="BCa",
        vectorized=False,
        rng=np.random.default_rng(0),
    )
    est = krippendorff_alpha(data, "nominal", resamples=2000, seed=0)
    assert est.method.endswith("BCa cluster bootstrap over units")
    assert est.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert est.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_alpha_bootstrap_speed_3x10000() -> None:
    # The target is < 1 s for 1,000 resamples at 3 raters x 10,000 units (one package
    # call per resample takes ~11 s); bench/alpha_bootstrap.py measures it. Loose bound here,
    # since CI machines are shared.
    rng = np.random.default_rng(0)
    data = rng.integers(1, 6, size=(3, 10_000)).astype(float)
    counts, domain = _counts(data)
    units = units_from_value_counts(counts, np.arange(len(domain)), "nominal")
    best = min(
        _timed(lambda: bootstrap_alpha(units, 1000, np.random.default_rng(1))) for _ in range(2)
    )
    assert best < 2.0


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def test_alpha_from_counts_matches_matrix_path() -> None:
    data = _reliability(9)
    counts, domain = _counts(data)
    assert alpha_from_counts(counts, domain, "ratio", resamples=50) == krippendorff_alpha(
        data, "ratio", resamples=50
    )


# --- Cohen's kappa ------------------------------------------------------------------------


def _kappa_reference(a: list, b: list, weights: str | None, cats: list) -> float:
    """Cohen (1960, 1968) from the definition, by loops: 1 - sum w*O / sum w*E."""
    k, n = len(cats), len(a)
    pos = {c: i for i, c in enumerate(cats)}
    obs = [[0.0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        obs[pos[x]][pos[y]] += 1 / n
    row = [sum(obs[i]) for i in range(k)]
    col = [sum(obs[i][j] for i in range(k)) for j in range(k)]

    def w(i: int, j: int) -> float:
        return {None: float(i != j), "linear": abs(i - j), "quadratic": (i - j) ** 2}[weights]

    num = sum(w(i, j) * obs[i][j] for i in range(k) for j in range(k))
    den = sum(w(i, j) * row[i] * col[j] for i in range(k) for j in range(k))
    return 1 - num / den


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_definition(weights: str | None) -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(1, 6, size=400)
    b = np.clip(a + rng.integers(-2, 3, size=400) * (rng.random(400) < 0.5), 1, 5)
    est = cohen_kappa(a, b, weights, resamples=100)  # type: ignore[arg-type]
    ref = _kappa_reference(a.tolist(), b.tolist(), weights, [1, 2, 3, 4, 5])
    assert est.value == pytest.approx(ref, abs=1e-12)
    assert est.ci_low < est.value < est.ci_high and est.n == 400


def test_kappa_missing_and_undefined() -> None:
    with pytest.raises(ValueError, match=r"a\[1\] is missing; pass missing='as_label'"):
        cohen_kappa(["x", None, "y"], ["x", "y", "y"])
    est = cohen_kappa(["x", None, "y", "y"], ["x", "y", "y", "x"], missing="as_label", resamples=20)
    ref = _kappa_reference(["x", "<m>", "y", "y"], ["x", "y", "y", "x"], None, ["x", "y", "<m>"])
    assert est.value == pytest.approx(ref)
    same = cohen_kappa(["t"] * 5, ["t"] * 5)
    assert same.value is None and "expected disagreement is zero" in same.reason


def test_kappa_interval_matches_scipy_bootstrap() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(0, 3, size=300)
    b = np.where(rng.random(300) < 0.7, a, rng.integers(0, 3, size=300))
    ref = stats.bootstrap(
        (a, b),
        lambda x, y: _kappa_reference(list(x), list(y), None, [0, 1, 2]),
        paired=True,
        vectorized=False,
        n_resamples=1000,
        method="percentile",
        rng=np.random.default_rng(0),
    )
    est = cohen_kappa(a, b, resamples=2000, seed=0)
    assert est.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.02)
    assert est.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.02)


# --- weighted kappa over score values (issue 12, item 6) ----------------------------------


def _scale_with_a_gap(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores on a 1-5 scale on which nobody gives 3."""
    rng = np.random.default_rng(seed)
    a = rng.choice([1, 2, 4, 5], size=300)
    b = np.clip(a + rng.choice([-1, 0, 0, 1], size=300), 1, 5)
    return a, np.where(b == 3, 4, b)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_weighs_values_as_sklearn_on_the_full_scale(weights: str) -> None:
    # Reference: scikit-learn's cohen_kappa_score weighs by position in `labels`; given the
    # whole integer scale 1..5, position = value - 1, the unused 3 keeping 2 and 4 apart.
    a, b = _scale_with_a_gap(4)
    full = [1, 2, 3, 4, 5]
    ref = cohen_kappa_score(a, b, labels=full, weights=weights)
    by_position = cohen_kappa_score(a, b, weights=weights)  # 2 and 4 adjacent: the old bug
    assert abs(ref - by_position) > 0.01
    for labels in (None, full):  # numeric labels are weighted by value, listed or not
        est = cohen_kappa(a, b, weights, labels=labels, resamples=20)  # type: ignore[arg-type]
        assert est.value == pytest.approx(ref, abs=1e-12)
    # One more item on which both say 3 is one more agreement, not a change of distances.
    a3, b3 = np.r_[a, 3], np.r_[b, 3]
    est = cohen_kappa(a3, b3, weights, resamples=20)  # type: ignore[arg-type]
    assert est.value == pytest.approx(cohen_kappa_score(a3, b3, labels=full, weights=weights))


def test_weighted_kappa_on_a_scale_1_2_4_by_hand() -> None:
    # Pairs (1,1) (1,2) (2,2) (4,4) (4,2) (2,4); margins a: 1/3 each of 1, 2, 4; b: 1/6, 1/2, 1/3.
    # Quadratic: observed mean (u-v)^2 = (1 + 4 + 4) / 6 = 3/2; expected
    # 1/3 [(1/2 + 9/3) + (1/6 + 4/3) + (9/6 + 4/2)] = 17/6; kappa = 1 - (3/2) / (17/6) = 8/17.
    # Linear: observed (1 + 2 + 2) / 6 = 5/6; expected 1/3 [(1/2 + 1) + (1/6 + 2/3) + (1/2 + 1)]
    # = 23/18; kappa = 1 - (5/6) / (23/18) = 8/23. (By position 0, 1, 2 quadratic would be 4/7.)
    a, b = [1, 1, 2, 4, 4, 2], [1, 2, 2, 4, 2, 4]
    assert cohen_kappa(a, b, "quadratic", resamples=20).value == pytest.approx(8 / 17)
    assert cohen_kappa(a, b, "linear", resamples=20).value == pytest.approx(8 / 23)
    # Ordered text labels have no values: positions in `labels`.
    text = cohen_kappa(["lo", "lo", "mid"], ["lo", "mid", "mid"], "quadratic", labels=["lo", "mid"])
    assert text.value == pytest.approx(cohen_kappa_score([0, 0, 1], [0, 1, 1], weights="quadratic"))


def test_calibrate_kappa_quadratic_over_the_rubric_scale() -> None:
    # calibrate's kappa_quadratic vs scikit-learn on its comparisons (judge score, each human
    # score), labels = the rubric's scale; the scale also shows the unused level 3.
    a, b = _scale_with_a_gap(6)
    judge = pd.DataFrame({"item_id": [f"i{k}" for k in range(300)], "system": "s", "score": a})
    human = judge.assign(score=b, annotator="h1")
    ref = cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights="quadratic")
    for scale in (None, range(1, 6)):
        report = calibrate(judge, human, kind="absolute", scale=scale, resamples=20)
        assert report.overall.metrics["kappa_quadratic"].value == pytest.approx(ref, abs=1e-12)
    assert report.overall.confusion.labels == ("1.0", "2.0", "3.0", "4.0", "5.0")
    assert report.overall.confusion.counts[2] == (0, 0, 0, 0, 0)
    # A judge panel's mean score may fall between the levels: one more category, no error.
    panel = judge.assign(score=np.where(np.arange(300) == 0, 3.5, a))
    report = calibrate(panel, human, kind="absolute", scale=range(1, 6), resamples=20)
    assert report.overall.confusion.labels == ("1.0", "2.0", "3.0", "3.5", "4.0", "5.0")
    with pytest.raises(LabelError, match=r"human table, row 7 .*'score'.* 7 is not on the rubric"):
        calibrate(
            judge,
            human.assign(score=np.where(np.arange(300) == 7, 7, b)),
            kind="absolute",
            scale=range(1, 6),
        )


# --- raw agreement, confusion, correlations, bias -----------------------------------------


def test_raw_agreement_counts_and_clusters() -> None:
    a = ["a", "b", "tie", "a", "b", "a"]
    b = ["a", "a", "tie", "a", "b", "b"]
    est = raw_agreement(a, b, resamples=50)
    assert (est.agree, est.comparisons, est.n) == (4, 6, 6)
    clustered = raw_agreement(a, b, clusters=[1, 1, 2, 2, 3, 3], resamples=50)
    assert (clustered.agree, clustered.comparisons, clustered.n) == (4, 6, 3)
    assert clustered.value == pytest.approx(4 / 6)


def test_confusion_matrix_counts() -> None:
    cm = confusion_matrix(["a", "a", "b", None], ["a", "b", "b", "b"], labels=["a", "b"])
    assert cm.labels == ("a", "b", "<missing>")
    assert cm.counts == ((1, 1, 0), (0, 1, 0), (0, 1, 0))


def test_correlations_match_scipy_and_its_bootstrap() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(1, 8, size=200).astype(float)  # ties on purpose
    y = x + rng.normal(0, 2, size=200)
    rho = spearman(x, y, resamples=1500, seed=0)
    tau = kendall_tau_b(x, y, resamples=300, seed=0)
    assert rho.value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert tau.value == pytest.approx(stats.kendalltau(x, y, variant="b").statistic, abs=1e-12)
    ref = stats.bootstrap(
        (x, y),
        lambda a, b: stats.spearmanr(a, b).statistic,
        paired=True,
        vectorized=False,
        n_resamples=1000,
        method="percentile",
        rng=np.random.default_rng(0),
    )
    assert rho.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert rho.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.03)
    assert tau.ci_low < tau.value < tau.ci_high
    constant = spearman(np.ones(5), np.arange(5.0))
    assert constant.value is None and "constant" in constant.reason


def test_mean_signed_bias() -> None:
    judge, human = np.array([5.0, 4, 3, 5]), np.array([4.0, 4, 2, 3])
    est = mean_signed_bias(judge, human, clusters=["i", "i", "j", "k"], resamples=100)
    assert est.value == pytest.approx(np.mean(judge - human)) and est.n == 3


# --- MT-Bench-style pairwise agreement on a hand-checked example --------------------------


def test_pairwise_agreement_hand_example() -> None:
    judge = pd.DataFrame(
        {
            "item_id": ["q1", "q1", "q2"],
            "system_a": ["x", "z", "y"],
            "system_b": ["y", "x", "x"],
            "winner": ["a", "tie", "y"],
            "turn": [1, 1, 2],
        }
    )
    human = pd.DataFrame(
        {
            # q1 x-y: labels a, a, tie (judge a); q1 x-z given as z-x: 'b' means x wins,
            # judge tie; q2 x-y given as y-x: 'a' means y wins = judge's winner (y).
            "item_id": ["q1", "q1", "q1", "q1", "q2"],
            "system_a": ["x", "y", "x", "z", "y"],
            "system_b": ["y", "x", "y", "x", "x"],
            "winner": ["a", "b", "tie", "b", "a"],
            "annotator": ["h1", "h2", "h3", "h1", "h2"],
        }
    )
    r = pairwise_agreement(judge, human, resamples=30)
    # Judge vs each label: q1xy: a,a,tie vs a -> 2/3; q1xz: x(=a) vs tie -> 0/1; q2: 1/1.
    assert (r.judge_s1.agree, r.judge_s1.comparisons) == (3, 5)
    # S2 drops ties on either side: q1xy 2/2; q1xz judge tie -> 0; q2 1/1.
    assert (r.judge_s2.agree, r.judge_s2.comparisons) == (3, 3)
    # Human pairs on q1xy: (a,a) agree, (a,tie) x2 disagree -> 1/3; S2: 1/1.
    assert (r.human_s1.agree, r.human_s1.comparisons) == (1, 3)
    assert (r.human_s2.agree, r.human_s2.comparisons) == (1, 1)
    assert r.keys == 3


def test_a_run_calibrates_scores_on_its_rubric_scale(tmp_path) -> None:
    # The run passes the rubric's scale (absolute_1to5: 1..5) to calibrate: the unused 3 is a
    # category (a zero row), kappa_quadratic matches scikit-learn on the full scale, and a
    # human score off the scale is a data error naming the row.
    from judge import RunConfig
    from judge.run.analyse import _calibration

    a, b = _scale_with_a_gap(8)
    judge = pd.DataFrame({"item_id": [f"i{k}" for k in range(300)], "system": "s", "score": a})
    human = judge.assign(score=b, annotator="h1")
    config = RunConfig.model_validate(
        {
            "name": "t",
            "data": {"items": str(tmp_path / "i.jsonl"), "responses": str(tmp_path / "r.jsonl")},
            "rubric": "absolute_1to5",
            "calibration": {"resamples": 100},
        }
    )
    result = _calibration(judge, "absolute", human, tmp_path / "h.csv", [], config)
    assert result is not None
    assert result.overall.confusion.labels[2] == "3.0"
    ref = cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert result.overall.metrics["kappa_quadratic"].value == pytest.approx(ref, abs=1e-12)
    # Named by the labels file and its row (not the run dir): the file is what to fix.
    with pytest.raises(DataError, match=r"h\.csv, row 1, field 'score': 0 is not on the rubric"):
        _calibration(judge, "absolute", human.assign(score=0), tmp_path / "h.csv", [], config)
