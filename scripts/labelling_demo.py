"""A run's report before and after human labels arrive through the labelling page.

Starts `judge serve` on loopback with a fresh data dir, submits the bundled MT-Bench demo
(GPT-4's recorded verdicts replayed, both orders) without its human labels, so the judge starts
uncalibrated; creates an active labelling task and an annotator token; then "labels" N pairs
through the page's own HTTP forms (log in, read the shown pair, answer, exactly as the page's
buttons post). The simulated annotator answers as the MT-Bench experts did on that pair (it
reads the pair's systems from the server's blinding key, which a real annotator never sees; a
pair no expert voted on is skipped with `s`). Prints the report's first-screen numbers before
and after: the trust gate, the corrected win rate of each neighbouring pair with its interval,
and the stopping rule.

    .venv/bin/python scripts/labelling_demo.py [--labels 50] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from judge.labelling import open_labelling

REPO = Path(__file__).resolve().parent.parent
MT_BENCH = REPO / "data" / "mt_bench"
ASSIGNMENT = re.compile(r'name="assignment" value="(a_[0-9a-f]+)"')


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config() -> dict[str, Any]:
    """configs/demo.yaml with absolute paths and no human labels."""
    raw = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    base = REPO / "configs"
    raw["data"]["items"] = str((base / raw["data"]["items"]).resolve())
    raw["data"]["responses"] = str((base / raw["data"]["responses"]).resolve())
    for judge in raw["judges"]:
        judge["recorded"] = str((base / judge["recorded"]).resolve())
    raw["calibration"] = {"strata": ["turn"], "gate": raw["calibration"]["gate"]}
    raw["name"] = "labelling-demo"
    return raw


def _votes() -> dict[tuple[str, frozenset[str]], list[dict[str, Any]]]:
    votes: dict[tuple[str, frozenset[str]], list[dict[str, Any]]] = {}
    for line in (MT_BENCH / "human_labels.jsonl").open():
        row = json.loads(line)
        key = (row["item_id"], frozenset((row["system_a"], row["system_b"])))
        votes.setdefault(key, []).append(row)
    return votes


def _first_screen(api: httpx.Client, run_id: str) -> dict[str, Any]:
    summary = api.get(f"/v1/runs/{run_id}/summary.json").json()
    # summary.json holds the analysis's sections at its top level.
    decision, calibration = summary["decision"], summary["calibration"]
    corrected = {}
    if calibration is not None:
        by_pair = {frozenset(c["systems"]): c for c in calibration["corrected"]}
        for n in decision["neighbours"]:
            c = by_pair.get(frozenset((n["upper"], n["lower"])))
            if c is None or c["value"] is None:
                corrected[f"{n['upper']} > {n['lower']}"] = None
                continue
            flip = c["systems"][0] != n["upper"]
            value = 1 - c["value"] if flip else c["value"]
            low, high = (1 - c["ci_high"], 1 - c["ci_low"]) if flip else (c["ci_low"], c["ci_high"])
            corrected[f"{n['upper']} > {n['lower']}"] = (
                value,
                low,
                high,
                c["n"],
                1 - c["raw"]["value"] if flip else c["raw"]["value"],
            )
    return {
        "answer": decision["answer"]["text"],
        "gate": decision["gate"],
        "trust_reason": decision["trust_reason"],
        "labels": None if calibration is None else calibration["join"]["matched_labels"],
        "corrected": corrected,
    }


def _print(title: str, screen: dict[str, Any]) -> None:
    print(f"== {title}")
    print(f"answer: {screen['answer']}")
    print(f"judge: {screen['gate']} ({screen['trust_reason']}); labels used: {screen['labels']}")
    for pair, value in screen["corrected"].items():
        if value is None:
            print(f"  {pair}: no corrected estimate")
            continue
        v, low, high, n, raw = value
        print(
            f"  {pair}: judge alone {raw:.3f}; corrected {v:.3f} "
            f"[{low:.3f}, {high:.3f}] ({n} labels)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from judge import RunDir
    from judge.service.auth import create_token
    from judge.service.db import make_engine

    root = Path(tempfile.mkdtemp(prefix="labelling-demo-"))
    db = f"sqlite:///{root / 'service.sqlite'}"
    engine = make_engine(db)
    owner = create_token(engine, "owner")[0]
    engine.dispose()
    port = _port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "judge.cli",
            "serve",
            "--port",
            str(port),
            "--db",
            db,
            "--data-dir",
            str(root / "data"),
            "--allow-server-paths",
            str(MT_BENCH),
        ],
        stdout=(root / "server.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            time.sleep(0.2)
        api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {owner}"}, timeout=300)
        created = api.post("/v1/runs", json={"config": _config()})
        created.raise_for_status()
        run_id = created.json()["id"]
        while (info := api.get(f"/v1/runs/{run_id}").json())["status"] not in (
            "finished",
            "failed",
        ):
            time.sleep(0.5)
        assert info["status"] == "finished", info
        before = _first_screen(api, run_id)
        _print("before any label", before)

        task = api.post(f"/v1/runs/{run_id}/labelling", json={"mode": "active", "seed": args.seed})
        task.raise_for_status()
        token = api.post(f"/v1/runs/{run_id}/labelling/annotators", json={"name": "expert"}).json()
        page = httpx.Client(base_url=url, timeout=60)
        assert page.post("/label/login", data={"token": token["token"]}).status_code == 303
        rundir = RunDir(root / "data" / "runs" / run_id / "run")
        slots = rundir.read_key().pairs
        votes = _votes()
        labelled = skipped = 0
        clock = time.monotonic()
        while labelled < args.labels:
            shown = page.get("/label")
            found = ASSIGNMENT.search(shown.text)
            assert found, shown.text[:300]
            with open_labelling(rundir) as store:
                assignment = store.assignment(found.group(1))
            assert assignment is not None
            a, b = slots[assignment.pair_id]
            vote = votes.get((assignment.item_id, frozenset((a, b))))
            if not vote:
                choice = "s"
                skipped += 1
            else:
                winner = vote[0]["winner"]
                preferred = None if winner == "tie" else vote[0][f"system_{winner}"]
                first = a if assignment.shown == "AB" else b
                choice = "3" if preferred is None else "1" if preferred == first else "2"
                labelled += 1
            answered = page.post(
                "/label/answer", data={"assignment": found.group(1), "choice": choice}
            )
            assert answered.status_code == 303, answered.text[:300]
        spent = time.monotonic() - clock
        while True:
            status = api.get(f"/v1/runs/{run_id}/labelling").json()
            if not status["analysing"]:
                break
            time.sleep(0.2)
        print(
            f"\n{labelled} labels and {skipped} skips through the page in {spent:.1f} s; "
            f"calibration caught up {time.monotonic() - clock - spent:.1f} s later"
        )
        after = _first_screen(api, run_id)
        _print(f"after {labelled} labels", after)
        stopping = status["task"]["stopping"]
        print(f"stopping rule: {stopping['message']}")
        for part in stopping["parts"]:
            print(
                f"  {part['name']}: {'settled' if part['settled'] else 'open'}; "
                f"labels needed {part['labels_needed']}"
            )
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
