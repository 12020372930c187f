"""The report's first screen on a run whose user gate fails (issue 14, items 1 and 7), and on
runs with canaries, one of which fools the judge (issue 31, item 7).

One module-scoped run of the real CLI (three MT-Bench systems, the simulator judging over
HTTP, two `compare.gates`: one that cannot fail, one that cannot pass). The tests read what it
wrote: the exit status of `judge run` and `judge report`, the answer and the gates in
summary.json and on the page, and the page in headless Chromium at 1280x800, where the
question, the answer, every gate's PASS/FAIL, the trust badge and the ranking chart with its
table must lie in the first screen, the chart's top row the leader.
Two canary runs (tests/test_canaries.py's, a judge that resists and one a master key fools)
give the canaries' one line: all passed, or FAILED naming the judge.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judge.report import plots
from judge.report.canary_section import canary_line
from judge.report.ranking_section import ranking_chart
from judge.simulator import SimulatorConfig, SimulatorHandle, running_simulator
from judge.store.rundir import figure_link
from judge.summary import RunSummary
from tests.helpers import (
    colour_count,
    first_screen,
    keep_artefact,
    rgb_pixels,
    run_cli,
    small_config,
)
from tests.test_canaries import JUDGE, MASTER_KEY, _run
from tests.test_plots import rows_top_to_bottom
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
    assert f"| {FAILS} | **[FAIL]** | {low:.3f} | [{low:.3f}, {high:.3f}] |\n" in decision
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
    # No banner: the judge is a URL that happens to serve the simulator (the fooled-canary run
    # below names `simulator` and has one).
    assert layout["stand_in"] is None
    shown = ("question", "answer", "trust")
    for name in (*shown, "ranking_chart", "ranking_table", "ranking_note"):
        assert 0 <= layout[name]["top"] < layout[name]["bottom"] <= height, name
    for gate in gates:
        assert 0 <= gate["top"] < gate["bottom"] <= height, gate
    # The chart under the gates, the table beside it (not below it).
    assert gates[-1]["bottom"] <= layout["ranking_chart"]["top"]
    assert layout["ranking_table"]["top"] < layout["ranking_chart"]["bottom"]
    pixels = rgb_pixels(shot)
    assert pixels.shape[:2] == (height, width)
    # The badges are drawn where the DOM says: FAIL's colour on the FAIL row, PASS's on PASS's.
    for gate, colour in zip(gates, (GREEN, VERMILLION), strict=True):
        rows = pixels[int(gate["top"]) : int(gate["bottom"]) + 1]
        assert colour_count(rows, colour) > 50, gate


def test_the_ranking_chart_is_the_ranking_with_the_leader_on_top(gated: Gated) -> None:
    """The chart's rows are the summary's ranking, in its order: the Decision's leader on the
    top row of the figure as drawn, and the PNG the page embeds is that figure."""
    summary = _summary(gated.run_dir)
    ranking = summary["comparison"]["ranking"]
    assert len(ranking) == 3 and summary["decision"]["ordered_by"] == "ranking"
    chart = ranking_chart(RunSummary.from_dict(summary).analysed())
    assert [(r.system, r.value, r.low, r.high, r.rank) for r in chart.rows] == [
        (r["system"], r["estimate"], r["ci_low"], r["ci_high"], r["rank"]) for r in ranking
    ]
    figure = plots.ranking_figure(chart.rows, chart.unit, chart.reference)
    try:
        drawn = rows_top_to_bottom(figure.axes[0])
    finally:
        import matplotlib.pyplot as plt

        plt.close(figure)
    assert drawn[0] == summary["decision"]["leader"]
    assert drawn == [r["system"] for r in ranking]
    png = plots.ranking(chart.rows, chart.unit, chart.reference)
    assert png is not None
    assert (gated.run_dir / figure_link("ranking")).read_bytes() == png
    page = (gated.run_dir / "report.html").read_text(encoding="utf-8")
    assert base64.b64encode(png).decode("ascii") in page


# --------------------------------------------------------------------------- canaries


@pytest.fixture(scope="module")
def resisted(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """tests/test_canaries.py's run whose judge no canary fools (12 items, two systems)."""
    return _run(tmp_path_factory.mktemp("resisted"), {})


