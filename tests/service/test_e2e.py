"""End to end through HTTP: a live `judge serve` on loopback, the simulator as judge, on SQLite
and PostgreSQL. Every number the service returns must equal what the CLI computes for the same
config and data (`judge run`, `judge compare --json`, `judge calibrate --json`).

One server per backend and one simulator serve the module's tests (a server takes seconds to
start): each test submits as a token of its own, so it sees only its runs and has a response
cache of its own, and zeroes the simulator's counters before it counts them."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.simulator import SimulatorConfig, SimulatorHandle, running_simulator
from tests.helpers import MT_BENCH
from tests.service.conftest import (
    BACKENDS,
    SYSTEMS,
    LiveServer,
    backend_of,
    comparable,
    judge_spec,
    make_token,
    run_config,
    service_database,
    upload_files,
    wait_for,
)


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorHandle]:
    with running_simulator(SimulatorConfig(seed=1)) as handle:
        yield handle


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, sim: SimulatorHandle, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """`judge serve` on a fresh database, allowing the module's simulator as a judge and the
    bundled MT-Bench files as server-side paths."""
    root = tmp_path_factory.mktemp(f"e2e-{request.param}")
    with service_database(request, request.param, root) as db:
        flags = ["--allow-base-url", sim.base_url, "--allow-server-paths", str(MT_BENCH)]
        live = LiveServer(db, root / "data", root / "server.log", flags)
        try:
            yield live.start()
        finally:
            live.stop()


def finite(value: Any) -> Any:
    """JSON has no NaN: the service sends null where the CLI prints NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def without(section: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in section.items() if k not in keys}


