"""The run store: one SQLite file per run dir holding everything a run plans, sends and receives.

Judgments are written as they arrive, so a run killed at any moment (kill -9 included) resumes
from `pending_requests()` with nothing lost and nothing sent twice. Several processes may write
the same store at once (WAL mode, a busy timeout, short write transactions).

Inserts must follow the foreign keys: items, then blinded responses, then pairs, then requests,
then responses. Every insert is idempotent; re-inserting an id with different content is a
`StoreError`, because ids are content hashes (or, for items, the user's ids) and a silent
overwrite would mix two versions of a run.

The response cache lives by default in the run's own database: the run dir stays
self-contained (copy it, resume it elsewhere) and a response, its verdict and its cache entry
commit together. `RunStore.open(run_dir, cache_path=...)` points the cache at a separate SQLite
file instead, which any number of runs can share, so an identical request is never paid twice
*across* runs. That file holds only `response_cache`, migrated by the same mechanism; it is
written first and committed on its own (see `record_responses`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict

from judge.errors import StoreError
from judge.hashing import canonical_json, content_hash
from judge.migrations import (
    CACHE_APP_ID,
    CACHE_MIGRATIONS,
    RUN_MIGRATIONS,
    RUN_STORE_APP_ID,
    migrate,
    utc_now,
)
from judge.types import (
    BlindedPair,
    BlindedResponse,
    Item,
    JudgeRequest,
    JudgeResponse,
    ParseFailure,
    Usage,
    Verdict,
)

__all__ = ["STORE_FILENAME", "CacheEntry", "RunStore", "StoreError", "StoredResult"]

STORE_FILENAME = "store.sqlite"
"""Name of the store inside a run dir."""

BUSY_TIMEOUT_S = 30.0
"""How long a writer waits for another process's write transaction before failing."""

_CHUNK = 500
"""Ids per `IN (...)` query: well under SQLite's bound-parameter limit."""
_PAGE = 1000
"""Rows per page of the `iter_*` methods: bounded memory, short reads."""

# Column order of SELECTs and INSERTs; names equal the record fields ("order" is quoted in SQL).
# fmt: off
_REQUEST_FIELDS = (
    "request_id", "judge", "rubric_id", "rubric_version", "rubric_hash", "kind", "item_id",
    "pair_id", "order", "blind_id", "messages", "params", "cache_key", "same_family",
)
_RESPONSE_FIELDS = (
    "text", "input_tokens", "output_tokens", "cost_usd", "latency_s", "attempts",
    "provider_request_id", "error", "cached",
)
_VERDICT_FIELDS = (
    "label", "score", "scores", "reasoning", "parsed_from", "parse_failure_reason",
    "parse_failure_excerpt",
)
_CACHE_FIELDS = (
    "cache_key", "text", "input_tokens", "output_tokens", "cost_usd", "provider_request_id",
    "created_at",
)
# fmt: on


