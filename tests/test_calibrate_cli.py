"""`judge calibrate` through the real CLI on the bundled MT-Bench data (issue 4)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli_here as run_cli


def test_mt_bench_calibration_prints_agreement_ceiling_and_gate() -> None:
    result = run_cli("calibrate", "--mt-bench", "--resamples", "200")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # MT-Bench paper Table 2 (Zheng et al. 2023), G4-Pair vs human, S1 per turn.
    assert "886/1343" in out and "871/1325" in out
    assert "Human ceiling" in out and "human alpha" in out
    assert "Gate: UNTRUSTED" in out  # GPT-4 alpha 0.476 < 0.667, and humans reach only 0.467


def test_shuffled_judge_is_untrusted_with_a_collapsed_alpha() -> None:
    result = run_cli(
        "calibrate", "--mt-bench", "--shuffle-judge", "1", "--json", "--resamples", "200"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["gate"]["verdict"] == "untrusted"
    assert report["overall"]["metrics"]["alpha"]["value"] < 0.1


def test_calibrate_from_tables_and_bad_label(tmp_path: Path) -> None:
    judge = tmp_path / "judge.csv"
    human = tmp_path / "human.csv"
    judge.write_text("item_id,system_a,system_b,winner\nq1,x,y,x\nq2,x,y,tie\n")
    human.write_text("item_id,system_a,system_b,winner,annotator\nq1,x,y,draw,h1\n")
    result = run_cli("calibrate", "--judge", str(judge), "--human", str(human))
    assert result.returncode == 2
    assert "human.csv, row 1, field 'winner': 'draw'" in result.stderr
    assert "Traceback" not in result.stderr
