"""The security suite's live service, shared by the security tests and the schema fuzzing (one
server per backend for the session): three tokens (alice, bob, an admin), a finished run of
alice's with human labels, a finished run of bob's (the owner's page makes its labelling task in
the browser test of tests/service/test_owner_page.py; nothing else here reads its labelling),
and one of a third token's for the labelling routes."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from judge.simulator import SimulatorConfig, running_simulator
from tests.service.conftest import BACKENDS, LiveServer, judge_spec, make_token, wait_for

EXPANDED_MB = 4
"""The shared server's limits: 1 MB bodies, 4 MB once decompressed, 256 KB lines."""
LINE_KB = 256
LIMITS = {
    "max_requests": 200,
    "max_template_output_kb": 16,
    "max_render_s": 0.5,
    "max_render_total_s": 1.0,
    "max_resamples": 5000,
    "max_wait_s": 150,
    "max_attempts": 8,
}
"""And its bounds on the work one request may cause (`judge serve --max-...`); two slots, one
per token."""
OPEN_PATHS = {"/healthz", "/openapi.json"}
"""Reachable without a token: liveness, and the published API schema."""


@dataclass
class Env:
    server: LiveServer
    alice: str
    bob: str
    admin: str
    alice_run: str
    bob_run: str
    sim_url: str
    data: Path
    carol: str = ""
    lab_run: str = ""
    """The third token's finished run, for the labelling routes: a task made there (the fuzzer makes
    one) does not change what the other routes (label uploads) do on alice's run."""
    bodies: list[str] = field(default_factory=list)
    """Every response body seen, for the secret scan."""

    def client(self, token: str | None) -> httpx.Client:
        client = self.server.client(token)
        client.event_hooks["response"] = [self._keep]
        return client

    def _keep(self, response: httpx.Response) -> None:
        response.read()
        self.bodies.append(response.text + json.dumps(dict(response.headers)))


def small_dataset(root: Path) -> tuple[Path, Path]:
    """10 items, two systems: 10 pairs, 20 requests (both orders)."""
    items, responses = root / "items.jsonl", root / "responses.jsonl"
    with items.open("w") as fh:
        for i in range(10):
            fh.write(json.dumps({"item_id": f"q{i}", "prompt": f"Question {i}?"}) + "\n")
    with responses.open("w") as fh:
        for i in range(10):
            for system in ("sys-a", "sys-b"):
                fh.write(
                    json.dumps(
                        {"item_id": f"q{i}", "system": system, "output": f"{system} answers {i}."}
                    )
                    + "\n"
                )
    return items, responses


def config_for(sim_url: str, **overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "name": "secure",
        "data": {"items": "items.jsonl", "responses": "responses.jsonl"},
        "rubric": "pairwise_general",
        "judges": [judge_spec(sim_url)],
        "compare": {"resamples": 200},
    }
    config.update(overrides)
    return config


def files_for(env_data: Path, config: dict[str, Any] | str, **parts: Any) -> dict[str, Any]:
    text = config if isinstance(config, str) else yaml.safe_dump(config)
    files: dict[str, Any] = {
        "config": ("config.yaml", text.encode()),
        "items": ("items.jsonl", (env_data / "items.jsonl").read_bytes()),
        "responses": ("responses.jsonl", (env_data / "responses.jsonl").read_bytes()),
    }
    files.update(parts)
    return {k: v for k, v in files.items() if v is not None}


SQLITE_ONLY = pytest.mark.parametrize("env", ["sqlite"], indirect=True)
"""For checks the database plays no part in (request validation, policy, limits): both backends
run only what differs between them (tokens, isolation, run status, the scheduler)."""


@pytest.fixture(scope="session", params=BACKENDS, name="env")
def secured_env(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Env]:
    root = tmp_path_factory.mktemp(f"security-{request.param}")
    if request.param == "sqlite":
        db = f"sqlite:///{root / 'service.sqlite'}"
    else:
        import psycopg

        server_url = request.getfixturevalue("pg_server")
        name = "sec_" + secrets.token_hex(5)
        with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        db = f"{server_url}/{name}"
    small_dataset(root)
    tokens = {name: make_token(db, name) for name in ("alice", "bob", "lab-owner")}
    tokens["root"] = make_token(db, "root", admin=True)
    with running_simulator(SimulatorConfig(seed=2)) as sim:
        server = LiveServer(
            db,
            root / "data",
            root / "server.log",
            [
                *("--max-upload-mb", "1", "--max-expanded-mb", str(EXPANDED_MB)),
                *("--max-line-kb", str(LINE_KB), "--allow-base-url", sim.base_url),
                *(arg for k, v in LIMITS.items() for arg in (f"--{k.replace('_', '-')}", str(v))),
            ],
        )
        server.start()
        try:
            env = Env(
                server,
                tokens["alice"],
                tokens["bob"],
                tokens["root"],
                "",
                "",
                sim.openai_base_url,
                root,
            )
            runs = {}
            env.carol = tokens["lab-owner"]
            for who in ("alice", "bob", "lab-owner"):
                client = env.client(tokens[who])
                created = client.post("/v1/runs", files=files_for(root, config_for(env.sim_url)))
                assert created.status_code == 201, created.text
                runs[who] = created.json()["id"]
            for who, run_id in runs.items():  # they execute two at once (--max-running 2)
                wait_for(env.client(tokens[who]), run_id, {"finished"}, timeout=60)
            env.alice_run, env.bob_run, env.lab_run = runs["alice"], runs["bob"], runs["lab-owner"]
            labels = "".join(
                json.dumps(
                    {
                        "item_id": f"q{i}",
                        "system_a": "sys-a",
                        "system_b": "sys-b",
                        "winner": "sys-a" if i % 3 else "tie",
                        "annotator": "h1",
                    }
                )
                + "\n"
                for i in range(10)
            )
            uploaded = env.client(tokens["alice"]).post(
                f"/v1/runs/{env.alice_run}/labels", files={"labels": ("labels.jsonl", labels)}
            )
            assert uploaded.status_code == 200, uploaded.text
            yield env
        finally:
            server.stop()


