"""SQLite plumbing shared by the run store and the response cache: opening a connection with
the right pragmas, WAL mode, write transactions, and reads batched to stay short.

Every write goes through `transaction` (`BEGIN IMMEDIATE ... COMMIT`), and every long read is
cut into short ones (`paged`, `select_in`), so several processes can share one file.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from judge.errors import StoreError

__all__ = [
    "BUSY_TIMEOUT_S",
    "connect",
    "connect_read_only",
    "connect_scratch",
    "paged",
    "placeholders",
    "select_in",
    "transaction",
]

BUSY_TIMEOUT_S = 30.0
"""How long a writer waits for another process's write transaction before failing."""

_CHUNK = 500
"""Ids per `IN (...)` query: well under SQLite's bound-parameter limit."""
_PAGE = 1000
"""Rows per page of `paged`: bounded memory, short reads."""


def connect(path: Path) -> sqlite3.Connection:
    """Open `path` (creating it if needed) in autocommit mode with a busy timeout, WAL mode,
    `synchronous = NORMAL` and foreign keys on. Writes must use `transaction`."""
    # isolation_level=None: the sqlite3 module must not open transactions behind our back;
    # every write goes through an explicit BEGIN IMMEDIATE ... COMMIT.
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise _unusable(path, exc) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _enable_wal(conn, path)
        # NORMAL is WAL-safe: a commit is appended to the WAL without an fsync, which still
        # survives the process being killed (the OS keeps the written pages). Only power loss
        # or an OS crash can drop the last few commits, never corrupt the file; those replies
        # would be requested again. FULL would fsync every judgment and cap throughput.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:  # not SQLite, a directory, unreadable, locked
        conn.close()
        raise _unusable(path, exc) from None
    except BaseException:
        conn.close()
        raise
    return conn


def connect_read_only(path: Path) -> sqlite3.Connection:
    """Open an existing `path` to read, writing nothing to it or beside it (a dry run must
    leave a run dir as it found it). A WAL file opened read-only gets `-wal` and `-shm` files
    it cannot remove, so a file whose WAL is absent (no writer has it open) is opened
    immutable; one a writer holds open is read through the writer's WAL files."""
    if path.is_dir():
        raise StoreError(f"{path}: a directory, not an SQLite file: give the path of a file")
    if not path.is_file():
        raise StoreError(f"{path}: no such SQLite file")
    wal_open = path.with_name(path.name + "-wal").exists()
    uri = path.resolve().as_uri() + ("?mode=ro" if wal_open else "?mode=ro&immutable=1")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise _unusable(path, exc) from None
    return conn


def connect_scratch(path: Path) -> sqlite3.Connection:
    """A new scratch file at `path` (an older one is replaced), for one process's working data
    (prepare's index of its input): autocommit, no journal file, no fsync. A crash loses it; its
    owner rebuilds it from its inputs. The rollback journal is kept in memory (a batch's worth
    of pages): without one, SQLite cannot undo a batch (`savepoint`), and a batch refused
    part-way (a repeated key) would stay half-written."""
    for stale in (path, path.with_name(path.name + "-journal")):
        stale.unlink(missing_ok=True)
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = MEMORY")
        conn.execute("PRAGMA synchronous = OFF")
    except sqlite3.Error as exc:
        raise _unusable(path, exc) from None
    return conn


def _unusable(path: Path, exc: sqlite3.Error) -> StoreError:
    if Path(path).is_dir():
        return StoreError(f"{path}: a directory, not an SQLite file: give the path of a file")
    return StoreError(
        f"{path}: cannot use as an SQLite database ({exc}): move the file away or give another path"
    )


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
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on `conn` (opened by `connect`): `BEGIN IMMEDIATE` on entry,
    `COMMIT` on normal exit, `ROLLBACK` if the block raises."""
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


@contextmanager
def savepoint(conn: sqlite3.Connection, name: str = "batch") -> Iterator[sqlite3.Connection]:
    """One batch of writes on a scratch connection (`connect_scratch`, autocommit), in one
    transaction (else every row is a transaction of its own), or nested in the caller's;
    undone if the block raises."""
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield conn
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    conn.execute(f"RELEASE {name}")


def placeholders(n: int) -> str:
    """`?, ?, ...` with `n` bound-parameter marks, for `VALUES (...)` and `IN (...)`."""
    return ", ".join("?" * n)


def select_in(
    conn: sqlite3.Connection, select: str, column: str, ids: Sequence[Any]
) -> Iterator[Sequence[Any]]:
    """Rows of `{select} WHERE {column} IN (ids)`, queried a chunk of ids at a time so no
    query exceeds SQLite's bound-parameter limit. `ids` should hold no duplicates."""
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        yield from conn.execute(
            f"{select} WHERE {column} IN ({placeholders(len(chunk))})", chunk
        ).fetchall()


def paged(db: Callable[[], sqlite3.Connection], select: str, rowid: str) -> Iterator[Sequence[Any]]:
    """Rows of `select` (whose first column is `rowid`, without it) in rowid order, fetched
    a page at a time by keyset, so each page is a short read of its own and no statement stays
    open between pages. `db` is called for each page, so a caller can check the connection is
    still usable (not closed, not inherited through fork) before every read."""
    last = -(2**63)
    while True:
        page = (
            db()
            .execute(f"{select} WHERE {rowid} > ? ORDER BY {rowid} LIMIT {_PAGE}", (last,))
            .fetchall()
        )
        for row in page:
            yield row[1:]
        if len(page) < _PAGE:
            return
        last = page[-1][0]
