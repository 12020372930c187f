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
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict

from judge.errors import StoreError
from judge.hashing import canonical_json
from judge.sqlite import BUSY_TIMEOUT_S as BUSY_TIMEOUT_S
from judge.sqlite import (
    connect,
    connect_read_only,
    paged,
    placeholders,
    select_in,
    transaction,
)
from judge.store.checkpoints import checkpoints_apart
from judge.store.migrations import (
    CACHE_APP_ID,
    CACHE_MIGRATIONS,
    RUN_MIGRATIONS,
    RUN_STORE_APP_ID,
    is_current,
    migrate,
    utc_now,
)
from judge.store.rows import (
    BLINDED_FIELDS,
    CACHE_FIELDS,
    ITEM_FIELDS,
    PAIR_FIELDS,
    REQUEST_FIELDS,
    RESPONSE_FIELDS,
    RESULTS_SELECT,
    VERDICT_FIELDS,
    blinded_from_row,
    blinded_row,
    cache_fields_from_row,
    cache_row,
    check_verdict,
    column_list,
    item_from_row,
    item_row,
    pair_from_row,
    pair_row,
    request_from_row,
    request_row,
    response_row,
    result_from_row,
    verdict_row,
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

_Row = tuple[Any, ...]

_forks = 0
"""How many fork()s led to this process: a store opened before one belongs to the parent."""


def _forked() -> None:
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_forked)

_HANDED_OUT = 1 << 16
"""How many handed-out requests' cache keys a store remembers (`RunStore._handed_out`)."""