def _walk(routes: list[Any]) -> Iterator[Any]:
    """Every endpoint route, descending into included routers (FastAPI keeps those as
    wrapper routes holding the original router)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _walk(inner.routes)
        elif getattr(route, "methods", None):
            yield route


def routes() -> list[tuple[str, str]]:
    """(method, path) of every operation, from the app's route table; checked against the
    published schema so neither can miss one."""
    import tempfile

    from judge.service.app import create_app
    from judge.service.settings import ServiceSettings

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(ServiceSettings(data_dir=Path(tmp)), start_workers=False)
        found = [
            (method, route.path)
            for route in _walk(app.routes)
            for method in sorted(route.methods)
            if method not in ("HEAD", "OPTIONS")
        ]
        schema = app.openapi()
        app.state.engine.dispose()
    published = {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}
    # The pages are HTML, not API: outside the schema, each authenticating by a cookie of its
    # own. Every route is API, an annotator page or an owner page: a new page falls in one of
    # the lists below, which the page tests walk.
    pages = {(m, p) for m, p in found if _page_of(p)}
    assert published == set(found) - {("GET", "/openapi.json")} - pages
    return found


def _page_of(path: str) -> str | None:
    for prefix in ("/label", "/owner"):
        if path == prefix or path.startswith(prefix + "/"):
            return prefix
    return None


_ALL = routes()
ROUTES = [(m, p) for m, p in _ALL if _page_of(p) is None]
"""The API's operations."""
RUN_ROUTES = [(m, p) for m, p in ROUTES if "{run_id}" in p]
LABEL_PAGES = [(m, p) for m, p in _ALL if _page_of(p) == "/label"]
"""The annotators' labelling page and its forms (an annotator token's cookie opens them:
tests/service/test_labelling.py)."""
OWNER_PAGES = [(m, p) for m, p in _ALL if _page_of(p) == "/owner"]
"""The owners' page and its forms (an API token's cookie opens them, never an annotator's:
tests/service/test_owner_page.py walks every one, logged out, as an annotator, as another
owner and from another site)."""

FORM_KEY = re.compile(r'name="form_key" value="([0-9a-f]{64})"')
"""The owner's page's form key, as its forms carry it."""


def owner_pages_refuse(client: httpx.Client, run_id: str) -> int:
    """Walk every owner page with `client`, which holds no live owner session: each answers
    with the login form (GET /owner with 200, as the page to log in on; the others 401), never
    a run, a form or a form key. Logging out is left out: it drops the cookie, whoever asks.
    Returns how many routes answered so."""
    tried = 0
    for method, path in OWNER_PAGES:
        if path == "/owner/logout":
            continue
        url = path.replace("{run_id}", run_id).replace("{name}", "someone")
        fields = {"form_key": "0" * 64, "name": "someone"} if method == "POST" else None
        response = client.request(method, url, data=fields)
        expected = 200 if (method, path) == ("GET", "/owner") else 401
        assert response.status_code == expected, (method, path, response.text[:300])
        assert 'action="/owner/login"' in response.text, (method, path)
        assert "form_key" not in response.text and run_id not in response.text, (method, path)
        tried += 1
    return tried


# -- the pages in a real browser (tests/service/test_labelling.py, test_owner_page.py) ----------

CHROMIUM = Path("/usr/bin/chromium")
SCREEN = {"width": 1280, "height": 720}
"""The first screen the labelling page must fit (issue 31)."""
TO_THE_ENDS = "() => document.querySelectorAll('.pane').forEach(p => { p.scrollTop = 1e6; })"
"""Scrolls both response panes of the labelling page to their ends, as a reader would."""


@pytest.fixture(scope="module", name="chromium")
def chromium_browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright: one browser per module that imports
    this fixture, a fresh context (its own cookies) per session in it."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "install Debian's chromium (apt-get install chromium; make test does)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def screenshots(tmp_path: Path) -> Path:
    """Where kept screenshots go: $JUDGE_SCREENSHOTS, else the test's temporary directory."""
    import os

    shots = Path(os.environ.get("JUDGE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots
