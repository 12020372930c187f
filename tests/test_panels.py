"""Panels of judges (calibration.panels; issue 19, part 1): majority labels by hand, each
panel's alpha against the `krippendorff` package, invariance to judge names and row order,
and a planted case where three cheap independent judges out-agree one expensive judge."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from calibration.panels import majority, panel_frontier
from tests.helpers import run_cli_here


def test_majority_by_hand() -> None:
    # judges x units; -1 = no label; codes 0, 1 and 2 = tie
    labels = np.array(
        [
            [0, 1, 0, -1, 0],
            [0, 1, 1, -1, -1],
            [1, 0, -1, -1, 1],
        ]
    )
    assert majority(labels, tie=2).tolist() == [0, 1, 2, -1, 2]
    assert majority(labels, tie=None).tolist() == [0, 1, -1, -1, -1]


def _simulated(seed: int, accuracy: dict[str, float], n: int = 400) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    gold = {f"u{i}": str(rng.integers(1, 3)) for i in range(n)}
    rows = []
    for judge, acc in accuracy.items():
        for unit, truth in gold.items():
            right = rng.random() < acc
            rows.append((unit, judge, truth if right else ("2" if truth == "1" else "1")))
    return pd.DataFrame(rows, columns=["unit", "judge", "label"]), gold


def test_each_panels_alpha_is_the_packages() -> None:
    verdicts, gold = _simulated(1, {"a": 0.8, "b": 0.7, "c": 0.75})
    frontier = panel_frontier(verdicts, gold, {"a": 1, "b": 1, "c": 1}, resamples=200)
    wide = verdicts.pivot(index="judge", columns="unit", values="label")
    units = sorted(gold)
    for panel in frontier.panels:
        votes = wide.loc[list(panel.judges), units]
        top = votes.apply(lambda col: col.value_counts(), axis=0).fillna(0)
        label = [
            top.index[top[u].argmax()] if (top[u] == top[u].max()).sum() == 1 else "tie"
            for u in units
        ]
        codes = {"1": 1.0, "2": 2.0, "tie": 3.0}
        data = np.array([[codes[x] for x in label], [codes[gold[u]] for u in units]])
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        assert panel.alpha == pytest.approx(expected, abs=1e-12), panel.judges
        assert panel.ci_low is not None and panel.ci_low <= panel.alpha <= panel.ci_high


def test_three_cheap_independent_judges_can_stand_in_for_an_expensive_one() -> None:
    # Majority of three independent 85% judges is right 93.9% of the time (0.85^3 + 3 x
    # 0.85^2 x 0.15); the expensive judge 90%.
    accuracy = {"big": 0.90, "c1": 0.85, "c2": 0.85, "c3": 0.85}
    verdicts, gold = _simulated(2, accuracy, n=1500)
    costs = {"big": 10.0, "c1": 1.0, "c2": 1.0, "c3": 1.0}
    # The expensive judge alone or the cheap ones together (an `allowed` rule, as a
    # cross-family rule would be).
    frontier = panel_frontier(
        verdicts, gold, costs, allowed=lambda c: "big" not in c or len(c) == 1, seed=3,
        resamples=1000,
    )  # fmt: skip
    trio, big = frontier.panel(("c1", "c2", "c3")), frontier.panel(("big",))
    assert trio.accuracy == pytest.approx(0.939, abs=0.02)
    assert frontier.best == trio.judges and trio.alpha > big.alpha
    assert frontier.recommended == trio.judges  # at 3 the cost of the expensive judge's 10
    # Single cheap judges and pairs (a pair's majority ties whenever its two disagree) are
    # told apart from the trio; so is the expensive judge.
    assert all(p.p_vs_best is not None and p.p_vs_best < 0.05 for p in frontier.panels if p != trio)
    # Everything allowed: the best mixes the expensive judge in; nothing cheaper matches it,
    # so it is recommended though the trio is on the frontier at a third of its cost.
    full = panel_frontier(verdicts, gold, costs, resamples=1000, seed=3)
    assert "big" in full.best and full.recommended == full.best
    assert full.panel(("c1", "c2", "c3")).on_frontier
    for p in full.panels:  # the frontier: nothing of known cost as cheap agrees better
        if p.on_frontier:
            assert not any(
                q.cost is not None and q.cost <= p.cost and q.alpha > p.alpha for q in full.panels
            )


def test_names_and_row_order_do_not_change_a_panel() -> None:
    verdicts, gold = _simulated(4, {"a": 0.8, "b": 0.6, "c": 0.7, "d": 0.75})
    costs = {"a": 4.0, "b": 1.0, "c": 2.0, "d": None}
    base = panel_frontier(verdicts, gold, costs, resamples=300, seed=5)
    names = {"a": "zz", "b": "aa", "c": "mm", "d": "bb"}
    renamed = panel_frontier(
        verdicts.assign(judge=verdicts["judge"].map(names)).sample(frac=1, random_state=1),
        gold,
        {names[j]: c for j, c in costs.items()},
        resamples=300,
        seed=5,
    )
    for panel in base.panels:
        other = renamed.panel(tuple(names[j] for j in panel.judges))
        assert (other.alpha, other.ci_low, other.ci_high, other.on_frontier) == (
            panel.alpha,
            panel.ci_low,
            panel.ci_high,
            panel.on_frontier,
        )
    assert renamed.best == tuple(sorted(names[j] for j in base.best))
    assert base.panel(("a", "d")).cost is None  # an unknown price stays unknown


def test_judge_panels_reads_tables_and_names_what_is_wrong(tmp_path: Path) -> None:
    verdicts, gold = _simulated(6, {"big": 0.9, "c1": 0.85, "c2": 0.85, "c3": 0.85}, n=300)
    verdicts.to_csv(tmp_path / "verdicts.csv", index=False)
    reference = pd.DataFrame({"unit": list(gold), "label": list(gold.values())})
    reference.to_json(tmp_path / "reference.jsonl", orient="records", lines=True)
    args = ["panels", "--verdicts", str(tmp_path / "verdicts.csv")]
    args += ["--reference", str(tmp_path / "reference.jsonl"), "--resamples", "200", "--json"]
    costs = ["--cost", "big=10", "--cost", "c1=1", "--cost", "c2=1", "--cost", "c3=1"]
    result = run_cli_here(*args, *costs)
    assert result.returncode == 0, result.stderr
    frontier = json.loads(result.stdout)
    library = panel_frontier(
        verdicts, gold, {"big": 10.0, "c1": 1.0, "c2": 1.0, "c3": 1.0}, resamples=200
    )
    assert tuple(frontier["recommended"]) == library.recommended
    assert [p["alpha"] for p in frontier["panels"]] == [p.alpha for p in library.panels]
    # Two reference labels for one unit: the file, the row and the field are named.
    doubled = pd.concat([reference, reference.head(1)])
    doubled.to_csv(tmp_path / "doubled.csv", index=False)
    bad = run_cli_here(*args[:3], "--reference", str(tmp_path / "doubled.csv"))
    assert bad.returncode != 0
    assert "doubled.csv" in bad.stderr and "row 301" in bad.stderr and "unit" in bad.stderr


def test_mean_panels_of_scores_against_krippendorffs_interval_alpha() -> None:
    """Score aggregation: each panel's score is its members' mean (a missing score abstains),
    and its alpha with the reference is the package's interval alpha on (reference, mean)."""
    rng = np.random.default_rng(4)
    n = 150
    truth = rng.integers(1, 6, n)
    noise = {"sharp": 0.4, "fuzzy": 1.2, "fuzzier": 1.2}
    rows = []
    for judge, sd in noise.items():
        scores = np.clip(np.rint(truth + rng.normal(0, sd, n)), 1, 5)
        for i in range(n):
            if not (judge == "fuzzy" and i % 10 == 0):  # some abstentions
                rows.append((f"u{i}", judge, float(scores[i])))
    verdicts = pd.DataFrame(rows, columns=["unit", "judge", "label"])
    reference = {f"u{i}": float(truth[i]) for i in range(n)}
    frontier = panel_frontier(
        verdicts, reference, {"sharp": 5.0, "fuzzy": 1.0, "fuzzier": 1.0},
        aggregate="mean", resamples=300,
    )  # fmt: skip
    table = verdicts.pivot(index="unit", columns="judge", values="label")
    units = sorted(reference)
    for panel in frontier.panels:
        mean = table.loc[units, list(panel.judges)].mean(axis=1).to_numpy()
        expected = krippendorff.alpha(
            reliability_data=np.array([[reference[u] for u in units], mean]),
            level_of_measurement="interval",
        )
        assert panel.alpha == pytest.approx(expected, abs=1e-9), panel.judges
        assert panel.accuracy == pytest.approx(
            np.mean(np.abs(mean - [reference[u] for u in units]) <= 0.5)
        )
    assert frontier.best == ("sharp",)
    assert "mean scores; Krippendorff alpha (interval)" in frontier.method
    # Two noisy judges averaged agree better than either alone.
    both = frontier.panel(("fuzzier", "fuzzy")).alpha
    assert both > max(frontier.panel(("fuzzy",)).alpha, frontier.panel(("fuzzier",)).alpha)


