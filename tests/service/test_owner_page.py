"""The owner's page (`/owner`) against the security suite's live service (tests/service/
secured.py), on SQLite and PostgreSQL: only a live API token's cookie opens it (not a bearer
header, not a forged or annotator cookie), an owner sees only their own runs, state-changing
forms are refused from another site or without the session's form key, and no token comes
back in a page. The route walks change no run (every post there is refused or invalid), so the
other security tests see the runs as made; the browser test (Debian's Chromium, SQLite) then
makes bob's run's labelling task, issues a token, labels with it and revokes it."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import Any

import httpx

from judge.service.auth import revoke_token
from judge.service.db import make_engine
from tests.service.conftest import make_token
from tests.service.secured import (
    FORM_KEY,
    OWNER_PAGES,
    SCREEN,
    SQLITE_ONLY,
    TO_THE_ENDS,
    Env,
    chromium_browser,  # noqa: F401  (the `chromium` fixture)
    owner_pages_refuse,
    screenshots,
)

MISSING = "r_" + "0" * 20


def _session(env: Env, token: str) -> httpx.Client:
    """A browser-like owner session: logged in on the page, its cookie kept."""
    client = env.client(None)
    response = client.post("/owner/login", data={"token": token})
    assert response.status_code == 303, response.text
    cookie = response.headers["set-cookie"]
    assert "judge_owner=" in cookie and "HttpOnly" in cookie and "Path=/owner" in cookie
    assert "samesite=strict" in cookie.lower()
    return client


def _main(page: httpx.Response) -> str:
    """The page's content (its header names who is logged in; nonces differ per response)."""
    found = re.search(r"<main>(.*)</main>", page.text, re.S)
    assert found, page.text[:300]
    return found.group(1)


def test_route_list_is_what_the_tests_walk() -> None:
    assert ("GET", "/owner/runs/{run_id}") in OWNER_PAGES
    assert ("POST", "/owner/runs/{run_id}/annotators/{name}/revoke") in OWNER_PAGES
    assert len(OWNER_PAGES) == 7


def test_only_a_live_api_tokens_cookie_opens_the_owner_page(env: Env) -> None:
    anonymous = env.client(None)
    forged = env.client(None)
    forged.cookies.set("judge_owner", "jdg_not-a-real-token", domain="127.0.0.1", path="/owner")
    bearer = env.client(env.alice)  # the API's header: the page takes its cookie only
    tried = sum(owner_pages_refuse(c, env.alice_run) for c in (anonymous, forged, bearer))
    assert tried == 3 * (len(OWNER_PAGES) - 1)
    wrong = anonymous.post("/owner/login", data={"token": "jdg_not-a-real-token"})
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
    # A session ends with its token's revocation, and with logging out.
    token = make_token(env.server.db, "page-revoked")
    revoked = _session(env, token)
    assert revoked.get("/owner").status_code == 200
    engine = make_engine(env.server.db)
    try:
        assert revoke_token(engine, "page-revoked")
    finally:
        engine.dispose()
    assert owner_pages_refuse(revoked, env.alice_run) == len(OWNER_PAGES) - 1
    alice = _session(env, env.alice)
    home = alice.get("/owner")
    assert home.status_code == 200 and env.alice_run in home.text
    out = alice.post("/owner/logout")
    assert out.status_code == 303
    assert owner_pages_refuse(alice, env.alice_run) == len(OWNER_PAGES) - 1


def test_another_owners_run_is_indistinguishable_from_none(env: Env) -> None:
    bob, alice, admin = (_session(env, t) for t in (env.bob, env.alice, env.admin))
    listed = bob.get("/owner").text
    assert env.bob_run in listed and env.alice_run not in listed and env.lab_run not in listed
    everyone = admin.get("/owner").text
    assert all(r in everyone for r in (env.alice_run, env.bob_run, env.lab_run))
    own = bob.get(f"/owner/runs/{env.bob_run}").text
    key = FORM_KEY.search(own)  # a form key of bob's session, from bob's own run's page
    assert key, own[:300]
    fields = {"form_key": key.group(1), "name": "intruder", "mode": "uniform"}
    for method, path in OWNER_PAGES:
        if "{run_id}" not in path:
            continue
        answers = []
        for run_id in (env.alice_run, MISSING):
            url = path.replace("{run_id}", run_id).replace("{name}", "h1")
            answers.append(bob.request(method, url, data=fields if method == "POST" else None))
        theirs, missing = answers
        assert theirs.status_code == missing.status_code == 404, (method, path, theirs.text)
        assert _main(theirs) == _main(missing).replace(MISSING, env.alice_run)
        assert env.alice_run not in _main(theirs)
    # Bob's attempts changed nothing: alice's run still has no task, no annotator.
    mine = alice.get(f"/owner/runs/{env.alice_run}")
    assert mine.status_code == 200 and "Create a labelling task" in mine.text
    api = env.client(env.alice).get(f"/v1/runs/{env.alice_run}/labelling")
    assert api.status_code == 404


