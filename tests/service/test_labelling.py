"""Labelling through the live service: the owner makes a task and annotator tokens; annotators
label on the page (plain HTTP forms; and Debian's Chromium at the end); labels
reach the run's calibration without re-judging; annotator tokens open nothing else.

One finished run per backend serves the module. Only the annotator tokens touch the service
database, so only the token checks run on PostgreSQL too."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.simulator import SimulatorConfig, running_simulator
from tests.service.conftest import (
    SYSTEMS,
    LiveServer,
    make_token,
    run_config,
    service_database,
    upload_files,
    wait_for,
)
from tests.service.secured import (
    OPEN_PATHS,
    OWNER_PAGES,
    ROUTES,
    SCREEN,
    TO_THE_ENDS,
    chromium_browser,  # noqa: F401  (the `chromium` fixture)
    owner_pages_refuse,
    screenshots,
)

ASSIGNMENT = re.compile(r'name="assignment" value="(a_[0-9a-f]+)"')


@dataclass
class Lab:
    server: LiveServer
    owner: str
    run_id: str

    def api(self) -> httpx.Client:
        return self.server.client(self.owner)

    def annotator(self, name: str) -> str:
        made = self.api().post(f"/v1/runs/{self.run_id}/labelling/annotators", json={"name": name})
        assert made.status_code == 201, made.text
        return str(made.json()["token"])

    def page(self, token: str) -> httpx.Client:
        """An annotator's browser-like session: logged in, cookie kept, no redirects followed."""
        client = httpx.Client(base_url=self.server.url, timeout=60)
        response = client.post("/label/login", data={"token": token})
        assert response.status_code == 303, response.text
        return client

    def settled_calibration(self, labels: int, timeout: float = 60) -> dict[str, Any]:
        """The labelling status once the run's calibration includes `labels` labels."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = self.api().get(f"/v1/runs/{self.run_id}/labelling").json()
            if not now["analysing"] and now["task"]["labels"] == labels:
                return now
            time.sleep(0.1)
        raise AssertionError(f"calibration did not catch up with {labels} labels: {now}")


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    backend = request.param
    root = tmp_path_factory.mktemp(f"labelling-{backend}")
    with (
        service_database(request, backend, root) as db,
        running_simulator(SimulatorConfig(seed=3)) as sim,
    ):
        owner = make_token(db, "owner")
        server = LiveServer(
            db, root / "data", root / "server.log", ["--allow-base-url", sim.base_url]
        )
        server.start()
        try:
            api = server.client(owner)
            config = run_config(sim.openai_base_url, name="labelling")
            created = api.post("/v1/runs", files=upload_files(config))
            assert created.status_code == 201, created.text
            run_id = created.json()["id"]
            wait_for(api, run_id, {"finished"})
            task = api.post(f"/v1/runs/{run_id}/labelling", json={"mode": "active", "seed": 1})
            assert task.status_code == 201, task.text
            yield Lab(server, owner, run_id)
        finally:
            server.stop()


BOTH = pytest.mark.parametrize("lab", ["sqlite", "postgresql"], indirect=True)
SQLITE = pytest.mark.parametrize("lab", ["sqlite"], indirect=True)


def _assignment(page: httpx.Response) -> str:
    found = ASSIGNMENT.search(page.text)
    assert found, page.text[:500]
    return found.group(1)


@BOTH
def test_annotator_token_opens_its_page_and_no_other_route(lab: Lab) -> None:
    token = lab.annotator("sec-ann")
    as_bearer = lab.server.client(token)
    session = lab.page(token)
    refused = 0
    for method, path in ROUTES:
        if path in OPEN_PATHS:
            continue
        url = path.replace("{run_id}", lab.run_id).replace("{name}", "sec-ann")
        for client in (as_bearer, session):  # as a bearer token, and as the page's cookie
            response = client.request(method, url)
            assert response.status_code == 401, (method, path, response.text)
            refused += 1
    assert refused == 2 * (len(ROUTES) - len(OPEN_PATHS)) and refused >= 30
    # Nor does it open the owner's page: not as that page's cookie, not by logging in there.
    as_owner = httpx.Client(base_url=lab.server.url, timeout=60)
    as_owner.cookies.set("judge_owner", token, domain="127.0.0.1", path="/owner")
    assert owner_pages_refuse(as_owner, lab.run_id) == len(OWNER_PAGES) - 1
    login = httpx.post(lab.server.url + "/owner/login", data={"token": token})
    assert login.status_code == 401 and "judge_owner" not in login.headers.get("set-cookie", "")
    # ... while the page opens for it, and an owner's token does not log in there.
    assert 'name="assignment"' in session.get("/label").text
    owner_login = httpx.post(lab.server.url + "/label/login", data={"token": lab.owner})
    assert owner_login.status_code == 401 and "judge_annotator" not in owner_login.headers.get(
        "set-cookie", ""
    )


@SQLITE
def test_each_annotator_sees_only_its_own_queue_blinded(lab: Lab) -> None:
    ann, other = lab.page(lab.annotator("q-one")), lab.page(lab.annotator("q-two"))
    mine, theirs = ann.get("/label"), other.get("/label")
    assert mine.status_code == theirs.status_code == 200
    assert _assignment(mine) != _assignment(theirs)  # overlap 1: different pairs
    for page in (mine, theirs):
        for name in (*SYSTEMS, "sim-judge", "vicuna", "winner", "verdict"):
            assert name not in page.text, name
        assert "script-src 'nonce-" in page.headers["content-security-policy"]
    # Answering the other's pair is refused like a pair that does not exist; nothing recorded.
    stolen = ann.post("/label/answer", data={"assignment": _assignment(theirs), "choice": "1"})
    assert stolen.status_code == 422 and "not waiting for your answer" in stolen.text
    # A form posted from another site is refused even with the cookie.
    forged = ann.post(
        "/label/answer",
        data={"assignment": _assignment(mine), "choice": "1"},
        headers={"Origin": "https://evil.example"},
    )
    assert forged.status_code == 403
    labels = lab.api().get(f"/v1/runs/{lab.run_id}/labelling/labels").json()
    assert not [r for r in labels["items"] if r["annotator"] in ("q-one", "q-two")]


@SQLITE
def test_labels_reach_the_calibration_without_rejudging(lab: Lab) -> None:
    before = lab.api().get(f"/v1/runs/{lab.run_id}").json()
    session = lab.page(lab.annotator("flow"))
    start = lab.api().get(f"/v1/runs/{lab.run_id}/labelling").json()["task"]["labels"]
    choices = ["1", "2", "tie", "1", "2", "1"] * 5
    for choice in choices:
        shown = session.get("/label")
        answered = session.post(
            "/label/answer", data={"assignment": _assignment(shown), "choice": choice}
        )
        assert answered.status_code == 303, answered.text
    status = lab.settled_calibration(start + len(choices))
    assert status["analysis_error"] is None
    (mine,) = [a for a in status["task"]["by_annotator"] if a["name"] == "flow"]
    assert (mine["labels"], mine["skips"], mine["undone"]) == (len(choices), 0, 0)
    stopping = status["task"]["stopping"]
    assert stopping["parts"] and not stopping["settled"]
    calibration = lab.api().get(f"/v1/runs/{lab.run_id}/calibration").json()
    assert calibration["join"]["matched_labels"] == start + len(choices)
    assert calibration["join"]["chosen_actively"] is True
    (corrected,) = calibration["corrected"]
    assert "inverse-probability weighted" in corrected["method"]
    assert corrected["n"] == start + len(choices)
    # Re-analysed, not re-judged: the run's requests and attempts are as they were.
    after = lab.api().get(f"/v1/runs/{lab.run_id}").json()
    assert after["progress"]["total"] == before["progress"]["total"]
    assert after["attempts"] == before["attempts"]
    # Every label records who, when, the order shown and the time spent.
    rows = lab.api().get(f"/v1/runs/{lab.run_id}/labelling/labels").json()["items"]
    ours = [r for r in rows if r["annotator"] == "flow"]
    assert len(ours) == len(choices)
    assert {r["shown"] for r in ours} <= {"AB", "BA"}
    assert all(r["seconds"] is not None and r["seconds"] >= 0 for r in ours)
    assert all(r["winner"] in (*SYSTEMS, "tie") for r in ours)


@SQLITE
def test_a_second_task_a_bad_spec_and_a_label_upload_are_refused(lab: Lab) -> None:
    again = lab.api().post(f"/v1/runs/{lab.run_id}/labelling", json={"mode": "uniform"})
    assert again.status_code == 409 and "one per run" in again.json()["detail"]
    bad = lab.api().post(f"/v1/runs/{lab.run_id}/labelling", json={"mode": "sometimes"})
    assert bad.status_code == 422
    # One source of labels: a file upload would be replaced by the task's next label.
    table = "item_id,system_a,system_b,winner\nq1,a,b,a\n"
    upload = lab.api().post(
        f"/v1/runs/{lab.run_id}/labels", files={"labels": ("labels.csv", table)}
    )
    assert upload.status_code == 409 and "labelling task" in upload.json()["detail"]


def run_path(lab: Lab) -> Path:
    return lab.server.data_dir / "runs" / lab.run_id / "run"


OVERFLOWING = (
    "() => [...document.querySelectorAll('.pane')].some(p => p.scrollHeight > p.clientHeight + 2)"
)


def _inside(box: dict[str, float] | None, width: float, height: float) -> bool:
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and box["y"] + box["height"] <= height
    )


def _given(lab: Lab, annotator: str) -> list[dict[str, Any]]:
    rows = lab.api().get(f"/v1/runs/{lab.run_id}/labelling/labels").json()["items"]
    return [r for r in rows if r["annotator"] == annotator]


def _first_screen(page: Any, shots: Path) -> None:
    """(a) At 1280x720 both panes, the progress and the label buttons lie in the viewport, and
    the page itself does not scroll."""
    for target in ("#question", "#response-1", "#response-2", "#progress"):
        assert _inside(page.locator(target).bounding_box(), **SCREEN), target
    for name in ("Response 1 is better", "Response 2 is better", "Tie", "Skip"):
        assert _inside(page.get_by_role("button", name=name).bounding_box(), **SCREEN), name
    assert page.evaluate("document.scrollingElement.scrollHeight") <= SCREEN["height"]
    page.screenshot(path=str(shots / "labelling-first-screen.png"), full_page=False)


def _read_first(page: Any, lab: Lab, given: list[str]) -> None:
    """(b) On a pair whose responses overflow their panes, 1 / 2 / 3 and the buttons record
    nothing (a hint says why) until both panes are scrolled to their ends. Pairs that fit
    their panes count as read at once: answered on the way to one that does not."""
    from playwright.sync_api import expect

    for _ in range(10):
        if page.evaluate(OVERFLOWING):
            break
        expect(page.get_by_role("button", name="Response 1 is better")).to_have_attribute(
            "aria-disabled", "false"
        )
        page.keyboard.press("1")
        given.append("1")
        expect(page.locator("#progress")).to_contain_text(f"{len(given)} labelled")
    assert page.evaluate(OVERFLOWING), "no pair in 10 overflows its pane at 1280x720"
    before = len(_given(lab, "browser"))
    for key in ("1", "2", "3"):
        page.keyboard.press(key)
    # aria-disabled: Playwright would wait for the button to be enabled; a person clicks.
    page.get_by_role("button", name="Response 2 is better").click(force=True)
    expect(page.locator("#hint")).to_be_visible()
    expect(page.locator("#hint")).to_contain_text("Read both responses first")
    time.sleep(0.3)  # what a wrongly sent form would need to arrive
    assert len(_given(lab, "browser")) == before
    expect(page.locator("#progress")).to_contain_text(f"{len(given)} labelled")
    for pane in ("#response-1", "#response-2"):  # the mouse wheel, as a reader scrolls
        page.locator(pane).hover()
        page.mouse.wheel(0, 20_000)
        expect(page.locator(pane)).to_have_attribute("data-seen", "")
    page.keyboard.press("2")
    given.append("2")
    expect(page.locator("#progress")).to_contain_text(f"{len(given)} labelled")
    assert len(_given(lab, "browser")) == before + 1


@SQLITE
def test_labelling_page_in_a_real_browser(lab: Lab, chromium: Any, tmp_path: Path) -> None:
    """Log in with an annotator token (Enter submits); the first screen at 1280x720 holds both
    responses; a label needs both responses read; then 20 labels by keyboard, undo one, a
    reason, label it again; then the labels and the recomputed calibration through the API,
    and the page on a narrow screen. Screenshots go to $JUDGE_SCREENSHOTS, else the test's
    temporary directory."""
    import json

    from playwright.sync_api import expect

    shots = screenshots(tmp_path)
    token = lab.annotator("browser")
    start = lab.api().get(f"/v1/runs/{lab.run_id}/labelling").json()["task"]["labels"]
    steps: dict[str, float] = {}
    given: list[str] = []
    clock = time.monotonic()
    context = chromium.new_context(viewport=SCREEN)
    page = context.new_page()
    page.goto(lab.server.url + "/label")
    page.get_by_label("annotator token").fill(token)
    page.get_by_label("annotator token").press("Enter")  # (c) Enter submits the login
    expect(page.locator("#question")).to_be_visible()
    expect(page.locator("#progress")).to_contain_text("0 labelled")
    _first_screen(page, shots)
    steps["log in, first screen"] = time.monotonic() - clock
    _read_first(page, lab, given)
    steps["read before labelling"] = time.monotonic() - clock - sum(steps.values())
    for key in ["1", "2", "3", "1", "1", "2", "3", "2", "1", "2"] * 2:
        if len(given) == 19:
            last = page.locator("#question").inner_text()
            last_first = page.locator("#response-1").inner_text()
        page.evaluate(TO_THE_ENDS)
        page.keyboard.press(key)
        given.append(key)
        expect(page.locator("#progress")).to_contain_text(f"{len(given)} labelled")
        if len(given) == 20:
            break
    steps["labels by keyboard"] = time.monotonic() - clock - sum(steps.values())
    page.screenshot(path=str(shots / "labelling-after-20.png"), full_page=False)
    page.keyboard.press("u")
    expect(page.locator("#progress")).to_contain_text("19 labelled")
    # The undone pair comes back, in the order it was shown.
    assert page.locator("#question").inner_text() == last
    assert page.locator("#response-1").inner_text() == last_first
    # The reason field takes typing (Enter in it answers nothing); then the key answers.
    page.evaluate(TO_THE_ENDS)
    page.get_by_label("reason").fill("2 is clearer")
    page.get_by_label("reason").press("Enter")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("2")
    expect(page.locator("#progress")).to_contain_text("20 labelled")
    steps["undo, reason, relabel"] = time.monotonic() - clock - sum(steps.values())
    # Below 800 px the panes stack and the page scrolls.
    page.set_viewport_size({"width": 600, "height": 900})
    first, second = (page.locator(f"#response-{n}").bounding_box() for n in (1, 2))
    assert first and second and second["y"] >= first["y"] + first["height"]
    page.screenshot(path=str(shots / "labelling-narrow.png"), full_page=False)
    context.close()
    ours = _given(lab, "browser")
    assert len(ours) == 21  # 20, one undone (kept, marked), the pair labelled again
    undone = [r for r in ours if r["undone_at"]]
    standing = [r for r in ours if not r["undone_at"]]
    assert len(undone) == 1 and len(standing) == 20
    assert undone[0]["choice"] == {"3": "tie"}.get(given[-1], given[-1])
    assert standing[-1]["choice"] == "2" and standing[-1]["id"] > undone[0]["id"]
    assert standing[-1]["reason"] == "2 is clearer"
    assert [r["choice"] for r in standing[:19]] == [{"3": "tie"}.get(k, k) for k in given[:19]]
    assert all(r["seconds"] is not None and r["shown"] in ("AB", "BA") for r in ours)
    status = lab.settled_calibration(start + 20)
    (mine,) = [a for a in status["task"]["by_annotator"] if a["name"] == "browser"]
    assert (mine["labels"], mine["skips"], mine["undone"]) == (20, 0, 1)
    assert mine["last_label_at"] == standing[-1]["created_at"]
    calibration = lab.api().get(f"/v1/runs/{lab.run_id}/calibration").json()
    assert calibration["join"]["matched_labels"] == start + 20
    steps["calibration caught up"] = time.monotonic() - clock - sum(steps.values())
    report = {"steps_s": {k: round(v, 2) for k, v in steps.items()}, "labels": status["task"]}
    (shots / "labelling-browser-timing.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report["steps_s"]))


def test_a_restarted_server_analyses_labels_its_predecessor_did_not(tmp_path: Path) -> None:
    import os

    from judge.service.refresher import stale_runs

    def run(run_id: str, *, labels: float | None, summary: float | None) -> None:
        run_dir = tmp_path / run_id / "run"
        run_dir.mkdir(parents=True)
        for name, when in (("labelling.sqlite", labels), ("summary.json", summary)):
            if when is not None:
                (run_dir / name).write_text("x")
                os.utime(run_dir / name, (when, when))

    run("r_caught_up", labels=1000.0, summary=2000.0)
    run("r_behind", labels=3000.0, summary=2000.0)
    run("r_never_analysed", labels=1000.0, summary=None)
    run("r_no_task", labels=None, summary=2000.0)
    # A WAL written after the summary counts; a reader's -shm index does not.
    run("r_wal", labels=1000.0, summary=2000.0)
    wal = tmp_path / "r_wal" / "run" / "labelling.sqlite-wal"
    wal.write_text("x")
    os.utime(wal, (3000.0, 3000.0))
    run("r_shm", labels=1000.0, summary=2000.0)
    shm = tmp_path / "r_shm" / "run" / "labelling.sqlite-shm"
    shm.write_text("x")
    os.utime(shm, (3000.0, 3000.0))
    found = [run_id for run_id, _ in stale_runs(tmp_path)]
    assert found == ["r_behind", "r_never_analysed", "r_wal"]
