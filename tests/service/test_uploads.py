"""Uploads and results on the shared live service: files that expand past the server's limits
are refused before anything loads them, labels are checked when they arrive and may arrive
together, query parameters are errors of the request, and a failed `compare.gates` check ends a
complete run. On SQLite only: none of it is in the SQL, which test_security and test_e2e run on
both backends."""

from __future__ import annotations

import gzip
import io
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.service.conftest import wait_for
from tests.service.secured import EXPANDED_MB, LINE_KB, SQLITE_ONLY, Env, config_for, files_for


def run_dirs(env: Env) -> set[str]:
    return {p.name for p in (env.server.data_dir / "runs").iterdir()}


def responses(output: Any) -> list[dict[str, Any]]:
    """The small dataset's 20 responses; `output(i, system)` gives each text."""
    return [
        {"item_id": f"q{i}", "system": system, "output": output(i, system)}
        for i in range(10)
        for system in ("sys-a", "sys-b")
    ]


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def labels_rows(shift: int = 0, **extra: Any) -> list[dict[str, Any]]:
    winners = ("sys-a", "sys-b", "tie")
    return [
        {
            "item_id": f"q{i}",
            "system_a": "sys-a",
            "system_b": "sys-b",
            "winner": winners[(i + shift) % 3],
            "annotator": "h1",
            **extra,
        }
        for i in range(10)
    ]


def finished_run(env: Env, **overrides: Any) -> str:
    config = config_for(env.sim_url, **overrides)
    created = env.client(env.alice).post("/v1/runs", files=files_for(env.data, config))
    assert created.status_code == 201, created.text
    info = wait_for(env.client(env.alice), created.json()["id"], {"finished", "failed"}, 60)
    assert info["status"] == "finished", info
    return str(info["id"])


@SQLITE_ONLY
def test_files_expanding_past_the_limits_are_refused_before_loading(env: Env) -> None:
    """A small compressed file standing for much more data: 413 naming the file (and line,
    or row and column), and nothing of the run is kept. Without the check each of these was
    accepted (201), the server reading the whole expansion into memory to prepare the run."""
    client = env.client(env.alice)
    before_runs, before_dirs = client.get("/v1/runs").json()["total"], run_dirs(env)
    config = config_for(env.sim_url)
    big = 20 << 20
    # One 20 MB line, 20 KB compressed.
    one_line = gzip.compress(jsonl(responses(lambda i, s: "x" * big if i == 0 else f"{s} {i}")))
    # 4.8 MB of lines of 240 KB each (each under the line limit, together over 4 MB).
    many = gzip.compress(jsonl(responses(lambda i, s: "y" * (240 << 10))))
    # Parquet: 20 rows of one 240 KB value, dictionary-encoded: the footer says ~240 KB.
    table = pa.Table.from_pylist(responses(lambda i, s: "z" * (240 << 10)))
    parquet = io.BytesIO()
    pq.write_table(table, parquet, compression="zstd")
    # Plain text, under the body limit: one line over the line limit.
    long_line = jsonl(responses(lambda i, s: "w" * ((LINE_KB + 10) << 10) if i == 3 else "ok"))
    cases = [
        ("r.jsonl.gz", one_line, "line-too-long", {"line": 1}),
        ("r.jsonl.gz", many, "expanded-too-large", {}),
        ("r.parquet", parquet.getvalue(), "expanded-too-large", {}),
        ("r.jsonl", long_line, "line-too-long", {"line": 7}),
    ]
    for name, content, slug, where in cases:
        assert len(content) < 1 << 20  # under the body limit: only the expansion is at fault
        files = files_for(env.data, config, responses=(name, content))
        response = client.post("/v1/runs", files=files)
        assert response.status_code == 413, (name, slug, response.text)
        problem = response.json()
        assert problem["type"].endswith(slug) and problem["file"] == name, problem
        assert name in problem["detail"], problem
        for key, value in where.items():
            assert problem[key] == value, problem
        if slug == "expanded-too-large":
            assert f"{EXPANDED_MB} MB once decompressed" in problem["detail"]
        assert str(env.server.data_dir) not in response.text
    # A Parquet value over the line limit names its row and column.
    table = pa.Table.from_pylist(responses(lambda i, s: "v" * ((LINE_KB + 1) << 10) if i else "o"))
    parquet = io.BytesIO()
    pq.write_table(table, parquet, compression="zstd")
    files = files_for(env.data, config, responses=("r.parquet", parquet.getvalue()))
    problem = client.post("/v1/runs", files=files).json()
    assert problem["status"] == 413 and (problem["row"], problem["field"]) == (3, "output")
    # Labels too, after the submission: refused, and the labels in use stay.
    labels_bomb = gzip.compress(jsonl(labels_rows(note="n" * (300 << 10))))
    refused = client.post(
        f"/v1/runs/{env.alice_run}/labels", files={"labels": ("l.jsonl.gz", labels_bomb)}
    )
    assert refused.status_code == 413 and refused.json()["file"] == "l.jsonl.gz", refused.text
    root = env.server.data_dir / "runs" / env.alice_run
    assert sorted(p.name for p in root.rglob("*labels*")) == ["human_labels.jsonl"]
    assert client.get(f"/v1/runs/{env.alice_run}/calibration").status_code == 200
    # Nothing of the refused submissions was kept.
    assert client.get("/v1/runs").json()["total"] == before_runs
    assert run_dirs(env) == before_dirs


