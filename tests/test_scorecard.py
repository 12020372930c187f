"""Scenario-weighted scorecards.

References: totals worked by hand; the closed-form variance of a stratified bootstrap mean
(Efron & Tibshirani 1993, sec. 5.2, applied per stratum: sum_h w_h^2 var0_h / n_h).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pydantic
import pytest

from calibration.scorecard import MetricSpec, ScorecardSpec, scorecard


def _long(rows: list[tuple[str, str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["item_id", "system", "scenario", "metric", "value"])


def _spec(**kw: object) -> ScorecardSpec:
    return ScorecardSpec.model_validate(kw)


def test_totals_by_hand() -> None:
    # qa (weight 3): x scores 5, 3 -> normalised (x - 1) / 4 = 1, .5 -> mean .75
    # ex (weight 1): x scores 1       -> 0
    # total = (3 * .75 + 1 * 0) / 4 = .5625
    # latency (lower is better, 0..10 s): qa 2, 4 -> 1 - .2, 1 - .4 -> .7; ex 10 -> 0
    # total = (3 * .7 + 0) / 4 = .525; overall with weights rubric 3, latency 1:
    # (3 * .5625 + .525) / 4 = .553125
    values = _long(
        [
            ("q1", "x", "qa", "rubric", 5),
            ("q2", "x", "qa", "rubric", 3),
            ("e1", "x", "ex", "rubric", 1),
            ("q1", "x", "qa", "latency", 2),
            ("q2", "x", "qa", "latency", 4),
            ("e1", "x", "ex", "latency", 10),
        ]
    )
    spec = _spec(
        scenarios={"qa": 3, "ex": 1},
        metrics={
            "rubric": {"min": 1, "max": 5, "weight": 3},
            "latency": {"min": 0, "max": 10, "higher_is_better": False, "weight": 1},
        },
    )
    card = scorecard(values, spec, seed=0, resamples=200)
    t = card.table().set_index("metric")
    assert t.loc["rubric", "total"] == pytest.approx(0.5625)
    assert t.loc["rubric", "scenario:qa"] == pytest.approx(0.75)
    assert t.loc["latency", "total"] == pytest.approx(0.525)
    assert t.loc["overall", "total"] == pytest.approx(0.553125)
    assert card.weights == {"qa": 0.75, "ex": 0.25}
    for _, row in t.iterrows():
        assert row["ci_low"] <= row["total"] <= row["ci_high"]
    assert card.to_dict()["rows"][0]["system"] == "x"


def test_interval_is_a_stratified_bootstrap_over_items() -> None:
    # With one metric the total's bootstrap sd has the closed form sqrt(sum_h w_h^2
    # var0_h / n_h). R = 20,000 replicates estimate it with relative sd 0.5%; 3% is 6 sd.
    rng = np.random.default_rng(0)
    rows = []
    sizes = {"en": 120, "ur": 40, "ru": 60}
    for scen, n in sizes.items():
        for i in range(n):
            for system in ("x", "y"):
                rows.append((f"{scen}{i}", system, scen, "acc", float(rng.random() < 0.7)))
    values = _long(rows)
    spec = _spec(scenarios={"en": 2, "ur": 1, "ru": 1}, metrics={"acc": {}})
    card = scorecard(values, spec, seed=1, resamples=20_000)
    x = values[(values["system"] == "x")]
    var = 0.0
    for scen, w in {"en": 0.5, "ur": 0.25, "ru": 0.25}.items():
        v = x.loc[x["scenario"] == scen, "value"].to_numpy()
        var += w**2 * v.var() / len(v)
    reps = card.replicates[("x", "acc")]
    assert reps.std(ddof=1) == pytest.approx(math.sqrt(var), rel=0.03)
    # Systems are resampled on the same items: a copy of x has identical replicates.
    copy = pd.concat([values, x.assign(system="x2")])
    card2 = scorecard(copy, spec, seed=1, resamples=500)
    np.testing.assert_array_equal(card2.replicates[("x", "acc")], card2.replicates[("x2", "acc")])


def test_zero_weight_scenario_reported_but_not_totalled() -> None:
    values = _long(
        [
            ("a", "x", "main", "acc", 1.0),
            ("b", "x", "main", "acc", 0.0),
            ("c", "x", "probe", "acc", 1.0),
        ]
    )
    card = scorecard(values, _spec(scenarios={"main": 1, "probe": 0}, metrics={"acc": {}}), seed=0)
    (row,) = card.rows
    assert row.total == 0.5 and row.per_scenario == {"main": 0.5, "probe": 1.0}


def test_config_is_strict_and_errors_name_the_fix() -> None:
    with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
        _spec(scenarios={"a": 1}, metrics={"m": {"normalize": "minmax"}})
    with pytest.raises(pydantic.ValidationError, match="both min and max"):
        MetricSpec(min=0)
    with pytest.raises(pydantic.ValidationError, match="sum to 0"):
        _spec(scenarios={"a": 0}, metrics={"m": {}})
    values = _long([("i", "x", "a", "m", 2.0), ("j", "y", "b", "m", 1.0)])
    spec = _spec(scenarios={"a": 1, "b": 1}, metrics={"m": {}})
    with pytest.raises(ValueError, match="system 'y' has no 'm' value in scenario 'a'"):
        scorecard(values, spec, seed=0)
    with pytest.raises(ValueError, match="scenarios without a declared weight: b"):
        scorecard(values, _spec(scenarios={"a": 1}, metrics={"m": {}}), seed=0)
    with pytest.raises(ValueError, match="metrics without a declared normalisation: m"):
        scorecard(values, _spec(scenarios={"a": 1, "b": 1}, metrics={"z": {}}), seed=0)
    bounded = _spec(scenarios={"a": 1, "b": 1}, metrics={"m": {"min": 0, "max": 1.5}})
    with pytest.raises(ValueError, match=r"outside its declared \[0.0, 1.5\]"):
        scorecard(values, bounded, seed=0)
    twice = _long([("i", "x", "a", "m", 1.0), ("i", "y", "b", "m", 1.0)])
    with pytest.raises(ValueError, match="item 'i' appears in several scenarios"):
        scorecard(twice, spec, seed=0)
