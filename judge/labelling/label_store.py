"""The labelling store: a run's labelling task, its queue and every human label, in one SQLite
file beside the run store (`RunDir.labelling_file`).

Apart from the run store on purpose: labels arrive long after the judging, from many
annotators at once, while the run store has one writer (the run's lock). It holds no system
name: pairs are named by their opaque pair ids, answers by slot (a, b, tie of the pair as
blinded), so this file, like the judge's prompts, says nothing about who wrote what. The
blinding key turns slots into systems only when the labels go to calibration
(`judge.labelling.sample`).

Nothing is deleted: an undone label keeps its row (`undone_at`), so every label ever given,
and when, stays on record.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.sqlite import connect, transaction

if TYPE_CHECKING:
    from judge.store.rundir import RunDir

_SCHEMA = """
CREATE TABLE IF NOT EXISTS task (
    id          TEXT PRIMARY KEY,
    created_at  TEXT NOT NULL,
    spec        TEXT NOT NULL,   -- JSON: judge.labelling.task.TaskSpec
    pool        INTEGER NOT NULL, -- pairs in the queue
    cut         REAL             -- key of the first pair the task's size left out (NULL: none)
);
CREATE TABLE IF NOT EXISTS queue (
    pair_id   TEXT PRIMARY KEY,
    item_id   TEXT NOT NULL,
    rank      INTEGER NOT NULL UNIQUE,  -- position in the sampling order, from 0
    weight    REAL NOT NULL CHECK (weight > 0),
    priority  REAL NOT NULL,            -- sequential Poisson key U / weight
    flip      INTEGER NOT NULL CHECK (flip IN (0, 1))  -- first annotator's order: 0 AB, 1 BA
);
CREATE TABLE IF NOT EXISTS assignments (
    id          TEXT PRIMARY KEY,       -- opaque: what a page or export names a pair by
    annotator   TEXT NOT NULL,
    pair_id     TEXT NOT NULL REFERENCES queue (pair_id),
    shown       TEXT NOT NULL CHECK (shown IN ('AB', 'BA')),
    served_at   TEXT NOT NULL,
    serial      INTEGER NOT NULL, -- order of serving (an undo serves again): latest first
    answered_at TEXT,
    UNIQUE (annotator, pair_id)
);
CREATE INDEX IF NOT EXISTS assignments_by_pair ON assignments (pair_id);
CREATE TABLE IF NOT EXISTS labels (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment_id TEXT NOT NULL REFERENCES assignments (id),
    annotator     TEXT NOT NULL,
    pair_id       TEXT NOT NULL REFERENCES queue (pair_id),
    choice        TEXT NOT NULL CHECK (choice IN ('1', '2', 'tie', 'skip')),
    winner        TEXT CHECK (winner IN ('a', 'b', 'tie')),  -- slot of the pair; NULL: skip
    shown         TEXT NOT NULL CHECK (shown IN ('AB', 'BA')),
    reason        TEXT,
    served_at     TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    seconds       REAL,           -- served to answered; NULL for offline labels
    source        TEXT NOT NULL CHECK (source IN ('page', 'file')),
    undone_at     TEXT,
    CHECK ((choice = 'skip') = (winner IS NULL))
);
CREATE INDEX IF NOT EXISTS labels_by_pair ON labels (pair_id, undone_at);
CREATE INDEX IF NOT EXISTS labels_by_annotator ON labels (annotator, id);
"""


CLAIM_S = 30 * 60
"""A pair shown to an annotator is theirs for this long; unanswered after it, others may have it
too (it stays in the first annotator's queue)."""


_VERSION = 1
"""The schema's version (`PRAGMA user_version`); 0 in a new file."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _ago(seconds: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class QueueRow:
    pair_id: str
    item_id: str
    rank: int
    weight: float
    priority: float
    flip: int


@dataclass(frozen=True)
class Assignment:
    id: str
    annotator: str
    pair_id: str
    item_id: str
    shown: str
    served_at: str
    answered_at: str | None


@dataclass(frozen=True)
class LabelRow:
    id: int
    assignment_id: str
    annotator: str
    pair_id: str
    choice: str
    winner: str | None
    shown: str
    reason: str | None
    served_at: str
    created_at: str
    seconds: float | None
    source: str
    undone_at: str | None
    item_id: str


@dataclass(frozen=True)
class Tally:
    """One annotator's labels so far."""

    annotator: str
    labels: int
    """Standing labels: not undone, not skips."""
    skips: int
    """Standing skips."""
    undone: int
    last_at: str | None
    """When its latest label (of any kind) was given; None before the first."""


class LabelStore:
    """One connection to a run's labelling file. Open with `open_labelling(rundir)`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)
        # Every page load opens the store: create the tables once, not a write per open.
        if self._conn.execute("PRAGMA user_version").fetchone()[0] < _VERSION:
            # IF NOT EXISTS throughout: two processes creating it at once both succeed.
            self._conn.executescript(_SCHEMA + f"PRAGMA user_version = {_VERSION};")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        with transaction(self._conn) as conn:
            yield conn

    # -- the task and its queue ------------------------------------------------------------

    def task(self) -> tuple[str, dict[str, Any], int, str] | None:
        """(task id, spec as JSON, pool size, created at), or None before a task exists."""
        row = self._conn.execute("SELECT id, spec, pool, created_at FROM task").fetchone()
        return None if row is None else (row[0], json.loads(row[1]), int(row[2]), row[3])

    def cut(self) -> float | None:
        """The key of the first pair left out of the queue by the task's size, if any."""
        row = self._conn.execute("SELECT cut FROM task").fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def create_task(
        self, spec: dict[str, Any], queue: Iterable[QueueRow], cut: float | None = None
    ) -> str:
        task_id = "t_" + secrets.token_hex(6)
        with self.write() as conn:
            if conn.execute("SELECT 1 FROM task").fetchone() is not None:
                raise FileExistsError("this run has a labelling task already")
            rows = [(q.pair_id, q.item_id, q.rank, q.weight, q.priority, q.flip) for q in queue]
            conn.executemany("INSERT INTO queue VALUES (?, ?, ?, ?, ?, ?)", rows)
            conn.execute(
                "INSERT INTO task VALUES (?, ?, ?, ?, ?)",
                (task_id, now(), json.dumps(spec, sort_keys=True), len(rows), cut),
            )
        return task_id

    def queue(self) -> Iterator[QueueRow]:
        """The queue in sampling order (paged: a queue can hold every pair of a large run)."""
        last = -1
        while True:
            rows = self._conn.execute(
                "SELECT pair_id, item_id, rank, weight, priority, flip FROM queue "
                "WHERE rank > ? ORDER BY rank LIMIT 5000",
                (last,),
            ).fetchall()
            if not rows:
                return
            for row in rows:
                yield QueueRow(*row)
            last = rows[-1][2]

    # -- assignments -----------------------------------------------------------------------

    def open_assignment(self, annotator: str) -> Assignment | None:
        """The pair this annotator was shown and has not answered (a reload shows it again)."""
        # The latest served first: an undone label's pair comes back before the one the
        # annotator was looking at when it pressed undo.
        row = self._conn.execute(
            _ASSIGNMENTS + "WHERE a.annotator = ? AND a.answered_at IS NULL "
            "ORDER BY a.serial DESC LIMIT 1",
            (annotator,),
        ).fetchone()
        return None if row is None else Assignment(*row)

    def open_assignments(self, annotator: str) -> list[Assignment]:
        """Every pair shown to this annotator and not answered, in queue order."""
        rows = self._conn.execute(
            _ASSIGNMENTS + "WHERE a.annotator = ? AND a.answered_at IS NULL ORDER BY q.rank",
            (annotator,),
        )
        return [Assignment(*r) for r in rows]

    def assignment(self, assignment_id: str) -> Assignment | None:
        row = self._conn.execute(_ASSIGNMENTS + "WHERE a.id = ?", (assignment_id,)).fetchone()
        return None if row is None else Assignment(*row)

    def assign_next(self, annotator: str, overlap: int, max_skips: int) -> Assignment | None:
        """Give `annotator` the first pair in sampling order that it has not seen, that has
        fewer than `overlap` answers or claims (others' open assignments younger than
        `CLAIM_S`), and that fewer than
        `max_skips` annotators skipped. The order shown alternates across the annotators of a
        pair, starting from the pair's random `flip`: random per annotator, balanced across
        them. None when no such pair is left."""
        with self.write() as conn:
            row = conn.execute(
                """
                SELECT q.pair_id, q.flip,
                       (SELECT count(*) FROM assignments s WHERE s.pair_id = q.pair_id)
                FROM queue q
                WHERE NOT EXISTS (SELECT 1 FROM assignments m
                                  WHERE m.pair_id = q.pair_id AND m.annotator = :who)
                  AND (SELECT count(*) FROM labels l WHERE l.pair_id = q.pair_id
                         AND l.undone_at IS NULL AND l.choice != 'skip')
                      + (SELECT count(*) FROM assignments o WHERE o.pair_id = q.pair_id
                         AND o.answered_at IS NULL AND o.served_at > :stale) < :overlap
                  AND (SELECT count(*) FROM labels l WHERE l.pair_id = q.pair_id
                         AND l.undone_at IS NULL AND l.choice = 'skip') < :skips
                ORDER BY q.rank LIMIT 1
                """,
                {
                    "who": annotator,
                    "overlap": overlap,
                    "skips": max_skips,
                    "stale": _ago(CLAIM_S),
                },
            ).fetchone()
            if row is None:
                return None
            pair_id, flip, seen = row
            shown = "AB" if (flip + seen) % 2 == 0 else "BA"
            assignment_id = "a_" + secrets.token_hex(8)
            conn.execute(
                "INSERT INTO assignments VALUES (?, ?, ?, ?, ?, "
                "(SELECT coalesce(max(serial), 0) + 1 FROM assignments), NULL)",
                (assignment_id, annotator, pair_id, shown, now()),
            )
        found = self.assignment(assignment_id)
        assert found is not None
        return found

    # -- labels ----------------------------------------------------------------------------

    def add_label(
        self, assignment: Assignment, choice: str, reason: str | None, *, source: str
    ) -> LabelRow:
        """Record the answer to an open assignment (closing it). `choice`: 1 or 2 (the
        response shown first or second), tie or skip."""
        winner = _winner(choice, assignment.shown)
        at = now()
        seconds = None
        if source == "page":
            seconds = max(0.0, _seconds(assignment.served_at, at))
        with self.write() as conn:
            closed = conn.execute(
                "UPDATE assignments SET answered_at = ? WHERE id = ? AND answered_at IS NULL",
                (at, assignment.id),
            ).rowcount
            if not closed:
                raise LookupError("this pair was answered already")
            cur = conn.execute(
                "INSERT INTO labels (assignment_id, annotator, pair_id, choice, winner, shown, "
                "reason, served_at, created_at, seconds, source) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    assignment.id,
                    assignment.annotator,
                    assignment.pair_id,
                    choice,
                    winner,
                    assignment.shown,
                    reason,
                    assignment.served_at,
                    at,
                    seconds,
                    source,
                ),
            )
            label_id = int(cur.lastrowid or 0)
        return self.label(label_id)

    def label(self, label_id: int) -> LabelRow:
        row = self._conn.execute(_LABELS + "WHERE l.id = ?", (label_id,))
        return LabelRow(*row.fetchone())

    def undo_last(self, annotator: str) -> LabelRow | None:
        """Undo the annotator's latest label still standing: the row stays (marked undone)
        and its pair is shown to the annotator again, as a fresh serve."""
        with self.write() as conn:
            row = conn.execute(
                "SELECT id, assignment_id FROM labels WHERE annotator = ? AND undone_at IS NULL "
                "ORDER BY id DESC LIMIT 1",
                (annotator,),
            ).fetchone()
            if row is None:
                return None
            at = now()
            conn.execute("UPDATE labels SET undone_at = ? WHERE id = ?", (at, row[0]))
            conn.execute(
                "UPDATE assignments SET answered_at = NULL, served_at = ?, "
                "serial = (SELECT coalesce(max(serial), 0) + 1 FROM assignments) WHERE id = ?",
                (at, row[1]),
            )
        return self.label(int(row[0]))

    def labels(self, *, annotator: str | None = None, standing: bool = False) -> list[LabelRow]:
        """Every label (undone ones too unless `standing`), oldest first."""
        where, args = [], []
        if annotator is not None:
            where.append("l.annotator = ?")
            args.append(annotator)
        if standing:
            where.append("l.undone_at IS NULL")
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        rows = self._conn.execute(_LABELS + clause + "ORDER BY l.id", args)
        return [LabelRow(*r) for r in rows]

    def counts(self, annotator: str) -> tuple[int, int]:
        """(labels standing by this annotator, pairs it could still be given at most)."""
        done = self._conn.execute(
            "SELECT count(*) FROM labels WHERE annotator = ? AND undone_at IS NULL", (annotator,)
        ).fetchone()[0]
        pool = self._conn.execute("SELECT pool FROM task").fetchone()
        return int(done), int(pool[0]) if pool else 0

    def tallies(self) -> list[Tally]:
        """A tally for every annotator served a pair, by name (none labelled yet: zeros)."""
        rows = self._conn.execute(
            "SELECT a.annotator, "
            "count(CASE WHEN l.undone_at IS NULL AND l.choice != 'skip' THEN 1 END), "
            "count(CASE WHEN l.undone_at IS NULL AND l.choice = 'skip' THEN 1 END), "
            "count(l.undone_at), max(l.created_at) "
            "FROM (SELECT DISTINCT annotator FROM assignments) a "
            "LEFT JOIN labels l ON l.annotator = a.annotator "
            "GROUP BY a.annotator ORDER BY a.annotator"
        )
        return [Tally(*r) for r in rows]

    def in_progress(self) -> set[str]:
        """Pairs shown to someone and not answered by them yet."""
        rows = self._conn.execute(
            "SELECT DISTINCT pair_id FROM assignments WHERE answered_at IS NULL"
        )
        return {r[0] for r in rows}

    def annotators(self) -> list[str]:
        rows = self._conn.execute("SELECT DISTINCT annotator FROM assignments ORDER BY 1")
        return [r[0] for r in rows]