# The statements of the judging loop, built once: they run for every page of requests and
# every batch of replies.
_PENDING_AFTER = (
    f"SELECT q.rowid, {column_list(REQUEST_FIELDS, 'q')} FROM judge_requests q"
    " WHERE q.rowid > ? AND NOT EXISTS (SELECT 1 FROM judge_responses r"
    " WHERE r.request_id = q.request_id) ORDER BY q.rowid LIMIT ?"
)
_CACHED = f"SELECT {column_list(CACHE_FIELDS)} FROM response_cache WHERE cache_key = ?"
_ANSWERED = "SELECT request_id FROM judge_responses"
_INSERT_RESPONSE = (
    f"INSERT INTO judge_responses (request_id, {column_list(RESPONSE_FIELDS)}, created_at)"
    f" VALUES ({placeholders(len(RESPONSE_FIELDS) + 2)})"
)
_INSERT_VERDICT = (
    f"INSERT INTO verdicts (request_id, {column_list(VERDICT_FIELDS)})"
    f" VALUES ({placeholders(len(VERDICT_FIELDS) + 1)})"
)
_INSERT_CACHE = (
    f"INSERT INTO response_cache ({column_list(CACHE_FIELDS)})"
    f" VALUES ({placeholders(len(CACHE_FIELDS))}) ON CONFLICT (cache_key) DO NOTHING"
)


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
        self._forks = _forks
        self._handed_out: dict[str, str] = {}
        """request_id -> cache_key of the pending requests `pending_after` returned lately:
        recording their replies then needs no read of the requests' rows (each holds a
        rendered prompt of a few KB). Bounded by `_HANDED_OUT`."""
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
        conn = connect(path)
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
                cache_conn = connect(cache_file)
                migrate(
                    cache_conn, CACHE_MIGRATIONS, application_id=CACHE_APP_ID, path=str(cache_file)
                )
        except BaseException:
            conn.close()
            if cache_conn is not None:
                cache_conn.close()
            raise
        return cls(run_dir, conn, cache_conn)

    @classmethod
    def open_read_only(cls, run_dir: str | Path, cache_path: str | Path | None = None) -> RunStore:
        """Open `run_dir`'s store and the response cache to read, writing nothing to either
        (a dry run). Raises `StoreError` when the store is missing or not of this version (a
        read-only open cannot migrate it). A cache file not yet made reads as empty."""
        run_dir = Path(run_dir)
        path = run_dir / STORE_FILENAME
        conn = connect_read_only(path)
        cache_conn: sqlite3.Connection | None = None
        try:
            if not is_current(conn, RUN_MIGRATIONS, application_id=RUN_STORE_APP_ID):
                raise StoreError(f"{path} is not a store of this version of judge-pipeline")
            if cache_path is not None and Path(cache_path).resolve() != path.resolve():
                cache_file = Path(cache_path)
                if cache_file.exists():  # a directory there is refused, as by `open`
                    cache_conn = connect_read_only(cache_file)
                    current = is_current(cache_conn, CACHE_MIGRATIONS, application_id=CACHE_APP_ID)
                else:
                    current = False
                if not current:  # nothing usable cached: an empty cache, in memory
                    if cache_conn is not None:
                        cache_conn.close()
                    cache_conn = sqlite3.connect(":memory:", isolation_level=None)
                    migrate(cache_conn, CACHE_MIGRATIONS, application_id=CACHE_APP_ID, path="")
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

    @contextmanager
    def checkpoints_apart(self) -> Iterator[None]:
        """While judging: the WAL is copied back into the database (and the cache file) by a
        thread of its own, not inside this store's commits (`judge.store.checkpoints`)."""
        conns = [self._db] if self._cache_conn is None else [self._db, self._cache_conn]
        with checkpoints_apart(conns):
            yield

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
        rows = [item_row(item) for item in items]
        return self._insert("items", ITEM_FIELDS, rows)

    def add_blinded(self, responses: Iterable[BlindedResponse]) -> int:
        """Insert blinded responses; return how many were new."""
        rows = [blinded_row(r) for r in responses]
        return self._insert("blinded_responses", BLINDED_FIELDS, rows)

    def add_pairs(self, pairs: Iterable[BlindedPair]) -> int:
        """Insert pairs; return how many were new."""
        rows = [pair_row(p) for p in pairs]
        return self._insert("pairs", PAIR_FIELDS, rows)

    def add_requests(self, requests: Iterable[JudgeRequest]) -> int:
        """Insert planned judge requests; return how many were new."""
        now = utc_now()
        rows = [request_row(q, now) for q in requests]
        return self._insert("judge_requests", REQUEST_FIELDS, rows, "created_at, row_hash")

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
        """`record_response` for a batch, in one transaction (fewer commits under load): one
        look-up of the batch's requests, then one multi-row insert per table. Return how many
        were new."""
        batch = list(results)
        for resp, verdict in batch:
            check_verdict(resp, verdict)
        if not batch:
            return 0
        cache_keys = self._cache_keys([resp.request_id for resp, _ in batch])
        fresh = [
            (resp, cache_keys[resp.request_id])
            for resp, _ in batch
            if resp.error is None and not resp.cached
        ]
        now = utc_now()
        if self._cache_conn is not None and fresh:
            # A separate file cannot share the store's transaction, so the cache is committed
            # first: a kill between the two commits leaves a cached reply with no response,
            # which a resumed run picks up from the cache for free. The other order could lose
            # a paid reply from the cache.
            with transaction(self._cache_conn):
                _put_cache(self._cache_conn, fresh, now)
        with self._write() as db:
            # Read under the write lock: no other process can answer these meanwhile.
            answered = {row[0] for row in select_in(db, _ANSWERED, "request_id", list(cache_keys))}
            new: dict[str, tuple[JudgeResponse, Verdict | ParseFailure | None]] = {}
            for resp, verdict in batch:
                # Already recorded (or twice in this batch): keep the first, add nothing.
                if resp.request_id not in answered and resp.request_id not in new:
                    new[resp.request_id] = (resp, verdict)
            db.executemany(
                _INSERT_RESPONSE,
                [(rid, *response_row(resp), now) for rid, (resp, _) in new.items()],
            )
            db.executemany(
                _INSERT_VERDICT,
                [(rid, *verdict_row(v)) for rid, (_, v) in new.items() if v is not None],
            )
            if self._cache_conn is None and fresh:
                _put_cache(db, fresh, now)
        return len(new)

    def cached_response(self, cache_key: str) -> CacheEntry | None:
        """The cached reply for `cache_key` (from this or, with a shared cache, any run)."""
        self._check_process()
        db = self._cache_conn if self._cache_conn is not None else self._conn
        row = db.execute(_CACHED, (cache_key,)).fetchone()
        if row is None:
            return None
        return CacheEntry.model_validate(cache_fields_from_row(row))

    def pending_requests(self, judge: str | None = None) -> list[JudgeRequest]:
        """Requests with no stored response (what a resumed run still has to send), in the
        order they were planned. Errored requests have a response and are not pending."""
        where = "" if judge is None else " AND q.judge = ?"
        rows = self._db.execute(
            f"SELECT {column_list(REQUEST_FIELDS, 'q')} FROM judge_requests q"
            " WHERE NOT EXISTS (SELECT 1 FROM judge_responses r"
            f" WHERE r.request_id = q.request_id){where} ORDER BY q.rowid",
            () if judge is None else (judge,),
        )
        return [request_from_row(row) for row in rows]

    def request_count(self) -> int:
        """Requests stored (one count, for a prepare that reports what the store holds)."""
        (count,) = self._db.execute("SELECT COUNT(*) FROM judge_requests").fetchone()
        return int(count)

    def pending_after(self, rowid: int, limit: int) -> list[tuple[int, JudgeRequest]]:
        """Up to `limit` pending requests planned after row `rowid`, with their rows, in the
        order they were planned: a runner pages through them (bounded memory), and finds the
        rows a prepare still running adds behind it."""
        rows = self._db.execute(_PENDING_AFTER, (rowid, limit)).fetchall()
        pending = [(row[0], request_from_row(row[1:])) for row in rows]
        if len(self._handed_out) + len(pending) > _HANDED_OUT:
            self._handed_out.clear()  # a reader that records nothing (a dry run's estimate)
        self._handed_out.update((q.request_id, q.cache_key) for _, q in pending)
        return pending

    # -- reading back ------------------------------------------------------------------------
    # The iterators read page by page and hold no statement open across a `yield`: an open
    # read would pin an old WAL snapshot, and a write on this connection while another process
    # has committed since would then fail with "database is locked" at once (busy_timeout does
    # not apply to a stale snapshot). So `for r in store.iter_results(): store.record_...` works.

    def has_response(self, request_id: str) -> bool:
        """Whether a response (a reply or a final error) is stored for `request_id`."""
        row = self._db.execute(
            "SELECT 1 FROM judge_responses WHERE request_id = ?", (request_id,)
        ).fetchone()
        return row is not None

    def reply_tokens(self) -> dict[str, tuple[int, float]]:
        """Per judge, its replies stored (errors left out) and their mean output tokens: what
        a dry run of a run under way estimates the rest from."""
        rows = self._db.execute(
            "SELECT q.judge, COUNT(*), AVG(r.output_tokens) FROM judge_responses r"
            " JOIN judge_requests q ON q.request_id = r.request_id"
            " WHERE r.error IS NULL AND r.output_tokens > 0 GROUP BY q.judge"
        )
        return {judge: (int(n), float(mean)) for judge, n, mean in rows}

    def strata_columns(self) -> set[str]:
        """The strata columns any item has (one pass in SQLite, nothing held per item)."""
        rows = self._db.execute(
            "SELECT DISTINCT j.key FROM items, json_each(items.strata) AS j"
            " WHERE json_valid(items.strata)"
        )
        return {key for (key,) in rows}

    def item_strata(self) -> dict[str, dict[str, Any]]:
        """Each item's strata, without its prompt (the analysis joins them to judgments)."""
        rows = self._db.execute("SELECT item_id, strata FROM items")
        return {item_id: json.loads(raw) for item_id, raw in rows}

    def iter_items(self) -> Iterator[Item]:
        yield from map(item_from_row, self._read_all("items", ITEM_FIELDS))

    def iter_blinded(self) -> Iterator[BlindedResponse]:
        yield from map(blinded_from_row, self._read_all("blinded_responses", BLINDED_FIELDS))

    def iter_pairs(self) -> Iterator[BlindedPair]:
        yield from map(pair_from_row, self._read_all("pairs", PAIR_FIELDS))

    def iter_requests(self) -> Iterator[JudgeRequest]:
        yield from map(request_from_row, self._read_all("judge_requests", REQUEST_FIELDS))

    def iter_results(self) -> Iterator[StoredResult]:
        """Every request, in planned order, with its response and verdict or parse failure if
        any. LEFT JOINs: a pending or errored request is yielded, never dropped."""
        for row in self._paged(RESULTS_SELECT, "q.rowid"):
            request, response, verdict, failure = result_from_row(row)
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
        # (Counted at each fork rather than os.getpid() here: a system call per query.)
        if self._forks != _forks:
            raise StoreError(
                f"the store {self.path} was opened in another process: call RunStore.open "
                "in each worker process"
            )

    def _paged(self, select: str, rowid: str) -> Iterator[Sequence[Any]]:
        # Each page re-checks the store (closed, forked) through `_db`.
        return paged(lambda: self._db, select, rowid)

    def _read_all(self, table: str, fields: Sequence[str]) -> Iterator[Sequence[Any]]:
        # Every row of `table`, in rowid (insertion) order.
        return self._paged(f"SELECT rowid, {column_list(fields)} FROM {table}", "rowid")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with transaction(self._db) as conn:
            yield conn

    def _insert(
        self, table: str, fields: Sequence[str], rows: Sequence[_Row], extra: str = "row_hash"
    ) -> int:
        """INSERT rows holding `fields` then the `extra` columns (primary key first, row hash
        last); keep rows already there if identical, raise if the same key holds different
        content."""
        if not rows:
            return 0
        key, columns = fields[0], f"{column_list(fields[1:])}, {extra}"
        marks = placeholders(len(rows[0]))
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

    def _check_conflicts(self, table: str, key: str, rows: Sequence[_Row]) -> None:
        given: dict[Any, Any] = {}
        for row in rows:
            if given.setdefault(row[0], row[-1]) != row[-1]:
                raise StoreError(
                    f"{table}: id {row[0]!r} appears twice in one batch with different content"
                )
        stored = select_in(self._conn, f"SELECT {key}, row_hash FROM {table}", key, list(given))
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
        unknown: list[str] = []
        for rid in dict.fromkeys(request_ids):
            key = self._handed_out.pop(rid, None)
            if key is None:
                unknown.append(rid)
            else:
                keys[rid] = key
        if not unknown:
            return keys
        select = "SELECT request_id, cache_key FROM judge_requests"
        keys.update(select_in(self._db, select, "request_id", unknown))
        missing = [rid for rid in unknown if rid not in keys]
        if missing:
            raise StoreError(
                f"response for unknown request {missing[0]!r} in {self.path}: "
                "add_requests must store a request before its response"
            )
        return keys


def _put_cache(
    conn: sqlite3.Connection, fresh: Sequence[tuple[JudgeResponse, str]], now: str
) -> None:
    # First reply wins: a later identical request (same key) adds nothing.
    conn.executemany(_INSERT_CACHE, [cache_row(r, key, now) for r, key in fresh])
