"""`compare_table`, the entry point behind `judge compare`: scores and pairwise tables, strata,
clusters, baselines, gates and notes.

References: win rates counted by hand from the generated verdicts (ties half); the net win rate
2 winrate - 1 (the pairwise diff); the paired bootstrap itself is checked in test_bootstrap.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from calibration.compare import compare_table
from calibration.compare_input import ComparisonInputError
from calibration.gates import GateSyntaxError


def _scores_table() -> pd.DataFrame:
    # Candidate better in English, worse in Urdu; two judges per item (averaged, moving
    # together); items grouped in conversations (clusters).
    rng = np.random.default_rng(4)
    rows = []
    for item in range(240):
        lang = "en" if item < 160 else "ur"
        for judge in ("j1", "j2"):
            q = rng.integers(1, 6)
            for system, delta in (("baseline", 0), ("candidate", 1 if lang == "en" else -1)):
                score = float(np.clip(q + delta * (rng.random() < 0.6), 1, 5))
                rows.append((f"i{item}", system, score, lang, f"c{item // 2}", judge))
    return pd.DataFrame(rows, columns=["item_id", "system", "score", "language", "cluster", "j"])


def test_compare_table_scores_by_stratum_and_gates() -> None:
    table = _scores_table()
    report = compare_table(
        table,
        kind="scores",
        baseline="baseline",
        by="language",
        resamples=2_000,
        seed=3,
        gates=["diff(candidate, baseline) >= -0.02", "ci_low(diff(candidate, baseline)) > 0"],
    )
    (overall,) = report.comparisons
    assert (overall.a, overall.b) == ("candidate", "baseline")
    assert overall.result.n_strata == 2 and overall.result.n_units == 120  # clusters
    per = {c.stratum: c.result for c in report.by_stratum}
    assert per["en"].ci_low > 0 and per["ur"].ci_high < 0  # wins in en, loses in ur
    assert report.n_items == 240 and any("averaged" in n for n in report.notes)
    first, second = report.gates
    assert first.passed and first.value == pytest.approx(overall.result.mean_diff)
    assert second.passed == (overall.result.ci_low > 0)
    assert "95% CI" in first.reason and "\n" not in first.reason
    assert report.ranking[0].system == "candidate"
    out = json.loads(json.dumps(report.to_dict()))
    assert out["gates_passed"] == report.gates_passed
    assert out["win_rates"]["candidate"]["baseline"] > 0.5


def test_compare_table_pairwise_both_orders_and_winner_column() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for item in range(200):
        p_win = 0.65
        for order in ("AB", "BA"):
            won = rng.random() < p_win
            tie = rng.random() < 0.1
            if order == "AB":
                winner = "tie" if tie else ("A" if won else "B")
                rows.append((f"i{item}", "new", "old", winner, order))
            else:  # slots swapped: the old system sits in slot A
                winner = "tie" if tie else ("B" if won else "A")
                rows.append((f"i{item}", "old", "new", winner, order))
    table = pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "winner", "order"])
    report = compare_table(
        table,
        kind="pairwise",
        baseline="old",
        resamples=2_000,
        seed=1,
        gates=["winrate(new, old) > 0.5", "diff(new, old) >= 0.5"],
    )
    (c,) = report.comparisons
    assert c.result.n == 400 and c.result.n_units == 200  # both orders move together
    new_in_a = np.where(table["system_a"] == "new", 1.0, 0.0)
    a_won = np.where(table["winner"] == "A", new_in_a, 1 - new_in_a)
    score = np.where(table["winner"] == "tie", 0.5, a_won)
    wr = score.mean()
    assert report.gates[0].value == pytest.approx(wr)
    assert c.result.mean_diff == pytest.approx(2 * wr - 1)
    assert report.gates[0].passed and not report.gates[1].passed
    assert report.failed_gates == (report.gates[1],) and not report.gates_passed
    assert report.win_rates.loc["new", "old"] == pytest.approx(wr)
    assert report.bradley_terry is not None and report.ranking[0].system == "new"
    json.dumps(report.to_dict())


def test_compare_table_errors() -> None:
    table = _scores_table()
    with pytest.raises(ComparisonInputError, match="missing \\['score'\\]"):
        compare_table(table.drop(columns="score"), kind="scores")
    with pytest.raises(ComparisonInputError, match="baseline 'nope' is not among"):
        compare_table(table, kind="scores", baseline="nope", resamples=100)
    with pytest.raises(GateSyntaxError, match="found '>' at column 13"):
        compare_table(table, kind="scores", resamples=100, gates=["diff(a, b) >> 0"])
    with pytest.raises(ValueError, match="unknown system 'cand'"):
        compare_table(table, kind="scores", resamples=100, gates=["diff(cand, baseline) > 0"])
    bad = table.assign(score=table["score"].where(table.index != 3))
    with pytest.raises(ComparisonInputError, match="1 rows have a missing"):
        compare_table(bad, kind="scores", resamples=100)
    with pytest.raises(ComparisonInputError, match="several values in stratum column"):
        compare_table(table.assign(language=table["j"]), kind="scores", by="language")
    pw = pd.DataFrame({"item_id": [1], "system_a": ["x"], "system_b": ["y"], "winner": ["C"]})
    with pytest.raises(ComparisonInputError, match="not 'A', 'B', 'tie'"):
        compare_table(pw, kind="pairwise")


def test_compare_table_pairwise_all_pairs_clusters_and_notes() -> None:
    # Three systems, every pair judged twice per item by two judges; items grouped into
    # conversations via a `cluster` column.
    rng = np.random.default_rng(8)
    strength = {"p": 1.0, "q": 0.0, "r": -1.0}
    rows = []
    for item in range(150):
        for a, b in (("p", "q"), ("q", "r"), ("p", "r")):
            for judge in ("j1", "j2"):
                prob = 1 / (1 + math.exp(-(strength[a] - strength[b])))
                rows.append((item, a, b, float(rng.random() < prob), item // 3, judge))
    table = pd.DataFrame(
        rows, columns=["item_id", "system_a", "system_b", "score_a", "cluster", "judge"]
    )
    report = compare_table(table, kind="pairwise", resamples=1_000, seed=2)
    pairs = {(c.a, c.b): c.result for c in report.comparisons}
    assert set(pairs) == {("p", "q"), ("p", "r"), ("q", "r")}
    assert pairs[("p", "r")].n == 300 and pairs[("p", "r")].n_units == 50  # clusters
    assert [s.system for s in report.ranking] == ["p", "q", "r"]
    assert report.bradley_terry is not None and report.bradley_terry.n_items == 50
    # Against a baseline: r was never judged against itself, q against p is reoriented.
    only_pq = table[(table["system_a"] == "p") & (table["system_b"] == "q")]
    extra = pd.DataFrame(
        [(999, "s", "t", 1.0, 999, "j1"), (998, "t", "s", 1.0, 998, "j1")],
        columns=table.columns,
    )
    report = compare_table(
        pd.concat([only_pq, extra]),
        kind="pairwise",
        baseline="q",
        resamples=500,
        seed=2,
        gates=["winrate(p, q) > 0.5"],
    )
    assert [(c.a, c.b) for c in report.comparisons] == [("p", "q")]
    assert any("s was never judged against q" in n for n in report.notes)
    assert report.comparisons[0].result.mean_diff > 0 and report.gates_passed
    # {p, q} and {s, t} were never compared: no ranking across them, said in the notes.
    assert report.bradley_terry is None and report.ranking == ()
    assert any(n.startswith("no ranking:") for n in report.notes)
    with pytest.raises(ValueError, match="score\\(\\) needs a scores table"):
        compare_table(only_pq, kind="pairwise", resamples=100, gates=["score(p) > 0"])


def test_ranking_counts_each_item_once_whichever_slot_the_system_had() -> None:
    # b is system_b against a and system_a against c on the same four items: four items, not 8.
    rows = [
        {"item_id": f"i{i}", "system_a": x, "system_b": y, "score_a": score}
        for i in range(4)
        for x, y, score in (("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 0.5))
    ]
    report = compare_table(pd.DataFrame(rows), kind="pairwise", resamples=200, seed=0)
    assert {s.system: s.n_items for s in report.ranking} == {"a": 4, "b": 4, "c": 4}
