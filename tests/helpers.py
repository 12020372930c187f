"""Shared test helpers (paths, running the real CLI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MT_BENCH = REPO / "data" / "mt_bench"


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run the real `judge` console entry point in a subprocess."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        [sys.executable, "-m", "judge.cli", *args],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def run_cli_here(*args: str, cwd: Path | None = None, timeout: float = 120) -> Any:
    """The same entry point as `run_cli` (`judge.cli.main`: parsing, the command, the mapping of
    errors to one line and an exit status), called in this process: no interpreter start-up,
    for the many input-checking cases whose work takes milliseconds. `timeout` is accepted for
    symmetry and unused. Use `run_cli` where a separate process matters (signals, locks held by
    this process, environment)."""
    import contextlib
    import io

    from judge.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_argv, saved_cwd = sys.argv, Path.cwd()
    code: int | str | None = 0
    try:
        sys.argv = ["judge", *args]
        os.chdir(cwd or REPO)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as stop:
                code = stop.code
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    return subprocess.CompletedProcess(
        ["judge", *args], returncode, stdout=out.getvalue(), stderr=err.getvalue()
    )
