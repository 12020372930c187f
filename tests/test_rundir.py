"""One owner for a run directory (issue 11): its lock keeps one command per run dir, and a
prepare interrupted at any point leaves a dir the next `judge run` completes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge import RunDir, RunStore
from judge.errors import RunDirBusy
from judge.simulator import SimulatorConfig, running_simulator
from tests.helpers import REPO, run_cli, run_cli_here
from tests.test_runner import judge_entry, write_dataset


def _dataset(tmp_path: Path, n: int = 40) -> tuple[Path, Path]:
    return write_dataset(
        tmp_path,
        n,
        {
            "sys-a": lambda i: f"Answer {i} from a, at some length.",
            "sys-b": lambda i: f"B says {i}.",
        },
    )


def _config(tmp_path: Path, judges: list[dict[str, Any]], **extra: Any) -> Path:
    """A run config without a fixed secret: each fresh prepare draws its own."""
    items, responses = _dataset(tmp_path)
    config = {
        "name": "t",
        "data": {"items": str(items), "responses": str(responses)},
        "blinding": {"seed": 3},
        "rubric": "pairwise_general",
        "judges": judges,
        **extra,
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _simulated(tmp_path: Path) -> Path:
    """Judged by the simulator the run starts itself (`base_url: simulator`)."""
    return _config(
        tmp_path,
        [{"model": "openai/sim-gpt", "base_url": "simulator", "transport": "http"}],
        simulator={"seed": 1},
    )


# --------------------------------------------------------------------------- the lock


def test_the_lock_is_exclusive_and_reentrant_within_a_thread(tmp_path: Path) -> None:
    rundir = RunDir(tmp_path / "run")
    seen: list[BaseException | None] = []

    def other_thread() -> None:
        try:
            with rundir.locked():
                seen.append(None)
        except RunDirBusy as exc:
            seen.append(exc)

    with rundir.locked(), rundir.locked():  # re-entered by its holder
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert isinstance(seen[0], RunDirBusy) and seen[0].pid == os.getpid()
    assert f"is in use by process {os.getpid()}" in str(seen[0])
    with rundir.locked():  # released on leaving
        pass


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    rundir = RunDir(tmp_path / "run")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from judge.store.rundir import RunDir\n"
            f"with RunDir({str(rundir.path)!r}).locked():\n"
            "    print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(RunDirBusy) as busy, rundir.locked():
        pass
    assert busy.value.pid == holder.pid
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with rundir.locked(wait_s=5):
        pass


@pytest.mark.parametrize("command", ["run", "prepare", "report"])
def test_a_command_on_a_run_dir_in_use_exits_2_naming_the_holder(
    tmp_path: Path, command: str
) -> None:
    config = _config(tmp_path, [])
    run_dir = tmp_path / "run"
    assert run_cli_here("prepare", str(config), "--run-dir", str(run_dir)).returncode == 0
    args = [str(run_dir)] if command == "report" else [str(config), "--run-dir", str(run_dir)]
    with RunDir(run_dir).locked():
        result = run_cli(command, *args)
    assert result.returncode == 2, result.stderr
    message = result.stderr.strip()
    assert message.startswith(f"error: run dir {run_dir} is in use by process {os.getpid()} (")
    assert message.endswith(
        "): wait for it to finish, or choose another run dir (--run-dir, run_dir=)"
    )
    assert "\n" not in message
    assert "Traceback" not in result.stderr


def test_two_runs_at_once_on_one_dir_pay_once(tmp_path: Path) -> None:
    """Two `judge run` started together on a fresh dir: one does the work, the other exits 2;
    the simulator answers each request once."""
    items, responses = _dataset(tmp_path, 60)
    with running_simulator(
        SimulatorConfig(seed=2, latency={"kind": "fixed", "median_s": 0.01})
    ) as sim:
        config = tmp_path / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "name": "t",
                    "data": {"items": str(items), "responses": str(responses)},
                    "rubric": "pairwise_general",
                    "judges": [judge_entry(sim, "openai/sim-gpt", max_connections=4)],
                }
            ),
            encoding="utf-8",
        )
        cmd = [sys.executable, "-m", "judge.cli", "run", str(config), "--quiet"]
        cmd += ["--run-dir", str(tmp_path / "run")]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        procs = [
            subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(3)
        ]
        results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
        answered = sim.stats()["answered"]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2, 2], results
    for code, _, err in results:
        if code == 2:
            assert "is in use by process" in err and "Traceback" not in err
    with RunStore.open(tmp_path / "run") as store:
        counts = store.counts()
    assert counts["requests"] == 120 and counts["pending"] == 0
    assert answered == counts["requests"]


# --------------------------------------------------------------------------- crash-safe prepare


def test_key_written_but_nothing_stored_resumes(tmp_path: Path) -> None:
    """A prepare killed between the key and the first row: the next run keeps the key's ids."""
    config = _simulated(tmp_path)
    rundir = RunDir(tmp_path / "run")
    assert run_cli_here("prepare", str(config), "--run-dir", str(rundir.path)).returncode == 0
    key = rundir.read_key()
    rundir.discard_store()
    result = run_cli_here("run", str(config), "--run-dir", str(rundir.path), "--quiet")
    assert result.returncode == 0, result.stderr
    assert rundir.read_key() == key
    with rundir.open_store() as store:
        assert {b.blind_id for b in store.iter_blinded()} == set(key.systems)


