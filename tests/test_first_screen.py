"""The report's first screen on a run whose user gate fails (issue 14, items 1 and 7).

One module-scoped run of the real CLI (three MT-Bench systems, the simulator judging over
HTTP, two `compare.gates`: one that cannot fail, one that cannot pass). The tests read what it
wrote: the exit status of `judge run` and `judge report`, the answer and the gates in
summary.json and on the page, and the page in headless Chromium at 1280x800, where the
question, the answer, every gate's PASS/FAIL and the trust badge must lie in the first screen.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judge.simulator import SimulatorConfig, SimulatorHandle, running_simulator
from tests.helpers import (
    colour_count,
    first_screen,
    keep_artefact,
    rgb_pixels,
    run_cli,
    small_config,
)
from tests.test_report import _page_problems, _traced

QUESTION = "Can alpaca-13b replace llama-13b without losing answer quality?"
PASSES = "winrate(vicuna-13b-v1.2, llama-13b) >= 0"  # a win rate is never negative
FAILS = "ci_low(diff(alpaca-13b, llama-13b)) >= 2"  # a difference of verdicts is at most 1
SCREEN = (1280, 800)
# The badge colours of `judge.report.blocks` (FAIL, PASS), as a screenshot shows them.
VERMILLION, GREEN = (0xB3, 0x40, 0x0B), (0x00, 0x70, 0x4D)


@dataclass(frozen=True)
class Gated:
    run_dir: Path
    run: subprocess.CompletedProcess
    sim: SimulatorHandle


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gated]:
    tmp = tmp_path_factory.mktemp("gated")
    with running_simulator(SimulatorConfig(seed=2)) as sim:
        path = small_config(
            tmp,
            sim.openai_base_url,
            question=QUESTION,
            compare={"resamples": 200, "gates": [PASSES, FAILS]},
        )
        run_dir = tmp / "run"
        result = run_cli("run", str(path), "--run-dir", str(run_dir), "--quiet")
        yield Gated(run_dir, result, sim)


def _summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def _diff_interval(summary: dict[str, Any], a: str, b: str) -> tuple[float, float]:
    """The interval of diff(a, b) from the pair table (pairs are stored winner-first)."""
    (pair,) = [c for c in summary["comparison"]["comparisons"] if {c["a"], c["b"]} == {a, b}]
    if (pair["a"], pair["b"]) == (a, b):
        return pair["ci_low"], pair["ci_high"]
    return -pair["ci_high"], -pair["ci_low"]


def test_a_failing_gate_fails_run_and_report_alike_and_report_sends_no_request(
    gated: Gated,
) -> None:
    assert gated.run.returncode == 1, gated.run.stderr
    assert f"gate failed: {FAILS.split(' >=')[0]}" in gated.run.stdout
    assert f"answer: No: the gate {FAILS} failed" in gated.run.stdout
    summary = _summary(gated.run_dir)
    assert summary["comparison"]["gates_passed"] is False
    served = gated.sim.stats()["requests"]
    assert served > 0
    # `judge report` re-analyses from the store alone, and gives the same outcome the same
    # exit status (it exited 0 before).
    again = run_cli("report", str(gated.run_dir))
    assert again.returncode == 1, again.stderr
    assert "gate failed" in again.stdout and f"answer: No: the gate {FAILS}" in again.stdout
    assert gated.sim.stats()["requests"] == served
    report = (gated.run_dir / "report.md").read_text(encoding="utf-8")
    assert "Not calibrated: no human labels" in report
    assert "not calibrated against humans" in report


def test_the_answer_and_every_gate_are_on_the_page(gated: Gated) -> None:
    summary = _summary(gated.run_dir)
    passes, fails = summary["comparison"]["gates"]
    assert (passes["expression"], passes["passed"]) == (PASSES, True)
    assert (fails["expression"], fails["passed"]) == (FAILS, False)
    # The failing gate's value is the lower bound of the pair's interval, and its interval
    # that of the pair, as the pair table has it.
    low, high = _diff_interval(summary, "alpaca-13b", "llama-13b")
    assert fails["value"] == pytest.approx(low) and fails["ci_low"] == pytest.approx(low)
    assert fails["ci_high"] == pytest.approx(high)
    answer = summary["decision"]["answer"]
    assert answer == {
        "outcome": "no",
        "text": f"No: the gate {FAILS} failed (value {low:.3f}, interval [{low:.3f}, {high:.3f}]).",
    }
    report, _, ledger = _traced(gated.run_dir)
    decision = report.split("## Decision\n", 1)[1].split("\n## ", 1)[0]
    assert f"> **{answer['text']}**" in decision
    assert "> **[NOT CALIBRATED]** Judge: no human labels were given" in decision
    wr = passes["value"]
    assert f"| {PASSES} | **[PASS]** | {wr:.3f} | [{passes['ci_low']:.3f}, " in decision
    assert f"| {FAILS} | **[FAIL]** | {low:.3f} | [{low:.3f}, {high:.3f}] | compare.gates |" in (
        decision
    )
    # Every number on the page is the summary's; a changed gate value is caught.
    assert _page_problems(report, summary, ledger) == []
    row = f"| {FAILS} | **[FAIL]** | {low:.3f} |"
    tampered = report.replace(row, f"| {FAILS} | **[FAIL]** | {low + 0.01:.3f} |")
    assert tampered != report and _page_problems(tampered, summary, ledger) != []


def test_first_screen_in_headless_chromium(gated: Gated, tmp_path: Path) -> None:
    """The page at 1280x800: the question, the answer, each gate's PASS/FAIL and the trust
    badge end above the fold (laid out by Chromium, measured in its DOM), and the screenshot of
    that screen shows the badges' colours on the rows the DOM puts them."""
    if shutil.which("chromium") is None:
        pytest.fail("chromium is not installed: `apt-get install chromium` (make test does)")
    shot = tmp_path / "first_screen.png"
    layout = first_screen(gated.run_dir, shot)
    keep_artefact(shot, "report_first_screen_failing_gate.png")
    summary = _summary(gated.run_dir)
    width, height = SCREEN
    assert layout["viewport"][0] == width  # the layout width: positions do not depend on height
    assert layout["question"]["text"] == QUESTION
    assert layout["answer"]["text"] == summary["decision"]["answer"]["text"]
    assert layout["trust"]["text"] == "NOT CALIBRATED"
    gates = layout["gates"]
    assert [
        (g["mark"], g["text"].startswith(expr))
        for g, expr in zip(gates, [PASSES, FAILS], strict=True)
    ] == [
        ("PASS", True),
        ("FAIL", True),
    ]
    for name in ("question", "answer", "trust"):
        assert 0 <= layout[name]["top"] < layout[name]["bottom"] <= height, name
    for gate in gates:
        assert 0 <= gate["top"] < gate["bottom"] <= height, gate
    pixels = rgb_pixels(shot)
    assert pixels.shape[:2] == (height, width)
    # The badges are drawn where the DOM says: FAIL's colour on the FAIL row, PASS's on PASS's.
    for gate, colour in zip(gates, (GREEN, VERMILLION), strict=True):
        rows = pixels[int(gate["top"]) : int(gate["bottom"]) + 1]
        assert colour_count(rows, colour) > 50, gate