@SQLITE_ONLY
def test_owner_forms_from_elsewhere_are_refused(env: Env) -> None:
    alice = _session(env, env.alice)
    page = alice.get(f"/owner/runs/{env.alice_run}")
    key = FORM_KEY.search(page.text)
    assert key, page.text[:300]
    url = f"/owner/runs/{env.alice_run}/labelling"
    # An invalid task (mode) on purpose: accepted forms reach the library, which refuses it.
    fields = {"form_key": key.group(1), "mode": "sometimes"}
    evil = alice.post(url, data=fields, headers={"Origin": "https://evil.example"})
    null = alice.post(url, data=fields, headers={"Origin": "null"})
    assert evil.status_code == null.status_code == 403
    forged = ({"form_key": "0" * 64}, {"form_key": key.group(1)[:-1] + "x"}, {"form_key": "é"})
    for wrong in ({}, *forged):
        refused = alice.post(url, data={**fields, **wrong} if wrong else {"mode": "sometimes"})
        assert refused.status_code == 403 and "did not come from" in refused.text, wrong
    accepted = alice.post(url, data=fields)
    assert accepted.status_code == 422 and "mode" in accepted.text
    assert env.client(env.alice).get(f"/v1/runs/{env.alice_run}/labelling").status_code == 404
    # The form key is neither the token nor the hash the database keeps of it.
    assert key.group(1) != hashlib.sha256(env.alice.encode()).hexdigest()
    for response in (page, evil, accepted):
        assert env.alice not in response.text
        assert response.headers["cache-control"] == "no-store"
        assert "script-src 'nonce-" in response.headers["content-security-policy"]


def _reload_until(page: Any, locator: str, text: str, timeout: float = 60) -> None:
    """The owner's page does not poll: reload it until `locator` says `text`."""
    deadline = time.monotonic() + timeout
    while text not in page.locator(locator).inner_text():
        assert time.monotonic() < deadline, page.locator(locator).inner_text()
        time.sleep(0.2)
        page.reload()


@SQLITE_ONLY
def test_owner_page_in_a_real_browser(env: Env, chromium: Any, tmp_path: Path) -> None:
    """The owner of a finished run (bob's, in the security suite's service: no task yet) logs
    in on /owner, makes the run's task and an annotator token there; the annotator labels one
    pair on /label in a second session; the owner's page shows the label and the calibration
    catching up; the owner revokes the token, and the annotator's page refuses it."""
    from playwright.sync_api import expect

    shots = screenshots(tmp_path)
    owner = chromium.new_context(viewport=SCREEN)
    page = owner.new_page()
    page.goto(env.server.url + "/owner")
    page.get_by_label("API token").fill(env.bob)
    page.get_by_label("API token").press("Enter")
    row = page.locator(f'tr[data-run="{env.bob_run}"]')
    expect(row).to_contain_text("no task yet")
    assert env.alice_run not in page.content()  # another owner's run is not listed
    row.get_by_role("link").click()
    page.get_by_label("mode").select_option("uniform")
    page.get_by_label("size").fill("5")
    page.get_by_label("overlap").fill("1")
    page.get_by_role("button", name="Create the task").click()
    expect(page.locator("#labels-total")).to_have_text("0")
    expect(page.locator("#pairs-left")).to_have_text("5")
    page.get_by_label("annotator name").fill("pager")
    page.get_by_role("button", name="Issue a token").click()
    token = page.locator("#new-token").inner_text().strip()
    assert token.startswith("jda_")
    # The kept picture hides the token (the test revokes it, but artifacts outlive tests).
    page.screenshot(
        path=str(shots / "owner-token-issued.png"),
        full_page=True,
        mask=[page.locator("#new-token")],
    )

    annotator = chromium.new_context(viewport=SCREEN)
    label = annotator.new_page()
    label.goto(env.server.url + "/label")
    label.get_by_label("annotator token").fill(token)
    label.get_by_label("annotator token").press("Enter")
    expect(label.locator("#progress")).to_contain_text("0 labelled")
    label.evaluate(TO_THE_ENDS)
    label.keyboard.press("1")
    expect(label.locator("#progress")).to_contain_text("1 labelled")

    page.goto(f"{env.server.url}/owner/runs/{env.bob_run}")  # a reload, without the token
    assert token not in page.content() and env.bob not in page.content()
    expect(page.locator('tr[data-annotator="pager"] .labels')).to_have_text("1")
    expect(page.locator("#labels-total")).to_have_text("1")
    expect(page.locator("#pairs-left")).to_have_text("4")
    _reload_until(page, "#calibration-now", "Up to date")
    page.screenshot(path=str(shots / "owner-progress.png"), full_page=True)
    page.get_by_role("button", name="revoke pager").click()
    expect(page.locator('tr[data-annotator="pager"] .state')).to_contain_text("revoked")

    label.reload()  # the revoked token's cookie no longer opens the queue
    expect(label.get_by_label("annotator token")).to_be_visible()
    label.get_by_label("annotator token").fill(token)
    label.get_by_label("annotator token").press("Enter")
    expect(label.get_by_role("alert")).to_contain_text("not a live annotator token")
    owner.close()
    annotator.close()
    api = env.client(env.bob)
    labels = api.get(f"/v1/runs/{env.bob_run}/labelling/labels").json()["items"]
    assert [(r["annotator"], r["choice"]) for r in labels] == [("pager", "1")]
    task = api.get(f"/v1/runs/{env.bob_run}/labelling").json()
    assert task["task"]["spec"]["mode"] == "uniform" and task["task"]["spec"]["size"] == 5
    assert [a["name"] for a in task["annotators"] if a["revoked_at"]] == ["pager"]
