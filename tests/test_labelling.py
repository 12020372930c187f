"""Human labelling tasks (`judge.labelling`) on a real finished run: the MT-Bench demo (GPT-4's
recorded verdicts on bundled data), judged once per module without human labels, each test
working on its own copy. Expected values are computed here from the run's own files
(judgments.jsonl, the blinding key, the raw SQLite tables) and from the MT-Bench experts'
votes, which answer as the simulated human; never from the code under test."""

from __future__ import annotations

import csv
import itertools
import json
import math
import random
import shutil
import sqlite3
import time
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge import RunDir
from judge.errors import ConfigError, DataError
from judge.labelling import offline, open_labelling, sample, session, status
from judge.labelling.task import TaskSpec, build_queue, create_task
from tests.helpers import MT_BENCH, REPO, run_cli_here

FLOOR = 0.05  # TaskSpec's default floor and uniform share, restated for the references
UNIFORM = 0.2


# -- the run every test labels ---------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`judge run` on the demo config without `calibration.human`/`published`: a finished run
    that is not calibrated before labels arrive. Paths made absolute (the copy lives in tmp)."""
    base = tmp_path_factory.mktemp("labelling")
    config = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text(encoding="utf-8"))
    here = REPO / "configs"
    for key in ("items", "responses"):
        config["data"][key] = str((here / config["data"][key]).resolve())
    for judge in config["judges"]:
        if "recorded" in judge:
            judge["recorded"] = str((here / judge["recorded"]).resolve())
    config["calibration"].pop("human")
    config["calibration"].pop("published")
    path = base / "demo.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run_dir = base / "run"
    done = run_cli_here("run", str(path), "--run-dir", str(run_dir), "--quiet")
    assert done.returncode == 0, done.stderr
    assert (run_dir / "judgments.jsonl").is_file()
    assert RunDir(run_dir).human_labels() is None
    return run_dir


def copy_run(source: Path, target: Path) -> RunDir:
    shutil.copytree(source, target)
    (target / "run.lock").unlink(missing_ok=True)
    return RunDir(target)


@pytest.fixture
def fresh(demo_run: Path, tmp_path: Path) -> RunDir:
    """This test's own copy of the run."""
    return copy_run(demo_run, tmp_path / "run")


