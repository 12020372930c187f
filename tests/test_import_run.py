"""Imported data judged end to end (issue 34, item 1, "then a run and a report"): a run config
whose `data.source` names each tool's real output (tests/fixtures/importers/), judged by the
built-in simulator through `judge run`, with the report written and its counts those of the
import; the tables `judge import` writes, named by `data.items`/`data.responses`; and a rubric
imported from OpenAI Evals testing criteria judging them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.config.import_source import ImportSource
from judge.inputs.importers import import_rubrics, import_tables
from tests.helpers import run_cli_here
from tests.test_importers import (
    CRITERIA,
    HF_CACHE,
    HF_COLUMNS,
    HF_DATASET,
    INSPECT_LOGS,
    LM_EVAL,
    PROMPTFOO,
)
from tests.test_importers import _cli as import_cli

SOURCES: dict[str, dict[str, Any]] = {
    "inspect": {"kind": "inspect", "path": [str(INSPECT_LOGS)]},
    "promptfoo": {"kind": "promptfoo", "path": str(PROMPTFOO / "results.json")},
    "lm-eval": {"kind": "lm-eval", "path": [str(LM_EVAL)]},
    "hf": {
        "kind": "hf",
        "dataset": HF_DATASET,
        "columns": HF_COLUMNS,
        "strata": ["topic"],
        "cache_dir": str(HF_CACHE),
    },
}
JUDGE = {
    "model": "openai/sim-judge",
    "family": "simulated",
    "base_url": "simulator",
    "transport": "http",
    "max_connections": 8,
}


@pytest.fixture(autouse=True)
def offline_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the prepare process reads the environment
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


def _run(tmp_path: Path, data: dict[str, Any], rubric: str = "pairwise_general") -> dict[str, Any]:
    """`judge run` on a config of `data`, judged by the simulator: the run's summary.json."""
    config = {"name": "imported", "data": data, "rubric": rubric, "judges": [JUDGE]}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    run_dir = tmp_path / "run"
    result = run_cli_here("run", str(path), "--run-dir", str(run_dir), "--quiet")
    assert result.returncode == 0, result.stderr
    assert (run_dir / "report.html").is_file() and (run_dir / "report.md").is_file()
    return json.loads((run_dir / "summary.json").read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", list(SOURCES))
def test_a_config_source_is_imported_judged_and_reported(tmp_path: Path, kind: str) -> None:
    expected = import_tables(ImportSource.model_validate(SOURCES[kind]), tmp_path / "expected")
    summary = _run(tmp_path, {"source": SOURCES[kind], "allow_empty_outputs": True})
    counts = summary["counts"]
    assert (counts["items"], counts["blinded"]) == (expected.items, expected.responses)
    assert summary["data"]["systems"] == len(expected.systems) == 2
    assert set(summary["systems"]["openai/sim-judge"]) == set(expected.systems)
    assert counts["pending"] == 0 and counts["verdicts"] == counts["requests"] > 0
    # What the prepare imported is kept in the run dir, as it was judged.
    imported = tmp_path / "run" / "imported"
    assert (imported / "responses.jsonl").read_text() == expected.responses_file.read_text()


def test_judge_import_tables_and_an_imported_rubric_make_a_run(tmp_path: Path) -> None:
    tables = tmp_path / "tables"
    result = import_cli("hf", HF_DATASET, "--out", str(tables), *_hf_options())
    assert result.exit_code == 0, result.output
    assert "wrote 3 items, 6 responses of 2 systems" in result.output
    rubrics = import_rubrics(CRITERIA, tmp_path / "rubrics")
    correctness = next(w for w in rubrics.written if w.criterion == "correctness")
    data = {"items": str(tables / "items.jsonl"), "responses": str(tables / "responses.jsonl")}
    summary = _run(tmp_path, data, rubric=str(correctness.path))
    assert summary["run"]["rubric"]["id"] == "correctness"
    # Absolute: one request per response (no orders), each a verdict on the 0..1 scale.
    assert summary["counts"]["requests"] == summary["counts"]["blinded"] == 6


def _hf_options() -> list[str]:
    options = ["--cache-dir", str(HF_CACHE), "--stratum", "topic"]
    for key, column in HF_COLUMNS.items():
        options += ["--column", f"{key}={column}"]
    return options
