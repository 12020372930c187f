"""`judge migrate` end to end (issue 32, item 5): GPT-4's recorded MT-Bench verdicts replaced by
a simulated judge with two systems' planted qualities swapped, through the real CLI and the
simulator over HTTP; a second migrate sends nothing (counted at the simulator); and every
input it refuses, refused before anything is written or sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from judge import load_config, prepare_run, run_pipeline
from judge.simulator import SimulatorConfig, SimulatorHandle, simulator_fixture
from judge.store.rundir import RunDir
from judge.summary.migration import Migration
from tests.helpers import MT_BENCH, run_cli_here
from tests.test_runner import judge_entry, write_config, write_dataset

simulator = simulator_fixture(SimulatorConfig(seed=2), scope="module")

# GPT-4's order on MT-Bench (the demo's ranking) with claude-v1 and gpt-3.5-turbo swapped.
PLANT = {
    "gpt-4": 0.9,
    "gpt-3.5-turbo": 0.75,
    "claude-v1": 0.6,
    "vicuna-13b-v1.2": 0.45,
    "alpaca-13b": 0.3,
    "llama-13b": 0.15,
}


def _yaml(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def _migration(out: Path) -> Migration:
    return Migration.model_validate_json((out / "migrate.json").read_text())


# --------------------------------------------------------------------------- MT-Bench


def test_a_planted_swap_flips_that_comparison_on_mt_bench(demo: Path, tmp_path: Path) -> None:
    """Old: GPT-4's verdicts (the demo run). New: the simulator, its planted qualities in
    GPT-4's order but claude-v1 and gpt-3.5-turbo swapped. Re-judged: 12 labelled items (the
    expert votes of the first six questions) and 24 of the other 148."""
    labels = pd.read_json(MT_BENCH / "human_labels.jsonl", lines=True)
    first = sorted(labels["item_id"].unique())[:12]
    human = tmp_path / "labels.jsonl"
    labels[labels["item_id"].isin(first)].to_json(human, orient="records", lines=True)
    new = _yaml(
        tmp_path / "new.yaml",
        {
            "judges": [
                {"model": "openai/sim-successor", "family": "alibaba", "base_url": "simulator"}
            ],
            "simulator": {"seed": 3, "noise": 0.15, "plant": PLANT},
        },
    )
    out = tmp_path / "out"
    done = run_cli_here(
        "migrate",
        str(demo),
        str(new),
        "--out",
        str(out),
        "--sample",
        "24",
        "--human",
        str(human),
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    migration = _migration(out)
    by_pair = {frozenset((p.a, p.b)): p for p in migration.comparisons}
    swapped = by_pair[frozenset(("claude-v1", "gpt-3.5-turbo"))]
    # The old run had claude-v1 ahead, told apart; the new judge puts gpt-3.5-turbo ahead.
    assert (swapped.a, swapped.old.told_apart) == ("claude-v1", True)
    assert swapped.change == "flips" and swapped.new is not None
    assert swapped.new.ci_high is not None and swapped.new.ci_high < 0 and swapped.new.told_apart
    assert [p.change for p in migration.comparisons].count("flips") == 1
    assert migration.changes["flips"] == 1 and sum(migration.changes.values()) == 15
    # The old side is the demo's summary, as it reported it.
    old = RunDir(demo).read_summary().analysed().comparison.comparisons
    assert {(c.a, c.b, c.mean_diff) for c in old} == {
        (p.a, p.b, p.old.mean_diff) for p in migration.comparisons
    }
    assert (migration.design.labelled.rejudged, migration.design.other.rejudged) == (12, 24)
    assert migration.design.other.items == 148 and migration.mapping.keys > 500
    assert [h.judge for h in migration.humans] == ["recorded/gpt-4", "openai/sim-successor"]
    # Simulated wherever its results appear: first and last, the page, the JSON, the run.
    notice = migration.notice
    assert notice is not None and notice.startswith("SIMULATED: openai/sim-successor")
    lines = done.stderr.strip().splitlines()
    assert lines[0] == lines[-1] == notice
    page = (out / "migrate.md").read_text()
    assert page.count(notice) == 2 and "| flips sign | claude-v1 vs gpt-3.5-turbo |" in page
    assert migration.new_stand_in == "simulated" and migration.old_stand_in == "replayed"
    assert RunDir(out / "run").read_summary().run.simulated
    assert "flips sign       claude-v1 vs gpt-3.5-turbo" in done.stdout


# --------------------------------------------------------------------------- a small run


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished pairwise run of three systems on 12 items, without human labels, judged by
    the built-in simulator; one system (gpt-mini) is of the openai family, and the run does
    not allow same-family judges."""
    root = tmp_path_factory.mktemp("small")
    outputs = {
        "gpt-mini": lambda i: f"Here is a careful answer to question {i}.",
        "helper-b": lambda i: f"Answer {i}.",
        "helper-c": lambda i: f"The answer to {i} is below, with reasons {i % 3}.",
    }
    items, responses = write_dataset(root, 12, outputs)
    judge = {"model": "openai/sim-old", "family": "alibaba", "base_url": "simulator"}
    config = write_config(root, items, responses, judges=[judge], compare={"resamples": 500})
    run_pipeline(load_config(config), root / "run")
    return root / "run"