@pytest.fixture(scope="module")
def judgments(demo_run: Path) -> list[dict[str, Any]]:
    text = (demo_run / "judgments.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def slots(demo_run: Path) -> dict[str, tuple[str, str]]:
    """pair_id -> (system in slot A, system in slot B), from the blinding key."""
    return {p: (a, b) for p, (a, b) in RunDir(demo_run).read_key().pairs.items()}


@pytest.fixture(scope="module")
def system_names(demo_run: Path) -> set[str]:
    names = set(RunDir(demo_run).read_key().systems.values())
    assert len(names) == 6
    return names


@pytest.fixture(scope="module")
def experts() -> dict[tuple[str, frozenset[str]], str]:
    """(item, {two systems}) -> the first expert vote's winner: a system name or 'tie'."""
    votes: dict[tuple[str, frozenset[str]], str] = {}
    for line in (MT_BENCH / "human_labels.jsonl").read_text(encoding="utf-8").splitlines():
        v = json.loads(line)
        winner = {"a": v["system_a"], "b": v["system_b"], "tie": "tie"}[v["winner"]]
        votes.setdefault((v["item_id"], frozenset((v["system_a"], v["system_b"]))), winner)
    return votes


# -- reading the labelling file and the run store directly -----------------------------------


def raw_queue(rundir: RunDir) -> list[dict[str, Any]]:
    conn = sqlite3.connect(rundir.labelling_file)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM queue ORDER BY rank")]
    finally:
        conn.close()


def raw_labels(rundir: RunDir) -> list[dict[str, Any]]:
    conn = sqlite3.connect(rundir.labelling_file)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM labels ORDER BY id")]
    finally:
        conn.close()


def raw_assignment(rundir: RunDir, assignment_id: str) -> dict[str, Any]:
    conn = sqlite3.connect(rundir.labelling_file)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute("SELECT * FROM assignments WHERE id = ?", (assignment_id,)).fetchone()
    finally:
        conn.close()
    assert row is not None, assignment_id
    return dict(row)


def blinded_outputs(rundir: RunDir, pair_id: str) -> tuple[str, str]:
    """The run store's blinded texts of the pair's slot A and slot B."""
    conn = sqlite3.connect(rundir.store_file)
    try:
        row = conn.execute(
            "SELECT a.output, b.output FROM pairs p "
            "JOIN blinded_responses a ON a.blind_id = p.slot_a "
            "JOIN blinded_responses b ON b.blind_id = p.slot_b WHERE p.pair_id = ?",
            (pair_id,),
        ).fetchone()
    finally:
        conn.close()
    assert row is not None
    return row[0], row[1]


def expected_inclusion(queue: list[dict[str, Any]], settled: int) -> dict[str, float]:
    """min(1, t w) for the first `settled` queue rows, t the key of the next row."""
    if settled == len(queue):
        return {q["pair_id"]: 1.0 for q in queue}
    t = queue[settled]["priority"]
    return {q["pair_id"]: min(1.0, t * q["weight"]) for q in queue[:settled]}


# -- a simulated human ------------------------------------------------------------------------


def key_for(choice_slot: str, shown: str) -> str:
    """The key an annotator presses to pick slot `choice_slot` when the pair is shown so."""
    if choice_slot == "tie":
        return "3"
    first = "a" if shown == "AB" else "b"
    return "1" if choice_slot == first else "2"


def expert_slot(
    experts: dict[tuple[str, frozenset[str]], str],
    slots: dict[str, tuple[str, str]],
    item_id: str,
    pair_id: str,
) -> str | None:
    """The slot (a, b, tie) the experts prefer on this pair; None: no expert voted on it."""
    a, b = slots[pair_id]
    winner = experts.get((item_id, frozenset((a, b))))
    if winner is None:
        return None
    return "tie" if winner == "tie" else "a" if winner == a else "b"


def label_as_experts(
    rundir: RunDir,
    annotator: str,
    labels: int,
    experts: dict[tuple[str, frozenset[str]], str],
    slots: dict[str, tuple[str, str]],
) -> int:
    """Answer pair after pair as the experts did (skip a pair no expert voted on) until
    `labels` answers that are not skips are given; returns the pairs answered."""
    given = answered = 0
    while given < labels:
        shown = session.next_pair(rundir, annotator)
        assert shown is not None
        row = raw_assignment(rundir, shown.assignment_id)
        slot = expert_slot(experts, slots, shown.item_id, row["pair_id"])
        choice = "s" if slot is None else key_for(slot, row["shown"])
        session.answer(rundir, annotator, shown.assignment_id, choice)
        answered += 1
        given += slot is not None
    return answered


# -- 1. the queue ------------------------------------------------------------------------------


def test_queue_holds_every_judged_pair_in_increasing_priority(
    fresh: RunDir, judgments: list[dict[str, Any]]
) -> None:
    pairs = {r["pair_id"]: r["item_id"] for r in judgments}
    assert len(pairs) > 2000
    create_task(fresh, TaskSpec(mode="active", seed=3))
    queue = raw_queue(fresh)
    assert [q["rank"] for q in queue] == list(range(len(pairs)))
    assert {q["pair_id"]: q["item_id"] for q in queue} == pairs
    keys = [q["priority"] for q in queue]
    assert all(x <= y for x, y in itertools.pairwise(keys))
    assert all(k > 0 for k in keys)
    with open_labelling(fresh) as store:
        task = store.task()
    assert task is not None and task[2] == len(pairs)
    assert task[1]["seed"] == 3 and task[1]["mode"] == "active"


def test_size_cuts_the_sampling_order(fresh: RunDir) -> None:
    full = build_queue(fresh, TaskSpec(mode="active", seed=5))[0]
    cut = build_queue(fresh, TaskSpec(mode="active", seed=5, size=25))[0]
    assert len(cut) == 25
    assert [q.pair_id for q in cut] == [q.pair_id for q in full[:25]]
    create_task(fresh, TaskSpec(mode="active", seed=5, size=25))
    assert [q["pair_id"] for q in raw_queue(fresh)] == [q.pair_id for q in full[:25]]


def test_where_keeps_only_the_items_of_those_strata(
    fresh: RunDir, judgments: list[dict[str, Any]]
) -> None:
    items = [json.loads(x) for x in (MT_BENCH / "items.jsonl").read_text().splitlines()]
    writing = {i["item_id"] for i in items if i["category"] == "writing"}
    expected = {r["pair_id"] for r in judgments if r["item_id"] in writing}
    assert 0 < len(expected) < len({r["pair_id"] for r in judgments})
    create_task(fresh, TaskSpec(mode="uniform", where={"category": ["writing"]}))
    queue = raw_queue(fresh)
    assert {q["pair_id"] for q in queue} == expected
    assert {q["item_id"] for q in queue} <= writing
    assert [q["rank"] for q in queue] == list(range(len(expected)))


def test_where_on_an_unknown_stratum_is_a_config_error(fresh: RunDir) -> None:
    with pytest.raises(ConfigError, match="colour"):
        create_task(fresh, TaskSpec(where={"colour": ["red"]}))
    with open_labelling(fresh) as store:
        assert store.task() is None


def test_a_second_task_is_a_config_error(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="uniform", size=10))
    before = raw_queue(fresh)
    with pytest.raises(ConfigError, match="one per run"):
        create_task(fresh, TaskSpec(mode="active"))
    assert raw_queue(fresh) == before


def test_uniform_weights_are_all_one(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="uniform"))
    assert {q["weight"] for q in raw_queue(fresh)} == {1.0}


def test_active_weights_follow_the_judges_disagreement(
    fresh: RunDir, judgments: list[dict[str, Any]], slots: dict[str, tuple[str, str]]
) -> None:
    create_task(fresh, TaskSpec(mode="active"))
    weight = {q["pair_id"]: q["weight"] for q in raw_queue(fresh)}
    # Reference: each order's verdict as slot A's score, p their mean, u = sqrt(p(1-p) + floor),
    # w = (1 - uniform) u / mean(u) + uniform.
    votes: dict[str, list[float]] = defaultdict(list)
    for r in judgments:
        a, b = slots[r["pair_id"]]
        for order in ("verdict_ab", "verdict_ba"):
            if r[order] is not None:
                votes[r["pair_id"]].append(1.0 if r[order] == a else 0.0 if r[order] == b else 0.5)
    u = {}
    for pair_id, v in votes.items():
        p = sum(v) / len(v)
        u[pair_id] = math.sqrt(p * (1 - p) + FLOOR)
    mean_u = sum(u.values()) / len(u)
    for pair_id, value in u.items():
        assert weight[pair_id] == pytest.approx((1 - UNIFORM) * value / mean_u + UNIFORM)

    assert sum(weight.values()) / len(weight) == pytest.approx(1.0)
    assert min(weight.values()) >= UNIFORM - 1e-12
    inconsistent = [weight[r["pair_id"]] for r in judgments if r["consistent"] is False]
    decisive = [
        weight[r["pair_id"]] for r in judgments if r["consistent"] and r["outcome"] in ("a", "b")
    ]
    assert len(inconsistent) > 100 and len(decisive) > 100
    assert min(inconsistent) > max(decisive)


