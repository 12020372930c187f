"""Fairness between tokens: how long one tenant's run waits behind another tenant's slow runs.

Starts `judge serve` (SQLite, two worker slots) twice: with no per-token cap
(`--max-running-per-token 2`) and with the default cap (one slot per token). Each time tenant
"slow" submits two runs whose judge (the run's own simulator) takes `--latency` seconds a
request, one request at a time, and then tenant "other" submits a run whose judge answers at
once. Prints the other run's queue time (created -> started, the server's own timestamps) and
its time to finish.

Without the cap the slow tenant holds both slots and the other run waits for one of its runs
to end; with it, the other run starts within a scheduler round or two: a tenant delays another
by no more than the slots it may hold.

    .venv/bin/python bench/service_fairness.py [--latency 0.5] [--items 10]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import yaml

REPO = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _dataset(root: Path, items: int) -> dict[str, tuple[str, bytes]]:
    """`items` items answered by two systems: `items` pairs, twice as many requests."""
    rows = [{"item_id": f"q{i}", "prompt": f"Question {i}?"} for i in range(items)]
    answers = [
        {"item_id": f"q{i}", "system": system, "output": f"{system} answers {i}."}
        for i in range(items)
        for system in ("sys-a", "sys-b")
    ]
    return {
        "items": ("items.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode()),
        "responses": ("responses.jsonl", "".join(json.dumps(r) + "\n" for r in answers).encode()),
    }


def _config(latency_s: float) -> bytes:
    config = {
        "name": f"latency-{latency_s:g}",
        "data": {"items": "items.jsonl", "responses": "responses.jsonl"},
        "rubric": "pairwise_general",
        "judges": [
            {
                "model": "openai/sim-judge",
                "family": "simulated",
                "base_url": "simulator",
                "transport": "http",
                "max_connections": 1,
            }
        ],
        "simulator": {"seed": 1, "latency": {"kind": "fixed", "median_s": latency_s}},
        "compare": {"resamples": 200},
    }
    return yaml.safe_dump(config).encode()


@contextlib.contextmanager
def _server(root: Path, flags: list[str]) -> Iterator[tuple[str, dict[str, str]]]:
    """`judge serve` on loopback; yields its URL and a token per tenant."""
    from judge.service.auth import create_token
    from judge.service.db import make_engine

    db = f"sqlite:///{root / 'service.sqlite'}"
    engine = make_engine(db)
    tokens = {name: create_token(engine, name)[0] for name in ("slow", "other")}
    engine.dispose()
    port = _free_port()
    command = [sys.executable, "-m", "judge.cli", "serve", "--port", str(port), "--db", db]
    command += ["--data-dir", str(root / "data"), "--max-running", "2", *flags]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with (root / "server.log").open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError((root / "server.log").read_text())
            time.sleep(0.1)
        yield url, tokens
    finally:
        process.terminate()
        process.wait(30)


def _submit(client: httpx.Client, data: dict[str, Any], latency_s: float) -> str:
    files = {"config": ("config.yaml", _config(latency_s)), **data}
    created = client.post("/v1/runs", files=files)
    created.raise_for_status()
    return str(created.json()["id"])


def _wait(client: httpx.Client, run_id: str, statuses: set[str], timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        info = client.get(f"/v1/runs/{run_id}").json()
        if info["status"] in statuses:
            return dict(info)
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run_id} still {info['status']} after {timeout} s")
        time.sleep(0.05)


def _seconds(start: str, end: str | None) -> float:
    if end is None:
        return float("nan")
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def measure(flags: list[str], latency_s: float, items: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp, _server(Path(tmp), flags) as (url, tokens):
        data = _dataset(Path(tmp), items)
        slow = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {tokens['slow']}"})
        other = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {tokens['other']}"}, timeout=30
        )
        slow_runs = [_submit(slow, data, latency_s) for _ in range(2)]
        _wait(slow, slow_runs[0], {"running"}, 60)
        time.sleep(0.5)  # the scheduler has had its chance to start the second slow run too
        run_id = _submit(other, data, 0.0)
        done = _wait(other, run_id, {"finished", "failed"}, 60 + 4 * items * latency_s)
        second = slow.get(f"/v1/runs/{slow_runs[1]}").json()
        for slow_run in slow_runs:
            slow.post(f"/v1/runs/{slow_run}/cancel")
        return {
            "queue_s": _seconds(done["created_at"], done["started_at"]),
            "finish_s": _seconds(done["created_at"], done["finished_at"]),
            "second_queue_s": _seconds(second["created_at"], second["started_at"]),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.5, help="slow judge, s a request")
    parser.add_argument("--items", type=int, default=10, help="items (2 requests each)")
    args = parser.parse_args()
    slow_run_s = 2 * args.items * args.latency
    print(
        f"two worker slots; tenant 'slow' submits two runs of {2 * args.items} requests x "
        f"{args.latency:g} s (~{slow_run_s:.0f} s each), then tenant 'other' one fast run"
    )
    print(f"{'per-token cap':<34}{'other run: queued':>18}{'finished':>10}   slow's 2nd: queued")
    modes = [
        ("none (--max-running-per-token 2)", ["--max-running-per-token", "2"]),
        ("default (1 of 2 slots)", []),
    ]
    for name, flags in modes:
        got = measure(flags, args.latency, args.items)
        second = got["second_queue_s"]
        waited = "still" if math.isnan(second) else f"{second:.2f} s"
        print(f"{name:<34}{got['queue_s']:>16.2f} s{got['finish_s']:>8.2f} s   {waited:>10}")


if __name__ == "__main__":
    main()
