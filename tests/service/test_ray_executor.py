"""`judge serve --executor ray`: each run's worker judges it on a Ray cluster (here one it starts
on this machine for the run), and the service reports it as it does a local run. SQLite only:
where a run is judged does not depend on the service database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.service.layout import run_paths
from judge.simulator import SimulatorConfig, SimulatorHandle, running_simulator
from tests.helpers import REPO
from tests.service.conftest import cli, make_token, wait_for
from tests.service.secured import config_for, files_for, small_dataset


@pytest.fixture
def sim() -> Iterator[SimulatorHandle]:
    with running_simulator(SimulatorConfig(seed=3)) as handle:
        yield handle


def test_runs_are_judged_on_ray(live_server, sim: SimulatorHandle, tmp_path: Path) -> None:
    """A small run (10 pairs, 20 requests) submitted to a server started with --executor ray
    finishes with every request answered, none twice, and its worker says it judged on Ray."""
    db = f"sqlite:///{tmp_path / 'service.sqlite'}"
    server = live_server(db, "--executor", "ray", "--allow-base-url", sim.base_url)
    assert "judged on Ray (a local Ray cluster per run)" in server.log()
    small_dataset(tmp_path)
    client = server.client(make_token(db, "alice"))
    started = time.monotonic()
    created = client.post("/v1/runs", files=files_for(tmp_path, config_for(sim.openai_base_url)))
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    # Starting a Ray cluster takes seconds; a generous bound for a loaded machine.
    info = wait_for(client, run_id, {"finished", "failed", "cancelled"}, timeout=180)
    worker_log = run_paths(server.data_dir, run_id).log.read_text(errors="replace")
    assert info["status"] == "finished", (info, worker_log)
    progress = info["progress"]
    assert progress["total"] == progress["done"] == 20, progress
    assert progress["failed"] == 0 and progress["pending"] == 0
    # Each request answered once by the simulator: nothing sent twice. (Blinding masks the
    # system names in these outputs, so a pair's two orders are one request: cached.)
    stats = sim.stats()
    assert stats["duplicates"] == 0, stats
    assert stats["answered"] == 20 - progress["cached"] > 0, (stats, progress)
    assert "judging on Ray (address: local)" in worker_log, worker_log
    assert "judging locally" not in worker_log
    judgments = client.get(f"/v1/runs/{run_id}/judgments", params={"limit": 100}).json()
    assert judgments["total"] == 10
    print(f"ray run: {time.monotonic() - started:.1f} s")


def test_ray_address_needs_the_ray_executor(tmp_path: Path) -> None:
    done = cli("serve", "--ray-address", "auto", "--data-dir", str(tmp_path / "data"), timeout=60)
    assert done.returncode == 2, done.stderr
    assert "--ray-address" in done.stderr and "--executor ray" in done.stderr, done.stderr
    assert not (tmp_path / "data").exists()


def test_the_ray_executor_without_ray_names_the_install(tmp_path: Path) -> None:
    """Ray not importable: one line naming the extra, before the server starts."""
    code = (
        "import sys; sys.modules['ray'] = None; "
        "sys.argv = ['judge', 'serve', '--executor', 'ray', '--data-dir', sys.argv[1]]; "
        "from judge.cli.main import main; main()"
    )
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'judge-pipeline[ray]'" in lines[0], done.stderr
    assert not (tmp_path / "data").exists()
