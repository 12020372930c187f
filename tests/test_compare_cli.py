"""`judge compare` through the real CLI: tables, gates and exit codes (issue 5)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.helpers import run_cli_here as run_cli


def _scores(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    rows = ["item_id,system,score,language"]
    for i in range(200):
        base = rng.normal()
        rows.append(f"q{i},baseline,{base:.4f},{'en' if i % 2 else 'ur'}")
        rows.append(
            f"q{i},candidate,{base + 0.3 + rng.normal(0, 0.2):.4f},{'en' if i % 2 else 'ur'}"
        )
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_compare_scores_with_passing_and_failing_gates(tmp_path: Path) -> None:
    path = _scores(tmp_path)
    ok = run_cli(
        "compare",
        str(path),
        "--baseline",
        "baseline",
        "--by",
        "language",
        "--resamples",
        "2000",
        "--gate",
        "diff(candidate, baseline) >= 0.1",
        "--json",
    )
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    (overall,) = [c for c in report["comparisons"] if c["stratum"] is None]
    assert 0.25 < overall["mean_diff"] < 0.35 and overall["ci_low"] > 0.1
    strata = {s["stratum"]: s for s in report["by_stratum"]}
    assert sorted(strata) == ["en", "ur"]
    assert strata["en"]["n"] == strata["ur"]["n"] == 100
    failing = run_cli(
        "compare",
        str(path),
        "--baseline",
        "baseline",
        "--resamples",
        "2000",
        "--gate",
        "diff(candidate, baseline) >= 0.5",
    )
    assert failing.returncode == 1
    assert failing.stderr.strip().startswith("gate failed: diff(candidate, baseline) = 0.")


def test_gate_syntax_error_names_position(tmp_path: Path) -> None:
    result = run_cli("compare", str(_scores(tmp_path)), "--gate", "diff(candidate, baseline >= 0")
    assert result.returncode == 2
    assert "error:" in result.stderr and "Traceback" not in result.stderr
