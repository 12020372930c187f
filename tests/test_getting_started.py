"""Every code block of docs/getting-started.md runs, in order, in an empty directory, as a
new user would run them (issue 30): files are written where the page says "Save as", shell
blocks run with this venv's `judge` first on PATH, Python blocks in one interpreter, and the
page's illustrative config snippet is checked as a config."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from judge.config.run_config import config_from_mapping
from tests.helpers import REPO

PAGE = REPO / "docs" / "getting-started.md"
FENCE = re.compile(r"(?:Save as `(?P<name>[^`]+)`:\n\n)?```(?P<lang>\w+)\n(?P<body>.*?)\n```", re.S)


def _blocks() -> list[tuple[str, str | None, str]]:
    return [(m["lang"], m["name"], m["body"]) for m in FENCE.finditer(PAGE.read_text())]


def test_the_page_has_the_blocks_a_new_user_follows() -> None:
    kinds = [(lang, name) for lang, name, _ in _blocks()]
    assert ("csv", "tickets.csv") in kinds and ("yaml", "my-eval.yaml") in kinds
    assert sum(lang == "bash" for lang, _ in kinds) >= 2
    assert sum(lang == "python" for lang, _ in kinds) >= 1
    # Every fence on the page is one the test runs (none slips past the pattern).
    assert PAGE.read_text().count("```") == 2 * len(kinds)


def test_every_block_of_the_page_runs(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(key, None)  # offline: the simulator needs none
    python: list[str] = []
    snippets: list[str] = []
    for lang, name, body in _blocks():
        if name is not None:
            (tmp_path / name).write_text(body + "\n")
        elif lang == "bash":
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", body],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=180,
            )
            assert done.returncode == 0, f"{body}\n{done.stdout}\n{done.stderr}"
        elif lang == "python":
            python.append(body)
        else:
            snippets.append(body)
    assert (tmp_path / "runs" / "support-desk" / "report.html").is_file()
    done = subprocess.run(
        [sys.executable, "-"],
        input="\n\n".join(python),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert "report.html" in done.stdout and "helpdesk-v2" in done.stdout
    assert (tmp_path / "runs" / "from-python" / "report.html").is_file()
    # The snippet that swaps in real judges is a valid config once swapped in.
    config = yaml.safe_load((tmp_path / "my-eval.yaml").read_text())
    assert len(snippets) == 1
    config.update(yaml.safe_load(snippets[0]))
    checked = config_from_mapping(config, tmp_path, source="my-eval.yaml")
    assert {j.provider for j in checked.judges} == {"openai", "anthropic"}
