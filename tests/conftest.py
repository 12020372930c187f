"""Fixtures shared by test modules: the MT-Bench demo, run once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import REPO, run_cli


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`judge run configs/demo.yaml` through the real CLI: the run dir it wrote."""
    run_dir = tmp_path_factory.mktemp("demo") / "mt-bench-demo"
    result = run_cli(
        "run", str(REPO / "configs" / "demo.yaml"), "--run-dir", str(run_dir), "--quiet"
    )
    assert result.returncode == 0, result.stderr
    assert f"report: {run_dir / 'report.html'}" in result.stdout
    return run_dir