@SQLITE_ONLY
def test_labels_are_checked_when_they_arrive(env: Env) -> None:
    """Labels the calibration cannot use are refused on arrival (422 naming file, row and
    column), with a submission and for a run still running; before, they were accepted and the
    run ended with "calibration with the uploaded labels failed"."""
    client = env.client(env.alice)
    before = client.get("/v1/runs").json()["total"]
    bad = [
        ("l.csv", b"a,b\n1,2\n", {"field": "item_id"}, ["l.csv", "lacks column", "annotator"]),
        (
            "l.jsonl",
            jsonl([*labels_rows()[:2], {**labels_rows()[2], "annotator": " "}]),
            {"row": 3, "field": "annotator"},
            ["l.jsonl", "row 3", "empty"],
        ),
        (
            "l.jsonl",
            jsonl([*labels_rows()[:4], {**labels_rows()[4], "winner": "maybe"}]),
            {"row": 5, "field": "winner"},
            ["l.jsonl", "row 5", "'maybe'"],
        ),
        ("l.csv", b"item_id,system_a,system_b,winner,annotator\n", {}, ["l.csv", "no rows"]),
    ]
    config = config_for(env.sim_url)
    for name, content, fields, words in bad:
        response = client.post(
            "/v1/runs", files=files_for(env.data, config, labels=(name, content))
        )
        assert response.status_code == 422, response.text
        problem = response.json()
        assert problem["file"] == name and all(problem[k] == v for k, v in fields.items())
        assert all(word in problem["detail"] for word in words), problem
    assert client.get("/v1/runs").json()["total"] == before  # nothing created

    # A run still running (its own simulator answers in 30 s): refused now, not at the end.
    slow = config_for(
        "simulator",
        judges=[{**config["judges"][0], "base_url": "simulator"}],
        simulator={"seed": 1, "latency": {"kind": "fixed", "median_s": 30}},
    )
    created = client.post("/v1/runs", files=files_for(env.data, slow))
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    try:
        for name, content, fields, words in bad:
            response = client.post(f"/v1/runs/{run_id}/labels", files={"labels": (name, content)})
            assert response.status_code == 422, response.text
            problem = response.json()
            assert problem["file"] == name and all(problem[k] == v for k, v in fields.items())
            assert all(word in problem["detail"] for word in words), problem
        good = client.post(
            f"/v1/runs/{run_id}/labels", files={"labels": ("l.jsonl", jsonl(labels_rows()))}
        )
        assert good.status_code == 202, good.text
        assert good.json()["run"]["status"] in ("queued", "running")
    finally:
        client.post(f"/v1/runs/{run_id}/cancel")


@SQLITE_ONLY
def test_concurrent_label_uploads_are_applied_one_at_a_time(env: Env) -> None:
    """Six uploads to one finished run at once: every one succeeds (each was staged under the
    same name before, and five answered 500), and the labels kept are one upload, whole. (One
    backend: what orders them is a lock in the server process, and the database sees one
    upload's UPDATE at a time.)"""
    run_id = finished_run(env, calibration={"resamples": 100})
    uploads = [jsonl(labels_rows(shift, annotator=f"h{shift}")) for shift in range(6)]

    def post(content: bytes) -> tuple[int, str]:
        with env.client(env.alice) as client:
            response = client.post(
                f"/v1/runs/{run_id}/labels", files={"labels": ("labels.jsonl", content)}
            )
            return response.status_code, response.text

    with ThreadPoolExecutor(len(uploads)) as pool:
        answers = list(pool.map(post, uploads))
    assert [status for status, _ in answers] == [200] * len(uploads), answers
    root = env.server.data_dir / "runs" / run_id
    # The run dir keeps the labels (`RunDir.keep_labels`), one file, one upload whole.
    assert sorted(p.name for p in root.rglob("*labels*")) == ["human_labels.jsonl"]
    assert (root / "run" / "human_labels.jsonl").read_bytes() in uploads
    assert not list(root.rglob("upload*"))  # no staged copy left behind
    calibration = env.client(env.alice).get(f"/v1/runs/{run_id}/calibration")
    assert calibration.status_code == 200, calibration.text


QUERY_ERRORS = [
    ("comparison", {"judge": "nope"}, "judge", ["`judge` parameter", "this run has"]),
    ("comparison", {"baseline": "nope"}, "baseline", ["'nope'"]),
    ("comparison", {"by": "nope"}, "by", ["'nope'"]),
    ("comparison", {"gate": "diff(sys-a, sys-b) >"}, "gate", ["diff(sys-a, sys-b) >"]),
    ("calibration", {"judge": "nope"}, "judge", ["`judge` parameter", "this run has"]),
    ("calibration", {"by": "nope"}, "by", ["'nope'"]),
]


