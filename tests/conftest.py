"""Fixtures shared by test modules (the MT-Bench demo, run once per session), and how the suite
is spread over xdist's workers (tests/scheduling.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import REPO, run_cli
from tests.scheduling import DurationRecorder, LongestFirst


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help="after a passing run, write each test file's time to tests/durations.json "
        "(the order `--dist loadfile` hands files to workers: longest first)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # On the controller (or a run without xdist) only: workers report to it.
    if config.getoption("record_durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(DurationRecorder(), "judge-durations")
    # The scheduler hook is xdist's: registered only when xdist is loaded (`-p no:xdist`
    # would otherwise refuse an unknown hook).
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(Scheduling(), "judge-scheduling")


class Scheduling:
    def pytest_xdist_make_scheduler(
        self, config: pytest.Config, log: object
    ) -> LongestFirst | None:
        if config.getoption("dist") != "loadfile":
            return None  # xdist's own scheduler for the other modes
        return LongestFirst(config, log)


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