def _new_judge(root: Path, sim: SimulatorHandle, **extra: Any) -> Path:
    return _yaml(root / "new.yaml", {"judges": [judge_entry(sim, "openai/sim-next", **extra)]})


def test_a_second_migrate_sends_nothing(
    small: Path, simulator: SimulatorHandle, tmp_path: Path
) -> None:
    """Counted at the simulator: the first migrate sends every request, the same command again
    none (the run resumes answered), nor does its dry run. Without human labels only the
    sample part exists, and the output says so."""
    new = _new_judge(tmp_path, simulator)
    out = tmp_path / "out"
    args = ("migrate", str(small), str(new), "--out", str(out), "--sample", "6", "--quiet")
    simulator.reset()
    first = run_cli_here(*args)
    assert first.returncode == 0, first.stderr
    sent = simulator.stats()["requests"]
    # 6 items x 3 pairs x 2 orders.
    assert sent == 36 and _migration(out).sent == 36
    assert "note: no human labels" in first.stdout and _migration(out).humans == []
    simulator.reset()
    second = run_cli_here(*args)
    assert second.returncode == 0, second.stderr
    assert simulator.stats()["requests"] == 0 and _migration(out).sent == 0
    # The same numbers, whatever was sent.
    assert second.stdout.splitlines()[1:] == first.stdout.splitlines()[1:]
    dry = run_cli_here(*args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "nothing pending" in dry.stdout and simulator.stats()["requests"] == 0


def test_a_dry_run_sends_nothing_and_prices_the_sample(
    small: Path, simulator: SimulatorHandle, tmp_path: Path
) -> None:
    new = _new_judge(tmp_path, simulator, input_cost_per_mtok=1.0, output_cost_per_mtok=2.0)
    simulator.reset()
    out = tmp_path / "out"
    dry = run_cli_here(
        "migrate", str(small), str(new), "--out", str(out), "--sample", "4", "--dry-run"
    )
    assert dry.returncode == 0, dry.stderr
    assert "openai/sim-next" in dry.stdout and "24" in dry.stdout  # 4 x 3 x 2 pending
    assert simulator.stats()["requests"] == 0
    assert not (out / "run" / "store.sqlite").exists() and not (out / "migrate.json").exists()


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("unknown key", "new.yaml: judges.0.timeot_s: unknown key (did you mean timeout_s?)"),
        ("two judges", "new.yaml: judges: List should have at most 1 item"),
        (
            "same family",
            "new.yaml: judges.0 (openai/sim-next, family openai): no judge of a different "
            "family for gpt-mini vs helper-b",
        ),
        ("sample too large", "--sample 13: the run has 12 items without human labels"),
        (
            "calibration without labels",
            "--calibration 2: the run has 0 items with human labels (none: give --human FILE)",
        ),
    ],
)
def test_a_wrong_input_is_refused_before_anything_is_written_or_sent(
    small: Path, simulator: SimulatorHandle, tmp_path: Path, case: str, says: str
) -> None:
    simulator.reset()
    entry = judge_entry(simulator, "openai/sim-next")
    raw: dict[str, Any] = {"judges": [entry]}
    options = ["--sample", "4"]
    if case == "unknown key":
        raw["judges"][0]["timeot_s"] = 3
    elif case == "two judges":
        raw["judges"].append(entry)
    elif case == "same family":
        raw["judges"][0]["family"] = "openai"
    elif case == "sample too large":
        options = ["--sample", "13"]
    else:
        options = ["--calibration", "2"]
    new = _yaml(tmp_path / "new.yaml", raw)
    out = tmp_path / "out"
    done = run_cli_here("migrate", str(small), str(new), "--out", str(out), *options)
    assert done.returncode == 2
    assert says in done.stderr, done.stderr
    assert not out.exists() and simulator.stats()["requests"] == 0


def test_a_run_that_is_not_finished_or_not_pairwise_is_refused(
    simulator: SimulatorHandle, tmp_path: Path
) -> None:
    items, responses = write_dataset(
        tmp_path, 4, {"s1": lambda i: f"a{i}", "s2": lambda i: f"bb {i}"}
    )
    judge = {"model": "openai/sim-old", "family": "alibaba", "base_url": "simulator"}
    new = _new_judge(tmp_path, simulator)
    pairwise = write_config(tmp_path, items, responses, judges=[judge])
    prepare_run(load_config(pairwise), tmp_path / "prepared")
    done = run_cli_here(
        "migrate", str(tmp_path / "prepared"), str(new), "--out", str(tmp_path / "o1")
    )
    assert done.returncode == 2 and "no summary.json: run `judge run`" in done.stderr

    absolute = write_config(tmp_path, items, responses, judges=[judge], rubric="absolute_1to5")
    run_pipeline(load_config(absolute), tmp_path / "scored")
    done = run_cli_here(
        "migrate", str(tmp_path / "scored"), str(new), "--out", str(tmp_path / "o2")
    )
    assert done.returncode == 2 and "judge migrate needs a pairwise run" in done.stderr
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()
    assert (
        json.loads((tmp_path / "scored" / "summary.json").read_text())["comparison"]["kind"]
        == "scores"
    )
