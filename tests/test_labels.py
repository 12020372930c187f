"""Label import: validation names the row and column, keys are normalised, nothing is
silently dropped."""

from __future__ import annotations

import pandas as pd
import pytest

from calibration.labels import LabelError, join_labels, load_mt_bench, normalise
from tests.helpers import MT_BENCH


def _human(**cols: list) -> pd.DataFrame:
    base = {
        "item_id": ["q1", "q1", "q2"],
        "system_a": ["x", "y", "x"],
        "system_b": ["y", "x", "y"],
        "winner": ["a", "a", "tie"],
        "annotator": ["h1", "h2", "h1"],
    }
    return pd.DataFrame({**base, **cols})


def _judge(**cols: list) -> pd.DataFrame:
    base = {
        "item_id": ["q1", "q2", "q3"],
        "system_a": ["x", "x", "x"],
        "system_b": ["y", "y", "y"],
        "winner": ["a", "b", "tie"],
    }
    return pd.DataFrame({**base, **cols})


def test_pairs_are_unordered_and_winners_follow_the_swap() -> None:
    out = normalise(_human(), "pairwise", "human")
    # Row 1 lists (y, x) with 'a' = y wins; normalised to (x, y) with 'b'.
    assert out[["system_a", "system_b", "label"]].values.tolist() == [
        ["x", "y", "a"],
        ["x", "y", "b"],
        ["x", "y", "tie"],
    ]


def test_winner_may_be_a_system_name_or_missing_for_the_judge() -> None:
    judge = _judge(winner=["y", None, "TIE"])
    out = normalise(judge, "pairwise", "judge")
    assert out["label"].tolist() == ["b", None, "tie"]


@pytest.mark.parametrize(
    ("table", "role", "message"),
    [
        (
            _human(winner=["a", "draw", "b"]),
            "human",
            r"human table, row 1 \(index 1\), column 'winner': 'draw' is not a, b, tie",
        ),
        (_human(winner=["a", None, "b"]), "human", r"row 1 .*column 'winner': missing"),
        (_human(system_b=["y", "y", "y"]), "human", r"row 1 .*column 'system_b': same system"),
        (_human(annotator=["h1", "", "h2"]), "human", r"row 1 .*column 'annotator': empty"),
        (_human().drop(columns="item_id"), "human", r"lacks column\(s\) 'item_id'"),
    ],
)
def test_validation_errors_name_row_and_column(
    table: pd.DataFrame, role: str, message: str
) -> None:
    with pytest.raises(LabelError, match=message):
        normalise(table, "pairwise", role)  # type: ignore[arg-type]
    assert issubclass(LabelError, ValueError)


def test_absolute_scores_validated() -> None:
    human = pd.DataFrame(
        {"item_id": ["i", "i"], "system": ["s", "t"], "score": [3, "high"], "annotator": ["h", "h"]}
    )
    with pytest.raises(LabelError, match=r"row 1 .*column 'score': 'high' is not a number"):
        normalise(human, "absolute", "human")


def test_index_labels_are_named() -> None:
    table = _human(winner=["a", "a", "nope"]).set_axis([10, 20, 30])
    with pytest.raises(LabelError, match=r"row 2 \(index 30\)"):
        normalise(table, "pairwise", "human")


def test_join_reports_every_unmatched_key() -> None:
    judge = _judge(winner=["a", None, "tie"])  # q2 has no verdict (a parse failure)
    human = pd.concat([_human(), _human().iloc[[0]].assign(item_id="q9")], ignore_index=True)
    joined = join_labels(judge, human, kind="pairwise")
    s = joined.summary
    assert (s.judge_keys, s.human_keys, s.human_labels) == (3, 3, 4)
    assert (s.matched_keys, s.matched_labels) == (1, 2)
    assert (s.judge_only.count, s.judge_only.examples) == (1, ("q3 | x | y",))
    assert (s.human_only.count, s.human_only.examples) == (1, ("q9 | x | y",))
    assert (s.judge_no_verdict.count, s.judge_no_verdict.examples) == (1, ("q2 | x | y",))
    assert joined.human_counts.tolist() == [[1, 1, 0]]  # q1: one 'a', one 'b' (after the swap)
    assert joined.judge_only["judge"].tolist() == ["tie"]