# -- 2. no system name in the labelling file ---------------------------------------------------


def test_the_labelling_file_holds_no_system_name(
    fresh: RunDir, system_names: set[str], experts: Any, slots: Any
) -> None:
    create_task(fresh, TaskSpec(mode="active", overlap=2))
    label_as_experts(fresh, "ann_one", 8, experts, slots)
    label_as_experts(fresh, "ann_two", 5, experts, slots)
    shown = session.next_pair(fresh, "ann_one")
    assert shown is not None
    session.answer(fresh, "ann_one", shown.assignment_id, "1", reason="the first is clearer")
    session.undo(fresh, "ann_two")
    assert session.next_pair(fresh, "ann_three") is not None  # an open assignment too

    conn = sqlite3.connect(fresh.labelling_file)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert {"task", "queue", "assignments", "labels"} <= set(tables)
        cells = 0
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    if isinstance(cell, (str, bytes)):
                        text = cell.decode("utf-8", "replace") if isinstance(cell, bytes) else cell
                        cells += 1
                        for name in system_names:
                            assert name.lower() not in text.lower(), (table, text)
    finally:
        conn.close()
    assert cells > 100


# -- 3. assignment -----------------------------------------------------------------------------


def test_overlap_two_gives_both_annotators_the_first_pair_in_opposite_orders(
    fresh: RunDir,
) -> None:
    create_task(fresh, TaskSpec(mode="active", overlap=2, seed=11))
    first = raw_queue(fresh)[0]
    one = session.next_pair(fresh, "ann_one")
    two = session.next_pair(fresh, "ann_two")
    assert one is not None and two is not None
    row_one = raw_assignment(fresh, one.assignment_id)
    row_two = raw_assignment(fresh, two.assignment_id)
    assert row_one["pair_id"] == row_two["pair_id"] == first["pair_id"]
    assert row_one["shown"] == ("AB" if first["flip"] == 0 else "BA")
    assert {row_one["shown"], row_two["shown"]} == {"AB", "BA"}
    # What each sees: the two blinded texts, swapped between them.
    out_a, out_b = blinded_outputs(fresh, first["pair_id"])
    seen_one = (one.first.output, one.second.output)
    assert seen_one == ((out_a, out_b) if row_one["shown"] == "AB" else (out_b, out_a))
    assert (two.first.output, two.second.output) == seen_one[::-1]
    assert one.item_id == two.item_id == first["item_id"]
    # A third annotator gets the next pair: the first has its two.
    three = session.next_pair(fresh, "ann_three")
    assert three is not None
    assert raw_assignment(fresh, three.assignment_id)["pair_id"] == raw_queue(fresh)[1]["pair_id"]


def test_overlap_one_gives_two_annotators_different_pairs(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="uniform", overlap=1))
    queue = raw_queue(fresh)
    one = session.next_pair(fresh, "ann_one")
    two = session.next_pair(fresh, "ann_two")
    assert one is not None and two is not None
    assert raw_assignment(fresh, one.assignment_id)["pair_id"] == queue[0]["pair_id"]
    assert raw_assignment(fresh, two.assignment_id)["pair_id"] == queue[1]["pair_id"]


def test_a_reload_shows_the_same_assignment(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="active"))
    one = session.next_pair(fresh, "ann_one")
    again = session.next_pair(fresh, "ann_one")
    assert one is not None and again is not None
    assert again.assignment_id == one.assignment_id
    assert (again.first, again.second) == (one.first, one.second)
    conn = sqlite3.connect(fresh.labelling_file)
    try:
        assert conn.execute("SELECT count(*) FROM assignments").fetchone()[0] == 1
    finally:
        conn.close()


def test_answers_only_to_ones_own_open_assignment(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="active"))
    mine = session.next_pair(fresh, "ann_one")
    assert mine is not None
    with pytest.raises(LookupError):
        session.answer(fresh, "ann_two", mine.assignment_id, "1")
    with pytest.raises(LookupError):
        session.answer(fresh, "ann_one", "a_0000000000000000", "1")
    assert raw_labels(fresh) == []
    session.answer(fresh, "ann_one", mine.assignment_id, "2")
    with pytest.raises(LookupError):
        session.answer(fresh, "ann_one", mine.assignment_id, "2")
    assert len(raw_labels(fresh)) == 1


def test_choices_are_stored_as_the_slot_they_name(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="uniform", overlap=2, seed=1))
    # Both orders of the same pairs: press 1, 2, 3 and s on each and check the slots.
    expected = {("AB", "1"): "a", ("AB", "2"): "b", ("BA", "1"): "b", ("BA", "2"): "a"}
    expected |= {(o, "3"): "tie" for o in ("AB", "BA")} | {(o, "s"): None for o in ("AB", "BA")}
    stored = {"1": "1", "2": "2", "3": "tie", "s": "skip"}
    for key in ("1", "2", "3", "s"):
        for who in ("ann_one", "ann_two"):
            shown = session.next_pair(fresh, who)
            assert shown is not None
            order = raw_assignment(fresh, shown.assignment_id)["shown"]
            label = session.answer(fresh, who, shown.assignment_id, key)
            assert (label.choice, label.winner, label.shown) == (
                stored[key],
                expected[(order, key)],
                order,
            )
    rows = raw_labels(fresh)
    assert {(r["shown"], r["choice"], r["winner"]) for r in rows} == {
        (o, stored[k], w) for (o, k), w in expected.items()
    }
    shown = session.next_pair(fresh, "ann_one")
    assert shown is not None
    with pytest.raises(DataError) as bad:
        session.answer(fresh, "ann_one", shown.assignment_id, "4")
    assert bad.value.field == "choice"


