"""Ordered schema migrations for the run store and the shared response cache.

Each migration is a small function applied once, in list order, and recorded by name in the
`_migrations` table of the file it changed (the habit of simonw/llm's `migrations.py`). A released
migration is never edited: a schema change is a new function appended to the list, so every
existing store can be brought forward and a store written by newer code is recognised.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from judge.errors import StoreError

RUN_STORE_APP_ID = 0x4A52554E
"""`PRAGMA application_id` of a run store ("JRUN"): tells a run store from a cache file."""
CACHE_APP_ID = 0x4A434348
"""`PRAGMA application_id` of a shared response-cache file ("JCCH")."""

_KIND_BY_APP_ID = {RUN_STORE_APP_ID: "run store", CACHE_APP_ID: "response cache"}


@dataclass(frozen=True)
class Migration:
    name: str
    """Recorded in `_migrations`; never renamed once released."""
    apply: Callable[[sqlite3.Connection], None]


def _run_all(conn: sqlite3.Connection, *statements: str) -> None:
    # Not `executescript`: it COMMITs first, which would break the one-transaction guarantee
    # of `migrate`.
    for statement in statements:
        conn.execute(statement)


def _m001_run_tables(conn: sqlite3.Connection) -> None:
    _m001_inputs(conn)
    _m001_requests(conn)
    _m001_replies(conn)


def _m001_inputs(conn: sqlite3.Connection) -> None:
    """What the run judges: its metadata, items, blinded responses and the pairs of them."""
    _run_all(
        conn,
        # Values are canonical JSON, so a stored config can be compared with a new one by text.
        """CREATE TABLE run_meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        )""",
        # `row_hash` (content hash of the whole record) makes "same id, different content"
        # detectable with one indexed lookup instead of a column-by-column comparison.
        """CREATE TABLE items (
            item_id   TEXT PRIMARY KEY,
            prompt    TEXT NOT NULL,  -- JSON: a string or a list of chat messages
            reference TEXT,
            strata    TEXT NOT NULL,  -- JSON object
            row_hash  TEXT NOT NULL
        )""",
        # Judge-visible data only: no system column, by design. The blinding key (opaque id ->
        # system) lives in its own file in the run dir, so this database can be shared or
        # inspected without unblinding anything.
        """CREATE TABLE blinded_responses (
            blind_id TEXT PRIMARY KEY,
            item_id  TEXT NOT NULL REFERENCES items (item_id),
            output   TEXT NOT NULL,
            context  TEXT NOT NULL,  -- JSON list of chat messages
            row_hash TEXT NOT NULL
        )""",
        """CREATE TABLE pairs (
            pair_id  TEXT PRIMARY KEY,
            item_id  TEXT NOT NULL REFERENCES items (item_id),
            slot_a   TEXT NOT NULL REFERENCES blinded_responses (blind_id),
            slot_b   TEXT NOT NULL REFERENCES blinded_responses (blind_id),
            row_hash TEXT NOT NULL
        )""",
    )


def _m001_requests(conn: sqlite3.Connection) -> None:
    """The requests sent to judges."""
    _run_all(
        conn,
        """CREATE TABLE judge_requests (
            request_id     TEXT PRIMARY KEY,
            judge          TEXT NOT NULL,
            rubric_id      TEXT NOT NULL,
            rubric_version INTEGER NOT NULL,
            rubric_hash    TEXT NOT NULL,
            kind           TEXT NOT NULL CHECK (kind IN ('pairwise', 'absolute')),
            item_id        TEXT NOT NULL REFERENCES items (item_id),
            pair_id        TEXT REFERENCES pairs (pair_id),
            "order"        TEXT CHECK ("order" IN ('AB', 'BA')),
            blind_id       TEXT REFERENCES blinded_responses (blind_id),
            messages       TEXT NOT NULL,  -- JSON list of chat messages
            params         TEXT NOT NULL,  -- JSON object
            cache_key      TEXT NOT NULL CHECK (cache_key LIKE 'sha256:%'),
            same_family    INTEGER NOT NULL CHECK (same_family IN (0, 1)),
            created_at     TEXT NOT NULL,
            row_hash       TEXT NOT NULL
        )""",
        "CREATE INDEX judge_requests_judge ON judge_requests (judge)",
    )


def _m001_replies(conn: sqlite3.Connection) -> None:
    """What the judges replied, and the verdict (or parse failure) read from each reply."""
    _run_all(
        conn,
        """CREATE TABLE judge_responses (
            request_id          TEXT PRIMARY KEY REFERENCES judge_requests (request_id),
            text                TEXT,
            input_tokens        INTEGER NOT NULL,
            output_tokens       INTEGER NOT NULL,
            cost_usd            REAL,
            latency_s           REAL,
            attempts            INTEGER NOT NULL,
            provider_request_id TEXT,
            error               TEXT,
            cached              INTEGER NOT NULL CHECK (cached IN (0, 1)),
            created_at          TEXT NOT NULL,
            CHECK (error IS NOT NULL OR text IS NOT NULL)
        )""",
        # One row per parsed reply: either a verdict (parsed_from set) or a parse failure
        # (parse_failure_reason set), never both, never neither.
        """CREATE TABLE verdicts (
            request_id            TEXT PRIMARY KEY REFERENCES judge_responses (request_id),
            label                 TEXT CHECK (label IN ('A', 'B', 'tie')),
            score                 REAL,
            scores                TEXT,  -- JSON object
            reasoning             TEXT,
            parsed_from           TEXT CHECK (parsed_from IN ('json', 'text')),
            parse_failure_reason  TEXT,
            parse_failure_excerpt TEXT,
            CHECK ((parsed_from IS NULL) <> (parse_failure_reason IS NULL)),
            CHECK (parse_failure_reason IS NULL
                   OR (label IS NULL AND score IS NULL AND scores IS NULL AND reasoning IS NULL))
        )""",
    )


def _create_response_cache(conn: sqlite3.Connection) -> None:
    # Only successful replies are cached: an error must be retried by the next run, not replayed.
    _run_all(
        conn,
        """CREATE TABLE response_cache (
            cache_key           TEXT PRIMARY KEY CHECK (cache_key LIKE 'sha256:%'),
            text                TEXT NOT NULL,
            input_tokens        INTEGER NOT NULL,
            output_tokens       INTEGER NOT NULL,
            cost_usd            REAL,
            provider_request_id TEXT,
            created_at          TEXT NOT NULL
        )""",
    )


def _m003_requests_by_item(conn: sqlite3.Connection) -> None:
    # The outputs read every request with its reply grouped by item, pair (or response), judge
    # and order (`judge.store.result_rows`): in this index's order, without a sort of the whole run.
    # It holds every column of `judge_requests` that read needs, so the rows (and the rendered
    # prompts they hold) are never visited.
    conn.execute(
        "CREATE INDEX judge_requests_by_item ON judge_requests"
        ' (item_id, pair_id, blind_id, judge, "order", request_id, same_family)'
    )


def _m004_cost_columns(conn: sqlite3.Connection) -> None:
    # Prompt-cache usage and the batch that answered: what the report's realised batch discount
    # and cache savings are computed from. Old rows read as uncached, synchronous replies.
    _run_all(
        conn,
        "ALTER TABLE judge_responses ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE judge_responses ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE judge_responses ADD COLUMN batch_id TEXT",
    )


def _m005_batches(conn: sqlite3.Connection) -> None:
    # The batch ledger (`judge.batch.ledger`): every provider batch a run plans, its state and
    # its requests, so a killed run re-attaches to batches in flight and never submits a
    # request twice. A request may be in several batches over time (failed or expired ones are
    # re-queued); `outcome` is NULL while its batch is open.
    _run_all(
        conn,
        """CREATE TABLE batches (
            batch_id          TEXT PRIMARY KEY,
            judge             TEXT NOT NULL,
            api               TEXT NOT NULL CHECK (api IN ('openai', 'anthropic')),
            state             TEXT NOT NULL CHECK (state IN
                                ('planned', 'submitting', 'submitted', 'collected', 'abandoned')),
            requests          INTEGER NOT NULL,
            bytes             INTEGER NOT NULL,
            estimate_usd      REAL,
            input_file_id     TEXT,
            provider_id       TEXT UNIQUE,
            provider_status   TEXT,
            counts            TEXT,  -- JSON: the provider's request counts, last seen
            adopted           INTEGER NOT NULL DEFAULT 0,
            rejected          TEXT,  -- JSON: provider ids adopted, then found not to be ours
            created_at        TEXT NOT NULL,
            submit_started_at TEXT,
            submitted_at      TEXT,
            collected_at      TEXT,
            note              TEXT
        )""",
        "CREATE INDEX batches_by_state ON batches (state)",
        """CREATE TABLE batch_requests (
            batch_id   TEXT NOT NULL REFERENCES batches (batch_id),
            request_id TEXT NOT NULL REFERENCES judge_requests (request_id),
            outcome    TEXT CHECK (outcome IN
                         ('answered', 'error', 'failed', 'expired', 'canceled', 'missing')),
            PRIMARY KEY (batch_id, request_id)
        )""",
        "CREATE INDEX batch_requests_by_request ON batch_requests (request_id, outcome)",
    )


def _m006_gemini_batches(conn: sqlite3.Connection) -> None:
    # Gemini's Batch API joins the ledger's `api` values. Widening a CHECK changes no stored
    # row, so the table's schema text is edited in place (SQLite's documented way for such
    # changes, ALTER TABLE section 7): a rebuild would have to drop `batches`, which
    # batch_requests references, with foreign keys on.
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_schema SET sql = replace(sql, ?, ?)"
            " WHERE type = 'table' AND name = 'batches'",
            (
                "CHECK (api IN ('openai', 'anthropic'))",
                "CHECK (api IN ('openai', 'anthropic', 'gemini'))",
            ),
        )
        conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")


RUN_MIGRATIONS: tuple[Migration, ...] = (
    Migration("m001_run_tables", _m001_run_tables),
    # The run store always has its own cache table, even when a shared cache file is used
    # (it then stays empty): the schema of a file must not depend on how it was opened.
    Migration("m002_response_cache", _create_response_cache),
    Migration("m003_requests_by_item", _m003_requests_by_item),
    Migration("m004_cost_columns", _m004_cost_columns),
    Migration("m005_batches", _m005_batches),
    Migration("m006_gemini_batches", _m006_gemini_batches),
)
"""Migrations of `store.sqlite`, in the order they are applied."""

CACHE_MIGRATIONS: tuple[Migration, ...] = (
    Migration("m001_response_cache", _create_response_cache),
)
"""Migrations of a shared response-cache file, in the order they are applied."""


def migrate(
    conn: sqlite3.Connection,
    migrations: Sequence[Migration],
    *,
    application_id: int,
    path: str,
) -> list[str]:
    """Apply the migrations `conn` lacks, in order; return the names applied.

    All of them run in one write transaction with their `_migrations` rows, so a process killed
    half-way leaves the file as it was, and two processes opening a fresh store at once do not
    both apply `m001` (the second waits for the first, then finds nothing to do).
    """
    # IMMEDIATE takes the write lock up front; a deferred transaction that later upgrades to
    # write can fail with "database is locked" without waiting for busy_timeout.
    conn.execute("BEGIN IMMEDIATE")
    try:
        found_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if found_id not in (0, application_id):
            found = _KIND_BY_APP_ID.get(found_id, f"file with application_id {found_id}")
            wanted = _KIND_BY_APP_ID[application_id]
            raise StoreError(f"{path} is a {found}, not a {wanted}: pass the right path")
        conn.execute(f"PRAGMA application_id = {int(application_id)}")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS _migrations ("
            " name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        applied = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
        unknown = sorted(applied - {m.name for m in migrations})
        if unknown:
            raise StoreError(
                f"{path} was written by a newer version of judge-pipeline "
                f"(unknown migrations: {', '.join(unknown)}): upgrade judge-pipeline "
                "to open it, or use a new run dir"
            )
        done: list[str] = []
        for migration in migrations:
            if migration.name in applied:
                continue
            migration.apply(conn)
            conn.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (migration.name, utc_now()),
            )
            done.append(migration.name)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return done


def is_current(
    conn: sqlite3.Connection, migrations: Sequence[Migration], *, application_id: int
) -> bool:
    """Whether `conn` (opened read-only: nothing is applied) is a file of this kind with every
    migration applied and none unknown."""
    if conn.execute("PRAGMA application_id").fetchone()[0] != application_id:
        return False
    try:
        applied = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    except sqlite3.OperationalError:  # no _migrations table: never migrated
        return False
    return applied == {m.name for m in migrations}


def utc_now() -> str:
    """ISO 8601 UTC timestamp with milliseconds: sorts as text, readable in any SQLite shell."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
