"""Fixtures of the service suite: a real PostgreSQL server, the service database on either
backend, a live `judge serve` subprocess on loopback, tokens, and shared test data.

The PostgreSQL server is the Debian package's binaries (`/usr/lib/postgresql/*/bin`), started
once per session in a temporary directory; every test gets a database of its own. Missing
binaries fail the PostgreSQL half of the suite (CI installs them in `.ci/run`): they are never a
reason to skip.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from judge.simulator import SimulatorConfig, running_simulator
from tests.helpers import MT_BENCH, REPO, run_cli_here

SECRET_KEY = "sk-test-SECRET-" + secrets.token_hex(12)
"""Put in every server's environment as OPENAI_API_KEY: it must never come back out."""
BLINDING_SECRET = "ab" * 32
SYSTEMS = ["alpaca-13b", "llama-13b"]
BACKENDS = ["sqlite", "postgresql"]

# -- PostgreSQL --------------------------------------------------------------------------------


def _pg_bin() -> Path:
    override = os.environ.get("JUDGE_TEST_PG_BIN")
    candidates = [override] if override else sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    for directory in reversed(candidates):
        if directory and (Path(directory) / "initdb").exists():
            return Path(directory)
    pytest.fail(
        "PostgreSQL server binaries not found (looked for /usr/lib/postgresql/*/bin/initdb, or "
        "$JUDGE_TEST_PG_BIN): install them with `apt-get install postgresql` (.ci/run does). "
        "The service suite runs against PostgreSQL as well as SQLite and does not skip it.",
        pytrace=False,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server on a free loopback port; yields `postgresql://postgres@host:port`."""
    bin_dir = _pg_bin()
    root = Path(tempfile.mkdtemp(prefix="judge-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root: run it as nobody
        user = pwd.getpwnam("nobody")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "nobody", "--"]
    data, port = root / "data", free_port()
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}

    def pg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*as_user, *args], capture_output=True, text=True, env=env, cwd=root, check=False
        )

    init = pg(
        str(bin_dir / "initdb"),
        "-D",
        str(data),
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-sync",
    )
    if init.returncode != 0:
        pytest.fail(f"initdb failed: {init.stderr or init.stdout}", pytrace=False)
    options = f"-F -p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200"
    start = pg(
        str(bin_dir / "pg_ctl"),
        "-D",
        str(data),
        "-l",
        str(root / "log"),
        "-o",
        options,
        "-w",
        "-t",
        "60",
        "start",
    )
    if start.returncode != 0:
        log = (root / "log").read_text() if (root / "log").exists() else ""
        pytest.fail(f"PostgreSQL did not start: {start.stderr}{start.stdout}{log}", pytrace=False)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        pg(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def service_database(
    request: pytest.FixtureRequest, backend: str, directory: Path
) -> Iterator[str]:
    """A fresh, empty service database on `backend` (SQLite: a file in `directory`); a
    PostgreSQL one is dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{directory / 'service.sqlite'}"
        return
    import psycopg

    server = request.getfixturevalue("pg_server")
    name = "t_" + secrets.token_hex(6)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty service database on each backend."""
    with service_database(request, request.param, tmp_path) as url:
        yield url


def backend_of(url: str) -> str:
    return "postgresql" if url.startswith("postgresql") else "sqlite"


def make_token(db: str, name: str, *, admin: bool = False) -> str:
    from judge.service.auth import create_token
    from judge.service.db import make_engine

    engine = make_engine(db)
    try:
        return create_token(engine, name, admin=admin)[0]
    finally:
        engine.dispose()


# -- the live server ---------------------------------------------------------------------------


class LiveServer:
    """`judge serve` in a subprocess on loopback, with its stdout/stderr captured to a file."""

    def __init__(self, db: str, data_dir: Path, log: Path, args: list[str]) -> None:
        self.db, self.data_dir, self.log_path, self.args = db, data_dir, log, args
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> LiveServer:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "OPENAI_API_KEY": SECRET_KEY, "PYTHONPATH": str(REPO)}
        env.pop("COLUMNS", None)
        command = [
            sys.executable,
            "-m",
            "judge.cli",
            "serve",
            "--port",
            str(port),
            "--db",
            self.db,
            "--data-dir",
            str(self.data_dir),
            *self.args,
        ]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"judge serve exited:\n{self.log()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            time.sleep(0.1)
        raise RuntimeError(f"judge serve did not answer within 60 s:\n{self.log()}")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[Any]:
    """A factory: `live_server(db_url, *extra_flags)` starts a server; all stop at the end."""
    started: list[LiveServer] = []

    def start(db: str, *args: str, data_dir: Path | None = None) -> LiveServer:
        server = LiveServer(
            db, data_dir or tmp_path / "data", tmp_path / f"server-{len(started)}.log", list(args)
        )
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


def wait_for(client: httpx.Client, run_id: str, statuses: set[str], timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = client.get(f"/v1/runs/{run_id}").json()
        if info["status"] in statuses:
            return info
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} is still {info['status']} after {timeout} s: {info}")


# -- data and configs --------------------------------------------------------------------------


def judge_spec(base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "openai/sim-judge",
        "family": "simulated",
        "base_url": base_url,
        "transport": "http",
        "max_connections": 8,
        **extra,
    }


def run_config(base_url: str, **overrides: Any) -> dict[str, Any]:
    """The suite's run config: two MT-Bench systems (284 requests), a fixed blinding secret so
    runs of it are comparable item by item."""
    config: dict[str, Any] = {
        "name": "service-test",
        "data": {
            "items": "items.jsonl",
            "responses": "responses.jsonl.gz",
            "allow_empty_outputs": True,
            "systems": SYSTEMS,
        },
        "blinding": {"seed": 1, "secret": BLINDING_SECRET},
        "rubric": "pairwise_general",
        "judges": [judge_spec(base_url)],
        "compare": {"resamples": 2000},
        "calibration": {"resamples": 200},
    }
    config.update(overrides)
    return config


def upload_files(config: dict[str, Any], **extra: tuple[str, bytes]) -> dict[str, Any]:
    files = {
        "config": ("config.yaml", yaml.safe_dump(config).encode()),
        "items": ("items.jsonl", (MT_BENCH / "items.jsonl").read_bytes()),
        "responses": ("responses.jsonl.gz", (MT_BENCH / "responses.jsonl.gz").read_bytes()),
    }
    files.update(extra)
    return files


def write_labels(path: Path) -> Path:
    """Human labels for the suite's two systems: seeded random winners, two annotators."""
    items = [json.loads(line)["item_id"] for line in (MT_BENCH / "items.jsonl").open()]
    rng = random.Random(7)
    with path.open("w") as fh:
        for item_id in items:
            for annotator in ("h1", "h2"):
                winner = rng.choice([*SYSTEMS, "tie"])
                fh.write(
                    json.dumps(
                        {
                            "item_id": item_id,
                            "system_a": SYSTEMS[0],
                            "system_b": SYSTEMS[1],
                            "winner": winner,
                            "annotator": annotator,
                        }
                    )
                    + "\n"
                )
    return path


def read_judgments(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.open()]
    return sorted(rows, key=lambda r: (r["pair_id"], r["judge"]))


RUN_SPECIFIC = ("request_ab", "request_ba")
"""Judgment fields that differ between two runs of one config here: a request id hashes the
judge's endpoint, and each test's simulator listens on a port of its own."""


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Judgments in a fixed order, without the fields that name one run's requests."""
    kept = [{k: v for k, v in r.items() if k not in RUN_SPECIFIC} for r in rows]
    return sorted(kept, key=lambda r: (r["pair_id"], r["judge"]))


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        [sys.executable, "-m", "judge.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO,
        check=False,
    )


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The suite's config run by `judge run` (the CLI, no service), with human labels; plus
    what `judge compare --json` and `judge calibrate --json` print for it. The CLI's entry
    point is called in this process (`run_cli_here`): the same parsing, command and output,
    without three interpreter start-ups."""
    root = tmp_path_factory.mktemp("reference")
    labels = write_labels(root / "labels.jsonl")
    with running_simulator(SimulatorConfig(seed=1)) as sim:
        config = run_config(
            "simulator",
            data={
                "items": str(MT_BENCH / "items.jsonl"),
                "responses": str(MT_BENCH / "responses.jsonl.gz"),
                "allow_empty_outputs": True,
                "systems": SYSTEMS,
            },
            judges=[judge_spec(sim.openai_base_url)],
            calibration={"human": str(labels), "resamples": 200},
        )
        path = root / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        run_dir = root / "run"
        done = run_cli_here(
            "run",
            str(path),
            "--run-dir",
            str(run_dir),
            "--quiet",
            "--cache",
            str(root / "cache.sqlite"),
        )
        assert done.returncode == 0, done.stderr
        answered = sim.stats()["answered"]
    compared = run_cli_here(
        "compare",
        str(run_dir),
        "--json",
        "--resamples",
        "500",
        "--baseline",
        SYSTEMS[0],
        "--control",
        "length",
    )
    calibrated = run_cli_here(
        "calibrate",
        "--judge",
        str(run_dir),
        "--human",
        str(labels),
        "--json",
        "--resamples",
        "100",
        "--seed",
        "3",
    )
    assert compared.returncode in (0, 1) and calibrated.returncode == 0, calibrated.stderr
    return {
        "run_dir": run_dir,
        "labels": labels,
        "judgments": read_judgments(run_dir / "judgments.jsonl"),
        "summary": json.loads((run_dir / "summary.json").read_text()),
        "compare_cli": json.loads(compared.stdout),
        "calibrate_cli": json.loads(calibrated.stdout),
        "answered": answered,
    }


# The security suite's shared live service (registered here so both modules share it).
from tests.service.secured import secured_env  # noqa: E402, F401