# -- 4. undo ------------------------------------------------------------------------------------


def test_undo_brings_the_same_pair_back_first_and_keeps_the_row(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="active"))
    queue = raw_queue(fresh)
    first = session.next_pair(fresh, "ann")
    assert first is not None
    session.answer(fresh, "ann", first.assignment_id, "1")
    second = session.next_pair(fresh, "ann")  # on screen when undo is pressed
    assert second is not None and second.assignment_id != first.assignment_id
    time.sleep(0.01)  # served_at has millisecond resolution: the undo is a later serve
    undone = session.undo(fresh, "ann")
    assert undone is not None and undone.assignment_id == first.assignment_id

    back = session.next_pair(fresh, "ann")
    assert back is not None
    assert back.assignment_id == first.assignment_id
    assert (back.first, back.second) == (first.first, first.second)
    rows = raw_labels(fresh)
    assert len(rows) == 1 and rows[0]["undone_at"] is not None
    assert rows[0]["pair_id"] == queue[0]["pair_id"]
    with open_labelling(fresh) as store:
        state, labels = sample.sample(store, 2)
    assert labels == [] and state.labels == 0 and state.labelled == 0
    assert state.waiting == 2  # both pairs are on the annotator's screen, unanswered

    session.answer(fresh, "ann", back.assignment_id, "2")
    rows = raw_labels(fresh)
    assert [(r["choice"], r["undone_at"] is None) for r in rows] == [("1", False), ("2", True)]
    after = session.next_pair(fresh, "ann")
    assert after is not None and after.assignment_id == second.assignment_id
    with open_labelling(fresh) as store:
        state, labels = sample.sample(store, 2)
    assert [(x.pair_id, x.winner) for x in labels] == [
        (queue[0]["pair_id"], "b" if rows[1]["shown"] == "AB" else "a")
    ]


# -- 5. the sample and its inclusion probabilities ----------------------------------------------


def test_sample_threshold_and_inclusion_of_a_labelled_prefix(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="active", seed=2))
    queue = raw_queue(fresh)
    k = 12
    for _ in range(k):
        shown = session.next_pair(fresh, "ann")
        assert shown is not None
        session.answer(fresh, "ann", shown.assignment_id, "1")
    with open_labelling(fresh) as store:
        state, labels = sample.sample(store, 2)
    assert (state.settled, state.labelled, state.labels) == (k, k, k)
    assert (state.skipped, state.waiting, state.ahead) == (0, 0, 0)
    assert state.pool == len(queue)
    assert state.threshold == queue[k]["priority"]
    want = expected_inclusion(queue, k)
    assert {x.pair_id for x in labels} == set(want)
    for x in labels:
        assert x.inclusion == pytest.approx(want[x.pair_id], rel=1e-12)
    # Active weights differ, so the probabilities do too (not one constant).
    assert len({round(x.inclusion, 12) for x in labels}) > 1

    # Shown, unanswered: waiting, inside the sample, no label; the threshold moves past it.
    shown = session.next_pair(fresh, "ann")
    assert shown is not None
    with open_labelling(fresh) as store:
        state, labels = sample.sample(store, 2)
    assert (state.settled, state.waiting, state.labels) == (k + 1, 1, k)
    assert state.threshold == queue[k + 1]["priority"]
    # Skipped by the only annotator: settled, skipped, no label.
    session.answer(fresh, "ann", shown.assignment_id, "s")
    with open_labelling(fresh) as store:
        state, labels = sample.sample(store, 2)
    assert (state.settled, state.skipped, state.waiting, state.labels) == (k + 1, 1, 0, k)
    assert queue[k]["pair_id"] not in {x.pair_id for x in labels}
    want = expected_inclusion(queue, k + 1)
    for x in labels:
        assert x.inclusion == pytest.approx(want[x.pair_id], rel=1e-12)

    # A second annotator is offered the skipped pair first (one skip of max_skips 2) ...
    other = session.next_pair(fresh, "ann_two")
    assert other is not None
    assert raw_assignment(fresh, other.assignment_id)["pair_id"] == queue[k]["pair_id"]
    session.answer(fresh, "ann_two", other.assignment_id, "2")
    with open_labelling(fresh) as store:
        state, labels = sample.sample(store, 2)
    # ... and its answer makes it a labelled pair of the sample.
    assert (state.settled, state.labelled, state.skipped, state.labels) == (k + 1, k + 1, 0, k + 1)
    assert state.annotators == 2


def test_every_pair_settled_means_inclusion_one(tmp_path: Path) -> None:
    # A queue holding the whole pool, every pair labelled: each was certain to be (no cut).
    from judge.labelling.label_store import LabelStore, QueueRow

    with LabelStore(tmp_path / "labelling.sqlite") as store:
        queue = [QueueRow(f"p{i}", f"q{i}", i, 0.5 + i, 0.1 * (i + 1), i % 2) for i in range(3)]
        store.create_task(TaskSpec(mode="active").model_dump(mode="json"), queue, None)
        for _ in range(3):
            assignment = store.assign_next("ann", 1, 2)
            assert assignment is not None
            store.add_label(assignment, "tie", None, source="page")
        assert store.assign_next("ann", 1, 2) is None
        state, labels = sample.sample(store, 2)
    assert state.threshold is None and state.settled == 3
    assert [x.inclusion for x in labels] == [1.0, 1.0, 1.0]