def test_run_through_http_matches_the_cli(
    server: LiveServer, sim: SimulatorHandle, reference
) -> None:
    backend = backend_of(server.db)
    token = make_token(server.db, "alice")
    timings: dict[str, float] = {}
    sim.reset()
    client = server.client(token)
    config = run_config(sim.openai_base_url)
    started = time.monotonic()
    created = client.post("/v1/runs", files=upload_files(config))
    assert created.status_code == 201, created.text
    run = created.json()
    assert created.headers["location"] == f"/v1/runs/{run['id']}"
    assert run["status"] in ("queued", "running") and run["owner"] == "alice"
    total = run["progress"]["total"]
    assert total == reference["summary"]["counts"]["requests"] == 284
    # Watch progress: `done` only grows, and ends at the total.
    seen = []
    while True:
        info = client.get(f"/v1/runs/{run['id']}").json()
        seen.append(info["progress"]["done"])
        if info["status"] not in ("queued", "running"):
            break
        time.sleep(0.05)
    timings["run"] = time.monotonic() - started
    assert info["status"] == "finished", info
    assert seen == sorted(seen) and seen[-1] == total
    assert info["progress"]["failed"] == 0 and info["progress"]["pending"] == 0
    assert info["attempts"] == 1
    # Each request answered once by the simulator: nothing sent twice.
    stats = sim.stats()
    assert stats["duplicates"] == 0
    assert stats["answered"] == total - info["progress"]["cached"]

    # Judgments, all pages: identical to the CLI run's rows.
    rows, offset = [], 0
    while offset is not None:
        page = client.get(
            f"/v1/runs/{run['id']}/judgments", params={"limit": 100, "offset": offset}
        )
        assert page.status_code == 200, page.text
        body = page.json()
        assert body["total"] == len(reference["judgments"])
        rows += body["items"]
        offset = body["next_offset"]
    assert comparable(rows) == comparable(reference["judgments"])
    # ...with the judge's own words in both orders, and the ids of the requests they answer.
    assert all(r["reasoning_ab"] and r["reasoning_ba"] for r in rows)
    assert all(r["request_ab"].startswith("sha256:") and r["request_ba"] for r in rows)

    # Filters select exactly the matching rows.
    ties = client.get(f"/v1/runs/{run['id']}/judgments", params={"winner": "tie", "limit": 1000})
    expected_ties = [r for r in reference["judgments"] if r["winner"] == "tie"]
    assert ties.json()["total"] == len(expected_ties) > 0
    assert all(r["winner"] == "tie" for r in ties.json()["items"])
    item = reference["judgments"][0]["item_id"]
    one = client.get(f"/v1/runs/{run['id']}/judgments", params={"item_id": item}).json()
    assert [r["item_id"] for r in one["items"]] == [item] * one["total"] and one["total"] >= 1
    by_system = client.get(
        f"/v1/runs/{run['id']}/judgments", params={"system": SYSTEMS[0], "limit": 1}
    ).json()
    assert by_system["total"] == len(reference["judgments"])  # every pair involves both
    assert (
        client.get(f"/v1/runs/{run['id']}/judgments", params={"system": "gpt-4"}).json()["total"]
        == 0
    )

    # summary.json: the same counts, win rates and comparison as `judge run` wrote.
    summary = client.get(f"/v1/runs/{run['id']}/summary.json").json()
    ref = finite(reference["summary"])
    assert summary["counts"] == ref["counts"]
    assert summary["systems"] == ref["systems"]
    assert summary["win_rates"] == ref["win_rates"]
    assert summary["comparison"] == ref["comparison"]
    comparison = client.get(f"/v1/runs/{run['id']}/comparison")
    assert comparison.status_code == 200 and comparison.json() == ref["comparison"]
    # With options: what `judge compare RUN --json --resamples 500 --baseline ... --control
    # length` prints.
    options = {"resamples": 500, "baseline": SYSTEMS[0], "control": "length"}
    custom = client.get(f"/v1/runs/{run['id']}/comparison", params=options)
    assert custom.json() == finite(reference["compare_cli"])
    assert custom.json()["controlled"]["baseline"] == SYSTEMS[0]

    # No labels yet: calibration says how to add them.
    missing = client.get(f"/v1/runs/{run['id']}/calibration")
    assert missing.status_code == 404 and "labels" in missing.json()["detail"]
    labels = reference["labels"]
    started = time.monotonic()
    uploaded = client.post(
        f"/v1/runs/{run['id']}/labels",
        files={"labels": ("labels.jsonl", labels.read_bytes())},
    )
    timings["labels"] = time.monotonic() - started
    assert uploaded.status_code == 200, uploaded.text
    body = uploaded.json()
    assert body["rows"] == len(labels.read_text().splitlines())
    assert body["run"]["has_labels"] is True
    expected = without(ref["calibration"], "human_labels")
    assert without(body["calibration"], "human_labels") == expected
    # Kept by the run dir (`RunDir.keep_labels`), named without the server's path.
    assert body["calibration"]["human_labels"] == "human_labels.jsonl"
    calibration = client.get(f"/v1/runs/{run['id']}/calibration").json()
    assert without(calibration, "human_labels") == expected
    custom = client.get(f"/v1/runs/{run['id']}/calibration", params={"resamples": 100, "seed": 3})
    assert custom.json() == finite(reference["calibrate_cli"])

    # The report, re-rendered with the calibration.
    report = client.get(f"/v1/runs/{run['id']}/report.html")
    assert report.status_code == 200
    assert report.headers["content-type"].startswith("text/html")
    assert "sandbox" in report.headers["content-security-policy"]
    assert "service-test" in report.text and "alpha" in report.text.lower()

    listing = client.get("/v1/runs").json()
    assert [r["id"] for r in listing["items"]] == [run["id"]] and listing["total"] == 1
    print(
        f"\n[{backend}] 284 requests: run {timings['run']:.1f} s (submit to finished), "
        f"labels + recalibration {timings['labels']:.1f} s"
    )