class CacheEntry(BaseModel):
    """A successful reply kept in the response cache under its request's `cache_key`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cache_key: str
    text: str
    usage: Usage
    cost_usd: float | None
    """What the original request cost when it was paid for."""
    provider_request_id: str | None
    created_at: str

    def to_response(self, request_id: str) -> JudgeResponse:
        """The reply as a response to `request_id` in this run. Nothing was sent, so cost is
        0 and attempts 0 (a run's spend sums `cost_usd`); tokens are the original usage."""
        return JudgeResponse(
            request_id=request_id,
            text=self.text,
            usage=self.usage,
            cost_usd=0.0,
            latency_s=None,
            attempts=0,
            provider_request_id=self.provider_request_id,
            cached=True,
        )


class StoredResult(BaseModel):
    """One request with whatever the store holds for it (LEFT JOIN: pending requests too)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request: JudgeRequest
    response: JudgeResponse | None = None
    verdict: Verdict | None = None
    failure: ParseFailure | None = None

    @property
    def status(self) -> Literal["pending", "error", "verdict", "parse_failure"]:
        if self.response is None:
            return "pending"
        if self.response.error is not None:
            return "error"
        return "verdict" if self.verdict is not None else "parse_failure"


class RunStore:
    """Read and write one run's `store.sqlite`. Open with `RunStore.open(run_dir)`; one instance
    per process (and per thread: sqlite3 connections refuse to cross threads)."""

    def __init__(
        self, run_dir: Path, conn: sqlite3.Connection, cache_conn: sqlite3.Connection | None
    ) -> None:
        self._run_dir = run_dir
        self._conn = conn
        # None: the cache is the run database's own `response_cache` table.
        self._cache_conn = cache_conn
        self._pid = os.getpid()
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def open(cls, run_dir: str | Path, cache_path: str | Path | None = None) -> RunStore:
        """Open (creating if needed) the store of `run_dir` and bring its schema up to date.

        `cache_path`: a separate SQLite file for the response cache, shared across runs;
        default `None` keeps the cache inside the run's own store.
        """
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        path = run_dir / STORE_FILENAME
        conn = _connect(path)
        cache_conn: sqlite3.Connection | None = None
        try:
            migrate(conn, RUN_MIGRATIONS, application_id=RUN_STORE_APP_ID, path=str(path))
            conn.execute(
                "INSERT INTO run_meta (key, value) VALUES ('created_at', ?)"
                " ON CONFLICT (key) DO NOTHING",
                (json.dumps(utc_now()),),
            )
            if cache_path is not None and Path(cache_path).resolve() != path.resolve():
                cache_file = Path(cache_path)
                cache_file.parent.mkdir(parents=True, exist_ok=True)
                cache_conn = _connect(cache_file)
                migrate(
                    cache_conn, CACHE_MIGRATIONS, application_id=CACHE_APP_ID, path=str(cache_file)
                )
        except BaseException:
            conn.close()
            if cache_conn is not None:
                cache_conn.close()
            raise
        return cls(run_dir, conn, cache_conn)

    def close(self) -> None:
        """Close the connections (idempotent). The last connection to close checkpoints the WAL."""
        if self._closed:
            return
        self._closed = True
        self._conn.close()
        if self._cache_conn is not None:
            self._cache_conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def run_dir(self) -> Path:
        return self._run_dir

    @property
    def path(self) -> Path:
        return self._run_dir / STORE_FILENAME

    @property
    def connection(self) -> sqlite3.Connection:
        """The run database connection, for read-only inspection (tests, reports)."""
        return self._db

    # -- run metadata ------------------------------------------------------------------------

    def set_meta(self, key: str, value: Any) -> None:
        """Store `value` (anything JSON-serialisable, pydantic models included) under `key`,
        replacing what was there."""
        with self._write():
            self._db.execute(
                "INSERT INTO run_meta (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, canonical_json(value)),
            )

    def get_meta(self, key: str) -> Any | None:
        row = self._db.execute("SELECT value FROM run_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def all_meta(self) -> dict[str, Any]:
        rows = self._db.execute("SELECT key, value FROM run_meta ORDER BY key")
        return {key: json.loads(value) for key, value in rows}

    # -- planned records (bulk, idempotent) ----------------------------------------------------

    def add_items(self, items: Iterable[Item]) -> int:
        """Insert items; return how many were new."""
        rows = [
            (
                item.item_id,
                canonical_json(item.model_dump(mode="json")["prompt"]),
                item.reference,
                canonical_json(item.strata),
                content_hash(item),
            )
            for item in items
        ]
        return self._insert("items", "item_id", "prompt, reference, strata, row_hash", rows)

    def add_blinded(self, responses: Iterable[BlindedResponse]) -> int:
        """Insert blinded responses; return how many were new."""
        rows = [
            (
                r.blind_id,
                r.item_id,
                r.output,
                canonical_json([m.model_dump(mode="json") for m in r.context]),
                content_hash(r),
            )
            for r in responses
        ]
        return self._insert(
            "blinded_responses", "blind_id", "item_id, output, context, row_hash", rows
        )

    def add_pairs(self, pairs: Iterable[BlindedPair]) -> int:
        """Insert pairs; return how many were new."""
        rows = [(p.pair_id, p.item_id, p.slot_a, p.slot_b, content_hash(p)) for p in pairs]
        return self._insert("pairs", "pair_id", "item_id, slot_a, slot_b, row_hash", rows)

    def add_requests(self, requests: Iterable[JudgeRequest]) -> int:
        """Insert planned judge requests; return how many were new."""
        now = utc_now()
        rows = [_request_row(q, now) for q in requests]
        columns = f"{_columns(_REQUEST_FIELDS[1:])}, created_at, row_hash"
        return self._insert("judge_requests", "request_id", columns, rows)

    # -- responses -------------------------------------------------------------------------

    def record_response(
        self, resp: JudgeResponse, verdict: Verdict | ParseFailure | None = None
    ) -> bool:
        """Store a response with its verdict or parse failure (required unless the response is
        an error), and cache it if it succeeded, in one transaction (two with a shared cache
        file: cache first). Return False, changing nothing, if `resp.request_id` already has a
        response: a resumed run may finish a request that was in flight at the kill."""
        return self.record_responses([(resp, verdict)]) == 1

    def record_responses(
        self, results: Iterable[tuple[JudgeResponse, Verdict | ParseFailure | None]]
    ) -> int:
        """`record_response` for a batch, in one transaction (fewer commits under load).
        Return how many were new."""
        batch = list(results)
        for resp, verdict in batch:
            _check_verdict(resp, verdict)
        if not batch:
            return 0
        db = self._db
        cache_keys = self._cache_keys([resp.request_id for resp, _ in batch])
        fresh = [
            (resp, cache_keys[resp.request_id])
            for resp, _ in batch
            if resp.error is None and not resp.cached
        ]
        if self._cache_conn is not None and fresh:
            # A separate file cannot share the store's transaction, so the cache is committed
            # first: a kill between the two commits leaves a cached reply with no response,
            # which a resumed run picks up from the cache for free. The other order could lose
            # a paid reply from the cache.
            with _transaction(self._cache_conn):
                _put_cache(self._cache_conn, fresh)
        new = 0
        with self._write():
            for resp, verdict in batch:
                before = db.total_changes
                db.execute(
                    f"INSERT INTO judge_responses (request_id, {_columns(_RESPONSE_FIELDS)},"
                    f" created_at) VALUES ({_marks(len(_RESPONSE_FIELDS) + 2)})"
                    " ON CONFLICT (request_id) DO NOTHING",
                    (resp.request_id, *_response_row(resp), utc_now()),
                )
                if db.total_changes == before:
                    continue  # already recorded: keep the first, add nothing
                new += 1
                if verdict is not None:
                    db.execute(
                        f"INSERT INTO verdicts (request_id, {_columns(_VERDICT_FIELDS)})"
                        f" VALUES ({_marks(len(_VERDICT_FIELDS) + 1)})",
                        (resp.request_id, *_verdict_row(verdict)),
                    )
            if self._cache_conn is None and fresh:
                _put_cache(db, fresh)
        return new

    def cached_response(self, cache_key: str) -> CacheEntry | None:
        """The cached reply for `cache_key` (from this or, with a shared cache, any run)."""
        self._check_process()
        db = self._cache_conn if self._cache_conn is not None else self._conn
        row = db.execute(
            f"SELECT {_columns(_CACHE_FIELDS)} FROM response_cache WHERE cache_key = ?",
            (cache_key,),
        ).fetchone()
        if row is None:
            return None
        data = dict(zip(_CACHE_FIELDS, row, strict=True))
        data["usage"] = _usage(data)
        return CacheEntry.model_validate(data)

    def pending_requests(self, judge: str | None = None) -> list[JudgeRequest]:
        """Requests with no stored response (what a resumed run still has to send), in the
        order they were planned. Errored requests have a response and are not pending."""
        where = "" if judge is None else " AND q.judge = ?"
        rows = self._db.execute(
            f"SELECT {_columns(_REQUEST_FIELDS, 'q')} FROM judge_requests q"
            " WHERE NOT EXISTS (SELECT 1 FROM judge_responses r"
            f" WHERE r.request_id = q.request_id){where} ORDER BY q.rowid",
            () if judge is None else (judge,),
        )
        return [_request_from_row(row) for row in rows]

    # -- reading back ------------------------------------------------------------------------
    # The iterators read page by page and hold no statement open across a `yield`: an open
    # read would pin an old WAL snapshot, and a write on this connection while another process
    # has committed since would then fail with "database is locked" at once (busy_timeout does
    # not apply to a stale snapshot). So `for r in store.iter_results(): store.record_...` works.

    def iter_items(self) -> Iterator[Item]:
        for item_id, prompt, reference, strata in self._paged(
            "SELECT rowid, item_id, prompt, reference, strata FROM items", "rowid"
        ):
            yield Item(
                item_id=item_id,
                prompt=json.loads(prompt),
                reference=reference,
                strata=json.loads(strata),
            )

    def iter_blinded(self) -> Iterator[BlindedResponse]:
        for blind_id, item_id, output, context in self._paged(
            "SELECT rowid, blind_id, item_id, output, context FROM blinded_responses", "rowid"
        ):
            yield BlindedResponse(
                blind_id=blind_id, item_id=item_id, output=output, context=json.loads(context)
            )

    def iter_pairs(self) -> Iterator[BlindedPair]:
        for pair_id, item_id, slot_a, slot_b in self._paged(
            "SELECT rowid, pair_id, item_id, slot_a, slot_b FROM pairs", "rowid"
        ):
            yield BlindedPair(pair_id=pair_id, item_id=item_id, slot_a=slot_a, slot_b=slot_b)

    def iter_requests(self) -> Iterator[JudgeRequest]:
        query = f"SELECT rowid, {_columns(_REQUEST_FIELDS)} FROM judge_requests"
        for row in self._paged(query, "rowid"):
            yield _request_from_row(row)

    def iter_results(self) -> Iterator[StoredResult]:
        """Every request, in planned order, with its response and verdict or parse failure if
        any. LEFT JOINs: a pending or errored request is yielded, never dropped."""
        n_q, n_r = len(_REQUEST_FIELDS), len(_RESPONSE_FIELDS)
        rows = self._paged(
            f"SELECT q.rowid, {_columns(_REQUEST_FIELDS, 'q')}, r.request_id,"
            f" {_columns(_RESPONSE_FIELDS, 'r')}, v.request_id, {_columns(_VERDICT_FIELDS, 'v')}"
            " FROM judge_requests q"
            " LEFT JOIN judge_responses r ON r.request_id = q.request_id"
            " LEFT JOIN verdicts v ON v.request_id = q.request_id",
            "q.rowid",
        )
        for row in rows:
            request = _request_from_row(row[:n_q])
            response: JudgeResponse | None = None
            verdict: Verdict | None = None
            failure: ParseFailure | None = None
            if row[n_q] is not None:
                response = _response_from_row(request.request_id, row[n_q + 1 : n_q + 1 + n_r])
            if row[n_q + 1 + n_r] is not None:
                parsed = _verdict_from_row(row[n_q + 2 + n_r :])
                if isinstance(parsed, Verdict):
                    verdict = parsed
                else:
                    failure = parsed
            yield StoredResult(request=request, response=response, verdict=verdict, failure=failure)

    def counts(self) -> dict[str, int]:
        """Row counts for progress and summaries; `pending` = requests without a response."""
        names = (
            "items",
            "blinded",
            "pairs",
            "requests",
            "responses",
            "verdicts",
            "parse_failures",
            "errors",
            "cached",
        )
        row = self._db.execute(
            "SELECT (SELECT COUNT(*) FROM items),"
            " (SELECT COUNT(*) FROM blinded_responses),"
            " (SELECT COUNT(*) FROM pairs),"
            " (SELECT COUNT(*) FROM judge_requests),"
            " (SELECT COUNT(*) FROM judge_responses),"
            " (SELECT COUNT(*) FROM verdicts WHERE parse_failure_reason IS NULL),"
            " (SELECT COUNT(*) FROM verdicts WHERE parse_failure_reason IS NOT NULL),"
            " (SELECT COUNT(*) FROM judge_responses WHERE error IS NOT NULL),"
            " (SELECT COUNT(*) FROM judge_responses WHERE cached = 1)"
        ).fetchone()
        counts = dict(zip(names, row, strict=True))
        counts["pending"] = counts["requests"] - counts["responses"]
        return counts

    # -- internals ---------------------------------------------------------------------------

    @property
    def _db(self) -> sqlite3.Connection:
        self._check_process()
        return self._conn

    def _check_process(self) -> None:
        if self._closed:
            raise StoreError(f"the store {self.path} is closed: open it again with RunStore.open")
        # A SQLite connection inherited through fork() corrupts locks if both processes use it.
        if os.getpid() != self._pid:
            raise StoreError(
                f"the store {self.path} was opened in another process: call RunStore.open "
                "in each worker process"
            )

    def _paged(self, select: str, rowid: str) -> Iterator[Sequence[Any]]:
        """Rows of `select` (whose first column is `rowid`, without it) in rowid order, fetched
        a page at a time by keyset, so each page is a short read of its own."""
        last = -(2**63)
        while True:
            page = self._db.execute(
                f"{select} WHERE {rowid} > ? ORDER BY {rowid} LIMIT {_PAGE}", (last,)
            ).fetchall()
            for row in page:
                yield row[1:]
            if len(page) < _PAGE:
                return
            last = page[-1][0]

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with _transaction(self._db) as conn:
            yield conn

    def _insert(self, table: str, key: str, columns: str, rows: Sequence[tuple[Any, ...]]) -> int:
        """INSERT rows whose first value is the primary key and last the row hash; keep rows
        already there if identical, raise if the same key holds different content."""
        if not rows:
            return 0
        marks = ", ".join("?" * len(rows[0]))
        db = self._db
        with self._write():
            before = db.total_changes
            try:
                db.executemany(
                    f"INSERT INTO {table} ({key}, {columns}) VALUES ({marks})"
                    f" ON CONFLICT ({key}) DO NOTHING",
                    rows,
                )
            except sqlite3.IntegrityError as exc:
                raise StoreError(
                    f"cannot add to {table} in {self.path}: {exc}. Add items, then blinded "
                    "responses, then pairs, then the requests that refer to them"
                ) from exc
            inserted = db.total_changes - before
            # Fewer rows changed than given: some keys were already stored (or repeated in
            # this batch). Only then is it worth comparing hashes.
            if inserted < len(rows):
                self._check_conflicts(table, key, rows)
        return inserted

    def _check_conflicts(self, table: str, key: str, rows: Sequence[tuple[Any, ...]]) -> None:
        given: dict[Any, Any] = {}
        for row in rows:
            if given.setdefault(row[0], row[-1]) != row[-1]:
                raise StoreError(
                    f"{table}: id {row[0]!r} appears twice in one batch with different content"
                )
        ids = list(given)
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            stored = self._conn.execute(
                f"SELECT {key}, row_hash FROM {table}"
                f" WHERE {key} IN ({', '.join('?' * len(chunk))})",
                chunk,
            )
            for stored_id, stored_hash in stored:
                if stored_hash != given[stored_id]:
                    raise StoreError(
                        f"{table}: id {stored_id!r} is already stored in {self.path} with "
                        "different content. This run dir was planned from other inputs or "
                        "settings; use a new run dir (or restore the original inputs) rather "
                        "than mixing two versions of a run"
                    )

    def _cache_keys(self, request_ids: Sequence[str]) -> dict[str, str]:
        keys: dict[str, str] = {}
        unique = list(dict.fromkeys(request_ids))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            keys.update(
                self._db.execute(
                    "SELECT request_id, cache_key FROM judge_requests"
                    f" WHERE request_id IN ({', '.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
            )
        missing = [rid for rid in unique if rid not in keys]
        if missing:
            raise StoreError(
                f"response for unknown request {missing[0]!r} in {self.path}: "
                "add_requests must store a request before its response"
            )
        return keys


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: the sqlite3 module must not open transactions behind our back;
    # every write goes through an explicit BEGIN IMMEDIATE ... COMMIT.
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _enable_wal(conn, path)
        # NORMAL is WAL-safe: a commit is appended to the WAL without an fsync, which still
        # survives the process being killed (the OS keeps the written pages). Only power loss
        # or an OS crash can drop the last few commits, never corrupt the file; those replies
        # would be requested again. FULL would fsync every judgment and cap throughput.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def _enable_wal(conn: sqlite3.Connection, path: Path) -> None:
    # WAL: readers never block the writer and vice versa, so worker processes and a progress
    # reader can share the store. The mode is stored in the file, so usually this only reads it.
    # Switching a new file needs an exclusive lock, and when several processes create the same
    # file at once SQLite reports "database is locked" at once, without calling the busy handler
    # (seen in test_two_processes_write_concurrently_without_loss): hence this one wait loop.
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
                return
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower()
            if mode != "wal":
                raise StoreError(
                    f"cannot use WAL mode for {path} (journal mode stays '{mode}'): put the run "
                    "dir on a local filesystem"
                )
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    # IMMEDIATE: take the write lock at BEGIN, where busy_timeout applies. A deferred
    # transaction upgrading from read to write can fail with "database is locked" at once.
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _put_cache(conn: sqlite3.Connection, fresh: Sequence[tuple[JudgeResponse, str]]) -> None:
    # First reply wins: a later identical request (same key) adds nothing.
    now = utc_now()
    rows = [
        (key, r.text, r.usage.input_tokens, r.usage.output_tokens, r.cost_usd,
         r.provider_request_id, now)
        for r, key in fresh
    ]  # fmt: skip
    conn.executemany(
        f"INSERT INTO response_cache ({_columns(_CACHE_FIELDS)})"
        f" VALUES ({_marks(len(_CACHE_FIELDS))}) ON CONFLICT (cache_key) DO NOTHING",
        rows,
    )


def _check_verdict(resp: JudgeResponse, verdict: Verdict | ParseFailure | None) -> None:
    # A reply with no parse result would be a judgment that silently vanished from every
    # summary; an error with a verdict would be a verdict nobody received.
    if resp.error is not None:
        if verdict is not None:
            raise ValueError(
                f"request {resp.request_id!r}: an error response cannot carry a verdict"
            )
    elif resp.text is None:
        raise ValueError(f"request {resp.request_id!r}: a response needs text or an error")
    elif verdict is None:
        raise ValueError(
            f"request {resp.request_id!r}: a successful response needs its Verdict or "
            "ParseFailure, recorded in the same call"
        )


def _columns(fields: Sequence[str], alias: str | None = None) -> str:
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + ('"order"' if f == "order" else f) for f in fields)


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _request_row(q: JudgeRequest, created_at: str) -> tuple[Any, ...]:
    data = q.model_dump(mode="json")
    # Hash the dump before encoding its fields: same value as content_hash(q), one dump less.
    row_hash = content_hash(data)
    data["messages"] = canonical_json(data["messages"])
    data["params"] = canonical_json(data["params"])
    data["same_family"] = int(q.same_family)
    return (*(data[f] for f in _REQUEST_FIELDS), created_at, row_hash)


def _request_from_row(row: Sequence[Any]) -> JudgeRequest:
    data = dict(zip(_REQUEST_FIELDS, row, strict=True))
    data["messages"] = json.loads(data["messages"])
    data["params"] = json.loads(data["params"])
    data["same_family"] = bool(data["same_family"])
    return JudgeRequest.model_validate(data)


def _response_row(resp: JudgeResponse) -> tuple[Any, ...]:
    data = resp.model_dump()
    data.update(resp.usage.model_dump(), cached=int(resp.cached))
    return tuple(data[f] for f in _RESPONSE_FIELDS)


def _response_from_row(request_id: str, row: Sequence[Any]) -> JudgeResponse:
    data = dict(zip(_RESPONSE_FIELDS, row, strict=True))
    data["usage"] = _usage(data)
    data["cached"] = bool(data["cached"])
    return JudgeResponse(request_id=request_id, **data)


def _usage(data: dict[str, Any]) -> Usage:
    return Usage(input_tokens=data.pop("input_tokens"), output_tokens=data.pop("output_tokens"))


def _verdict_row(verdict: Verdict | ParseFailure) -> tuple[Any, ...]:
    if isinstance(verdict, ParseFailure):
        return (None, None, None, None, None, verdict.reason, verdict.excerpt)
    scores = canonical_json(verdict.scores)
    v = verdict
    return (v.label, v.score, scores, v.reasoning, v.parsed_from, None, None)


def _verdict_from_row(row: Sequence[Any]) -> Verdict | ParseFailure:
    data = dict(zip(_VERDICT_FIELDS, row, strict=True))
    if data["parse_failure_reason"] is not None:
        return ParseFailure(
            reason=data["parse_failure_reason"], excerpt=data["parse_failure_excerpt"] or ""
        )
    return Verdict(
        label=data["label"],
        score=data["score"],
        scores=json.loads(data["scores"]),
        reasoning=data["reasoning"],
        parsed_from=data["parsed_from"],
    )