def test_a_size_cut_uniform_task_is_a_sample_of_the_run(fresh: RunDir) -> None:
    # Three pairs of the run's 2,254 labelled: each had probability t (the 4th key), not 1.
    full = build_queue(fresh, TaskSpec(mode="uniform", seed=2))[0]
    create_task(fresh, TaskSpec(mode="uniform", size=3, seed=2))
    for _ in range(3):
        shown = session.next_pair(fresh, "ann")
        assert shown is not None
        session.answer(fresh, "ann", shown.assignment_id, "3")
    assert session.next_pair(fresh, "ann") is None
    with open_labelling(fresh) as store:
        state, labels = sample.sample(store, 2)
    assert state.threshold == pytest.approx(full[3].priority)
    assert [x.inclusion for x in labels] == pytest.approx([full[3].priority] * 3)


def test_a_size_cut_active_task_keeps_the_inclusion_probabilities(fresh: RunDir) -> None:
    full = build_queue(fresh, TaskSpec(mode="active", seed=4))[0]
    create_task(fresh, TaskSpec(mode="active", seed=4, size=5))
    for _ in range(5):
        shown = session.next_pair(fresh, "ann")
        assert shown is not None
        session.answer(fresh, "ann", shown.assignment_id, "1")
    with open_labelling(fresh) as store:
        _state, labels = sample.sample(store, 2)
    # Ohlsson's threshold for the first 5 of the run's 2,254 pairs: the 6th key.
    t = full[5].priority
    want = {q.pair_id: min(1.0, t * q.weight) for q in full[:5]}
    assert all(p < 0.05 for p in want.values())
    assert {x.pair_id: pytest.approx(x.inclusion) for x in labels} == want


# -- 6. publish ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def published_active(
    demo_run: Path, tmp_path_factory: pytest.TempPathFactory, experts: Any, slots: Any
) -> tuple[RunDir, int]:
    """A copy of the run with an active task (overlap 1), 40 expert answers, published.
    Read only by the tests that use it. Returns the run and the pairs answered."""
    rundir = copy_run(demo_run, tmp_path_factory.mktemp("published") / "run")
    create_task(rundir, TaskSpec(mode="active", seed=0))
    answered = label_as_experts(rundir, "expert_sim", 40, experts, slots)
    sample.publish(rundir)
    return rundir, answered


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_publish_writes_the_sample_as_the_runs_human_labels(
    published_active: tuple[RunDir, int], experts: Any, slots: Any
) -> None:
    rundir, answered = published_active
    table = rundir.human_labels()
    assert table is not None
    head, rows = read_csv(table)
    assert head == ["item_id", "system_a", "system_b", "winner", "annotator", "inclusion"]
    standing = [r for r in raw_labels(rundir) if r["undone_at"] is None]
    assert len(standing) == answered
    answers = [r for r in standing if r["choice"] != "skip"]
    assert len(answers) == 40 == len(rows)
    queue = raw_queue(rundir)
    want = expected_inclusion(queue, answered)  # every answered pair is settled
    item = {q["pair_id"]: q["item_id"] for q in queue}
    expected = Counter(
        (item[r["pair_id"]], *slots[r["pair_id"]], r["winner"], r["annotator"]) for r in answers
    )
    got = Counter(
        (r["item_id"], r["system_a"], r["system_b"], r["winner"], r["annotator"]) for r in rows
    )
    assert got == expected
    # The winners are the experts' (through the blinding key), the probabilities min(1, t w).
    by_key = {(r["item_id"], r["system_a"], r["system_b"]): r for r in rows}
    for r in answers:
        a, b = slots[r["pair_id"]]
        row = by_key[(item[r["pair_id"]], a, b)]
        winner = experts[(row["item_id"], frozenset((a, b)))]
        assert row["winner"] == ("tie" if winner == "tie" else "a" if winner == a else "b")
        assert float(row["inclusion"]) == pytest.approx(want[r["pair_id"]], rel=1e-12)


def test_publish_calibrates_the_run_with_inverse_probability_weights(
    published_active: tuple[RunDir, int],
) -> None:
    rundir, _ = published_active
    summary = json.loads(rundir.summary_file.read_text(encoding="utf-8"))
    calibration = summary["calibration"]
    assert calibration is not None
    assert calibration["join"]["chosen_actively"] is True
    assert calibration["join"]["human_labels"] == 40
    assert calibration["join"]["matched_labels"] == 40
    assert calibration["corrected"]
    for c in calibration["corrected"]:
        assert "inverse-probability weighted" in c["method"]
    assert rundir.report_html.is_file() and rundir.report_md.is_file()
    assert rundir.report_html.stat().st_mtime >= rundir.human_labels().stat().st_mtime - 1


def test_publish_of_a_uniform_task_has_no_inclusion_column(
    fresh: RunDir, experts: Any, slots: Any
) -> None:
    create_task(fresh, TaskSpec(mode="uniform", seed=0))
    label_as_experts(fresh, "expert_sim", 25, experts, slots)
    state = sample.publish(fresh)
    assert state.labels == 25
    table = fresh.human_labels()
    assert table is not None
    head, rows = read_csv(table)
    assert head == ["item_id", "system_a", "system_b", "winner", "annotator"]
    assert len(rows) == 25
    calibration = json.loads(fresh.summary_file.read_text(encoding="utf-8"))["calibration"]
    assert calibration["join"]["chosen_actively"] is False
    assert calibration["corrected"]
    for c in calibration["corrected"]:
        assert "inverse-probability" not in c["method"]


