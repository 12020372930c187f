"""SIGKILL the server mid-run, start it again on the same database and data dir: the run
finishes, nothing is lost, and nothing is paid twice beyond what was in flight at the kill
(simulator counts). The killed server's worker must die with it: were it left judging while
the new server starts another, every remaining request would be paid twice."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from judge.simulator import SimulatorConfig, running_simulator
from tests.service.conftest import (
    backend_of,
    comparable,
    judge_spec,
    make_token,
    run_config,
    upload_files,
    wait_for,
)

CONNECTIONS = 4


def workers_of(run_id: str) -> list[int]:
    """Live worker processes of this run (by command line), zombies excluded."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"judge.service.child" in cmdline and run_id.encode() in cmdline and state != "Z":
            pids.append(int(proc.name))
    return pids


# The database's part (running -> queued on start, the claim) is the same SQL on both backends,
# and test_e2e's cancel/resume exercises it on PostgreSQL: this long test runs on SQLite only.
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_sigkilled_server_resumes_without_paying_twice(db_url, live_server, reference) -> None:
    backend = backend_of(db_url)
    token = make_token(db_url, "alice")
    slow = SimulatorConfig(seed=1, latency={"kind": "fixed", "median_s": 0.08})
    with running_simulator(slow) as sim:
        flags = ("--allow-base-url", sim.base_url)
        server = live_server(db_url, *flags)
        client = server.client(token)
        spec = judge_spec(sim.openai_base_url, max_connections=CONNECTIONS)
        config = run_config(sim.openai_base_url, judges=[spec])
        # Labels come with the submission: the worker applies them when the run finishes.
        labels = ("labels.jsonl", reference["labels"].read_bytes())
        run = client.post("/v1/runs", files=upload_files(config, labels=labels))
        assert run.status_code == 201, run.text
        run_id, total = run.json()["id"], run.json()["progress"]["total"]
        # Kill once a quarter of the requests is answered: well before the end.
        while (info := client.get(f"/v1/runs/{run_id}").json())["progress"]["done"] < total // 4:
            assert info["status"] in ("queued", "running"), info
            time.sleep(0.02)
        workers = workers_of(run_id)
        assert len(workers) == 1, workers
        server.kill()
        done_at_kill = info["progress"]["done"]
        # Its worker dies with it (parent-death signal), flushing what it holds, long before
        # the run could have finished (~4 s of judging left).
        killed_at = time.monotonic()
        while workers_of(run_id) and time.monotonic() < killed_at + 3:
            time.sleep(0.02)
        assert workers_of(run_id) == [], "the killed server's worker is still running"
        worker_gone_s = time.monotonic() - killed_at
        at_restart = sim.stats()["answered"]
        # The latency only had to outlast the kill: the restarted worker's requests are
        # answered at once (what was in flight at the kill has been counted by now).
        sim.update(latency={"median_s": 0.0})
        restarted = live_server(db_url, *flags, data_dir=server.data_dir)
        client = restarted.client(token)
        info = wait_for(client, run_id, {"finished", "failed", "cancelled"})
        stats = sim.stats(hashes=True)
    assert info["status"] == "finished", info
    assert info["attempts"] == 2  # one worker before the kill, one after the restart
    progress = info["progress"]
    assert progress["total"] == total and progress["pending"] == 0 and progress["failed"] == 0
    # Nothing lost: the same judgments as the uninterrupted `judge run`.
    rows = client.get(f"/v1/runs/{run_id}/judgments", params={"limit": 1000}).json()["items"]
    assert comparable(rows) == comparable(reference["judgments"])
    # The labels given at submission were applied after the restart, as `judge run` would.
    calibration = client.get(f"/v1/runs/{run_id}/calibration").json()
    expected = reference["summary"]["calibration"]
    assert {k: v for k, v in calibration.items() if k != "human_labels"} == {
        k: v for k, v in expected.items() if k != "human_labels"
    }
    # Nothing paid twice but what was in flight when the worker was stopped.
    needed = total - progress["cached"]
    assert len(stats["answered_by_hash"]) == needed
    assert stats["answered"] == needed + stats["duplicates"]
    assert stats["duplicates"] <= CONNECTIONS
    print(
        f"\n[{backend}] killed at {done_at_kill}/{total} done ({at_restart} answered when its "
        f"worker had exited, {worker_gone_s:.2f} s after the kill); "
        f"after restart: {needed} distinct requests needed, {stats['answered']} answered, "
        f"{stats['duplicates']} answered twice (bound: {CONNECTIONS} in flight), "
        f"{stats['requests']} HTTP requests"
    )


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_graceful_stop_requeues_and_the_next_server_finishes(
    db_url, live_server, reference
) -> None:
    """SIGTERM (or Ctrl-C): the server stops its workers, which flush, and leaves the run
    queued in the database; the next server finishes it."""
    from sqlalchemy import select

    from judge.service.db import make_engine, runs

    token = make_token(db_url, "erin")
    slow = SimulatorConfig(seed=1, latency={"kind": "fixed", "median_s": 0.05})
    with running_simulator(slow) as sim:
        flags = ("--allow-base-url", sim.base_url)
        server = live_server(db_url, *flags)
        client = server.client(token)
        spec = judge_spec(sim.openai_base_url, max_connections=CONNECTIONS)
        run = client.post(
            "/v1/runs", files=upload_files(run_config(sim.openai_base_url, judges=[spec]))
        ).json()
        while client.get(f"/v1/runs/{run['id']}").json()["progress"]["done"] < 40:
            time.sleep(0.02)
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises the signal (exit status -SIGTERM).
        assert server.process.wait(20) == -signal.SIGTERM
        assert "Application shutdown complete" in server.log()
        assert workers_of(run["id"]) == []
        engine = make_engine(db_url)
        with engine.connect() as conn:
            status = conn.execute(select(runs.c.status).where(runs.c.id == run["id"])).scalar()
        engine.dispose()
        assert status == "queued"
        sim.update(latency={"median_s": 0.0})  # it only had to outlast the stop
        client = live_server(db_url, *flags, data_dir=server.data_dir).client(token)
        info = wait_for(client, run["id"], {"finished", "failed", "cancelled"})
        stats = sim.stats()
    assert info["status"] == "finished" and info["attempts"] == 2
    rows = client.get(f"/v1/runs/{run['id']}/judgments", params={"limit": 1000}).json()["items"]
    assert comparable(rows) == comparable(reference["judgments"])
    assert (
        stats["answered"]
        == info["progress"]["total"] - info["progress"]["cached"] + stats["duplicates"]
    )
    assert stats["duplicates"] <= CONNECTIONS
