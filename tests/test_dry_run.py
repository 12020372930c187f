"""`--dry-run` is dry and honest (issue 31): it leaves the run dir and the response cache as
they were (every file's bytes and times), whether the run dir is new, prepared, half judged
or holds another config; it says what each reply's length rests on (measured replies when the
run has some, else the rubric's format); it names a missing API key; and on the simulator
its estimate lands within x1.5 of what the run then costs."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from judge import RunDir, load_config, prepare_run, run_pipeline
from judge.run import dry_run
from tests.test_runner import write_dataset

PRICES = {"input_cost_per_mtok": 2.0, "output_cost_per_mtok": 8.0}


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under `root`: its content hash and modification time."""
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _config(root: Path, **overrides: Any) -> Path:
    """12 items of two systems, judged pairwise in both orders by two priced simulated
    judges; the response cache beside the run dirs."""
    items, responses = write_dataset(
        root,
        12,
        {
            "sys-a": lambda i: f"Answer {i}: the steps are one, two and three, in that order.",
            "sys-b": lambda i: f"B on {i}: start with the second step, then the first.",
        },
    )
    config = {
        "name": "dry",
        "data": {"items": str(items), "responses": str(responses)},
        "rubric": "pairwise_general",
        "judges": [
            {"model": "openai/sim-gpt", "base_url": "simulator", **PRICES},
            {"model": "anthropic/sim-claude", "base_url": "simulator", **PRICES},
        ],
        "orders": "both",
        "compare": {"resamples": 200},
        "cache": str(root / "runs" / "cache.sqlite"),
        **overrides,
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_dry_run_of_a_new_run_dir_creates_nothing(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path))
    plan = dry_run(config, tmp_path / "runs" / "dry")
    assert not (tmp_path / "runs").exists()  # neither the run dir nor the cache
    (row,) = [plan.judges["openai/sim-gpt"]]
    assert row.requests == 12 * 2 and row.cached == 0
    assert row.reply.basis == "the simulator's reply format"


def test_a_dry_run_of_a_judged_run_changes_no_byte_and_measures_its_replies(
    tmp_path: Path,
) -> None:
    config = load_config(_config(tmp_path))
    rundir = RunDir(tmp_path / "runs" / "dry")
    run_pipeline(config, rundir)
    before = _snapshot(tmp_path / "runs")
    plan = dry_run(config, rundir)
    assert _snapshot(tmp_path / "runs") == before
    assert plan.judges == {}  # nothing pending
    # More items appended: the run dir's inputs changed, so it is prepared again, in scratch;
    # the replies stored tell the reply length.
    with open(config.data.items, "a") as fh:  # one item more, answered by both systems
        fh.write('{"item_id": "q12", "prompt": "Question number 12?"}\n')
    with open(config.data.responses, "a") as fh:
        for system in ("sys-a", "sys-b"):
            fh.write(f'{{"item_id": "q12", "system": "{system}", "output": "{system} on 12"}}\n')
    plan = dry_run(config, rundir)
    assert _snapshot(tmp_path / "runs") == before
    row = plan.judges["openai/sim-gpt"]
    assert row.requests == 2  # the new item's pair, in both orders
    assert row.reply.basis.startswith("measured: mean of 24 replies stored")


def test_a_run_dir_of_another_config_is_left_alone_and_named(tmp_path: Path) -> None:
    rundir = RunDir(tmp_path / "runs" / "dry")
    prepare_run(load_config(_config(tmp_path)), rundir)
    before = _snapshot(tmp_path / "runs")
    edited = load_config(_config(tmp_path, orders="AB"))
    plan = dry_run(edited, rundir)
    assert _snapshot(tmp_path / "runs") == before
    assert any("different config" in note and "refuse" in note for note in plan.notes)
    assert plan.judges["openai/sim-gpt"].requests == 12  # the edited config's, one order


def test_the_estimate_is_within_one_and_a_half_of_the_cost(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path))
    plan = dry_run(config, tmp_path / "runs" / "dry")
    estimated = sum(row.cost_sync_usd or 0.0 for row in plan.judges.values())
    done = run_pipeline(config, tmp_path / "runs" / "dry")
    costs = done.summary.costs
    assert costs is not None and costs.total.cost_usd is not None
    actual = costs.total.cost_usd
    print(f"estimated ${estimated:.6f}, cost ${actual:.6f}, ratio {estimated / actual:.3f}")
    assert actual > 0 and 1 / 1.5 <= estimated / actual <= 1.5


def test_the_cli_prints_the_assumption_and_a_missing_key(tmp_path: Path) -> None:
    """A real judge: the reply length is the rubric's format, said so; its key is missing,
    named by variable and never by value; and nothing is written."""
    path = _config(
        tmp_path,
        judges=[{"model": "openai/gpt-4o-mini", "api_key_env": "JUDGE_TEST_KEY"}],
    )
    env = {k: v for k, v in os.environ.items() if k != "JUDGE_TEST_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "judge.cli", "run", str(path), "--dry-run"],
        cwd=tmp_path,
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "per reply, assumed: reasoning (~150 tokens) then the verdict" in out
    assert "before a real run: judge openai/gpt-4o-mini: the environment variable" in out
    assert "JUDGE_TEST_KEY" in out
    assert not (tmp_path / "runs").exists()