def test_requests_without_a_key_are_prepared_afresh(tmp_path: Path) -> None:
    """The state a prepare killed after its rows but before the key used to leave (issue 11's
    reproduction): nothing judged yet, so the run is prepared again, with no doubled rows."""
    config = _simulated(tmp_path)
    rundir = RunDir(tmp_path / "run")
    assert run_cli_here("prepare", str(config), "--run-dir", str(rundir.path)).returncode == 0
    with rundir.open_store() as store:
        planned = store.counts()["requests"]
    rundir.key_file.unlink()
    result = run_cli_here("run", str(config), "--run-dir", str(rundir.path), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "preparing the run afresh" not in result.stdout  # it is a log line: --quiet
    with rundir.open_store() as store:
        counts = store.counts()
    assert counts["requests"] == planned and counts["pending"] == 0
    assert json.loads(rundir.summary_file.read_text())["counts"]["requests"] == planned


def test_a_lost_key_with_paid_replies_is_a_clear_error(tmp_path: Path) -> None:
    config = _simulated(tmp_path)
    rundir = RunDir(tmp_path / "run")
    assert (
        run_cli_here("run", str(config), "--run-dir", str(rundir.path), "--quiet").returncode == 0
    )
    rundir.key_file.unlink()
    result = run_cli_here("run", str(config), "--run-dir", str(rundir.path), "--quiet")
    assert result.returncode == 2
    assert "the blinding key is missing, but the store holds" in result.stderr
    assert "restore the key file" in result.stderr and "Traceback" not in result.stderr


def test_prepare_killed_at_any_instant_then_run_completes(tmp_path: Path) -> None:
    """kill -9 at spread instants of a first prepare (fresh dirs), each followed by the same
    `judge run`: every dir completes, with the planned number of requests.
    `scripts/kill_prepare.py` does the same on the bundled data, 30+ times."""
    config = _simulated(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    reference = run_cli("prepare", str(config), "--run-dir", str(tmp_path / "ref"))
    duration = time.monotonic() - started
    assert reference.returncode == 0
    with RunStore.open(tmp_path / "ref") as store:
        planned = store.counts()["requests"]
    for i, fraction in enumerate((0.6, 0.9)):
        run_dir = tmp_path / f"k{i}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "judge.cli", "prepare", str(config), "--run-dir", str(run_dir)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(duration * fraction)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        result = run_cli_here("run", str(config), "--run-dir", str(run_dir), "--quiet")
        assert result.returncode == 0, (fraction, result.stderr)
        with RunStore.open(run_dir) as store:
            counts = store.counts()
        assert counts["requests"] == planned and counts["pending"] == 0


def test_reading_a_dir_without_a_store_creates_none(tmp_path: Path) -> None:
    """`judge compare DIR` on a directory that only looks like a run (judgments, no store): a
    clear error, and no empty store left behind."""
    (tmp_path / "judgments.jsonl").write_text(
        json.dumps({"judge": "j", "item_id": "q1", "system_a": "a", "system_b": "b"}) + "\n"
    )
    result = run_cli_here("compare", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {tmp_path}: not a run directory (no store.sqlite)"
    assert not RunDir(tmp_path).has_store()


def test_a_summary_this_version_cannot_read_names_the_fix(tmp_path: Path) -> None:
    """A summary.json from an older version (a field it lacks) or a damaged one: a DataError
    naming the first problem and `judge report`, which rewrites it from the store."""
    from judge.errors import DataError

    rundir = RunDir(tmp_path)
    rundir.summary_file.write_text(json.dumps({"run": {"name": "x"}, "counts": {}}))
    with pytest.raises(DataError) as error:
        rundir.read_summary()
    assert "the first at run.question: Field required" in str(error.value)
    assert f"rewrite it with `judge report {tmp_path}`" in str(error.value)