def test_cancel_stops_the_run_and_resume_finishes_it(
    server: LiveServer, sim: SimulatorHandle, reference
) -> None:
    token = make_token(server.db, "carol")
    sim.reset()
    sim.update(latency={"kind": "fixed", "median_s": 0.05})
    try:
        client = server.client(token)
        config = run_config(
            sim.openai_base_url, judges=[judge_spec(sim.openai_base_url, max_connections=4)]
        )
        run = client.post("/v1/runs", files=upload_files(config)).json()
        while (info := client.get(f"/v1/runs/{run['id']}").json())["progress"]["done"] < 20:
            time.sleep(0.05)
        cancelled = client.post(f"/v1/runs/{run['id']}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        # The worker stops, and the server logs what became of the run (not "failed": its
        # status never changed).
        deadline = time.monotonic() + 15
        while f"run {run['id']}: worker exited" not in server.log():
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.1)
        assert f"run {run['id']}: worker exited (130): cancelled" in server.log()
        # Progress froze well short of the total, and no worker takes the run up again
        # (the scheduler looks every 0.2 s).
        frozen = client.get(f"/v1/runs/{run['id']}").json()["progress"]["done"]
        time.sleep(0.5)
        info = client.get(f"/v1/runs/{run['id']}").json()
        assert info["status"] == "cancelled"
        assert info["progress"]["done"] == frozen < info["progress"]["total"]
        assert client.post(f"/v1/runs/{run['id']}/cancel").status_code == 409
        # Results of a cancelled run: not computed.
        assert client.get(f"/v1/runs/{run['id']}/comparison").status_code == 409
        # The latency only had to outlast the cancel: the rest is answered at once.
        sim.update(latency={"median_s": 0.0})
        resumed = client.post(f"/v1/runs/{run['id']}/resume")
        assert resumed.status_code == 200 and resumed.json()["status"] in ("queued", "running")
        info = wait_for(client, run["id"], {"finished", "failed"})
        stats = sim.stats()
    finally:
        sim.update(latency={"median_s": 0.0})
    assert info["status"] == "finished" and info["attempts"] == 2
    assert client.post(f"/v1/runs/{run['id']}/resume").status_code == 409
    rows = client.get(f"/v1/runs/{run['id']}/judgments", params={"limit": 1000}).json()["items"]
    assert comparable(rows) == comparable(reference["judgments"])
    # Only what was in flight at the cancel can have been answered twice.
    assert (
        stats["answered"] - (info["progress"]["total"] - info["progress"]["cached"])
        == stats["duplicates"]
    )
    assert stats["duplicates"] <= 4


@pytest.mark.parametrize("server", ["sqlite"], indirect=True)
def test_server_side_paths_when_the_operator_allows_them(
    server: LiveServer, reference, tmp_path: Path
) -> None:
    """JSON submission naming files on the server (under --allow-server-paths), judged by the
    run's own simulator (`base_url: simulator`): the same judgments as `judge run`."""
    token = make_token(server.db, "dana")
    client = server.client(token)
    data = {
        "items": str(MT_BENCH / "items.jsonl"),
        "responses": str(MT_BENCH / "responses.jsonl.gz"),
        "allow_empty_outputs": True,
        "systems": SYSTEMS,
    }
    config = run_config("simulator", data=data, simulator={"seed": 1})
    outside = tmp_path / "items.jsonl"
    outside.write_bytes((MT_BENCH / "items.jsonl").read_bytes())
    for items, why in (
        (str(outside), "outside"),
        ("items.jsonl", "relative"),
        (str(MT_BENCH / ".." / ".." / "README.md"), "traversal"),
    ):
        refused = client.post(
            "/v1/runs", json={"config": {**config, "data": {**data, "items": items}}}
        )
        assert refused.status_code == 400, (why, refused.text)
        assert refused.json()["field"] == "data.items"
    created = client.post("/v1/runs", json={"config": config})
    assert created.status_code == 201, created.text
    info = wait_for(client, created.json()["id"], {"finished", "failed"})
    assert info["status"] == "finished", info
    rows = client.get(f"/v1/runs/{info['id']}/judgments", params={"limit": 1000}).json()["items"]
    assert comparable(rows) == comparable(reference["judgments"])