def test_duplicate_judge_keys_and_several_judges_are_errors() -> None:
    dup = pd.concat([_judge(), _judge().iloc[[0]].assign(system_a="y", system_b="x")])
    with pytest.raises(LabelError, match=r"rows 0 and 3 .*both judge q1 \| x \| y"):
        join_labels(dup, _human(), kind="pairwise")
    several = _judge(judge=["gpt", "claude", "gpt"])
    with pytest.raises(LabelError, match=r"column 'judge': judgments of 2 judges"):
        join_labels(several, _human(), kind="pairwise")


def test_repeated_annotator_labels_are_counted_not_dropped() -> None:
    human = pd.concat([_human(), _human().iloc[[0]]], ignore_index=True)
    joined = join_labels(_judge(), human, kind="pairwise")
    assert joined.summary.repeated_labels == 1
    assert joined.summary.matched_labels == 4


def test_strata_must_be_key_level() -> None:
    human = _human(lang=["en", "fr", "en"])
    with pytest.raises(LabelError, match=r"human table, row 1 .*column 'lang'.*within one key"):
        join_labels(_judge(), human, kind="pairwise", strata=["lang"])
    with pytest.raises(LabelError, match="stratum column 'nope' is in neither table"):
        join_labels(_judge(), _human(), kind="pairwise", strata=["nope"])
    joined = join_labels(
        _judge(), _human(lang=["en", "en", "fr"]), kind="pairwise", strata=["lang"]
    )
    assert joined.keys["lang"].tolist() == ["en", "fr"]


def test_absolute_join() -> None:
    judge = pd.DataFrame(
        {"item_id": ["i1", "i1", "i2"], "system": ["s", "t", "s"], "score": [4.0, 2.0, None]}
    )
    human = pd.DataFrame(
        {
            "item_id": ["i1", "i1", "i1"],
            "system": ["s", "s", "t"],
            "score": [5, 4, 2],
            "annotator": ["h1", "h2", "h1"],
        }
    )
    joined = join_labels(judge, human, kind="absolute")
    assert joined.categories == (2.0, 4.0, 5.0)
    # Keys of one item are ordered by their labels, not by system name: t (judge 2) first.
    assert joined.keys["system"].tolist() == ["t", "s"]
    assert joined.human_counts.tolist() == [[1, 0, 0], [0, 1, 1]]
    assert joined.judge_code.tolist() == [0, 1]
    assert joined.comparisons["key"].tolist() == [0, 1, 1]
    assert joined.summary.judge_only.count == 1  # i2/s: no human label (and no verdict)
    assert len(joined.judge_only) == 0  # ... so it is not usable as an unlabeled unit


def test_load_mt_bench() -> None:
    judge, human = load_mt_bench(
        MT_BENCH / "human.jsonl",
        MT_BENCH / "gpt4_pair.jsonl",
        questions_path=MT_BENCH / "question.jsonl",
    )
    # data/mt_bench/SOURCE.md: 2,400 GPT-4 rows; 2,668 expert votes (authors excluded);
    # GPT-4 ties: 220 'tie' + 380 'tie (inconsistent)'.
    assert len(judge) == 2400 and len(human) == 2668
    assert (judge["winner"] == "tie").sum() == 600
    assert human["annotator"].str.startswith("expert_").all()
    assert judge["item_id"].iloc[0] == "81-t1" and judge["category"].iloc[0] == "writing"
    _, everyone = load_mt_bench(
        MT_BENCH / "human.jsonl", MT_BENCH / "gpt4_pair.jsonl", annotators="all"
    )
    assert len(everyone) == 3355


def test_label_errors_carry_the_cell_at_fault() -> None:
    human = pd.DataFrame(
        {
            "item_id": ["i1", "i2"],
            "system_a": ["x", "x"],
            "system_b": ["y", "y"],
            "winner": ["a", "maybe"],
            "annotator": ["h1", "h1"],
        }
    )
    with pytest.raises(LabelError) as bad:
        normalise(human, "pairwise", "human")
    assert (bad.value.row, bad.value.column) == (1, "winner")
    assert bad.value.problem.startswith("'maybe' is not a, b, tie")
    assert str(bad.value) == f"human table, row 1 (index 1), column 'winner': {bad.value.problem}"
    with pytest.raises(LabelError) as lacking:
        normalise(human.drop(columns=["winner"]), "pairwise", "human")
    assert (lacking.value.role, lacking.value.row, lacking.value.column) == (
        "human",
        None,
        "winner",
    )