# -- 7. offline export and import ---------------------------------------------------------------


def test_export_writes_the_blinded_pairs_in_the_annotators_order(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="active", seed=9))
    queue = raw_queue(fresh)
    csv_path = fresh.path.parent / "x.csv"
    jsonl_path = fresh.path.parent / "y.jsonl"
    assert offline.export_pairs(fresh, "ann_x", 5, csv_path) == 5
    assert offline.export_pairs(fresh, "ann_y", 5, jsonl_path) == 5
    head, csv_rows = read_csv(csv_path)
    assert tuple(head) == offline.COLUMNS
    jsonl_rows = [json.loads(x) for x in jsonl_path.read_text(encoding="utf-8").splitlines()]
    assert all(tuple(r) == offline.COLUMNS for r in jsonl_rows)
    # overlap 1: X has the first five pairs of the queue, Y the next five.
    for rows, ranks, who in ((csv_rows, range(5), "ann_x"), (jsonl_rows, range(5, 10), "ann_y")):
        assert len(rows) == 5
        for row, rank in zip(rows, ranks, strict=True):
            assignment = raw_assignment(fresh, row["assignment_id"])
            assert assignment["annotator"] == who and assignment["answered_at"] is None
            assert assignment["pair_id"] == queue[rank]["pair_id"]
            assert row["item_id"] == queue[rank]["item_id"]
            out_a, out_b = blinded_outputs(fresh, assignment["pair_id"])
            first, second = (out_a, out_b) if assignment["shown"] == "AB" else (out_b, out_a)
            assert (row["response_1"], row["response_2"]) == (first, second)
            assert row["choice"] == "" and row["reason"] == ""
    # Exporting again gives X the same open pairs, not new ones.
    again = fresh.path.parent / "x2.csv"
    assert offline.export_pairs(fresh, "ann_x", 5, again) == 5
    assert [r["assignment_id"] for r in read_csv(again)[1]] == [
        r["assignment_id"] for r in csv_rows
    ]


def write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    if path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=offline.COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def exported(rundir: RunDir, who: str, suffix: str, count: int = 5) -> tuple[Path, list[dict]]:
    path = rundir.path.parent / f"{who}{suffix}"
    assert offline.export_pairs(rundir, who, count, path) == count
    if suffix == ".csv":
        return path, read_csv(path)[1]
    return path, [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_import_records_the_answers_once(fresh: RunDir, suffix: str) -> None:
    create_task(fresh, TaskSpec(mode="uniform"))
    path, rows = exported(fresh, "ann_x", suffix)
    for row, choice in zip(rows, ["1", "2", "3", "s", ""], strict=True):
        row["choice"] = choice
    rows[0]["reason"] = "  more   complete\nanswer "
    write_rows(path, rows)
    done = offline.import_labels(fresh, path)
    assert (done.recorded, done.already, done.blank) == (4, 0, 1)
    labels = {r["assignment_id"]: r for r in raw_labels(fresh)}
    assert len(labels) == 4
    for row, stored in zip(rows[:4], ["1", "2", "tie", "skip"], strict=True):
        label = labels[row["assignment_id"]]
        assert (label["choice"], label["source"], label["seconds"]) == (stored, "file", None)
    assert labels[rows[0]["assignment_id"]]["reason"] == "more complete answer"
    assert raw_assignment(fresh, rows[4]["assignment_id"])["answered_at"] is None

    done = offline.import_labels(fresh, path)
    assert (done.recorded, done.already, done.blank) == (0, 4, 1)
    assert len(raw_labels(fresh)) == 4


def test_import_of_a_changed_answer_names_the_row_and_records_nothing(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="uniform"))
    path, rows = exported(fresh, "ann_x", ".csv")
    for row, choice in zip(rows, ["1", "2", "3", "s", ""], strict=True):
        row["choice"] = choice
    write_rows(path, rows)
    offline.import_labels(fresh, path)
    rows[1]["choice"] = "1"  # was 2
    write_rows(path, rows)
    with pytest.raises(DataError) as err:
        offline.import_labels(fresh, path)
    assert (err.value.path, err.value.row, err.value.field) == (str(path), 2, "choice")
    assert str(path) in str(err.value) and "row 2" in str(err.value)
    assert len(raw_labels(fresh)) == 4
    assert {r["choice"] for r in raw_labels(fresh)} == {"1", "2", "tie", "skip"}


def test_a_file_with_a_changed_answer_records_none_of_its_new_answers(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="uniform"))
    path, rows = exported(fresh, "ann_x", ".csv")
    for row, choice in zip(rows, ["", "1", "2", "3", "s"], strict=True):
        row["choice"] = choice
    write_rows(path, rows)
    assert offline.import_labels(fresh, path).recorded == 4
    rows[0]["choice"] = "1"  # a new answer ...
    rows[2]["choice"] = "1"  # ... in the same file as a changed one (was 2)
    write_rows(path, rows)
    with pytest.raises(DataError) as err:
        offline.import_labels(fresh, path)
    assert (err.value.row, err.value.field) == (3, "choice")
    assert len(raw_labels(fresh)) == 4
    assert raw_assignment(fresh, rows[0]["assignment_id"])["answered_at"] is None


