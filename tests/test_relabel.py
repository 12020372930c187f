"""Human labels for a finished run (issue 14): `judge report RUN --human FILE` adds or replaces
them without a judge call and without changing the stored config, every later analysis keeps
using them, labels that fail leave the previous ones in place, and `judge calibrate` on a run
dir applies the run's own trust-gate settings. Bad label files are one-line errors; labels
naming a system the run never judged are reported by name.

One small finished run (the built-in simulator, 12 items, two systems), copied per test.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
import yaml

from judge import RunDir
from tests.helpers import run_cli_here
from tests.test_runner import quality, write_dataset

ITEMS = 12
GATE = {"annotator_margin": 0.2, "ceiling_margin": 0.15}
"""Not the defaults (0.1, 0.1): a calibration that ignored the run's settings would show."""


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("relabel")
    items, responses = write_dataset(
        root,
        ITEMS,
        {
            "sys-a": lambda i: quality(0.7, f"A answers question {i} at some length."),
            "sys-b": lambda i: quality(0.4, f"B says {i}."),
        },
    )
    config = {
        "name": "relabel",
        "data": {"items": str(items), "responses": str(responses)},
        "blinding": {"seed": 3},
        "rubric": "pairwise_general",
        "judges": [{"model": "openai/sim-judge", "family": "simulated", "base_url": "simulator"}],
        "simulator": {"seed": 4, "noise": 0.3},
        "calibration": {"resamples": 100, "seed": 5, "gate": GATE},
        "compare": {"resamples": 200},
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    run_dir = root / "run"
    result = run_cli_here("run", str(path), "--run-dir", str(run_dir), "--quiet")
    assert result.returncode == 0, result.stderr
    assert _summary(run_dir)["calibration"] is None  # judged without labels
    return run_dir


@pytest.fixture
def run_dir(finished: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    return copy


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def _labels(path: Path, systems: tuple[str, str] = ("sys-a", "sys-b"), seed: int = 1) -> Path:
    """Three annotators per item who mostly prefer the first system."""
    rng = random.Random(seed)
    a, b = systems
    with path.open("w", encoding="utf-8") as fh:
        fh.write("item_id,system_a,system_b,winner,annotator\n")
        for i in range(ITEMS):
            for annotator in ("h1", "h2", "h3"):
                winner = rng.choices([a, b, "tie"], weights=[6, 2, 2])[0]
                fh.write(f"q{i},{a},{b},{winner},{annotator}\n")
    return path


def _config_hash(run_dir: Path) -> str:
    with RunDir(run_dir).open_store() as store:
        return store.get_meta("config_hash")


def test_labels_added_to_a_finished_run_are_kept_and_used_by_every_later_analysis(
    finished: Path, run_dir: Path, tmp_path: Path
) -> None:
    prepared = _config_hash(run_dir)
    # A core install (`make demo`) has no LiteLLM: the store records it as None.
    with RunDir(run_dir).open_store() as store:
        environment = store.get_meta("environment")
        environment["packages"]["litellm"] = None
        store.set_meta("environment", environment)
    labels = _labels(tmp_path / "labels.csv")
    # Some labels name a system the run never judged: reported by name, not dropped silently.
    with labels.open("a", encoding="utf-8") as fh:
        fh.write(
            _labels(tmp_path / "c.csv", systems=("sys-a", "sys-c")).read_text().split("\n", 1)[1]
        )
    added = run_cli_here("report", str(run_dir), "--human", str(labels))
    assert added.returncode == 0, added.stderr
    kept = run_dir / "human_labels.csv"
    assert kept.read_bytes() == labels.read_bytes()
    assert f"kept as {kept}" in added.stdout
    calibration = _summary(run_dir)["calibration"]
    assert calibration["human_labels"] == str(kept)
    join = calibration["join"]
    assert (join["human_labels"], join["matched_labels"]) == (6 * ITEMS, 3 * ITEMS)
    assert (join["unknown_systems"], join["unknown_system_labels"]) == (["sys-c"], 3 * ITEMS)
    assert "warning: 36 human labels name systems the run never judged (sys-c)" in added.stdout
    page = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "36 human labels name systems this run never judged (sys-c)" in page
    assert "litellm" not in _summary(run_dir)["run"]["environment"]["packages"]
    # The stored config, and its hash, stay as prepared.
    assert _config_hash(run_dir) == prepared == _summary(run_dir)["run"]["config_hash"]

    # `judge calibrate` on the run: its labels, gate, resamples and seed, so the report's numbers.
    mine = run_cli_here("calibrate", "--judge", str(run_dir), "--json")
    assert mine.returncode == 0, mine.stderr
    report = json.loads(mine.stdout)
    assert report["overall"]["metrics"]["alpha"] == calibration["overall"]["metrics"]["alpha"]
    assert report["gate"]["verdict"] == calibration["gate"]["verdict"]
    assert report["gate"]["thresholds"] == calibration["gate"]["thresholds"]

    labels.unlink()  # the run has its own copy
    again = run_cli_here("report", str(run_dir))
    assert again.returncode == 0, again.stderr
    assert _summary(run_dir)["calibration"] == calibration
    # `judge run` on the same config resumes the run (same config hash) with the kept labels.
    config = finished.parent / "config.yaml"
    resumed = run_cli_here("run", str(config), "--run-dir", str(run_dir), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert _summary(run_dir)["calibration"] == calibration


def test_labels_the_analysis_cannot_use_leave_the_previous_ones(
    run_dir: Path, tmp_path: Path
) -> None:
    good = _labels(tmp_path / "labels.csv")
    assert run_cli_here("report", str(run_dir), "--human", str(good)).returncode == 0
    summary = (run_dir / "summary.json").read_bytes()
    report = (run_dir / "report.md").read_bytes()
    wrong = _labels(tmp_path / "renamed.csv", systems=("model-a", "model-b"))
    refused = run_cli_here("report", str(run_dir), "--human", str(wrong))
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(wrong) in lines[0]
    assert "name model-a, model-b, which the judge table never names" in lines[0]
    assert "the judge's systems are sys-a, sys-b" in lines[0]
    # Nothing changed: the labels, the summary and the report in use stay.
    assert (run_dir / "human_labels.csv").read_bytes() == good.read_bytes()
    assert sorted(p.name for p in run_dir.glob("*labels*")) == ["human_labels.csv"]
    assert (run_dir / "summary.json").read_bytes() == summary
    assert (run_dir / "report.md").read_bytes() == report

    # Replaced by labels in another format: one labels file, the new one.
    rows = [line.split(",") for line in _labels(tmp_path / "x.csv", seed=2).read_text().split()]
    jsonl = tmp_path / "other.jsonl"
    jsonl.write_text(
        "".join(json.dumps(dict(zip(rows[0], row, strict=True))) + "\n" for row in rows[1:])
    )
    replaced = run_cli_here("report", str(run_dir), "--human", str(jsonl))
    assert replaced.returncode == 0, replaced.stderr
    assert sorted(p.name for p in run_dir.glob("*labels*")) == ["human_labels.jsonl"]
    assert _summary(run_dir)["calibration"]["human_labels"] == str(run_dir / "human_labels.jsonl")


def test_calibrate_on_a_run_dir_applies_the_runs_gate(run_dir: Path, tmp_path: Path) -> None:
    # Before the run has labels: say how to give them.
    missing = run_cli_here("calibrate", "--judge", str(run_dir))
    assert missing.returncode == 2 and "--human" in missing.stderr
    labels = _labels(tmp_path / "labels.csv")
    given = run_cli_here("calibrate", "--judge", str(run_dir), "--human", str(labels), "--json")
    assert given.returncode == 0, given.stderr
    report = json.loads(given.stdout)
    thresholds = report["gate"]["thresholds"]
    assert {k: thresholds[k] for k in GATE} == GATE  # the run's, not the defaults
    assert (report["resamples"], report["seed"]) == (100, 5)
    # As text: the unknown system's labels in one line naming it and the judge's systems.
    with labels.open("a", encoding="utf-8") as fh:
        fh.write(
            _labels(tmp_path / "c.csv", systems=("sys-a", "sys-c")).read_text().split("\n", 1)[1]
        )
    text = run_cli_here("calibrate", "--judge", str(run_dir), "--human", str(labels))
    assert text.returncode == 0, text.stderr
    line = next(x for x in text.stdout.splitlines() if "unknown systems" in x)
    assert f"{3 * ITEMS} human labels name sys-c, which the judge table never names" in line
    assert "the judge's systems are sys-a, sys-b" in line


@pytest.mark.parametrize(
    ("content", "said"),
    [("", "the file holds nothing"), ("item_id,system_a,system_b,winner\n", "no rows")],
)
def test_a_labels_file_without_labels_is_a_one_line_error(
    run_dir: Path, tmp_path: Path, content: str, said: str
) -> None:
    empty = tmp_path / "labels.csv"
    empty.write_text(content)
    for args in (
        ("report", str(run_dir), "--human", str(empty)),
        ("calibrate", "--judge", str(run_dir), "--human", str(empty)),
    ):
        result = run_cli_here(*args)
        assert result.returncode == 2, result.stdout
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {empty}: no labels"), lines
        assert said in lines[0] and "No columns" not in lines[0]
    assert not list(run_dir.glob("*labels*"))
