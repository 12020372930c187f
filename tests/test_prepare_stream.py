"""Prepare streams a chunk of items at a time: the output does not depend on the chunk size, a
prepare stopped between chunks is completed by the next one, and `judge run` sends its first
requests while later chunks are still being prepared."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge import RunDir, load_config
from judge.errors import ConfigError
from judge.hashing import content_hash
from judge.run import run_pipeline
from judge.run.prepare import prepare_locked, prepare_run
from judge.run.prepared import HOW_SENT_KEYS
from judge.simulator import SimulatorConfig, running_simulator
from tests.helpers import REPO
from tests.test_runner import judge_entry, write_config, write_dataset

MT_BENCH = REPO / "data" / "mt_bench"
OUTPUTS = ("blinding_key.json", "blinded.jsonl", "pairs.jsonl", "scrub_report.json")


_DATA = {
    "items": str(MT_BENCH / "items.jsonl"),
    "responses": str(MT_BENCH / "responses.jsonl.gz"),
    "allow_empty_outputs": True,
    "systems": ["gpt-4", "vicuna-13b-v1.2", "llama-13b", "alpaca-13b"],
}


def _config(root: Path, **overrides: Any) -> Path:
    """The demo data: four systems against a baseline, with canaries (every path of the
    chunk loop: data.systems, skipped pairs, canary items, flags)."""
    config: dict[str, Any] = {
        "name": "stream",
        "data": _DATA,
        "blinding": {"seed": 3, "secret": "ab" * 32},
        "pairs": {"mode": "baseline", "baseline": "vicuna-13b-v1.2"},
        "rubric": "pairwise_general",
        "judges": [
            {"model": "openai/sim-gpt", "base_url": "http://127.0.0.1:9", "transport": "http"},
            {"model": "anthropic/sim-claude", "base_url": "http://127.0.0.1:9"},
        ],
        "orders": "both",
        "canaries": {"items": 20},
        **overrides,
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _written(run_dir: Path) -> dict[str, Any]:
    """Everything a prepare wrote, byte for byte, in row order (timestamps and the
    environment record aside)."""
    out: dict[str, Any] = {name: (run_dir / name).read_bytes() for name in OUTPUTS}
    db = sqlite3.connect(run_dir / "store.sqlite")
    for table in ("items", "blinded_responses", "pairs", "judge_requests"):
        columns = [
            f'"{r[1]}"' for r in db.execute(f"PRAGMA table_info({table})") if r[1] != "created_at"
        ]
        out[table] = db.execute(
            f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid"
        ).fetchall()
    out["meta"] = db.execute(
        "SELECT * FROM run_meta WHERE key NOT IN ('environment', 'created_at') ORDER BY key"
    ).fetchall()
    db.close()
    assert not (run_dir / "prepare-staging.sqlite").exists()
    assert not (run_dir / "blinding_key.log.jsonl").exists()
    return out


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One chunk holding every item: what an unchunked prepare writes."""
    root = tmp_path_factory.mktemp("whole")
    config = load_config(_config(root))
    summary = prepare_run(config, root / "run", chunk_items=10**6)
    assert summary.canary_requests > 0 and summary.skipped_pairs > 0
    return root, _written(root / "run")


