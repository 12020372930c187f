"""`judge --help` stays fast: registering `judge serve` and `judge tokens` imports no web or
database stack, and the `--executor ray` options import no Ray."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO


def test_importing_the_cli_does_not_import_the_service_stack() -> None:
    code = (
        "import sys, judge.cli.main; "
        "heavy = [m for m in ('fastapi', 'starlette', 'uvicorn', 'sqlalchemy', 'psycopg', "
        "'pandas', 'litellm', 'ray') if m in sys.modules]; print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert result.stdout.strip() == "[]"


def test_serve_and_tokens_are_registered() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "judge.cli", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert "serve" in result.stdout and "tokens" in result.stdout
