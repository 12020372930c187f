"""Bringing in a public multi-rater data set as a user would (issue 12, item 9): a judge table
with both presentation orders, human labels without annotators, a human table with a `score`
column; through the library and through `judge calibrate`. Every refusal is one line naming the
file, row and column, and the fix, with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from calibration.calibrate import calibrate
from calibration.kinds import KindConflict, infer_kind, table_kind
from calibration.labels import LabelError, join_labels, normalise
from calibration.orders import combine_orders
from tests.helpers import REPO
from tests.helpers import run_cli_here as run_cli

LLMBAR = REPO / "data" / "llmbar"


# --------------------------------------------------------------------------- both orders


# (AB label, BA label) -> combined label, as the runner combines a pair's two requests
# (judge/analysis/aggregate.py; docs/inputs.md): agree -> that label, disagree -> a tie,
# one order without a verdict -> the other alone.
ORDER_RULE = [
    ("a", "a", "a"),
    ("b", "b", "b"),
    ("tie", "tie", "tie"),
    ("a", "b", "tie"),
    ("b", "tie", "tie"),
    ("a", None, "a"),
    (None, "b", "b"),
    (None, None, None),
]


@pytest.mark.parametrize(("ab", "ba", "expected"), ORDER_RULE)
def test_combine_orders_rule(ab: str | None, ba: str | None, expected: str | None) -> None:
    combined = combine_orders(ab, ba)
    assert combined.label == expected
    assert combined.orders == (ab is not None) + (ba is not None)
    dropped = combine_orders(ab, ba, inconsistent="drop")
    assert dropped.label == (None if combined.consistent is False else expected)


def test_a_judge_table_in_both_orders_is_combined_by_the_runners_rule() -> None:
    rows = []
    for i, (ab, ba, _) in enumerate(ORDER_RULE):
        # The BA row lists the pair the other way round, as the order showed it; its winner
        # still names the row's own systems (a = its system_a = y).
        flip = {"a": "b", "b": "a", "tie": "tie", None: None}
        rows.append({"item_id": f"q{i}", "system_a": "x", "system_b": "y", "winner": ab})
        rows[-1]["order"] = "AB"
        rows.append({"item_id": f"q{i}", "system_a": "y", "system_b": "x", "winner": flip[ba]})
        rows[-1]["order"] = "ba"  # case does not matter
    judge = pd.DataFrame(rows)
    human = pd.DataFrame(
        {"item_id": [f"q{i}" for i in range(len(ORDER_RULE))], "system_a": "x", "system_b": "y"}
    ).assign(winner="a", annotator="h1")
    joined = join_labels(judge, human, kind="pairwise")
    got = dict(zip(joined.keys["item_id"], joined.keys["judge"], strict=True))
    expected = {f"q{i}": label for i, (_, _, label) in enumerate(ORDER_RULE) if label is not None}
    assert got == expected
    orders = joined.summary.judge_orders
    assert orders is not None
    assert (orders.both_orders, orders.disagreed, orders.one_order) == (5, 2, 2)
    assert joined.summary.judge_no_verdict.count == 1  # q7: neither order has a verdict


def test_position_rates_do_not_depend_on_how_a_row_names_its_pair() -> None:
    """A row written the other way round (system_a and system_b swapped, its winner and its
    order with them) shows the same response first: the rates stay."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        for order in ("AB", "BA"):
            winner = rng.choice(["a", "b", "tie"], p=[0.5, 0.3, 0.2])
            rows.append((f"q{i}", "x", "y", order, winner))
    judge = pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "order", "winner"])
    flip = {"a": "b", "b": "a", "tie": "tie"}
    turned = judge.assign(
        system_a=judge.system_b,
        system_b=judge.system_a,
        winner=judge.winner.map(flip),
        order=judge.order.map({"AB": "BA", "BA": "AB"}),
    )
    human = pd.DataFrame({"item_id": ["q0"], "system_a": ["x"], "system_b": ["y"]})
    human = human.assign(winner="a", annotator="h")
    counts = [join_labels(t, human, kind="pairwise").summary.judge_orders for t in (judge, turned)]
    assert counts[0] is not None and counts[0] == counts[1]
    shown_first_won = int(((judge.order == "AB") & (judge.winner == "a")).sum()) + int(
        ((judge.order == "BA") & (judge.winner == "b")).sum()
    )
    assert counts[0].first_won == shown_first_won
    assert counts[0].decided == int((judge.winner != "tie").sum())


