"""Checkpoints apart from the judging loop: while a runner commits replies many times a second,
a thread of its own copies the write-ahead log back into the database file.

By SQLite's default the connection whose commit takes the WAL past 1,000 pages does that copy
itself, inside its COMMIT: two fsyncs and a few MB written (measured 2-50 ms each on a shared
2-core machine), during which the event loop that committed sends and receives nothing; at
~1,000 replies a second (~15 KB of WAL each) that is 4 times a second. Here the committing
connections only append to the WAL (`PRAGMA wal_autocheckpoint = 0`), and the thread runs a
PASSIVE checkpoint every `_EVERY_S`: it never blocks a writer, and the sqlite3 module releases
the GIL while SQLite works. Nothing changes for durability: a reply is durable once its commit
is in the WAL, checkpointed or not.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from judge.sqlite import connect

_EVERY_S = 0.25
"""Seconds between checkpoints: a few MB of WAL at the most at the rates a runner reaches."""


@contextlib.contextmanager
def checkpoints_apart(conns: Sequence[sqlite3.Connection]) -> Iterator[None]:
    """While inside: the WAL of each connection's database file is checkpointed by a thread of
    its own instead of by that connection's commits; their automatic checkpoints are restored
    on exit. Should the thread fail to open the files, they stay as they were: checkpointed by
    their commits."""
    paths = [Path(conn.execute("PRAGMA database_list").fetchone()[2]) for conn in conns]
    stop, opened = threading.Event(), threading.Event()
    ready: list[bool] = []
    thread = threading.Thread(
        target=_checkpoint_until,
        args=(paths, stop, opened, ready),
        name="judge-checkpoints",
        daemon=True,
    )
    thread.start()
    opened.wait()
    saved = [(conn, conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) for conn in conns]
    try:
        if ready:
            for conn in conns:
                conn.execute("PRAGMA wal_autocheckpoint = 0")
        yield
    finally:
        stop.set()
        thread.join()
        for conn, pages in saved:
            conn.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")


def _checkpoint_until(
    paths: Sequence[Path], stop: threading.Event, opened: threading.Event, ready: list[bool]
) -> None:
    conns: list[sqlite3.Connection] = []
    try:
        for path in paths:
            conns.append(connect(path))
        ready.append(True)
    except Exception:  # not ready: the writers' commits keep checkpointing, as by default
        for conn in conns:
            conn.close()
        return
    finally:
        opened.set()
    try:
        while not stop.wait(_EVERY_S):
            for conn in conns:
                # A failed one is left to the next (or to the last connection's close).
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    finally:
        for conn in conns:
            conn.close()
