"""Bounded work per request, on the shared live service (SQLite and PostgreSQL): each limit of
`judge serve --max-...` refuses what exceeds it with a problem naming the limit, before
anything of the run is stored; and one token cannot hold every worker slot.

The runs these tests create belong to tokens of their own (`test_security` counts every run of
alice, bob and the admin on the shared server, and runs first: modules run in name order)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import yaml

from tests.service.conftest import make_token, wait_for
from tests.service.secured import LIMITS, SQLITE_ONLY, Env, config_for, files_for


def _runs(env: Env, token: str) -> int:
    return int(env.client(token).get("/v1/runs").json()["total"])


def _run_dirs(env: Env) -> set[str]:
    return {p.name for p in (env.server.data_dir / "runs").iterdir()}


def _refused(env: Env, files: dict[str, Any]) -> tuple[dict[str, Any], int, float]:
    """POST /v1/runs; returns the problem, its status and how long the server took. Checks
    that nothing of the run was kept."""
    client = env.client(env.alice)
    runs, dirs = _runs(env, env.alice), _run_dirs(env)
    started = time.monotonic()
    response = client.post("/v1/runs", files=files)
    took = time.monotonic() - started
    assert response.headers["content-type"] == "application/problem+json", response.text
    assert _runs(env, env.alice) == runs and _run_dirs(env) == dirs
    return response.json(), response.status_code, took


@SQLITE_ONLY
def test_a_run_over_max_requests_is_refused_before_it_is_stored(env: Env) -> None:
    """Six systems, every pair, both orders: 15 x 10 x 2 = 300 requests from a 2 KB upload."""
    systems = [f"sys-{c}" for c in "abcdef"]
    rows = [
        {"item_id": f"q{i}", "system": s, "output": f"{s} answers {i}."}
        for i in range(10)
        for s in systems
    ]
    responses = "".join(json.dumps(r) + "\n" for r in rows).encode()
    files = files_for(env.data, config_for(env.sim_url), responses=("responses.jsonl", responses))
    problem, status, _ = _refused(env, files)
    assert status == 413, problem
    assert problem["type"] == "urn:judge:problem:limit-exceeded"
    assert (problem["limit"], problem["maximum"], problem["actual"]) == ("max_requests", 200, 300)
    assert "would send 300 judge requests, over the limit of 200" in problem["detail"]
    # The same upload compared against one baseline (5 x 10 x 2 = 100) is accepted.
    baseline = config_for(env.sim_url, pairs={"mode": "baseline", "baseline": "sys-a"})
    erin = env.client(make_token(env.server.db, "erin"))
    created = erin.post(
        "/v1/runs", files=files_for(env.data, baseline, responses=("r.jsonl", responses))
    )
    assert created.status_code == 201, created.text
    assert created.json()["progress"]["total"] == 100
    erin.post(f"/v1/runs/{created.json()['id']}/cancel")


def _rubric(user_extra: str) -> bytes:
    """A valid pairwise rubric whose user template ends with `user_extra`."""
    rubric = {
        "id": "client_rubric",
        "version": 1,
        "kind": "pairwise",
        "description": "Which is better?",
        "scale": {"labels": ["A", "B", "tie"]},
        "system": "You are a judge. Answer with one of {{ scale }}.",
        "user": "[Q]{{ prompt }}[/Q]\n[A]{{ slot_a }}[/A]\n[B]{{ slot_b }}[/B]\n" + user_extra,
        "output": {"format": "json", "fields": ["reasoning", "verdict"]},
    }
    return yaml.safe_dump(rubric).encode()


_LOOP = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
RUBRIC_LIMITS = [
    # (case, user template addition, limit)
    ("loop at load", _LOOP, "max_render_s"),
    ("loop on real data", "{% if slot_a|length > 12 %}" + _LOOP + "{% endif %}", "max_render_s"),
    ("output", "{% for i in range(100000) %}{{ slot_a }}{% endfor %}", "max_template_output_kb"),
    ("repetition", "{{ slot_a * 10**9 }}", "max_template_output_kb"),
    (
        "time over all prompts",  # ~50 ms a prompt, a tenth of max_render_s; 100 prompts
        "{% for i in range(2) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "max_render_total_s",
    ),
]


def _two_systems(items: int) -> dict[str, tuple[str, bytes]]:
    questions = [{"item_id": f"q{i}", "prompt": f"Question {i}?"} for i in range(items)]
    answers = [
        {"item_id": f"q{i}", "system": s, "output": f"{s} answers {i}."}
        for i in range(items)
        for s in ("sys-a", "sys-b")
    ]
    return {
        "items": ("items.jsonl", "".join(json.dumps(q) + "\n" for q in questions).encode()),
        "responses": ("responses.jsonl", "".join(json.dumps(a) + "\n" for a in answers).encode()),
    }


@SQLITE_ONLY
@pytest.mark.parametrize("case", RUBRIC_LIMITS, ids=[c[0] for c in RUBRIC_LIMITS])
def test_an_uploaded_rubric_is_rendered_within_the_limits(env: Env, case: tuple) -> None:
    """The 3 KB rubric that made a 382 MB store, the loop that held a server thread for
    147 s: refused in about the render limit, naming the rubric and the limit."""
    _, extra, limit = case
    config = config_for(env.sim_url)
    data = _two_systems(50) if limit == "max_render_total_s" else {}
    files = files_for(env.data, config, rubric=("rubric.yaml", _rubric(extra)), **data)
    problem, status, took = _refused(env, files)
    assert status == 422, problem
    assert problem["type"] == "urn:judge:problem:limit-exceeded"
    assert problem["limit"] == limit and problem["maximum"] == LIMITS[limit], problem
    assert problem["field"] == "rubric"
    assert problem["detail"].startswith("rubric 'client_rubric': "), problem
    assert f"{limit} = {LIMITS[limit]:g}" in problem["detail"], problem
    if limit != "max_template_output_kb":
        assert took < LIMITS[limit] + 5, took  # the deadline, plus loading and blinding


CAPS = [
    # (case, judge changes, config changes, field, limit)
    ("judge timeout", {"timeout_s": 86400}, {}, "judges[0].timeout_s", "max_wait_s"),
    ("backoff", {"backoff_max_s": 3600}, {}, "judges[0].backoff_max_s", "max_wait_s"),
    ("rate", {"requests_per_minute": 0.01}, {}, "judges[0].requests_per_minute", "max_wait_s"),
    ("attempts", {"max_attempts": 50}, {}, "judges[0].max_attempts", "max_attempts"),
    (
        "simulator latency",
        {"base_url": "simulator"},
        {"simulator": {"latency": {"median_s": 3600}}},
        "simulator.latency.median_s",
        "max_wait_s",
    ),
    (
        "simulator stall",
        {"base_url": "simulator"},
        {"simulator": {"rate_stall": 0.5, "stall_s": 100000}},
        "simulator.stall_s",
        "max_wait_s",
    ),
    ("compare resamples", {}, {"compare": {"resamples": 1000000}}, "compare.resamples", None),
    (
        "calibration resamples",
        {},
        {"calibration": {"resamples": 6000}},
        "calibration.resamples",
        None,
    ),
]


@SQLITE_ONLY
@pytest.mark.parametrize("case", CAPS, ids=[c[0] for c in CAPS])
def test_waits_attempts_and_resamples_are_capped(env: Env, case: tuple) -> None:
    _, judge_changes, changes, field, limit = case
    limit = limit or "max_resamples"
    config = config_for(env.sim_url, **changes)
    config["judges"] = [{**config["judges"][0], **judge_changes}]
    problem, status, _ = _refused(env, files_for(env.data, config))
    assert status == 400, problem
    assert problem["type"] == "urn:judge:problem:config-refused"
    assert problem["field"] == field and problem["limit"] == limit, problem
    assert problem["maximum"] == LIMITS[limit]
    assert problem["detail"].startswith(f"{field}: ") and f"({limit})" in problem["detail"]


@SQLITE_ONLY
def test_resamples_past_the_library_cap_are_an_invalid_config(env: Env) -> None:
    """10^9 is over the library's own sanity cap (as for `judge run`): 422 from validation."""
    config = config_for(env.sim_url, compare={"resamples": 10**9})
    problem, status, _ = _refused(env, files_for(env.data, config))
    assert status == 422 and problem["type"] == "urn:judge:problem:invalid-config", problem
    assert "compare.resamples: Input should be less than or equal to 1000000" in problem["detail"]