@SQLITE_ONLY
@pytest.mark.parametrize("case", QUERY_ERRORS, ids=[f"{c[0]}-{c[2]}" for c in QUERY_ERRORS])
def test_query_parameter_errors_name_the_parameter_not_server_paths(env: Env, case) -> None:
    """A parameter the computation cannot use is the request's error: "Invalid request", the
    parameter as `field`, no CLI flags and no server paths (before: "/tmp/.../runs/r_.../run:
    choose a judge with --judge-name", titled "Invalid uploaded data")."""
    endpoint, params, field, words = case
    response = env.client(env.alice).get(f"/v1/runs/{env.alice_run}/{endpoint}", params=params)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["title"] == "Invalid request" and problem["field"] == field, problem
    assert f"`{field}`" in problem["detail"] and "--" not in problem["detail"], problem
    for word in words:
        assert word in problem["detail"], problem
    data_dir = str(env.server.data_dir)
    assert data_dir not in response.text and str(Path(data_dir).parent) not in response.text


@SQLITE_ONLY
def test_a_failed_compare_gate_ends_a_complete_run(env: Env) -> None:
    """`judge run` exits 1 when a `compare.gates` check fails; the run is complete: finished,
    with a note, the verdict in summary.json, and every gate's outcome and the answer in the
    run's status, as summary.json has them. (One backend: the database holds only the status
    and the note, stored as every run's are; the gates and the answer are read from the run
    dir.)"""
    passes, fails = "winrate(sys-a, sys-b) >= 0", "diff(sys-a, sys-b) >= 2"
    config = config_for(env.sim_url, compare={"resamples": 200, "gates": [passes, fails]})
    client = env.client(env.alice)
    created = client.post("/v1/runs", files=files_for(env.data, config))
    assert created.status_code == 201, created.text
    assert created.json()["gates"] is None and created.json()["answer"] is None
    info = wait_for(client, created.json()["id"], {"finished", "failed"}, 60)
    assert info["status"] == "finished", info
    assert info["error"] == (f"a gate failed: {fails} (see comparison.gates and canaries.gates)")
    summary = client.get(f"/v1/runs/{info['id']}/summary.json").json()
    assert summary["comparison"]["gates_passed"] is False
    assert client.get(f"/v1/runs/{info['id']}/judgments").json()["total"] == 10
    status = client.get(f"/v1/runs/{info['id']}").json()
    assert [(g["kind"], g["expression"], g["passed"]) for g in status["gates"]] == [
        ("compare", passes, True),
        ("compare", fails, False),
    ]
    for shown, stored in zip(status["gates"], summary["comparison"]["gates"], strict=True):
        assert {k: shown[k] for k in ("value", "ci_low", "ci_high", "reason")} == {
            k: stored[k] for k in ("value", "ci_low", "ci_high", "reason")
        }
    decision = summary["decision"]
    assert status["answer"] == {
        "outcome": "no",
        "text": decision["answer"]["text"],
        "judge": "not calibrated",
        "judge_reason": decision["trust_reason"],
    }
    assert status["answer"]["text"].startswith(f"No: the gate {fails} failed (value ")
    # Listings stay light: no summary is read for them.
    (listed,) = [r for r in client.get("/v1/runs").json()["items"] if r["id"] == info["id"]]
    assert listed["gates"] is None and listed["answer"] is None


@SQLITE_ONLY
def test_labels_the_finished_run_cannot_use_do_not_fail_the_paid_run(env: Env) -> None:
    """Labels given with the submission whose systems match none of the run's: the judging is
    paid for, so the run finishes (summary, report, judgments) without calibration, with a note
    naming the problem, and keeps the labels aside for the owner. (Before, the analysis failed
    on them and the whole run was `failed`, with no report.)"""
    client = env.client(env.alice)
    config = config_for(env.sim_url)
    rows = labels_rows(system_a="sys-x", system_b="sys-y")
    wrong = jsonl(
        [{**r, "winner": {"sys-a": "a", "sys-b": "b"}.get(r["winner"], "tie")} for r in rows]
    )
    created = client.post(
        "/v1/runs", files=files_for(env.data, config, labels=("labels.jsonl", wrong))
    )
    assert created.status_code == 201, created.text
    info = wait_for(client, created.json()["id"], {"finished", "failed"}, 60)
    assert info["status"] == "finished", info
    assert info["error"].startswith("calibration with the uploaded labels failed"), info
    assert "sys-x" in info["error"] and "rejected-human_labels.jsonl" in info["error"]
    assert info["answer"] is not None
    summary = client.get(f"/v1/runs/{info['id']}/summary.json").json()
    assert summary["calibration"] is None
    assert client.get(f"/v1/runs/{info['id']}/report.html").status_code == 200
    assert client.get(f"/v1/runs/{info['id']}/judgments").json()["total"] == 10
    run_dir = env.server.data_dir / "runs" / info["id"] / "run"
    assert (run_dir / "rejected-human_labels.jsonl").is_file()
    assert not list(run_dir.glob("human_labels.*"))