def test_import_rejects_a_bad_choice_and_an_unknown_assignment(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="uniform"))
    path, rows = exported(fresh, "ann_x", ".csv", count=3)
    for row, choice in zip(rows, ["1", "b", "2"], strict=True):
        row["choice"] = choice
    write_rows(path, rows)
    with pytest.raises(DataError) as err:
        offline.import_labels(fresh, path)
    assert (err.value.path, err.value.row, err.value.field) == (str(path), 2, "choice")
    assert raw_labels(fresh) == []  # row 1 was valid: nothing recorded from a bad file

    rows[1]["choice"] = "tie"
    rows[2]["assignment_id"] = "a_ffffffffffffffff"
    write_rows(path, rows)
    with pytest.raises(DataError) as err:
        offline.import_labels(fresh, path)
    assert (err.value.path, err.value.row, err.value.field) == (str(path), 3, "assignment_id")
    assert raw_labels(fresh) == []


def test_import_of_jsonl_numbers_with_a_null_blank(fresh: RunDir) -> None:
    create_task(fresh, TaskSpec(mode="uniform"))
    path, rows = exported(fresh, "ann_x", ".jsonl", count=3)
    for row, choice in zip(rows, [1, 2, None], strict=True):
        row["choice"] = choice  # type: ignore[assignment]
    write_rows(path, rows)
    done = offline.import_labels(fresh, path)
    assert (done.recorded, done.already, done.blank) == (2, 0, 1)


# -- 8. the CLI ---------------------------------------------------------------------------------


