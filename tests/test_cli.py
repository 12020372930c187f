"""The CLI: exit codes, one-line errors, outputs on disk. In this process (`run_cli_here`)
except where a process of its own is the point (imports, `--debug` tracebacks)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import MT_BENCH, REPO, run_cli, run_cli_here


def test_help_lists_commands() -> None:
    result = run_cli_here("--help")
    assert result.returncode == 0
    for command in ("blind", "prepare", "simulate"):
        assert command in result.stdout


def test_importing_judge_does_not_import_litellm_or_sdks() -> None:
    code = (
        "import sys, judge, judge.cli.main, judge.run; "
        "heavy = [m for m in ('litellm', 'openai', 'anthropic') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_blind_writes_key_apart_and_prints_scrub_report(tmp_path: Path) -> None:
    out = tmp_path / "blind"
    result = run_cli_here(
        "blind",
        str(MT_BENCH / "responses.jsonl.gz"),
        "--items",
        str(MT_BENCH / "items.jsonl"),
        "--out",
        str(out),
        "--seed",
        "3",
        "--pairs",
        "baseline:gpt-3.5-turbo",
        "--allow-empty-outputs",
    )
    assert result.returncode == 0, result.stderr
    assert "Scrub report" in result.stdout
    assert "930 responses of 6 systems on 160 items" in result.stdout
    blinded = [json.loads(line) for line in (out / "blinded.jsonl").open()]
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").open()]
    key = json.loads((out / "blinding_key.json").read_text())
    assert len(blinded) == 930
    assert set(blinded[0]) == {"blind_id", "item_id", "output", "context"}
    assert sorted(set(key["systems"].values())) == [
        "alpaca-13b",
        "claude-v1",
        "gpt-3.5-turbo",
        "gpt-4",
        "llama-13b",
        "vicuna-13b-v1.2",
    ]
    # Baseline mode: every pair includes the baseline, in either slot.
    assert pairs and all("gpt-3.5-turbo" in key["pairs"][p["pair_id"]] for p in pairs)
    slots = {key["pairs"][p["pair_id"]][0] == "gpt-3.5-turbo" for p in pairs}
    assert slots == {True, False}
    # The key is owner-only; the judge-visible files never name a system.
    assert stat.S_IMODE(os.stat(out / "blinding_key.json").st_mode) == 0o600
    visible = (out / "blinded.jsonl").read_text() + (out / "pairs.jsonl").read_text()
    for system in key["systems"].values():
        assert system not in visible


def test_blind_is_reproducible_in_the_same_out_dir(tmp_path: Path) -> None:
    args = [
        "blind",
        str(MT_BENCH / "responses.jsonl.gz"),
        "--items",
        str(MT_BENCH / "items.jsonl"),
        "--out",
        str(tmp_path),
        "--allow-empty-outputs",
    ]
    assert run_cli_here(*args).returncode == 0
    first = (tmp_path / "blinded.jsonl").read_bytes()
    assert run_cli_here(*args).returncode == 0
    assert (tmp_path / "blinded.jsonl").read_bytes() == first


def test_user_error_is_one_line_exit_2_without_traceback(tmp_path: Path) -> None:
    result = run_cli_here(
        "blind",
        str(MT_BENCH / "responses.jsonl.gz"),
        "--items",
        str(MT_BENCH / "items.jsonl"),
        "--out",
        str(tmp_path),
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {MT_BENCH / 'responses.jsonl.gz'}, line 545, field 'output': empty output "
        "(whitespace only counts as empty); to judge empty outputs as empty instead, pass "
        "allow_empty_outputs=True (config: data.allow_empty_outputs: true)"
    ]
    assert "Traceback" not in result.stderr


def test_debug_flag_shows_traceback(tmp_path: Path) -> None:
    result = run_cli("--debug", "prepare", str(tmp_path / "missing.yaml"))
    assert result.returncode != 0
    assert "Traceback" in result.stderr
    assert "config file not found" in result.stderr


def test_bad_pairs_spec(tmp_path: Path) -> None:
    result = run_cli_here(
        "blind",
        str(MT_BENCH / "responses.jsonl.gz"),
        "--items",
        str(MT_BENCH / "items.jsonl"),
        "--out",
        str(tmp_path),
        "--pairs",
        "baseline",
    )
    assert result.returncode == 2
    assert "--pairs 'baseline': expected 'all' or 'baseline:SYSTEM'" in result.stderr


def test_unknown_baseline_names_known_systems(tmp_path: Path) -> None:
    result = run_cli_here(
        "blind",
        str(MT_BENCH / "responses.jsonl.gz"),
        "--items",
        str(MT_BENCH / "items.jsonl"),
        "--out",
        str(tmp_path),
        "--allow-empty-outputs",
        "--pairs",
        "baseline:gpt-5",
    )
    assert result.returncode == 2
    assert "'gpt-5'" in result.stderr and "alpaca-13b" in result.stderr


def test_bad_config_key_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "name: x\ndata: {items: a.jsonl, responses: b.jsonl}\nrubric: r\njudgez: []\n"
    )
    result = run_cli_here("prepare", str(config))
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {config}: judgez: unknown key (did you mean judges?)"


def test_version_is_the_installed_distributions() -> None:
    from importlib import metadata

    result = run_cli_here("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"judge-pipeline {metadata.version('judge-pipeline')}"


def test_simulate_and_serve_default_to_different_ports() -> None:
    from typer.main import get_command

    from judge.cli import app

    commands = get_command(app).commands  # type: ignore[attr-defined]
    ports = {
        name: next(p.default for p in commands[name].params if p.name == "port")
        for name in ("simulate", "serve")
    }
    assert ports == {"simulate": 8001, "serve": 8000}


def test_tokens_list_without_a_database_creates_nothing(tmp_path: Path) -> None:
    # Issue 14: `judge tokens list` silently created ./judge-service (and an empty database).
    expected = tmp_path.resolve() / "judge-service" / "service.sqlite"
    for args in (("tokens", "list"), ("tokens", "revoke", "ci")):
        result = run_cli_here(*args, cwd=tmp_path)
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            f"error: no service database at {expected}: give the server's --data-dir (or --db), "
            "or create a token first with `judge tokens create NAME`"
        ]
    assert list(tmp_path.iterdir()) == []
    # Where a database exists, the listing works as before.
    data = tmp_path / "data"
    assert run_cli_here("tokens", "create", "ci-bot", "--data-dir", str(data)).returncode == 0
    listed = run_cli_here("tokens", "list", "--data-dir", str(data))
    assert listed.returncode == 0 and listed.stdout.startswith("ci-bot\tuser\tactive")


_WITHOUT_SERVICE = """
import importlib.util, sys
blocked = ("fastapi", "uvicorn", "sqlalchemy", "multipart")
found = importlib.util.find_spec
importlib.util.find_spec = lambda n, p=None: None if n.split(".")[0] in blocked else found(n, p)
class Block:
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(name)
sys.meta_path.insert(0, Block())
from judge.cli.main import main
sys.argv = ["judge", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("args", [["serve"], ["tokens", "list"], ["tokens", "create", "x"]])
def test_service_commands_name_the_extra_on_a_core_install(tmp_path: Path, args: list[str]) -> None:
    """`make demo` installs the core package only: the service's commands then say which
    extra to install, in one line, instead of an internal ImportError; and create nothing."""
    script = tmp_path / "core.py"
    script.write_text(_WITHOUT_SERVICE)
    data = tmp_path / "data"
    result = subprocess.run(
        [sys.executable, str(script), *args, "--data-dir", str(data)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: judge {args[0]} needs the service extra (fastapi, uvicorn, sqlalchemy, "
        "multipart missing): pip install 'judge-pipeline[service]' (make test installs it)"
    ]
    assert not data.exists()
