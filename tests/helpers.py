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
    """The same entry point as `run_cli` (`judge.cli.main.main`: parsing, the command, the mapping
    of
    errors to one line and an exit status), called in this process: no interpreter start-up,
    for the many input-checking cases whose work takes milliseconds. `timeout` is accepted for
    symmetry and unused. Use `run_cli` where a separate process matters (signals, locks held by
    this process, environment)."""
    import contextlib
    import io

    from judge.cli.main import main

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


def small_config(tmp_path: Path, base_url: str, **extra: Any) -> Path:
    """A run config on three MT-Bench systems judged by the simulator at `base_url`; `extra`
    keys are added (or replace) at the top level."""
    import yaml

    config = {
        "name": "small",
        "data": {
            "items": str(MT_BENCH / "items.jsonl"),
            "responses": str(MT_BENCH / "responses.jsonl.gz"),
            "allow_empty_outputs": True,
            "systems": ["alpaca-13b", "llama-13b", "vicuna-13b-v1.2"],
        },
        "rubric": "pairwise_general",
        "judges": [
            {
                "model": "openai/sim-judge",
                "family": "simulated",
                "base_url": base_url,
                "transport": "http",
                "max_connections": 16,
            }
        ],
        **extra,
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def first_screen(run_dir: Path, shot: Path) -> dict[str, Any]:
    """`scripts/screenshot_report.py --first-screen` on a run's report.html: the screenshot of
    the first 1280x800 (written to `shot`), and where the decision's elements lie, as JSON."""
    import json

    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "screenshot_report.py"),
            str(run_dir),
            "--first-screen",
            "--out",
            str(shot),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=180,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def keep_artefact(path: Path, name: str) -> None:
    """Copy a screenshot to $JUDGE_ARTIFACTS (CI keeps that directory), when it is set."""
    import shutil

    target = os.environ.get("JUDGE_ARTIFACTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(target) / name)


def rgb_pixels(png: Path) -> Any:
    """A PNG as an (height, width, 3) array of 0-255 integers."""
    import matplotlib.image as mpimg

    return (mpimg.imread(png)[:, :, :3] * 255).round().astype(int)


def colour_count(pixels: Any, colour: tuple[int, int, int], tolerance: int = 6) -> int:
    """Pixels within `tolerance` of `colour` on every channel."""
    import numpy as np

    return int(np.all(np.abs(pixels - np.array(colour)) <= tolerance, axis=-1).sum())


def assert_marks_rebuild(text: str, out: str, marks: Any, placeholder: str) -> None:
    """`out` is `text` with each of the scrubber's `marks` (in order, not overlapping)
    replaced by `placeholder`, and nothing else changed."""
    stitched, last = [], 0
    for mark in marks:
        assert mark.start >= last
        stitched += [text[last : mark.start], placeholder]
        last = mark.end
    assert out == "".join(stitched) + text[last:]