def test_label_cli_create_status_export_import(fresh: RunDir) -> None:
    run = str(fresh.path)
    done = run_cli_here("label", "create", run, "--mode", "uniform", "--size", "30")
    assert done.returncode == 0, done.stderr
    assert "30 pairs queued (uniform, overlap 1)" in done.stdout
    assert len(raw_queue(fresh)) == 30

    done = run_cli_here("label", "status", run)
    assert done.returncode == 0, done.stderr
    assert "0 labels on 0 of 30 pairs" in done.stdout
    assert "no labels yet" in done.stdout

    out = fresh.path.parent / "x.csv"
    done = run_cli_here("label", "export", run, "--annotator", "ann_x", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert f"30 pairs for ann_x in {out}" in done.stdout  # count 50 > the 30 queued
    _head, rows = read_csv(out)
    assert len(rows) == 30
    for i, row in enumerate(rows):
        row["choice"] = ["1", "2", "3", "s", ""][i % 5]
    write_rows(out, rows)

    done = run_cli_here("label", "import", run, str(out), "--no-refresh")
    assert done.returncode == 0, done.stderr
    assert "24 labels recorded, 0 recorded before, 6 blank" in done.stdout
    assert "calibrated" not in done.stdout and fresh.human_labels() is None

    done = run_cli_here("label", "status", run, "--json")
    assert done.returncode == 0, done.stderr
    now = json.loads(done.stdout)
    # Every row was exported to ann_x: a blank one stays on its "screen", waiting, so the
    # sample is the whole queue: 18 answered, 6 skipped by the only annotator, 6 waiting.
    assert (now["pool"], now["settled"], now["labelled"], now["skipped"]) == (30, 30, 18, 6)
    assert (now["labels"], now["waiting"], now["ahead"], now["annotators"]) == (18, 6, 0, 1)


def test_label_status_without_a_task_is_a_one_line_error(fresh: RunDir) -> None:
    done = run_cli_here("label", "status", str(fresh.path))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert "no labelling task" in lines[0]
    assert "Traceback" not in done.stderr + done.stdout


def test_label_create_on_a_non_run_is_a_one_line_error(tmp_path: Path) -> None:
    done = run_cli_here("label", "create", str(tmp_path))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "not a run directory" in done.stderr


# -- 9. the stopping rule -----------------------------------------------------------------------


def _state(pool: int, settled: int, labels: int) -> sample.SampleState:
    return sample.SampleState(
        pool=pool,
        settled=settled,
        labelled=settled,
        labels=labels,
        skipped=0,
        waiting=0,
        ahead=0,
        threshold=0.1,
        annotators=2,
    )


def _calibration(outcome: str, items_needed: int | None, keys: int, corrected: list) -> Any:
    ni = SimpleNamespace(
        outcome=outcome, message="gate says so", items_needed=items_needed, keys=keys
    )
    return SimpleNamespace(
        gate=SimpleNamespace(stand_in=SimpleNamespace(non_inferiority=ni)), corrected=corrected
    )


def _corrected(systems: list[str], value: float, low: float, high: float, n: int) -> Any:
    return SimpleNamespace(systems=systems, value=value, ci_low=low, ci_high=high, n=n)


def _decision(*pairs: tuple[str, str]) -> Any:
    return SimpleNamespace(neighbours=[SimpleNamespace(upper=u, lower=lo) for u, lo in pairs])


def test_stopping_without_calibration_is_not_settled() -> None:
    got = status.stopping(None, None, _state(100, 0, 0), TaskSpec())
    assert not got.settled and got.parts == [] and got.labels_remaining is None


def test_stopping_counts_the_labels_each_part_still_needs() -> None:
    # Pair x/y: estimate 0.7, half-width 0.25, 20 labels on it. The half-width shrinking as
    # 1/sqrt(n) reaches the gap 0.2 at n = 20 (0.25/0.2)^2 = 31.25 -> 32: 12 more on the
    # pair; it holds 20 of the task's 60 labels, so 36 more overall.
    calibration = _calibration(
        "inconclusive",
        items_needed=120,
        keys=40,
        corrected=[
            _corrected(["y", "x"], 0.7, 0.45, 0.95, 20),
            _corrected(["y", "z"], 0.2, 0.05, 0.35, 20),
        ],
    )
    decision = _decision(("x", "y"), ("y", "z"))
    spec = TaskSpec(overlap=2)
    got = status.stopping(calibration, decision, _state(1000, 60, 60), spec)
    parts = {p.name: p for p in got.parts}
    assert list(parts) == ["gate", "x > y", "y > z"]
    assert (parts["gate"].settled, parts["gate"].labels_needed) == (False, (120 - 40) * 2)
    assert (parts["x > y"].settled, parts["x > y"].labels_needed) == (False, 36)
    assert (parts["y > z"].settled, parts["y > z"].labels_needed) == (True, None)
    assert not got.settled and got.labels_remaining == 160
    assert "160" in got.message and "more than" not in got.message
    # Fewer pairs left in the queue than the labels needed: said so.
    got = status.stopping(calibration, decision, _state(100, 60, 60), spec)
    assert got.labels_remaining == 160 and "40 pairs left" in got.message


def test_stopping_settled_when_the_gate_and_every_neighbour_are() -> None:
    calibration = _calibration(
        "human-level",
        items_needed=None,
        keys=80,
        corrected=[_corrected(["x", "y"], 0.8, 0.6, 0.95, 30)],
    )
    got = status.stopping(calibration, _decision(("x", "y")), _state(500, 80, 80), TaskSpec())
    assert got.settled and got.labels_remaining is None
    assert all(p.settled for p in got.parts)


def test_stopping_with_overlap_one_cannot_settle_the_gate() -> None:
    calibration = _calibration(
        "not enough evidence",
        items_needed=50,
        keys=0,
        corrected=[_corrected(["x", "y"], 0.9, 0.7, 1.0, 30)],
    )
    got = status.stopping(
        calibration, _decision(("x", "y")), _state(500, 30, 30), TaskSpec(overlap=1)
    )
    gate = got.parts[0]
    assert gate.name == "gate" and not gate.settled and gate.labels_needed is None
    assert "overlap 2" in gate.message
    assert not got.settled and got.labels_remaining is None


def test_status_of_a_published_run(published_active: tuple[RunDir, int]) -> None:
    rundir, answered = published_active
    now = status.task_status(rundir)
    assert (now.pool, now.settled, now.labels, now.annotators) == (2254, answered, 40, 1)
    assert now.skipped == answered - 40
    gate = now.stopping.parts[0]
    assert gate.name == "gate" and not gate.settled and gate.labels_needed is None
    assert "overlap 2" in gate.message
    summary = json.loads(rundir.summary_file.read_text(encoding="utf-8"))
    corrected = {
        frozenset(c["systems"]): c
        for c in summary["calibration"]["corrected"]
        if len(c["systems"]) == 2
    }
    neighbours = summary["decision"]["neighbours"]
    assert [p.name for p in now.stopping.parts[1:]] == [
        f"{n['upper']} > {n['lower']}" for n in neighbours
    ]
    settled = 0
    for part, n in zip(now.stopping.parts[1:], neighbours, strict=True):
        c = corrected.get(frozenset((n["upper"], n["lower"])))
        excludes = (
            c is not None and c["ci_low"] is not None and (c["ci_low"] > 0.5 or c["ci_high"] < 0.5)
        )
        enough = c is not None and c["n"] >= status.MIN_PAIR_LABELS
        assert part.settled == (excludes and enough), (part, c)
        if excludes and not enough:
            assert "too few labels" in part.message and part.labels_needed
        settled += excludes
    assert not now.stopping.settled


# -- 10. invariance of the queue to the order of judgments.jsonl -------------------------------
#
# The product property, not the textbook one: that sequential Poisson keys U_i / w_i give the
# same chosen set when units are permuted along with their own U_i is true by construction.
# What a user relies on is that a task's queue is a function of the run's judged pairs and the
# seed, not of the order in which judgments.jsonl happens to list them (judges' rows may
# interleave, a file may be rewritten). Weights are per-pair, so they must be invariant; the
# order is invariant only if each pair's random draw is tied to the pair, not to its line.


@pytest.fixture(scope="module")
def shuffled_run(demo_run: Path, tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    return copy_run(demo_run, tmp_path_factory.mktemp("shuffled") / "run")


def shuffle_lines(rundir: RunDir, original: Path, seed: int) -> None:
    lines = original.read_text(encoding="utf-8").splitlines(keepends=True)
    random.Random(seed).shuffle(lines)
    rundir.judgments_jsonl.write_text("".join(lines), encoding="utf-8")


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), line_seed=st.integers(0, 2**32 - 1))
def test_queue_weights_do_not_depend_on_the_line_order(
    demo_run: Path, shuffled_run: RunDir, seed: int, line_seed: int
) -> None:
    spec = TaskSpec(mode="active", seed=seed)
    reference = {q.pair_id: (q.item_id, q.weight) for q in build_queue(RunDir(demo_run), spec)[0]}
    shuffle_lines(shuffled_run, demo_run / "judgments.jsonl", line_seed)
    shuffled = build_queue(shuffled_run, spec)[0]
    assert len(shuffled) == len(reference)
    for q in shuffled:
        item, weight = reference[q.pair_id]
        assert q.item_id == item
        assert q.weight == pytest.approx(weight, rel=1e-12)


def test_queue_order_does_not_depend_on_the_line_order(
    demo_run: Path, shuffled_run: RunDir
) -> None:
    spec = TaskSpec(mode="active", seed=0)
    reference = [q.pair_id for q in build_queue(RunDir(demo_run), spec)[0]]
    shuffle_lines(shuffled_run, demo_run / "judgments.jsonl", 12345)
    assert [q.pair_id for q in build_queue(shuffled_run, spec)[0]] == reference
