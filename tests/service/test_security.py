"""Security of the live service, on SQLite and PostgreSQL: authentication on every endpoint
(taken from the app's own route table, so a new endpoint is covered without editing this
file), owners see only their runs, upload limits and validation, provider keys never accepted,
lent out or echoed, tokens managed by the CLI."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import run_cli_here
from tests.service.conftest import SECRET_KEY, cli, judge_spec
from tests.service.secured import (
    OPEN_PATHS,
    ROUTES,
    RUN_ROUTES,
    SQLITE_ONLY,
    Env,
    config_for,
    files_for,
)


def test_route_table_is_what_the_tests_cover() -> None:
    # Guards the loops below against passing vacuously.
    assert len(ROUTES) >= 14 and len(RUN_ROUTES) >= 9
    assert ("POST", "/v1/runs/{run_id}/labels") in RUN_ROUTES
    assert ("GET", "/v1/runs/{run_id}/report.html") in RUN_ROUTES


def test_every_endpoint_but_health_needs_a_token(env: Env) -> None:
    anonymous, forged = env.client(None), env.client("jdg_not-a-real-token")
    checked = 0
    for method, path in ROUTES:
        url = path.replace("{run_id}", env.alice_run)
        if path in OPEN_PATHS:
            assert anonymous.request(method, url).status_code == 200, path
            continue
        for client, error in ((anonymous, None), (forged, "invalid_token")):
            response = client.request(method, url)
            assert response.status_code == 401, (method, path, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            challenge = response.headers["www-authenticate"]
            assert challenge.startswith("Bearer")
            assert (error or "") in challenge
            checked += 1
    assert checked == 2 * (len(ROUTES) - len(OPEN_PATHS))


def test_another_tokens_run_is_indistinguishable_from_none(env: Env) -> None:
    bob, alice = env.client(env.bob), env.client(env.alice)
    for method, path in RUN_ROUTES:
        theirs = bob.request(method, path.replace("{run_id}", env.alice_run))
        missing = bob.request(method, path.replace("{run_id}", "r_" + "0" * 20))
        assert theirs.status_code == 404, (method, path, theirs.text)
        assert theirs.json() == missing.json()
        if method == "GET":
            mine = alice.get(path.replace("{run_id}", env.alice_run))
            assert mine.content != theirs.content, path
    # Bob's attempts changed nothing.
    assert alice.get(f"/v1/runs/{env.alice_run}").json()["status"] == "finished"
    assert [r["id"] for r in bob.get("/v1/runs").json()["items"]] == [env.bob_run]
    assert [r["id"] for r in alice.get("/v1/runs").json()["items"]] == [env.alice_run]


def test_admin_token_sees_every_run(env: Env) -> None:
    admin = env.client(env.admin)
    listed = {r["id"]: r["owner"] for r in admin.get("/v1/runs").json()["items"]}
    assert listed == {env.alice_run: "alice", env.bob_run: "bob", env.lab_run: "lab-owner"}
    assert admin.get(f"/v1/runs/{env.alice_run}/judgments").json()["total"] == 10


def test_readiness_names_the_database_it_reached(env: Env) -> None:
    ready = env.client(env.alice).get("/readyz")
    assert ready.status_code == 200
    expected = "postgresql" if env.server.db.startswith("postgresql") else "sqlite"
    assert ready.json() == {"status": "ready", "database": expected, "running": 0}


@SQLITE_ONLY
def test_oversize_upload_is_refused_with_413(env: Env) -> None:
    client = env.client(env.alice)
    big = b'{"item_id": "q0", "system": "s", "output": "' + b"x" * (1536 * 1024) + b'"}\n'
    files = files_for(env.data, config_for(env.sim_url), responses=("responses.jsonl", big))
    response = client.post("/v1/runs", files=files)
    assert response.status_code == 413
    assert "limit of 1 MB" in response.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
        for _ in range(24):
            yield b"y" * (64 * 1024)

    streamed = client.post(
        "/v1/runs", content=chunks(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413, streamed.text
    before = {r["id"] for r in client.get("/v1/runs").json()["items"]}
    assert before == {env.alice_run}  # nothing was created


MALFORMED = [
    # (case, which part, content, status, words the detail must contain, problem fields)
    (
        "bad JSON line",
        "items",
        b'{"item_id": "q0", "prompt": "a"}\n{"item_id": "q1", "prom\n',
        422,
        ["items.jsonl", "line 2"],
        {"file": "items.jsonl", "line": 2},
    ),
    (
        "missing column",
        "responses",
        b"item_id,system\nq0,sys-a\n",
        422,
        ["responses.csv", "output"],
        {"file": "responses.csv", "field": "output"},
    ),
    (
        "wrong type",
        "items",
        b'{"item_id": "q0", "prompt": 5}\n',
        422,
        ["items.jsonl", "line 1", "prompt"],
        {"file": "items.jsonl", "line": 1, "field": "prompt"},
    ),
    (
        "bad YAML",
        "config",
        b"name: x\njudges: [\n  - {model: a\n",
        422,
        ["config.yaml", "line", "invalid YAML"],
        {"file": "config.yaml"},
    ),
    (
        "unknown key",
        "config",
        None,
        422,
        ["config.yaml", "judges.0.colour", "unknown key"],
        {"file": "config.yaml"},
    ),
    (
        "unsupported format",
        "items",
        b"item_id\tprompt\n",
        422,
        ["items.tsv", "unsupported file type"],
        {"file": "items.tsv"},
    ),
]


@SQLITE_ONLY
@pytest.mark.parametrize("case", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_uploads_name_file_line_and_field(env: Env, case: tuple) -> None:
    name, part, content, status, words, fields = case
    config = config_for(env.sim_url)
    if name == "unknown key":
        config["judges"][0]["colour"] = "blue"
    parts: dict[str, Any] = {}
    if part != "config":
        filename = {"missing column": "responses.csv", "unsupported format": "items.tsv"}
        parts[part] = (filename.get(name, f"{part}.jsonl"), content)
    files = files_for(
        env.data, content.decode() if part == "config" and content else config, **parts
    )
    response = env.client(env.alice).post("/v1/runs", files=files)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    for word in words:
        assert word in problem["detail"], (word, problem)
    for key, value in fields.items():
        assert problem[key] == value, (key, problem)
    assert str(env.server.data_dir) not in response.text  # server paths stay private


@SQLITE_ONLY
def test_missing_parts_and_wrong_media_type(env: Env) -> None:
    client = env.client(env.alice)
    files = files_for(env.data, config_for(env.sim_url))
    del files["responses"]
    response = client.post("/v1/runs", files=files)
    assert response.status_code == 400 and "responses" in response.json()["detail"]
    response = client.post("/v1/runs", content=b"name: x", headers={"content-type": "text/yaml"})
    assert response.status_code == 415
    labels = client.post(
        f"/v1/runs/{env.alice_run}/labels", files={"labels": ("l.jsonl", b"not json\n")}
    )
    assert labels.status_code == 422 and "l.jsonl" in labels.json()["detail"]


REFUSED = [
    # (case, judge changes or config changes, status, field)
    ("api_key", {"judge": {"api_key": SECRET_KEY}}, 400, "judges[0].api_key"),
    (
        "foreign base_url",
        {"judge": {"base_url": "https://collector.example/v1"}},
        400,
        "judges[0].base_url",
    ),
    ("prefix trick", {"judge": {"base_url": "{sim}.evil.example/v1"}}, 400, "judges[0].base_url"),
    ("api_key_env", {"judge": {"api_key_env": "OPENAI_API_KEY"}}, 400, "judges[0].api_key_env"),
    (
        "routing param",
        {"judge": {"params": {"api_base": "https://collector.example"}}},
        400,
        "judges[0].params.api_base",
    ),
    ("cache path", {"config": {"cache": "/tmp/elsewhere.sqlite"}}, 400, "cache"),
    ("rubric path", {"config": {"rubric": "../../../../etc/rubric.yaml"}}, 400, "rubric"),
    ("rubric file without suffix", {"config": {"rubric": "/etc/passwd"}}, 400, "rubric"),
    (
        "published verdicts path",
        {"config": {"calibration": {"published": "/etc/published.jsonl"}}},
        400,
        "calibration.published",
    ),
    (
        "human labels path",
        {"config": {"calibration": {"human": "/etc/passwd.csv"}}},
        400,
        "calibration.human",
    ),
]


@SQLITE_ONLY
@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_configs_that_could_leak_keys_or_files_are_refused(env: Env, case: tuple) -> None:
    name, change, status, field_name = case
    config = config_for(env.sim_url)
    judge = dict(config["judges"][0])
    allowed = env.sim_url.removesuffix("/v1")  # what the server was started to allow
    for key, value in change.get("judge", {}).items():
        judge[key] = value.replace("{sim}", allowed) if isinstance(value, str) else value
    config["judges"] = [judge]
    config.update(change.get("config", {}))
    response = env.client(env.alice).post("/v1/runs", files=files_for(env.data, config))
    assert response.status_code == status, response.text
    problem = response.json()
    assert problem["field"] == field_name and field_name in problem["detail"]
    assert SECRET_KEY not in response.text
    if name == "api_key":  # refused before anything of the config was written
        for path in env.server.data_dir.rglob("*"):
            if path.is_file():
                assert SECRET_KEY.encode() not in path.read_bytes(), path


@SQLITE_ONLY
def test_server_side_paths_are_off_unless_the_operator_allows_them(env: Env) -> None:
    config = config_for(env.sim_url)
    config["data"] = {
        "items": str(env.data / "items.jsonl"),
        "responses": str(env.data / "responses.jsonl"),
    }
    response = env.client(env.alice).post("/v1/runs", json={"config": config})
    assert response.status_code == 403
    assert "upload" in response.json()["detail"]


def test_keys_never_appear_in_responses_or_logs(env: Env) -> None:
    alice = env.client(env.alice)
    # A run that really used the key (OPENAI_API_KEY reaches the judge): every GET of it.
    for method, path in RUN_ROUTES:
        if method == "GET":
            alice.get(path.replace("{run_id}", env.alice_run))
    env.client(env.admin).get("/v1/runs")
    alice.get("/openapi.json")
    # Error paths that mention keys.
    config = config_for(env.sim_url)
    config["judges"][0]["api_key"] = SECRET_KEY
    alice.post("/v1/runs", files=files_for(env.data, config))
    config["judges"][0] = judge_spec(env.sim_url, api_key_env="OPENAI_API_KEY")
    alice.post("/v1/runs", files=files_for(env.data, config))
    time.sleep(0.2)
    assert len(env.bodies) > 20
    for body in env.bodies:
        assert SECRET_KEY not in body
    log = env.server.log()
    assert "POST /v1/runs" in log and SECRET_KEY not in log
    worker_logs = list(env.server.data_dir.glob("runs/*/worker.log"))
    assert worker_logs
    for path in worker_logs:
        assert SECRET_KEY not in path.read_text(errors="replace")


def test_tokens_cli_creates_lists_and_revokes(env: Env) -> None:
    """The first command runs `judge` as a user would, in a process of its own; the others
    call the same entry point in this one (`run_cli_here`): parsing, command and output are
    the same, without an interpreter start-up each."""
    import hashlib

    from sqlalchemy import select

    from judge.service.db import make_engine, tokens

    db = ["--db", env.server.db]
    created = cli("tokens", "create", "mallory", *db)
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("jdg_") and "not shown again" in created.stderr
    client = env.client(token)
    assert client.get("/v1/runs").json()["items"] == []  # a working token, owning nothing
    again = run_cli_here("tokens", "create", "mallory", *db)
    assert again.returncode == 2 and "exists already" in again.stderr
    listed = run_cli_here("tokens", "list", *db)
    assert "mallory\tuser\tactive" in listed.stdout and "root\tadmin\tactive" in listed.stdout
    assert token not in listed.stdout
    engine = make_engine(env.server.db)
    with engine.connect() as conn:
        stored = conn.execute(select(tokens).where(tokens.c.name == "mallory")).one()
    engine.dispose()
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(tuple(stored))  # only the hash is kept
    revoked = run_cli_here("tokens", "revoke", "mallory", *db)
    assert revoked.returncode == 0, revoked.stderr
    response = client.get("/v1/runs")
    assert (
        response.status_code == 401
        and 'error="invalid_token"' in response.headers["www-authenticate"]
    )
    listed = run_cli_here("tokens", "list", *db).stdout
    assert "revoked" in listed.split("mallory", 1)[1].splitlines()[0]