def test_judge_panels_averages_scores_and_names_a_label_that_is_not_one(tmp_path: Path) -> None:
    verdicts = pd.DataFrame(
        {"unit": ["u1", "u1", "u2", "u2", "u3", "u3"], "judge": ["a", "b"] * 3,
         "label": [4, 5, 2, 2, 1, 3]}
    )  # fmt: skip
    reference = pd.DataFrame({"unit": ["u1", "u2", "u3"], "label": [5, 2, 2]})
    verdicts.to_csv(tmp_path / "scores.csv", index=False)
    reference.to_csv(tmp_path / "reference.csv", index=False)
    args = ["panels", "--verdicts", str(tmp_path / "scores.csv"), "--reference"]
    args += [str(tmp_path / "reference.csv"), "--aggregate", "mean", "--resamples", "100"]
    result = run_cli_here(*args, "--json")
    assert result.returncode == 0, result.stderr
    frontier = json.loads(result.stdout)
    both = next(p for p in frontier["panels"] if p["judges"] == ["a", "b"])
    assert both["accuracy"] == pytest.approx(1.0)  # means 4.5, 2, 2 within half a point
    verdicts["label"] = verdicts["label"].astype(object)
    verdicts.loc[3, "label"] = "good"
    verdicts.to_csv(tmp_path / "scores.csv", index=False)
    bad = run_cli_here(*args)
    assert bad.returncode != 0 and "'good' is not a score" in bad.stderr and "row 4" in bad.stderr