def test_chunk_size_changes_nothing(whole: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    config = load_config(_config(tmp_path))
    prepare_run(config, tmp_path / "run", chunk_items=7)
    chunked = _written(tmp_path / "run")
    expected = whole[1]
    assert chunked.keys() == expected.keys()
    for name in expected:
        assert chunked[name] == expected[name], name


def test_a_stopped_prepare_is_completed_by_the_next(
    whole: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    config = load_config(_config(tmp_path))
    run_dir = RunDir(tmp_path / "run")
    stop = threading.Event()
    chunks: list[int] = []

    def stored(requests: Any, total: int) -> None:
        chunks.append(len(requests))
        assert total == sum(chunks)
        if len(chunks) == 3:
            stop.set()

    with pytest.raises(KeyboardInterrupt):
        prepare_locked(config, run_dir, chunk_items=11, on_stored=stored, stop=stop)
    assert len(chunks) == 3
    # Stopped mid-way: the ids of what was stored are in the key log, the key file is not
    # written yet and the store is not marked prepared.
    assert run_dir.key_log_file.exists() and not run_dir.key_file.exists()
    with run_dir.open_store() as store:
        assert store.get_meta("config_hash") is None
        assert store.counts()["requests"] == sum(chunks)
    key = run_dir.read_key()
    with run_dir.open_store() as store:
        named = {r.blind_id for r in store.iter_blinded()}
    assert named and named <= set(key.systems)
    prepare_run(config, run_dir, chunk_items=11)
    resumed = _written(run_dir.path)
    for name, value in whole[1].items():
        assert resumed[name] == value, name


def test_a_prepared_run_dir_is_not_prepared_again(tmp_path: Path) -> None:
    """Every resumed `judge run` starts with a prepare: from the same config and input bytes
    it returns the recorded summary and writes nothing; a blinding table gone, or an input
    file changed in place, prepares again (and stores only what is new)."""
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(MT_BENCH / "items.jsonl", data / "items.jsonl")
    with gzip.open(MT_BENCH / "responses.jsonl.gz", "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    responses = data / "responses.jsonl"
    # Item 82-t1's llama-13b answer is left out, to be added later.
    kept = [r for r in rows if (r["item_id"], r["system"]) != ("82-t1", "llama-13b")]
    assert len(kept) == len(rows) - 1
    responses.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    files = {"items": str(data / "items.jsonl"), "responses": str(responses)}
    config = load_config(_config(tmp_path, canaries=None, data={**_DATA, **files}))
    run_dir = tmp_path / "run"
    first = prepare_run(config, run_dir)
    written = _written(run_dir)
    # The files a prepare writes whole (the store's rows are compared below; opening it
    # checkpoints its log, and the lock file is touched by every lock).
    before = {name: (run_dir / name).stat().st_mtime_ns for name in OUTPUTS}
    said: list[str] = []
    again = prepare_run(config, run_dir, log=said.append)
    assert said[-1] == "prepared already, from the same config and input files"
    assert "blinding, pairing" not in " ".join(said)
    assert again == first
    assert {name: (run_dir / name).stat().st_mtime_ns for name in OUTPUTS} == before
    assert _written(run_dir) == written

    (run_dir / "pairs.jsonl").unlink()
    said.clear()
    assert prepare_run(config, run_dir, log=said.append) == first
    assert "prepared already" not in " ".join(said) and _written(run_dir) == written

    responses.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    said.clear()
    grown = prepare_run(config, run_dir, log=said.append)
    assert "prepared already" not in " ".join(said)
    assert grown.responses == first.responses + 1 and grown.requests > first.requests
    with RunDir(run_dir).open_store() as store:
        assert store.request_count() == grown.requests


def test_judging_starts_before_prepare_ends(tmp_path: Path) -> None:
    """Judging starts once the first chunk (8 items) is stored, with the prepare still
    running: the store then holds a few requests of the 600, and the runner follows the rest
    as they are stored."""
    items, responses = write_dataset(
        tmp_path, 300, {"sys-a": lambda i: f"Answer {i} from a.", "sys-b": lambda i: f"B {i}."}
    )
    said: list[str] = []
    with running_simulator(SimulatorConfig(seed=2)) as sim:
        judge = judge_entry(sim, "openai/sim-alpha", max_connections=8)
        config = load_config(write_config(tmp_path, items, responses, judges=[judge]))
        outcome = run_pipeline(config, tmp_path / "run", log=said.append)
    started = [m for m in said if m.startswith("judging requests as they are prepared")]
    assert len(started) == 1, said
    stored = int(started[0].split("(")[1].split()[0].replace(",", ""))
    assert 0 < stored < 600
    assert outcome.summary.counts.requests == 600
    assert outcome.summary.counts.pending == 0


_KILLED_PARENT = """
import os, signal, sys
from pathlib import Path
from judge.config.run_config import load_config
from judge.errors import ConfigError
from judge.store.rundir import RunDir
from judge.run.prepare_process import PrepareProcess

config = load_config(sys.argv[1])
prepare = PrepareProcess(config, RunDir(sys.argv[2]), log=lambda _m: None)
prepare.start()
prepare.wait_started()
print(prepare._process.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_prepare_process_dies_with_its_parent(tmp_path: Path) -> None:
    """`judge run` killed with -9 while its prepare process works: the prepare does not go on
    writing a run dir whose lock is gone (the next run would prepare beside it)."""
    import os
    import subprocess
    import sys

    items, responses = write_dataset(
        tmp_path, 3000, {"sys-a": lambda i: f"Answer {i} from a.", "sys-b": lambda i: f"B {i}."}
    )
    judge = {"model": "openai/sim-alpha", "base_url": "http://127.0.0.1:9", "transport": "http"}
    config = write_config(tmp_path, items, responses, judges=[judge])
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_PARENT, str(config), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    child = int(done.stdout.split()[0])
    assert _gone(child, 10), f"the prepare process {child} outlived its parent"
    with RunDir(tmp_path / "run").open_store() as store:
        assert store.get_meta("config_hash") is None  # stopped part-way, as the kill left it


def test_a_key_log_cut_mid_line_is_completed_by_the_next_prepare(tmp_path: Path) -> None:
    """A kill in the middle of a chunk's log write leaves a cut last line: the next writer cuts
    it off before appending (the cut entry's rows were never stored), so the key stays
    readable; a log cut inside its secret line counts as no key at all."""
    run_dir = RunDir(tmp_path / "run")
    run_dir.path.mkdir()
    writer = run_dir.key_writer("cd" * 32, None)
    writer.add_response("b1", "sysA")
    writer.flush()
    writer.close()
    with run_dir.key_log_file.open("a", encoding="utf-8") as fh:
        fh.write('{"r": ["b2", "sy')  # the kill
    assert run_dir.read_key().systems == {"b1": "sysA"}
    writer = run_dir.key_writer("cd" * 32, None)
    writer.add_response("b2", "sysB")
    writer.flush()
    writer.close()
    assert run_dir.read_key().systems == {"b1": "sysA", "b2": "sysB"}
    writer = run_dir.key_writer("cd" * 32, None)
    writer.finish()
    assert not run_dir.key_log_file.exists()
    assert run_dir.read_key().systems == {"b1": "sysA", "b2": "sysB"}

    other = RunDir(tmp_path / "other")
    other.path.mkdir()
    other.key_log_file.write_text('{"secret": "cd')  # killed before the secret's newline
    assert not other.has_key()
    writer = other.key_writer("ef" * 32, None)
    writer.add_pair("p1", "b1", "b2")
    writer.flush()
    writer.close()
    key = other.read_key()
    assert (key.blinding_secret, key.pairs) == ("ef" * 32, {"p1": ("b1", "b2")})


def test_a_run_prepared_by_an_earlier_version_resumes(tmp_path: Path) -> None:
    """Earlier versions hashed each judge's transport into the config hash, as `sdk` unless
    the config said otherwise; the transport now defaults to `http` and is not hashed. Their
    runs resume; a config that really changed is still refused, and so is a changed rubric."""
    judge = {"model": "anthropic/sim-claude", "base_url": "http://127.0.0.1:9"}  # no transport
    config = load_config(_config(tmp_path, canaries=None, judges=[judge]))
    run_dir = tmp_path / "run"
    prepare_run(config, run_dir)
    # What an earlier version stored: the hash of the config's dump with its default filled in,
    # from before judges had the keys of how they are sent and priced (issue 17).
    dump = config.model_dump(mode="json")
    dump["judges"][0]["transport"] = "sdk"
    for key in HOW_SENT_KEYS:
        del dump["judges"][0][key]
    del dump["compare"]["control"]  # nor compare.control (issue 19)
    del dump["data"]["columns"]  # nor data.columns (issue 30)
    del dump["data"]["source"]  # nor data.source (issue 34)
    with RunDir(run_dir).open_store() as store:
        store.set_meta("config_hash", content_hash(dump))
        store.set_meta("prepared", None)  # nor did it record its inputs' fingerprint
    (run_dir / "pairs.jsonl").unlink()
    said: list[str] = []
    prepare_run(config, run_dir, log=said.append)
    assert (run_dir / "pairs.jsonl").exists() and "prepared already" not in " ".join(said)

    # Sent another way (batch mode, no cache breakpoint) or priced otherwise: the same run.
    batched = {**judge, "mode": "batch", "prompt_cache": False, "batch_discount": 0.4}
    prepare_run(load_config(_config(tmp_path, canaries=None, judges=[batched])), run_dir)

    moved = load_config(_config(tmp_path, canaries=None, judges=[{**judge, "max_connections": 3}]))
    with pytest.raises(ConfigError, match="different config"):
        prepare_run(moved, run_dir)

    rubric = yaml.safe_load((REPO / "rubrics" / "pairwise_general.yaml").read_text())
    rubric["system"] += "\nBe brief."
    edited = tmp_path / "pairwise_general.yaml"
    edited.write_text(yaml.safe_dump(rubric))
    other = load_config(_config(tmp_path, canaries=None, judges=[judge], rubric=str(edited)))
    with RunDir(run_dir).open_store() as store:  # the config names another file: same hash
        store.set_meta("config_hash", None)
    with pytest.raises(ConfigError, match="another version of rubric"):
        prepare_run(other, run_dir)


def test_a_prepare_that_fails_midway_stops_the_judging(tmp_path: Path) -> None:
    """The prepare stores chunks while the runner judges them; when a later chunk fails (here
    the last item lacks the reference its rubric needs), judging stops at once instead of
    sending everything already stored, and the run raises the prepare's error."""
    items, responses = write_dataset(
        tmp_path, 200, {"sys-a": lambda i: f"Answer {i} from a.", "sys-b": lambda i: f"B {i}."}
    )
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    for row in rows:
        if row["item_id"] != "q99":  # the last in item order
            row["reference"] = "The expected answer."
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    slow = SimulatorConfig(seed=2, latency={"kind": "fixed", "median_s": 0.5})
    with running_simulator(slow) as sim:
        judge = judge_entry(sim, "openai/sim-alpha", max_connections=2)
        config = load_config(
            write_config(tmp_path, items, responses, judges=[judge], rubric="pairwise_reference")
        )
        with pytest.raises(ConfigError, match="needs a reference answer, but item 'q99' has none"):
            run_pipeline(config, tmp_path / "run")
    db = sqlite3.connect(tmp_path / "run" / "store.sqlite")
    ((requests,),) = db.execute("SELECT COUNT(*) FROM judge_requests").fetchall()
    ((replies,),) = db.execute("SELECT COUNT(*) FROM judge_responses").fetchall()
    # Two connections at 0.5 s: a few requests answered before the failure, far from all.
    assert requests > 100 and replies < 40


_SPARE_PARENT = """
import os, signal, sys
from judge.run import prepare_process

prepare_process.start_spare()
spare = prepare_process._spare
print(spare.process.pid, "fork" if spare.process._popen.method == "fork" else "spawn", flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _gone(pid: int, within_s: float) -> bool:
    import os
    import time

    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with open(f"/proc/{pid}/stat") as stat:  # a zombie (reaped by init soon) is dead
            if stat.read().split(") ")[1].startswith("Z"):
                return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_an_unused_spare_prepare_process_ends_with_its_parent(how: str) -> None:
    """`judge run` starts its prepare process before it reads its config (forked: nothing
    else runs yet); a run that never prepares (a config error, a busy run dir) or dies leaves
    no process behind."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _SPARE_PARENT, how],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert done.returncode == (-9 if how == "kill" else 0), done.stderr
    pid, method = done.stdout.split()
    assert method == "fork"
    assert _gone(int(pid), 10), f"the spare prepare process {pid} outlived its parent"


def test_the_childs_last_word_is_read_when_it_arrives_as_the_child_ends() -> None:
    """The child flushes its last event and exits; the parent's wait can give up just before
    the event lands and then see the exit. It reads on before calling the child silent (a
    loaded `make test` saw "ended without a word (exit code 0)" from a prepare that had
    finished)."""
    import queue
    import time
    from types import SimpleNamespace

    from judge.run.prepare_process import PrepareProcess

    events: queue.Queue = queue.Queue()
    ended = SimpleNamespace(is_alive=lambda: False, exitcode=0)  # already gone
    prepare = PrepareProcess.__new__(PrepareProcess)
    PrepareProcess.__init__(prepare, None, SimpleNamespace(path=Path("run")), lambda _: None)  # type: ignore[arg-type]
    prepare._child = SimpleNamespace(events=events, process=ended)  # type: ignore[assignment]
    late = threading.Timer(0.3, lambda: events.put(("done", "summary")))  # after the 0.2 s wait
    late.start()
    started = time.monotonic()
    prepare._listen()
    assert prepare._outcome == {"done": "summary"} and time.monotonic() - started < 1.0
    # Nothing at all: still the error, after the wait for a last word.
    silent = PrepareProcess.__new__(PrepareProcess)
    PrepareProcess.__init__(silent, None, SimpleNamespace(path=Path("run")), lambda _: None)  # type: ignore[arg-type]
    silent._child = SimpleNamespace(events=queue.Queue(), process=ended)  # type: ignore[assignment]
    silent._listen()
    assert "ended without a word (exit code 0)" in str(silent._outcome["error"])
