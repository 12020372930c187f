"""`judge run` through the real CLI: shipped configs, --dry-run, --max-cost, cross-family rule."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.simulator import SimulatorConfig, running_simulator
from tests.helpers import REPO
from tests.helpers import run_cli_here as run_cli


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Any]:
    """`judge run configs/NAME.yaml --dry-run`, run once per config for the module (a dry run
    prepares the whole of MT-Bench: seconds each)."""
    done: dict[str, Any] = {}

    def run(name: str) -> Any:
        if name not in done:
            run_dir = tmp_path_factory.mktemp(f"dry-{name}") / "r"
            config = REPO / "configs" / f"{name}.yaml"
            done[name] = run_cli("run", str(config), "--dry-run", "--run-dir", str(run_dir))
        return done[name]

    return run


@pytest.mark.parametrize("name", ["openai", "anthropic", "vllm-local", "litellm", "simulated"])
def test_shipped_config_dry_run_offline(name: str, dry_run: Callable[[str], Any]) -> None:
    result = dry_run(name)
    assert result.returncode == 0, result.stderr
    assert "Dry run: nothing sent" in result.stdout
    assert "pending requests" in result.stdout


def test_openai_config_prices_from_the_table(dry_run: Callable[[str], Any]) -> None:
    result = dry_run("openai")
    row = next(line for line in result.stdout.splitlines() if "openai/gpt-4.1-mini" in line)
    # 4 systems -> 6 pairs x 160 items (minus missing answers) x 2 orders, priced in dollars.
    assert "$" in row and "unknown price" not in row


def _config(tmp_path: Path, judges: list[dict], **extra: object) -> Path:
    config = {
        "name": "t",
        "data": {
            "items": str(REPO / "data" / "mt_bench" / "items.jsonl"),
            "responses": str(REPO / "data" / "mt_bench" / "responses.jsonl.gz"),
            "allow_empty_outputs": True,
        },
        "blinding": {"seed": 1},
        "rubric": "pairwise_general",
        "judges": judges,
        **extra,
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_cross_family_rule_is_enforced(tmp_path: Path) -> None:
    path = _config(tmp_path, [{"model": "openai/gpt-4.1-mini"}])
    result = run_cli("run", str(path), "--dry-run", "--run-dir", str(tmp_path / "r"))
    assert result.returncode == 2
    assert "no judge of a different family for" in result.stderr
    assert "allow_same_family: true" in result.stderr


def test_budget_stops_cleanly_and_resumes(tmp_path: Path) -> None:
    with running_simulator(SimulatorConfig(seed=3)) as sim:
        judge = {
            "model": "openai/sim-judge",
            "family": "simulated",
            "base_url": sim.openai_base_url,
            "transport": "http",
            "max_connections": 4,
            # Priced high so a few requests cost dollars: ~1,000 input tokens -> ~$1 each.
            "input_cost_per_mtok": 1000,
            "output_cost_per_mtok": 1000,
            "params": {"max_tokens": 200},
        }
        path = _config(
            tmp_path,
            [judge],
            data={
                "items": str(REPO / "data" / "mt_bench" / "items.jsonl"),
                "responses": str(REPO / "data" / "mt_bench" / "responses.jsonl.gz"),
                "allow_empty_outputs": True,
                "systems": ["alpaca-13b", "llama-13b"],
            },
        )
        run_dir = tmp_path / "runs" / "r"
        stopped = run_cli(
            "run", str(path), "--run-dir", str(run_dir), "--max-cost", "20", "--quiet"
        )
        assert stopped.returncode == 3, stopped.stderr
        assert "stopped before exceeding the budget" in stopped.stdout
        summary = json.loads((run_dir / "summary.json").read_text())
        spent = summary["judges"]["openai/sim-judge"]["cost_usd"]
        assert 0 < spent <= 20
        assert summary["counts"]["pending"] > 0
        finished = run_cli(
            "run", str(path), "--run-dir", str(run_dir), "--max-cost", "1000000", "--quiet"
        )
        assert finished.returncode == 0, finished.stderr
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["counts"]["pending"] == 0
        # Across the stop and the resume, each distinct request content was answered once.
        stats = sim.stats()
        assert stats["duplicates"] == 0
        assert stats["answered"] == summary["counts"]["requests"] - summary["counts"]["cached"]


def test_budget_needs_known_prices(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        [{"model": "openai/no-such-model", "family": "x", "base_url": "http://127.0.0.1:9/v1"}],
    )
    result = run_cli("run", str(path), "--max-cost", "5", "--run-dir", str(tmp_path / "r"))
    assert result.returncode == 2
    assert "price of openai/no-such-model is unknown" in result.stderr


@pytest.mark.parametrize("command", ["run", "prepare"])
@pytest.mark.parametrize(
    ("gate", "named"),
    [
        (
            {"ceiling_margin": -1, "min_units": 0},
            [
                "calibration.gate.ceiling_margin: Input should be greater than or equal to 0",
                "calibration.gate.min_units: Input should be greater than or equal to 1",
            ],
        ),
        (
            {"labels_tentative": 0.9, "labels_reliable": 0.8},
            ["calibration.gate: labels_tentative (0.9) must not exceed labels_reliable (0.8)"],
        ),
        ({"alpha_use": 0.7}, ["calibration.gate: alpha_use was removed (", "use labels_tentative"]),
    ],
)
def test_an_invalid_gate_stops_the_run_before_anything_is_sent(
    tmp_path: Path, command: str, gate: dict, named: list[str]
) -> None:
    # Issue 12 review: the gate was checked only at analysis, after judging, as a raw pydantic
    # error. The config now holds calibration's GateThresholds itself: one line, exit 2, at
    # load, and the run directory is never created.
    path = _config(tmp_path, [{"model": "openai/gpt-4.1-mini"}], calibration={"gate": gate})
    result = run_cli(command, str(path), "--run-dir", str(tmp_path / "r"))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and all(part in lines[0] for part in named), result.stderr
    assert not (tmp_path / "r").exists()