_ASSIGNMENTS = (
    "SELECT a.id, a.annotator, a.pair_id, q.item_id, a.shown, a.served_at, a.answered_at "
    "FROM assignments a JOIN queue q USING (pair_id) "
)
"""An `Assignment` row; add the WHERE clause."""

_LABELS = (
    "SELECT l.id, l.assignment_id, l.annotator, l.pair_id, l.choice, l.winner, l.shown, "
    "l.reason, l.served_at, l.created_at, l.seconds, l.source, l.undone_at, q.item_id "
    "FROM labels l JOIN queue q USING (pair_id) "
)
"""A `LabelRow` (with its pair's item); add the WHERE clause."""


def _winner(choice: str, shown: str) -> str | None:
    """The pair's slot an answer names: `1` is the response shown first (slot a when shown
    AB, slot b when shown BA)."""
    if choice == "skip":
        return None
    if choice == "tie":
        return "tie"
    if choice not in ("1", "2"):
        raise ValueError(f"choice {choice!r}: expected 1, 2, tie or skip")
    first = "a" if shown == "AB" else "b"
    second = "b" if shown == "AB" else "a"
    return first if choice == "1" else second


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def open_labelling(rundir: RunDir) -> LabelStore:
    """The run's labelling store (`RunDir.labelling_file`), created on first use. The labelling
    layer opens it: the run dir names the file but knows nothing of labelling."""
    return LabelStore(rundir.labelling_file)