def _llmbar_tables(evaluator: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """LLMBar's verdicts of one evaluator (Vanilla_NoRules) as a user brings them in: one judge
    row per presentation order (the swapped order lists output_2 first), the gold labels as a
    human table without an annotator column. Also returns the raw rows."""
    raw = pd.read_csv(LLMBAR / "evaluator_verdicts.csv.gz", dtype=str, keep_default_na=False)
    raw = raw[
        (raw.evaluator == evaluator)
        & (raw.strategy == "Vanilla_NoRules")
        & raw.subset.str.startswith("LLMBar/")  # the benchmark proper: 419 instances, 5 subsets
    ].reset_index(drop=True)
    item = raw.subset + "#" + raw.idx

    def winner(column: str) -> pd.Series:  # "" = unparsable: no verdict
        return ("output_" + raw[column]).where(raw[column] != "", None)

    ab = pd.DataFrame(
        {"item_id": item, "system_a": "output_1", "system_b": "output_2", "order": "AB"}
    ).assign(winner=winner("winner_swap_false"), subset=raw.subset)
    ba = pd.DataFrame(
        {"item_id": item, "system_a": "output_2", "system_b": "output_1", "order": "BA"}
    ).assign(winner=winner("winner_swap_true"), subset=raw.subset)
    judge = pd.concat([ab, ba], ignore_index=True)
    human = pd.DataFrame({"item_id": item, "system_a": "output_1", "system_b": "output_2"}).assign(
        winner="output_" + raw.label
    )
    return judge, human, raw


def _published(evaluator: str) -> dict[str, dict[str, int]]:
    """Counts from the repo's statistics.json (data/llmbar/SOURCE.md): `equal` = both orders
    give the same verdict (two unparsable count as equal); `correct_both` = both are right."""
    out = {}
    for r in json.loads((LLMBAR / "evaluator_statistics.json").read_text()):
        if r["evaluator"] == evaluator and r["strategy"] == "Vanilla_NoRules":
            stats = r["published_statistics"]
            out[r["subset"]] = {k: int(stats[k].split(" / ")[0]) for k in ("equal", "correct_both")}
    return out


@pytest.mark.parametrize("evaluator", ["GPT-4", "ChatGPT"])
def test_llmbar_both_orders_through_the_cli_match_the_published_counts(
    tmp_path: Path, evaluator: str
) -> None:
    judge, human, raw = _llmbar_tables(evaluator)
    judge.to_json(tmp_path / "judge.jsonl", orient="records", lines=True)
    human.to_csv(tmp_path / "gold.csv", index=False)
    args = ("calibrate", "--judge", "judge.jsonl", "--human", "gold.csv", "--by", "subset")
    result = run_cli(*args, "--resamples", "20", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    join = report["join"]
    published = _published(evaluator)
    first, second = raw.winner_swap_false, raw.winner_swap_true
    neither = int(((first == "") & (second == "")).sum())
    orders = join["judge_orders"]
    # Published positional agreement: both orders equal, or both unparsable.
    equal = orders["both_orders"] - orders["disagreed"] + neither
    subsets = sorted(raw.subset.unique())
    assert len(subsets) == 5 and len(raw) == 419
    assert equal == sum(published[s]["equal"] for s in subsets)
    assert join["annotator_per_row"] is True and join["matched_labels"] == len(raw)
    # The combined verdict agrees with gold when both orders are right (published
    # correct_both), or when the only parsable order is right (counted from the raw rows).
    one_right = ((first == raw.label) & (second == "")) | ((second == raw.label) & (first == ""))
    for part in report["strata"]:
        subset = part["stratum"]["subset"]
        single = int(one_right[raw.subset == subset].sum())
        assert (
            part["metrics"]["agreement_s1"]["agree"] == published[subset]["correct_both"] + single
        )

    # Position bias, counted from the raw rows: the unswapped order shows output_1 first.
    first_won = int((first == "1").sum() + (second == "2").sum())
    decided = int((first != "").sum() + (second != "").sum())
    assert (orders["decided"], orders["first_won"]) == (decided, first_won)

    text = run_cli(*args, "--resamples", "20", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    consistency = (orders["both_orders"] - orders["disagreed"]) / orders["both_orders"]
    assert f"position consistency {consistency:.1%}" in text.stdout
    assert f"the response shown first won {first_won / decided:.1%} of {decided}" in text.stdout
    assert (
        f"judge orders: {orders['both_orders']} keys judged in both orders (AB and BA) were "
        f"combined into one judgment each, {orders['disagreed']} of them disagreed"
    ) in text.stdout
    assert "each row counts as its own annotator" in text.stdout


def test_two_rows_per_key_without_an_order_column_name_the_fix(tmp_path: Path) -> None:
    judge = pd.DataFrame(
        {"item_id": ["q1", "q1"], "system_a": ["x", "y"], "system_b": ["y", "x"], "winner": "x"}
    )
    human = judge.iloc[:1].assign(annotator="h1")
    with pytest.raises(LabelError, match=r"rows 0 and 1 .*add an 'order' column \(AB or BA\)"):
        join_labels(judge, human, kind="pairwise")
    judge.to_csv(tmp_path / "judge.csv", index=False)
    human.to_csv(tmp_path / "human.csv", index=False)
    result = run_cli("calibrate", "--judge", "judge.csv", "--human", "human.csv", cwd=tmp_path)
    _assert_error(
        result,
        "judge.csv, row 2, field 'system_b': q1 | x | y is judged by an earlier row too; keep "
        "one judgment per key, or, if the rows are a comparison's two presentation orders, add "
        "an 'order' column (AB or BA)",
    )


def test_a_stratum_differing_between_the_two_orders_names_the_row() -> None:
    judge = pd.DataFrame(
        {"item_id": "q1", "system_a": ["x", "y"], "system_b": ["y", "x"], "winner": "x"}
    ).assign(order=["AB", "BA"], category=["math", "code"])
    human = judge.iloc[:1].drop(columns=["order", "category"])
    with pytest.raises(LabelError, match=r"judge table, row 1 .*column 'category'"):
        join_labels(judge, human, kind="pairwise", strata=["category"])
    joined = join_labels(judge.assign(category="math"), human, kind="pairwise", strata=["category"])
    assert joined.keys[["item_id", "category", "judge"]].values.tolist() == [["q1", "math", "a"]]


@pytest.mark.parametrize(
    ("orders", "expected"),
    [
        (
            ["AB", "AB"],
            "judge.csv, row 2, field 'order': q1 | x | y in order AB is judged by an "
            "earlier row too; keep one judgment per key and order",
        ),
        (["AB", "swapped"], "judge.csv, row 2, field 'order': 'swapped' is not AB or BA"),
        (["AB", ""], "judge.csv, row 2, field 'order': empty; every row needs a value"),
    ],
    ids=["same-order-twice", "unknown-order", "empty-order"],
)
def test_bad_order_columns(tmp_path: Path, orders: list[str], expected: str) -> None:
    judge = pd.DataFrame(
        {"item_id": "q1", "system_a": ["x", "y"], "system_b": ["y", "x"], "winner": "x"}
    ).assign(order=orders)
    judge.to_csv(tmp_path / "judge.csv", index=False)
    judge.drop(columns="order").iloc[:1].to_csv(tmp_path / "human.csv", index=False)
    result = run_cli("calibrate", "--judge", "judge.csv", "--human", "human.csv", cwd=tmp_path)
    _assert_error(result, expected)
    with pytest.raises(LabelError) as bad:
        join_labels(judge.replace({"": None}), judge.iloc[:1], kind="pairwise")
    assert (bad.value.role, bad.value.row, bad.value.column) == ("judge", 1, "order")


# --------------------------------------------------------------------------- annotators


def _scores(seed: int, keys: int = 60, per_key: int = 3) -> pd.DataFrame:
    """Human 1-5 scores: `per_key` labels on each key, from different people."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, keys)
    noise = rng.integers(-1, 2, (keys, per_key))
    rows = [
        {"item_id": f"q{k}", "system": "s", "score": int(np.clip(truth[k] + noise[k, j], 1, 5))}
        for k in range(keys)
        for j in range(per_key)
    ]
    return pd.DataFrame(rows)


def test_without_annotators_each_row_is_its_own_and_the_ceiling_is_unchanged() -> None:
    human = _scores(seed=3)
    judge = human.drop_duplicates("item_id").reset_index(drop=True)
    anonymous = calibrate(judge, human, kind="absolute", resamples=50, seed=1)
    assert anonymous.join.annotator_per_row is True
    joined = join_labels(judge, human, kind="absolute")
    assert joined.comparisons["annotator"].nunique() == len(human)  # one per row
    # The ceiling is Krippendorff's alpha among the labels of each key: who gave them does not
    # enter it, so naming three different people per key changes nothing ...
    named = human.assign(annotator=[f"h{i % 3}" for i in range(len(human))])
    with_names = calibrate(judge, named, kind="absolute", resamples=50, seed=1)
    assert with_names.join.annotator_per_row is False
    assert anonymous.overall.ceiling.human_alpha == with_names.overall.ceiling.human_alpha
    assert anonymous.overall.metrics == with_names.overall.metrics
    # ... and it is the krippendorff package's interval alpha over the labels per key.
    counts = pd.crosstab(human["item_id"], human["score"]).reindex(
        columns=range(1, 6), fill_value=0
    )
    expected = krippendorff.alpha(
        value_counts=counts.to_numpy(), value_domain=range(1, 6), level_of_measurement="interval"
    )
    assert anonymous.overall.ceiling.human_alpha.value == pytest.approx(expected, abs=1e-9)


def test_without_annotators_the_cli_says_so(tmp_path: Path) -> None:
    human = _scores(seed=4, keys=40)
    human.drop_duplicates("item_id").to_csv(tmp_path / "judge.csv", index=False)
    human.to_csv(tmp_path / "human.csv", index=False)
    args = ("calibrate", "--judge", "judge.csv", "--human", "human.csv", "--resamples", "20")
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "annotators: the human table has no 'annotator' column" in result.stdout
    report = json.loads(run_cli(*args, "--json", cwd=tmp_path).stdout)
    assert report["join"]["annotator_per_row"] is True
    assert report["join"]["judge_orders"] is None
    assert report["overall"]["ceiling"]["keys"] == 40


def test_an_empty_annotator_cell_is_still_an_error(tmp_path: Path) -> None:
    human = _scores(seed=5, keys=3).assign(annotator=["h1", "h2", "h3"] * 2 + ["h1", "", "h3"])
    human.drop_duplicates("item_id").to_csv(tmp_path / "judge.csv", index=False)
    human.to_csv(tmp_path / "human.csv", index=False)
    result = run_cli("calibrate", "--judge", "judge.csv", "--human", "human.csv", cwd=tmp_path)
    _assert_error(result, "human.csv, row 8, field 'annotator': empty; every row needs a value")


# --------------------------------------------------------------------------- kind


PAIRWISE = pd.DataFrame({"item_id": ["q1"], "system_a": ["x"], "system_b": ["y"], "winner": ["a"]})
ABSOLUTE = pd.DataFrame({"item_id": ["q1"], "system": ["x"], "score": [4]})


def test_kind_comes_from_the_key_columns_not_a_score_column() -> None:
    scored = PAIRWISE.assign(score=[0.9], annotator=["h1"])  # e.g. a rater's confidence
    assert table_kind(scored) == ("pairwise", "system_a")
    assert table_kind(ABSOLUTE) == ("absolute", "system")
    assert table_kind(PAIRWISE[["item_id", "winner"]]) == ("pairwise", "winner")
    assert table_kind(pd.DataFrame({"item_id": ["q1"]})) == (None, None)
    assert infer_kind(PAIRWISE, scored) == "pairwise"
    # A table that tells nothing takes the other's kind; its missing columns are named later.
    assert infer_kind(PAIRWISE, pd.DataFrame()) == "pairwise"
    with pytest.raises(KindConflict) as conflict:
        infer_kind(ABSOLUTE, scored)
    assert conflict.value.columns == {
        "judge": ("absolute", "system"),
        "human": ("pairwise", "system_a"),
    }
    with pytest.raises(LabelError, match="neither table has"):
        infer_kind(pd.DataFrame({"item_id": ["q1"]}), pd.DataFrame({"item_id": ["q1"]}))


def test_a_human_score_column_no_longer_blames_the_judge_table(tmp_path: Path) -> None:
    judge = pd.concat([PAIRWISE.assign(item_id=f"q{i}") for i in range(3)], ignore_index=True)
    judge.to_csv(tmp_path / "judge.csv", index=False)
    judge.assign(score=[0.9, 0.4, 0.7]).to_csv(tmp_path / "human.csv", index=False)
    args = ("calibrate", "--judge", "judge.csv", "--human", "human.csv", "--resamples", "20")
    result = run_cli(*args, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kind"] == "pairwise"


def test_tables_of_different_kinds_name_each_table_and_column(tmp_path: Path) -> None:
    ABSOLUTE.to_csv(tmp_path / "judge.csv", index=False)
    PAIRWISE.assign(score=[0.9]).to_csv(tmp_path / "human.csv", index=False)
    result = run_cli("calibrate", "--judge", "judge.csv", "--human", "human.csv", cwd=tmp_path)
    _assert_error(
        result,
        "the tables hold different kinds of labels: judge.csv is absolute (column 'system'); "
        "human.csv is pairwise (column 'system_a'); give both the columns of one kind",
    )


def test_errors_of_the_judge_table_name_the_judge_file(tmp_path: Path) -> None:
    PAIRWISE.drop(columns="winner").to_csv(tmp_path / "judge.csv", index=False)
    PAIRWISE.to_csv(tmp_path / "human.csv", index=False)
    result = run_cli("calibrate", "--judge", "judge.csv", "--human", "human.csv", cwd=tmp_path)
    _assert_error(result, "judge.csv, field 'winner': lacks column(s) 'winner'")
    result = run_cli(
        "calibrate",
        "--judge",
        "judge.csv",
        "--human",
        "human.csv",
        "--shuffle-judge",
        "2",
        cwd=tmp_path,
    )
    _assert_error(result, "judge.csv, field 'winner': lacks column(s) 'winner'")


def test_normalise_without_annotator_numbers_the_rows() -> None:
    out = normalise(PAIRWISE.loc[[0, 0]], "pairwise", "human")
    assert out["annotator"].tolist() == ["row-0", "row-1"]


def _assert_error(result, expected: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert expected in lines[0], lines[0]
