"""The report's Decision on the demo (issue 14): the answer by its rule, the trust line, and
every pair winner-first, checked against the run's own judgments table.

The demo run is the session's (`tests/conftest.py`), shared with tests/test_report.py.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from judge.report.format import counted
from judge.run.answer import answer, trust_reason
from judge.summary.canary import Canaries
from judge.summary.run_summary import Answer, GateOutcome, RunSummary


def _summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def test_the_answer_follows_its_rule(demo: Path) -> None:
    """`judge.run.answer`'s rule, in order: a fooled canary, then an UNTRUSTED judge, leave it
    not settled; a failed compare gate says no; passing compare gates say yes; without them the
    run only ranks (it cannot know what "yes" means for the question). The demo's analysis,
    with one input changed per case."""
    a = RunSummary.from_dict(_summary(demo)).analysed()
    d = a.decision
    assert a.calibration is not None and a.same_family is not None
    first = d.neighbours[0]
    assert (first.upper, first.lower, first.told_apart) == ("gpt-4", "claude-v1", True)
    shown = f"{first.diff:.3f} [{first.ci_low:.3f}, {first.ci_high:.3f}]"
    # gpt-4 is judged by GPT-4 alone (same family, allowed and flagged in the demo's config).
    lead = (
        f"gpt-4 ranks first, ahead of claude-v1 by {shown} (net win rate, {first.n} items), "
        "told apart; gpt-4's verdicts come from a judge of its own family"
    )
    assert d.answer == Answer(
        outcome="ranked",
        text=f"Ranked: {lead}; no compare.gates say what would answer the question yes or no.",
    )
    order = [n.upper for n in d.neighbours] + [d.neighbours[-1].lower]
    args = (a.comparison, a.canaries, a.calibration, order, [], d.neighbours, a.same_family)
    assert d.answer == answer(*args)

    fails = GateOutcome(
        expression="diff(gpt-4, claude-v1) >= 0.5",
        passed=False,
        value=0.3,
        ci_low=0.187,
        ci_high=0.407,
        reason="-",
    )
    passes = fails.model_copy(update={"expression": "winrate(gpt-4, claude-v1) >= 0.5"})
    passes = passes.model_copy(update={"passed": True, "value": 0.65, "ci_low": 0.59})
    canary = fails.model_copy(
        update={"expression": "canary null-model vs llama-13b (j) <= 0.1", "ci_low": None}
    )
    canaries = Canaries(
        weakest="llama-13b", threshold=0.1, confidence=0.95, rates=[], gates=[canary], passed=False
    )
    gate = a.calibration.gate.model_copy(update={"verdict": "untrusted"})
    untrusted = a.calibration.model_copy(update={"gate": gate})
    tied = [first.model_copy(update={"told_apart": False, "items_needed": 1}), *d.neighbours[1:]]
    turned = [first.model_copy(update={"diff": -0.2, "ci_low": -0.3, "ci_high": -0.1})]

    def outcome(gates: list[GateOutcome], **change: Any) -> Answer:
        kwargs = {
            "canaries": None,
            "calibration": a.calibration,
            "order": order,
            "leader_tied_with": [],
            "neighbours": d.neighbours,
            "same_family": a.same_family,
            **change,
        }
        return answer(a.comparison.model_copy(update={"gates": gates}), **kwargs)

    # 1. A fooled judge cannot decide, even where the compare gates pass.
    fooled = outcome([passes], canaries=canaries)
    assert fooled == Answer(
        outcome="not settled",
        text="Not settled: the judge was fooled by a canary (the gate canary null-model vs "
        "llama-13b (j) <= 0.1 failed (value 0.300)), so its verdicts cannot decide; on them, "
        f"{lead}.",
    )
    # 2. Nor can an UNTRUSTED one, even where a compare gate failed.
    settled = outcome([fails], calibration=untrusted)
    assert settled.outcome == "not settled"
    assert settled.text == (
        "Not settled: the calibration gate found the judge UNTRUSTED, so its verdicts cannot "
        f"decide; on them, {lead}."
    )
    # 3. A failed compare gate says no.
    assert outcome([passes, fails]) == Answer(
        outcome="no",
        text="No: the gate diff(gpt-4, claude-v1) >= 0.5 failed (value 0.300, interval "
        "[0.187, 0.407]).",
    )
    # 4. The gates are the question's criteria: they decide even when the leader is tied.
    by_gate = outcome([passes], leader_tied_with=["claude-v1"], neighbours=tied, same_family=None)
    assert by_gate == Answer(
        outcome="yes",
        text=f"Yes: the gate passed; gpt-4 ranks first but is not told apart from claude-v1 "
        f"(gpt-4 over claude-v1 by {shown}, net win rate, {first.n} items; about 1 item would "
        "tell them apart if the difference held).",
    )
    # 5. Without gates: ranked only when told apart, and ahead head to head.
    assert outcome([], leader_tied_with=["claude-v1"], neighbours=tied, same_family=None) == (
        Answer(
            outcome="not settled",
            text=f"Not settled: gpt-4 ranks first but is not told apart from claude-v1 (gpt-4 "
            f"over claude-v1 by {shown}, net win rate, {first.n} items; about 1 item would "
            "tell them apart if the difference held).",
        )
    )
    assert outcome([], neighbours=turned, same_family=None) == Answer(
        outcome="not settled",
        text="Not settled: gpt-4 ranks first overall, but claude-v1 is ahead of it head to head "
        f"by 0.200 [0.100, 0.300] (net win rate, {first.n} items), told apart.",
    )
    assert outcome([], order=["gpt-4"]).text == (
        "Not settled: fewer than two systems have verdicts to rank."
    )
    # An uncalibrated judge does not change the answer: the trust badge says so beside it.
    assert outcome([], calibration=None) == d.answer
    assert trust_reason(None).startswith("no human labels were given (calibration.human)")


def test_a_ranking_without_a_fit_still_decides() -> None:
    """Three systems, each always beating the next: Bradley-Terry has no finite fit (a system
    never lost), yet every pair is told apart. The Decision orders them by mean paired win
    rate, says so, and the answer ranks them (it said "fewer than two systems were ranked")."""
    import pandas as pd

    from calibration.compare import compare_table
    from judge.run.analyse import _decision
    from judge.summary.run_summary import RunComparison

    rows = [
        {"item_id": f"q{i}", "system_a": a, "system_b": b, "score_a": 1.0}
        for i in range(30)
        for a, b in (("top", "mid"), ("mid", "low"), ("top", "low"))
    ]
    report = compare_table(pd.DataFrame(rows), kind="pairwise", resamples=200, seed=1)
    comparison = RunComparison.model_validate({"judge": "j", **report.to_dict()})
    assert comparison.ranking == []  # the case: no finite fit
    decision = _decision(comparison, None, None)
    assert decision.ordered_by == "win rate"
    assert decision.leader == "top" and decision.leader_tied_with == []
    assert [(n.upper, n.lower, n.told_apart) for n in decision.neighbours] == [
        ("top", "mid", True),
        ("mid", "low", True),
    ]
    assert decision.answer.outcome == "ranked"
    assert decision.answer.text.startswith("Ranked: top ranks first, ahead of mid by 1.000")


def test_the_trust_line_names_what_the_gate_found(demo: Path) -> None:
    a = RunSummary.from_dict(_summary(demo)).analysed()
    assert a.calibration is not None
    gate = a.calibration.gate
    # What the demo's gate found (docs/calibration.md, "The trust gate"): human-level against
    # the humans' own ceiling, the alternative annotator test failed, labels unreliable
    # (alpha < 0.667).
    annotators = gate.stand_in.annotators
    assert gate.stand_in.non_inferiority.outcome == "human-level"
    assert annotators is not None and annotators.status == "failed"
    assert gate.labels.outcome == "unreliable"
    assert (a.decision.gate, a.decision.trust_reason) == (
        "provisional",
        "it agrees with the humans as well as they agree with each other, but the alternative "
        "annotator test does not show that it could replace an annotator; the human labels "
        "themselves are unreliable",
    )
    report = (demo / "report.md").read_text(encoding="utf-8")
    assert f"> **[PROVISIONAL]** Judge: {a.decision.trust_reason}." in report


def test_every_pair_is_winner_first_and_the_pair_table_sorted(demo: Path) -> None:
    summary = _summary(demo)
    comparison = summary["comparison"]
    # The reference: the judgments table itself, one row per pair and item, `winner` named.
    counts: dict[frozenset[str], Counter] = {}
    for line in (demo / "judgments.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        counts.setdefault(frozenset((row["system_a"], row["system_b"])), Counter())[
            row["winner"]
        ] += 1
    for c in comparison["comparisons"]:
        got = counts[frozenset((c["a"], c["b"]))]
        assert (c["wins"], c["losses"], c["ties"]) == (got[c["a"]], got[c["b"]], got["tie"])
        assert c["wins"] >= c["losses"] and c["ci_low"] <= c["mean_diff"] <= c["ci_high"]
        # The net win rate is twice the win rate (ties half) less one.
        assert c["mean_diff"] == pytest.approx(2 * comparison["win_rates"][c["a"]][c["b"]] - 1)
    assert all(c["mean_diff"] >= 0 for c in comparison["by_stratum"])
    report = (demo / "report.md").read_text(encoding="utf-8")
    table = report.split("| pair | difference (net win rate) |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| (\S+) vs (\S+) \| (\d\.\d{3}) \[", table, re.M)
    assert len(rows) == len(comparison["comparisons"]) == 15
    diffs = [float(d) for _, _, d in rows]
    assert diffs == sorted(diffs, reverse=True)
    assert {(a, b) for a, b, _ in rows} == {(c["a"], c["b"]) for c in comparison["comparisons"]}


def test_counts_read_in_words() -> None:
    assert [counted(n, "item") for n in (0, 1, 6)] == ["0 items", "1 item", "6 items"]
    assert counted(1, "pair has", "pairs have") == "1 pair has"