@SQLITE_ONLY
@pytest.mark.parametrize("endpoint", ["comparison", "calibration"])
def test_on_demand_resamples_are_capped(env: Env, endpoint: str) -> None:
    client = env.client(env.alice)
    over = LIMITS["max_resamples"] + 1
    response = client.get(f"/v1/runs/{env.alice_run}/{endpoint}", params={"resamples": over})
    assert response.status_code == 422, response.text
    problem = response.json()
    assert (problem["limit"], problem["field"], problem["actual"]) == (
        "max_resamples",
        "resamples",
        over,
    )
    within = client.get(f"/v1/runs/{env.alice_run}/{endpoint}", params={"resamples": 200})
    assert within.status_code == 200, within.text


def _slow(env: Env, token: str, latency_s: float) -> str:
    """A run judged by its own simulator, `latency_s` a request, one at a time."""
    judge = {**config_for(env.sim_url)["judges"][0], "base_url": "simulator", "max_connections": 1}
    config = config_for(
        "simulator",
        judges=[judge],
        simulator={"seed": 1, "latency": {"kind": "fixed", "median_s": latency_s}},
    )
    created = env.client(token).post("/v1/runs", files=files_for(env.data, config))
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def test_one_token_cannot_hold_every_worker_slot(env: Env) -> None:
    """Two slots, at most one per token (the default: --max-running minus 1). Carol's two slow
    runs (20 requests of 5 s each) come first; Dave's run, submitted after them, starts at
    once in the second slot, and when it is gone the free slot still does not go to Carol's
    second run while her first holds one."""
    carol, dave = make_token(env.server.db, "carol"), make_token(env.server.db, "dave")
    admin = env.client(env.admin)
    deadline = time.monotonic() + 30
    while admin.get("/readyz").json()["running"]:  # other tests' workers, still stopping
        assert time.monotonic() < deadline
        time.sleep(0.1)
    first, second = _slow(env, carol, 5.0), _slow(env, carol, 5.0)
    try:
        wait_for(env.client(carol), first, {"running"}, timeout=30)
        fast = _slow(env, dave, 5.0)
        started = wait_for(env.client(dave), fast, {"running"}, timeout=30)
        waiting = env.client(carol).get(f"/v1/runs/{second}").json()
        assert waiting["status"] == "queued" and waiting["started_at"] is None, waiting
        assert started["created_at"] > waiting["created_at"]  # later, yet first
        env.client(dave).post(f"/v1/runs/{fast}/cancel")
        while admin.get("/readyz").json()["running"] > 1:  # Dave's worker has stopped
            assert time.monotonic() < deadline + 30
            time.sleep(0.1)
        time.sleep(0.6)  # three scheduler rounds with a free slot
        assert env.client(carol).get(f"/v1/runs/{second}").json()["status"] == "queued"
        assert env.client(carol).get(f"/v1/runs/{first}").json()["status"] == "running"
    finally:
        for run_id in (second, first):
            env.client(carol).post(f"/v1/runs/{run_id}/cancel")
