"""The run store: migrations, idempotent writes, resume bookkeeping, concurrency, crash safety."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from judge.errors import JudgeError
from judge.hashing import content_hash
from judge.store.migrations import (
    CACHE_APP_ID,
    CACHE_MIGRATIONS,
    RUN_MIGRATIONS,
    RUN_STORE_APP_ID,
    migrate,
)
from judge.store.run_store import STORE_FILENAME, RunStore, StoreError
from judge.types import (
    BlindedPair,
    BlindedResponse,
    ChatMessage,
    Item,
    JudgeRequest,
    JudgeResponse,
    ParseFailure,
    Usage,
    Verdict,
)

RUN_TABLES = {
    "_migrations",
    "run_meta",
    "items",
    "blinded_responses",
    "pairs",
    "judge_requests",
    "judge_responses",
    "verdicts",
    "response_cache",
    "batches",
    "batch_requests",
}


# -- builders --------------------------------------------------------------------------------


def _items(n: int = 2) -> list[Item]:
    items = [
        Item(item_id=f"q{i}", prompt=f"Question {i}?", strata={"cat": "math"}) for i in range(n)
    ]
    # One chat-transcript prompt with a reference, to check the JSON round trip of both forms.
    items[0] = Item(
        item_id="q0",
        prompt=(
            ChatMessage(role="system", content="Be brief."),
            ChatMessage(role="user", content="2+2?"),
        ),
        reference="4",
        strata={"cat": "math", "lang": "en"},
    )
    return items


def _blinded(n_items: int = 2) -> list[BlindedResponse]:
    out = []
    for i in range(n_items):
        for side in ("x", "y"):
            out.append(
                BlindedResponse(
                    blind_id=f"b{i}{side}",
                    item_id=f"q{i}",
                    output=f"answer {i}{side} — é",
                    context=(ChatMessage(role="assistant", content="earlier turn"),)
                    if side == "x"
                    else (),
                )
            )
    return out


def _pairs(n_items: int = 2) -> list[BlindedPair]:
    return [
        BlindedPair(pair_id=f"p{i}", item_id=f"q{i}", slot_a=f"b{i}x", slot_b=f"b{i}y")
        for i in range(n_items)
    ]


def _requests(n_items: int = 2, judges: tuple[str, ...] = ("openai/gpt-4o",)) -> list[JudgeRequest]:
    out = []
    for judge in judges:
        for i in range(n_items):
            for order in ("AB", "BA"):
                messages = (ChatMessage(role="user", content=f"judge {i} {order}"),)
                params: dict[str, float | int | str | bool] = {
                    "temperature": 0.0,
                    "max_tokens": 512,
                    "json": True,
                }
                out.append(
                    JudgeRequest(
                        request_id=content_hash([judge, i, order]),
                        judge=judge,
                        rubric_id="pairwise_general",
                        rubric_version=1,
                        rubric_hash="sha256:rubric",
                        kind="pairwise",
                        item_id=f"q{i}",
                        pair_id=f"p{i}",
                        order=order,
                        messages=messages,
                        params=params,
                        cache_key=content_hash([judge, params, messages]),
                        same_family=judge.startswith("anthropic"),
                    )
                )
    return out


def _planned(run_dir: Path, n_items: int = 2, **kwargs: Any) -> tuple[RunStore, list[JudgeRequest]]:
    store = RunStore.open(run_dir, **kwargs)
    requests = _requests(n_items)
    store.add_items(_items(n_items))
    store.add_blinded(_blinded(n_items))
    store.add_pairs(_pairs(n_items))
    store.add_requests(requests)
    return store, requests


def _ok(request: JudgeRequest, text: str = '{"reasoning": "r", "verdict": "A"}') -> JudgeResponse:
    return JudgeResponse(
        request_id=request.request_id,
        text=text,
        usage=Usage(input_tokens=100, output_tokens=20),
        cost_usd=0.002,
        latency_s=0.5,
        attempts=2,
        provider_request_id="prov-1",
    )


def _error(request: JudgeRequest) -> JudgeResponse:
    return JudgeResponse(request_id=request.request_id, error="rate_limit: gave up", attempts=6)


VERDICT = Verdict(label="A", reasoning="r", parsed_from="json")
FAILURE = ParseFailure(reason="no verdict found", excerpt="I think both are")


# -- migrations and connection settings ------------------------------------------------------


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {name for (name,) in rows}


def test_migrations_applied_once_and_tracked(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "run") as store:
        rows = store.connection.execute(
            "SELECT name, applied_at FROM _migrations ORDER BY rowid"
        ).fetchall()
        assert [name for name, _ in rows] == [m.name for m in RUN_MIGRATIONS]
        assert all(applied_at.endswith("+00:00") for _, applied_at in rows)
        assert _tables(store.connection) == RUN_TABLES
        assert store.connection.execute("PRAGMA application_id").fetchone()[0] == RUN_STORE_APP_ID
    assert (tmp_path / "run" / STORE_FILENAME).is_file()

    # Reopening applies nothing: same rows, same timestamps.
    with RunStore.open(tmp_path / "run") as store:
        again = store.connection.execute(
            "SELECT name, applied_at FROM _migrations ORDER BY rowid"
        ).fetchall()
        assert again == rows
        assert (
            migrate(
                store.connection,
                RUN_MIGRATIONS,
                application_id=RUN_STORE_APP_ID,
                path="x",
            )
            == []
        )


def test_older_store_gets_only_the_missing_migrations(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILENAME
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, RUN_MIGRATIONS[:1], application_id=RUN_STORE_APP_ID, path=str(path)) == [
        "m001_run_tables"
    ]
    assert "response_cache" not in _tables(conn)
    first_applied = conn.execute("SELECT applied_at FROM _migrations").fetchone()[0]
    conn.close()

    with RunStore.open(tmp_path) as store:
        rows = store.connection.execute("SELECT name, applied_at FROM _migrations").fetchall()
        assert dict(rows)["m001_run_tables"] == first_applied
        assert sorted(dict(rows)) == [m.name for m in RUN_MIGRATIONS]
        assert "response_cache" in _tables(store.connection)


def test_store_newer_than_the_code_is_a_clear_error(tmp_path: Path) -> None:
    RunStore.open(tmp_path).close()
    conn = sqlite3.connect(tmp_path / STORE_FILENAME, isolation_level=None)
    conn.execute("INSERT INTO _migrations VALUES ('m999_from_the_future', '2099-01-01')")
    conn.close()
    with pytest.raises(StoreError) as info:
        RunStore.open(tmp_path)
    message = str(info.value)
    assert "written by a newer version of judge-pipeline" in message
    assert "m999_from_the_future" in message
    assert "upgrade judge-pipeline" in message
    assert isinstance(info.value, JudgeError)


def test_a_cache_file_and_a_run_store_are_not_interchangeable(tmp_path: Path) -> None:
    # A cache file created where a run dir's store should be ...
    RunStore.open(tmp_path / "run", cache_path=tmp_path / "fake" / STORE_FILENAME).close()
    with pytest.raises(StoreError, match=r"fake/store.sqlite is a response cache, not a run store"):
        RunStore.open(tmp_path / "fake")
    # ... and a run store passed as the shared cache.
    with pytest.raises(StoreError, match=r"run/store.sqlite is a run store, not a response cache"):
        RunStore.open(tmp_path / "other", cache_path=tmp_path / "run" / STORE_FILENAME)


def test_wal_busy_timeout_and_foreign_keys_are_set(tmp_path: Path) -> None:
    with RunStore.open(tmp_path) as store:
        pragma = {
            name: store.connection.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "busy_timeout", "foreign_keys", "synchronous")
        }
        assert pragma == {
            "journal_mode": "wal",
            "busy_timeout": 30000,
            "foreign_keys": 1,
            "synchronous": 1,  # NORMAL
        }
    # WAL is a property of the file: a plain connection sees it too.
    plain = sqlite3.connect(tmp_path / STORE_FILENAME)
    assert plain.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    plain.close()


def test_no_table_has_a_system_column(tmp_path: Path) -> None:
    # The store is judge-side data: system names live only in the blinding key file.
    with RunStore.open(tmp_path) as store:
        columns = {
            (table, row[1])
            for table in _tables(store.connection)
            for row in store.connection.execute(f"PRAGMA table_info({table})")
        }
    assert not [c for c in columns if "system" in c[1]]
    assert ("blinded_responses", "output") in columns


# -- metadata ----------------------------------------------------------------------------------


def test_meta_round_trip(tmp_path: Path) -> None:
    with RunStore.open(tmp_path) as store:
        created_at = store.get_meta("created_at")
        assert isinstance(created_at, str) and created_at.endswith("+00:00")
        store.set_meta("seeds", {"blinding": 7, "compare": 11})
        store.set_meta("rubric_hashes", {"pairwise_general": "sha256:abc"})
        store.set_meta("seeds", {"blinding": 8})  # replaced, not merged
        assert store.get_meta("seeds") == {"blinding": 8}
        assert store.get_meta("missing") is None
        assert store.all_meta() == {
            "created_at": created_at,
            "rubric_hashes": {"pairwise_general": "sha256:abc"},
            "seeds": {"blinding": 8},
        }
    with RunStore.open(tmp_path) as store:  # created_at is not reset by a reopen
        assert store.get_meta("created_at") == created_at


# -- planned records -------------------------------------------------------------------------


def test_bulk_inserts_are_idempotent_and_round_trip(tmp_path: Path) -> None:
    items, blinded, pairs, requests = _items(3), _blinded(3), _pairs(3), _requests(3)
    with RunStore.open(tmp_path) as store:
        assert store.add_items(items) == 3
        assert store.add_blinded(blinded) == 6
        assert store.add_pairs(pairs) == 3
        assert store.add_requests(requests) == 6
        # Again, and with the batch repeated inside itself: nothing new, no error.
        assert store.add_items(items + items) == 0
        assert store.add_blinded(blinded) == 0
        assert store.add_pairs(pairs) == 0
        assert store.add_requests(requests) == 0
        assert store.add_items([]) == 0

        assert list(store.iter_items()) == items
        assert list(store.iter_blinded()) == blinded
        assert list(store.iter_pairs()) == pairs
        assert list(store.iter_requests()) == requests
        stored = next(store.iter_requests())
        assert stored.params == {"temperature": 0.0, "max_tokens": 512, "json": True}
        assert type(stored.params["max_tokens"]) is int and type(stored.params["json"]) is bool
        counts = store.counts()
        assert (counts["items"], counts["blinded"], counts["pairs"], counts["requests"]) == (
            3,
            6,
            3,
            6,
        )


def test_same_id_with_different_content_is_an_error(tmp_path: Path) -> None:
    with RunStore.open(tmp_path) as store:
        store.add_items(_items(2))
        changed = Item(item_id="q1", prompt="A different question?")
        with pytest.raises(StoreError) as info:
            store.add_items([Item(item_id="q9", prompt="new"), changed])
        assert "items: id 'q1' is already stored" in str(info.value)
        assert "different content" in str(info.value)
        assert "use a new run dir" in str(info.value)
        # The whole batch was rolled back: q9 was not kept either.
        assert [item.item_id for item in store.iter_items()] == ["q0", "q1"]

        with pytest.raises(StoreError, match=r"'q5' appears twice in one batch"):
            store.add_items([Item(item_id="q5", prompt="a"), Item(item_id="q5", prompt="b")])

        store.add_blinded(_blinded(2))
        store.add_pairs(_pairs(2))
        requests = _requests(2)
        store.add_requests(requests)
        tampered = requests[0].model_copy(update={"rubric_hash": "sha256:other"})
        with pytest.raises(StoreError, match=r"judge_requests: id 'sha256:[0-9a-f]+' is already"):
            store.add_requests([tampered])
        assert store.counts()["requests"] == 4


def test_inserts_out_of_foreign_key_order_name_the_fix(tmp_path: Path) -> None:
    with RunStore.open(tmp_path) as store:
        store.add_items(_items(2))
        with pytest.raises(StoreError) as info:
            store.add_pairs(_pairs(2))  # blinded responses not stored yet
        assert "FOREIGN KEY constraint failed" in str(info.value)
        assert "Add items, then blinded responses, then pairs" in str(info.value)
        assert store.counts()["pairs"] == 0


# -- responses ---------------------------------------------------------------------------------


def test_record_response_is_idempotent_by_request_id(tmp_path: Path) -> None:
    store, requests = _planned(tmp_path)
    with store:
        first = _ok(requests[0])
        assert store.record_response(first, VERDICT) is True
        # The same request answered again (e.g. in flight at a kill): no-op, first one kept.
        second = _ok(requests[0], text='{"verdict": "B"}')
        assert store.record_response(second, Verdict(label="B")) is False
        assert store.record_response(first, VERDICT) is False

        rows = store.connection.execute(
            "SELECT r.text, v.label FROM judge_responses r JOIN verdicts v USING (request_id)"
        ).fetchall()
        assert rows == [('{"reasoning": "r", "verdict": "A"}', "A")]
        counts = store.counts()
        assert (counts["responses"], counts["verdicts"]) == (1, 1)

        entry = store.cached_response(requests[0].cache_key)
        assert entry is not None
        assert (entry.text, entry.usage, entry.cost_usd, entry.provider_request_id) == (
            '{"reasoning": "r", "verdict": "A"}',
            Usage(input_tokens=100, output_tokens=20),
            0.002,
            "prov-1",
        )
        replay = entry.to_response(requests[1].request_id)
        assert (replay.cached, replay.cost_usd, replay.attempts, replay.text) == (
            True,
            0.0,
            0,
            entry.text,
        )
        assert store.cached_response("sha256:unknown") is None


def test_errors_are_recorded_but_never_cached(tmp_path: Path) -> None:
    store, requests = _planned(tmp_path)
    with store:
        assert store.record_response(_error(requests[0])) is True
        assert store.cached_response(requests[0].cache_key) is None
        assert store.connection.execute("SELECT COUNT(*) FROM response_cache").fetchone() == (0,)
        assert store.connection.execute("SELECT COUNT(*) FROM verdicts").fetchone() == (0,)


def test_record_response_rejects_inconsistent_calls(tmp_path: Path) -> None:
    store, requests = _planned(tmp_path)
    with store:
        with pytest.raises(ValueError, match="needs its Verdict or ParseFailure"):
            store.record_response(_ok(requests[0]), None)
        with pytest.raises(ValueError, match="an error response cannot carry a verdict"):
            store.record_response(_error(requests[0]), VERDICT)
        unknown = JudgeResponse(request_id="sha256:nope", text="x")
        with pytest.raises(StoreError, match="unknown request 'sha256:nope'"):
            store.record_response(unknown, VERDICT)
        assert store.counts()["responses"] == 0


def test_a_batch_records_each_request_once_whoever_read_it(tmp_path: Path) -> None:
    # The batch mixes requests this store handed out (their cache keys remembered), one it did
    # not (read back), one answered before, and one answered twice within the batch.
    store, requests = _planned(tmp_path, n_items=3)  # 6 requests
    with store:
        assert store.record_response(_ok(requests[2], text="before"), VERDICT) is True
        handed_out = [q for _, q in store.pending_after(0, 3)]
        assert handed_out == [requests[0], requests[1], requests[3]]
        batch = [
            (_ok(requests[0], text="first"), VERDICT),
            (_ok(requests[2], text="again"), VERDICT),  # answered before: kept as it was
            (_ok(requests[0], text="second"), Verdict(label="B")),  # twice: the first wins
            (_error(requests[1]), None),
            (_ok(requests[4], text="not handed out"), FAILURE),
        ]
        assert store.record_responses(batch) == 3
        texts = dict(store.connection.execute("SELECT request_id, text FROM judge_responses"))
        assert texts == {
            requests[0].request_id: "first",
            requests[1].request_id: None,
            requests[2].request_id: "before",
            requests[4].request_id: "not handed out",
        }
        labels = dict(store.connection.execute("SELECT request_id, label FROM verdicts"))
        assert labels[requests[0].request_id] == "A"
        for i in (0, 4):  # the cache holds each success under its request's cache key
            entry = store.cached_response(requests[i].cache_key)
            assert entry is not None and entry.text == texts[requests[i].request_id]
        assert store.cached_response(requests[1].cache_key) is None
        assert store.pending_requests() == [requests[3], requests[5]]


def test_a_response_is_stored_column_by_column_as_its_fields(tmp_path: Path) -> None:
    from judge.store.rows import RESPONSE_FIELDS, response_row

    response = JudgeResponse(
        request_id="r",
        text="t",
        usage=Usage(input_tokens=1, output_tokens=2, cache_read_tokens=3, cache_write_tokens=4),
        cost_usd=0.5,
        latency_s=0.25,
        attempts=3,
        provider_request_id="p",
        cached=True,
        batch_id="b",
    )
    fields = {**response.model_dump(), **response.usage.model_dump(), "cached": 1}
    assert response_row(response) == tuple(fields[f] for f in RESPONSE_FIELDS)


def test_pending_requests_after_partial_responses(tmp_path: Path) -> None:
    judges = ("openai/gpt-4o", "anthropic/claude-3-5-sonnet")
    with RunStore.open(tmp_path) as store:
        store.add_items(_items(2))
        store.add_blinded(_blinded(2))
        store.add_pairs(_pairs(2))
        requests = _requests(2, judges)  # 2 judges x 2 items x 2 orders, in planned order
        store.add_requests(requests)
        assert store.pending_requests() == requests

        store.record_response(_ok(requests[0]), VERDICT)
        store.record_response(_error(requests[5]))  # an error is an answer: not pending
        store.record_response(_ok(requests[6]), FAILURE)
        assert store.pending_requests() == [requests[i] for i in (1, 2, 3, 4, 7)]
        assert store.pending_requests(judge="anthropic/claude-3-5-sonnet") == [
            requests[4],
            requests[7],
        ]
        assert store.pending_requests(judge="openai/gpt-4o") == requests[1:4]
        assert store.pending_requests(judge="nobody/none") == []
        assert store.pending_requests()[3].same_family is True


def test_iter_results_keeps_failures_errors_and_pending(tmp_path: Path) -> None:
    store, requests = _planned(tmp_path)
    with store:
        store.record_responses(
            [
                (_ok(requests[0]), VERDICT),
                (_ok(requests[1], text="I think both are fine."), FAILURE),
                (_error(requests[2]), None),
            ]
        )
        results = list(store.iter_results())
    assert [r.request for r in results] == requests
    assert [r.status for r in results] == ["verdict", "parse_failure", "error", "pending"]
    ok, failed, errored, pending = results
    assert ok.verdict == VERDICT and ok.failure is None
    assert ok.response == _ok(requests[0])
    assert failed.failure == FAILURE and failed.verdict is None
    assert failed.response is not None and failed.response.text == "I think both are fine."
    assert errored.response is not None
    assert (errored.response.error, errored.response.text, errored.response.attempts) == (
        "rate_limit: gave up",
        None,
        6,
    )
    assert (errored.verdict, errored.failure) == (None, None)
    assert (pending.response, pending.verdict, pending.failure) == (None, None, None)


def test_writing_while_iterating_with_another_writer(tmp_path: Path) -> None:
    # A resume loop writes while it iterates, and another connection commits in between: an
    # iterator holding its read open would make our write fail with "database is locked".
    store, requests = _planned(tmp_path, n_items=600)  # 1200 requests: more than one page
    other = RunStore.open(tmp_path)
    with store, other:
        seen, new = [], 0
        for j, result in enumerate(store.iter_results()):
            if j % 2 == 0 and j + 1 < len(requests):
                other.record_response(_ok(requests[j + 1]), VERDICT)
            if result.status == "pending":
                new += store.record_response(_ok(result.request), VERDICT)
            seen.append(result.request)
        assert seen == requests
        assert new == 600  # the even ones; the odd ones were answered by `other` first
        assert store.counts()["responses"] == 1200


def test_counts(tmp_path: Path) -> None:
    store, requests = _planned(tmp_path, n_items=3)  # 6 requests
    with store:
        cached = JudgeResponse(
            request_id=requests[3].request_id, text="[[B]]", cached=True, attempts=0
        )
        store.record_responses(
            [
                (_ok(requests[0]), VERDICT),
                (_ok(requests[1]), FAILURE),
                (_error(requests[2]), None),
                (cached, Verdict(label="B", parsed_from="text")),
            ]
        )
        assert store.counts() == {
            "items": 3,
            "blinded": 6,
            "pairs": 3,
            "requests": 6,
            "responses": 4,
            "verdicts": 2,
            "parse_failures": 1,
            "errors": 1,
            "cached": 1,
            "pending": 2,
        }
        # A response marked cached came from the cache: it is not written there again.
        cache_rows = store.connection.execute("SELECT cache_key FROM response_cache").fetchall()
        assert sorted(cache_rows) == sorted([(requests[0].cache_key,), (requests[1].cache_key,)])


def test_shared_cache_file_serves_a_later_run(tmp_path: Path) -> None:
    cache = tmp_path / "shared" / "cache.sqlite"
    first, requests = _planned(tmp_path / "run1", cache_path=cache)
    with first:
        first.record_response(_ok(requests[0]), VERDICT)
        # The run's own cache table stays empty when a shared file is used.
        assert first.connection.execute("SELECT COUNT(*) FROM response_cache").fetchone() == (0,)

    second, _ = _planned(tmp_path / "run2", cache_path=cache)
    with second:
        entry = second.cached_response(requests[0].cache_key)
        assert entry is not None and entry.text == _ok(requests[0]).text
        assert second.pending_requests() == requests  # run2 has answered nothing itself

    conn = sqlite3.connect(cache)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == CACHE_APP_ID
    assert conn.execute("SELECT name FROM _migrations").fetchall() == [
        (m.name,) for m in CACHE_MIGRATIONS
    ]
    assert _tables(conn) == {"_migrations", "response_cache"}
    conn.close()


def test_closed_store_refuses_use(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path)
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError, match="is closed"):
        store.counts()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() only")
def test_a_store_inherited_through_fork_refuses_use(tmp_path: Path) -> None:
    store, _ = _planned(tmp_path)
    with store:
        pid = os.fork()
        if pid == 0:  # the child: its inherited connection must not be used
            try:
                store.counts()
            except StoreError as exc:
                os._exit(0 if "opened in another process" in str(exc) else 2)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert store.counts()["requests"] == 4  # the parent's is still its own


def test_checkpoints_apart_leaves_commits_to_the_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judge.store import checkpoints

    monkeypatch.setattr(checkpoints, "_EVERY_S", 0.02)
    store, requests = _planned(tmp_path, n_items=400)
    db_file = tmp_path / STORE_FILENAME
    with store:
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = db_file.stat().st_size
        with store.checkpoints_apart():
            assert store.connection.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
            for start in range(0, len(requests), 50):
                batch = [(_ok(q), VERDICT) for q in requests[start : start + 50]]
                assert store.record_responses(batch) == len(batch)
            # The thread copies the WAL into the database file meanwhile.
            deadline = time.monotonic() + 10
            while db_file.stat().st_size == before and time.monotonic() < deadline:
                time.sleep(0.02)
            assert db_file.stat().st_size > before
        assert store.connection.execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
        assert store.counts()["responses"] == len(requests)


# -- several processes -------------------------------------------------------------------------
# Workers live at module level so the spawn start method can import them.


def _concurrent_writer(
    run_dir: str, cache: str, indices: list[int], start: Any, out: Any, n_items: int
) -> None:
    try:
        requests = _requests(n_items)
        start.wait(timeout=30)
        # Both workers create and migrate the (new) shared cache file at the same moment.
        with RunStore.open(run_dir, cache_path=cache) as store:
            new = 0
            for i in indices:
                verdict = FAILURE if i % 5 == 0 else VERDICT
                new += store.record_response(_ok(requests[i], text=f"reply {i}"), verdict)
        out.put(("ok", new))
    except BaseException as exc:  # report the error text to the parent, then fail
        out.put(("error", repr(exc)))
        raise


def test_two_processes_write_concurrently_without_loss(tmp_path: Path) -> None:
    n_items = 300  # 600 requests
    store, requests = _planned(tmp_path / "run", n_items=n_items)
    store.close()
    cache = tmp_path / "cache" / "shared.sqlite"
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(2), ctx.Queue()
    # Overlapping halves: requests 250..349 are answered by both, as after a resume.
    halves = [list(range(0, 350)), list(range(250, 600))]
    workers = [
        ctx.Process(
            target=_concurrent_writer,
            args=(str(tmp_path / "run"), str(cache), half, start, out, n_items),
        )
        for half in halves
    ]
    for w in workers:
        w.start()
    reports = [out.get(timeout=60) for _ in workers]
    for w in workers:
        w.join(timeout=30)
    assert [status for status, _ in reports] == ["ok", "ok"], reports
    assert [w.exitcode for w in workers] == [0, 0]
    assert sum(new for _, new in reports) == 600  # each overlapping request stored once

    with RunStore.open(tmp_path / "run", cache_path=cache) as store:
        counts = store.counts()
        assert (counts["responses"], counts["verdicts"], counts["parse_failures"]) == (
            600,
            480,
            120,
        )
        assert counts["pending"] == 0
        texts = dict(
            store.connection.execute("SELECT request_id, text FROM judge_responses").fetchall()
        )
        assert texts == {q.request_id: f"reply {i}" for i, q in enumerate(requests)}
        assert all(store.cached_response(q.cache_key) is not None for q in requests)
    conn = sqlite3.connect(cache)
    assert conn.execute("SELECT COUNT(*) FROM response_cache").fetchone() == (600,)
    assert conn.execute("SELECT COUNT(*) FROM _migrations").fetchone() == (1,)
    conn.close()


def _outcome(i: int) -> str:
    return "error" if i % 11 == 0 else "parse_failure" if i % 7 == 0 else "verdict"


def _record(store: RunStore, request: JudgeRequest, i: int) -> None:
    outcome = _outcome(i)
    if outcome == "error":
        store.record_response(_error(request))
    else:
        store.record_response(_ok(request), FAILURE if outcome == "parse_failure" else VERDICT)


def _stream_writer(run_dir: str, n_items: int, progressed: Any) -> None:
    requests = _requests(n_items)
    with RunStore.open(run_dir) as store:
        for i, request in enumerate(requests):
            _record(store, request, i)
            if i == 200:
                progressed.set()


def test_sigkill_mid_stream_leaves_a_consistent_resumable_store(tmp_path: Path) -> None:
    n_items = 1500  # 3000 requests: far more than the writer can record before the kill
    store, requests = _planned(tmp_path, n_items=n_items)
    store.close()
    ctx = multiprocessing.get_context("spawn")
    progressed = ctx.Event()
    writer = ctx.Process(target=_stream_writer, args=(str(tmp_path), n_items, progressed))
    writer.start()
    assert progressed.wait(timeout=30)
    os.kill(writer.pid, signal.SIGKILL)  # type: ignore[arg-type]
    writer.join(timeout=30)
    assert writer.exitcode == -signal.SIGKILL

    with RunStore.open(tmp_path) as store:
        assert store.connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert store.connection.execute("PRAGMA foreign_key_check").fetchall() == []
        done = [r for r in store.iter_results() if r.status != "pending"]
        k = len(done)
        assert 200 < k < len(requests)
        # One writer, one commit per response: what survived is exactly a prefix, and every
        # committed response has the verdict, failure or error it was written with.
        assert [r.request for r in done] == requests[:k]
        assert [r.status for r in done] == [_outcome(i) for i in range(k)]
        n_ok = sum(_outcome(i) != "error" for i in range(k))
        cached = store.connection.execute("SELECT COUNT(*) FROM response_cache").fetchone()[0]
        assert cached == n_ok  # written in the same transaction: no paid reply missing
        assert store.pending_requests() == requests[k:]

        # Resume: answer exactly the rest.
        for i in range(k, len(requests)):
            _record(store, requests[i], i)
        counts = store.counts()
        assert (counts["responses"], counts["pending"]) == (len(requests), 0)
        assert counts["errors"] == sum(_outcome(i) == "error" for i in range(len(requests)))