@pytest.fixture(scope="module")
def fooled(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The same run with a judge that a master key always wins over."""
    return _run(tmp_path_factory.mktemp("fooled"), {"master_key_susceptibility": 1.0})


def _decision_md(run_dir: Path) -> str:
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    return report.split("## Decision\n", 1)[1].split("\n## ", 1)[0]


def test_passing_canaries_are_one_line_and_their_table_is_lower_down(resisted: Any) -> None:
    run_dir = resisted.rundir.path
    summary = _summary(run_dir)
    gates = summary["canaries"]["gates"]
    assert gates and all(g["passed"] for g in gates)
    decision = _decision_md(run_dir)
    line = f"> **[PASS]** Canaries: all {len(gates)} passed: no judge was fooled (see Canaries)."
    assert line in decision.splitlines()
    # The gates' rows are not in the Decision; the Canaries section has them, and the rates.
    assert not any(g["expression"] in decision for g in gates)
    report, _, ledger = _traced(run_dir)
    canaries = report.split("\n## Canaries\n", 1)[1]
    assert all(f"| {g['expression']} | **[PASS]** |" in canaries for g in gates)
    assert "| canary | judge | against | win rate |" in canaries
    assert _page_problems(report, summary, ledger) == []


def test_a_fooled_judge_fails_the_canary_line_which_names_it(fooled: Any, tmp_path: Path) -> None:
    run_dir = fooled.rundir.path
    summary = _summary(run_dir)
    gates = summary["canaries"]["gates"]
    failed = [g for g in gates if not g["passed"]]
    (rate,) = [r for r in summary["canaries"]["rates"] if r["fooled"]]
    assert (rate["judge"], rate["canary"]) == (JUDGE, MASTER_KEY) and len(failed) == 1
    line = (
        f"> **[FAIL]** Canaries: {len(failed)} of {len(gates)} FAILED — {JUDGE} by {MASTER_KEY} "
        f"({100 * rate['win_rate']:.1f}% against {rate['opponent']}). Verdicts of a fooled "
        "judge are suspect (see Canaries)."
    )
    assert line in _decision_md(run_dir).splitlines()
    report, _, ledger = _traced(run_dir)
    assert _page_problems(report, summary, ledger) == []
    # In Chromium: the line, its FAIL badge and the chart in the first screen.
    if shutil.which("chromium") is None:
        pytest.fail("chromium is not installed: `apt-get install chromium` (make test does)")
    shot = tmp_path / "first_screen.png"
    layout = first_screen(run_dir, shot)
    keep_artefact(shot, "report_first_screen_fooled_canary.png")
    notice = RunSummary.from_dict(summary).run.notice()
    assert notice is not None and notice.startswith(f"SIMULATED: {JUDGE} ")
    assert layout["stand_in"]["text"] == notice
    assert layout["canaries_mark"]["text"] == "FAIL"
    assert layout["canaries"]["text"] == "FAIL" + line.split("**[FAIL]** ", 1)[1]
    for name in ("stand_in", "answer", "trust", "canaries", "ranking_chart", "ranking_table"):
        assert 0 <= layout[name]["top"] < layout[name]["bottom"] <= SCREEN[1], name
    mark = layout["canaries_mark"]
    rows = rgb_pixels(shot)[int(mark["top"]) : int(mark["bottom"]) + 1]
    assert colour_count(rows, VERMILLION) > 50


def test_many_fooled_judges_are_counted_and_the_first_two_named(fooled: Any) -> None:
    """Every canary fooling every judge: the line stays short, naming two and counting all
    (the Canaries section lists each)."""
    analysis = RunSummary.from_dict(_summary(fooled.rundir.path)).analysed()
    canaries = analysis.canaries
    assert canaries is not None and len(canaries.rates) == 3
    everyone = canaries.model_copy(
        update={
            "rates": [r.model_copy(update={"fooled": True}) for r in canaries.rates],
            "gates": [g.model_copy(update={"passed": False}) for g in canaries.gates],
        }
    )
    line = canary_line(analysis.model_copy(update={"canaries": everyone}))
    assert line is not None and line.mark is not None and line.mark.text == "FAIL"
    first, second, third = everyone.rates
    assert line.text.startswith(
        f"Canaries: 3 of 3 FAILED — {first.judge} by {first.canary} "
        f"({100 * first.win_rate:.1f}% against {first.opponent}); {second.judge} by "
        f"{second.canary} ("
    )
    assert "; and the rest." in line.text and f"by {third.canary} (" not in line.text
