"""The worker process on its own (no server): what it writes to its log is redacted."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.helpers import REPO
from tests.service.conftest import SECRET_KEY
from tests.service.secured import config_for, small_dataset


def test_worker_tracebacks_are_redacted(tmp_path: Path) -> None:
    """An internal error prints its traceback to worker.log; a key in it (here in the run's
    path, as a third-party exception might quote one) is masked, as in the stored error.
    Before, `traceback.print_exc()` wrote it out as it was."""
    root = tmp_path / SECRET_KEY
    inputs = root / "inputs"
    inputs.mkdir(parents=True)
    small_dataset(inputs)
    config = config_for("simulator", simulator={"seed": 1})
    config["judges"][0]["base_url"] = "simulator"
    (inputs / "config.yaml").write_text(yaml.safe_dump(config))
    (root / "run").write_text("a file where the run directory goes")  # FileExistsError
    env = {**os.environ, "OPENAI_API_KEY": SECRET_KEY, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "judge.service.child",
            *("--root", str(root), "--cache", str(tmp_path / "cache.sqlite")),
            *("--parent-pid", str(os.getpid())),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" in done.stderr and "FileExistsError" in done.stderr, done.stderr
    assert SECRET_KEY not in done.stdout + done.stderr
    assert "[redacted]" in done.stderr
    outcome = json.loads((root / "worker.outcome.json").read_text())
    assert outcome["status"] == "failed" and SECRET_KEY not in outcome["error"]


def test_redacting_stream_masks_secrets_split_across_writes(monkeypatch) -> None:
    from judge.service.child import RedactingStream

    monkeypatch.setenv("SOME_SERVICE_TOKEN", SECRET_KEY)
    out = io.StringIO()
    stream = RedactingStream(out)
    half = len(SECRET_KEY) // 2
    stream.write(f"key {SECRET_KEY[:half]}")
    stream.write(f"{SECRET_KEY[half:]} in a line\nand https://user:pw12345678@host/ at the end")
    stream.flush()
    assert out.getvalue() == (
        "key [redacted] in a line\nand https://user:[redacted]@host/ at the end"
    )
