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
from judge.summary import Answer, GateOutcome, RunSummary
from judge.summary_canary import Canaries


def _summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def test_the_answer_follows_its_rule(demo: Path) -> None:
    """`judge.run.answer`'s rule, in order: a failed gate says no; an UNTRUSTED judge leaves it
    not settled; passing compare gates say yes; without them the leader told apart (or not)
    from the next system decides. The demo's analysis, with one input changed per case."""
    a = RunSummary.from_dict(_summary(demo)).analysed()
    d = a.decision
    assert a.calibration is not None
    first = d.neighbours[0]
    assert (first.upper, first.lower, first.told_apart) == ("gpt-4", "claude-v1", True)
    shown = f"{first.diff:.3f} [{first.ci_low:.3f}, {first.ci_high:.3f}]"
    assert d.answer.outcome == "yes"
    assert d.answer.text == (
        f"Yes: gpt-4 leads claude-v1 by {shown} (net win rate, {first.n} items), told apart."
    )
    assert d.answer == answer(a.comparison, a.canaries, a.calibration, [], d.neighbours)

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

    def outcome(gates: list[GateOutcome], **change: Any) -> Answer:
        args = {
            "canaries": None,
            "calibration": a.calibration,
            "leader_tied_with": [],
            "neighbours": d.neighbours,
            **change,
        }
        return answer(a.comparison.model_copy(update={"gates": gates}), **args)

    assert outcome([passes, fails]) == Answer(
        outcome="no",
        text="No: the gate diff(gpt-4, claude-v1) >= 0.5 failed (value 0.300, interval "
        "[0.187, 0.407]).",
    )
    assert outcome([], canaries=canaries).text == (
        "No: the gate canary null-model vs llama-13b (j) <= 0.1 failed (value 0.300)."
    )
    both = outcome([fails], canaries=canaries, calibration=untrusted)
    assert both.outcome == "no" and both.text.startswith("No: 2 of 2 gates failed: diff(")
    settled = outcome([passes], calibration=untrusted)
    assert settled.outcome == "not settled"
    assert settled.text.startswith(
        "Not settled: the calibration gate found the judge UNTRUSTED, so its verdicts cannot "
        f"decide; on them, gpt-4 leads claude-v1 by {shown}"
    )
    # The gates are the question's criteria: they decide even when the leader is tied.
    by_gate = outcome([passes], leader_tied_with=["claude-v1"], neighbours=tied)
    assert by_gate == Answer(
        outcome="yes",
        text=f"Yes: the gate passed; gpt-4 ranks first but is not told apart from claude-v1 "
        f"(gpt-4 over claude-v1 by {shown}, net win rate, {first.n} items; about 1 item would "
        "tell them apart if the difference held).",
    )
    assert outcome([], leader_tied_with=["claude-v1"], neighbours=tied) == Answer(
        outcome="not settled",
        text=f"Not settled: gpt-4 ranks first but is not told apart from claude-v1 (gpt-4 over "
        f"claude-v1 by {shown}, net win rate, {first.n} items; about 1 item would tell them "
        "apart if the difference held).",
    )
    # An uncalibrated judge does not change the answer: the trust badge says so beside it.
    assert outcome([], calibration=None) == d.answer
    assert trust_reason(None).startswith("no human labels were given (calibration.human)")


def test_the_trust_line_names_what_the_gate_found(demo: Path) -> None:
    a = RunSummary.from_dict(_summary(demo)).analysed()
    assert a.calibration is not None
    gate = a.calibration.gate
    # What the demo's gate found (README, "The trust gate"): human-level against the humans'
    # own ceiling, the alternative annotator test failed, labels unreliable (alpha < 0.667).
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
