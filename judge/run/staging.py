"""The temporary index prepare reads its input through: items and responses in an SQLite file
beside the run's store, so that pairing and rendering hold one chunk of items in memory, never
the whole table.

Responses arrive in file order; pairing needs each item's responses together. The index keeps
them by (item_id, system), so one sorted read gives them item by item, whatever the file's
order. It is scratch: written without a journal file or fsync, deleted when prepare ends, and
rebuilt from the input by the next prepare if a crash leaves it behind.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.inputs.duplicates import SeenInIndex, SeenKeys
from judge.inputs.tables import ItemLookup, iter_item_rows, iter_response_rows
from judge.run.staged_rows import (
    ITEM_COLUMNS,
    RESPONSE_COLUMNS,
    item_of,
    item_values,
    response_of,
    response_values,
)
from judge.sqlite import connect_scratch, savepoint, select_in
from judge.types import BlindedPair, BlindedResponse, Item, Response

_BATCH = 2_000
"""Rows per insert and per read: bounded memory, few round trips."""
_READ_ROWS = 5_000
"""Rows of the responses file parsed at a time (each ~1.5 KB as parsed)."""

_SCHEMA = """
-- Each input table's rows are stored as they are checked; the primary keys find repeats, and
-- `position` (the row's line) is what a repeat's error names as the earlier one.
CREATE TABLE items (
    item_id TEXT PRIMARY KEY,
    prompt TEXT NOT NULL,  -- the text, or JSON chat messages when `chat`
    chat INTEGER NOT NULL,
    reference TEXT,
    strata TEXT,  -- JSON, when the item has any
    position INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE responses (
    item_id TEXT NOT NULL,
    system TEXT NOT NULL,
    output TEXT NOT NULL,
    context TEXT,  -- JSON chat messages, when the response has earlier turns
    latency_s REAL,
    cost_usd REAL,
    tokens INTEGER,
    empty INTEGER NOT NULL,
    rule TEXT,
    answer BLOB,
    position INTEGER NOT NULL,
    PRIMARY KEY (item_id, system)
) WITHOUT ROWID;
-- Responses of systems not in `data.systems`: counted, never judged.
CREATE TABLE set_aside (item_id TEXT NOT NULL, system TEXT NOT NULL, position INTEGER NOT NULL,
    PRIMARY KEY (item_id, system)) WITHOUT ROWID;
-- Constant answers are counted per (system, answer) through this index, without a sort.
CREATE INDEX responses_by_answer ON responses (system, answer) WHERE answer IS NOT NULL;
CREATE TABLE pairs (item_id TEXT NOT NULL, pair_id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (item_id, pair_id)) WITHOUT ROWID;
CREATE TABLE shown (order_key BLOB NOT NULL, blind_id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (order_key, blind_id)) WITHOUT ROWID;
"""


@dataclass
class ItemGroup:
    """One item and its responses (sorted by system), as pairing takes them."""

    item: Item
    responses: list[Response]
    scans: list[tuple[str | None, bytes | None]]
    """Per response, (injection rule, constant-answer key) when the index was scanned."""


class Staging:
    """The items and responses of one prepare, indexed by item. Use as a context manager: the
    file is removed on exit."""

    def __init__(self, path: Path, check: Callable[[], None] = lambda: None) -> None:
        self.path = path
        self.check = check
        """Called at every batch: raises to stop (an interrupted run)."""
        self._db = connect_scratch(path)  # a crashed prepare's is replaced: rebuilt from input
        self._db.executescript(_SCHEMA)
        self.items = 0
        self.responses = 0
        self.set_aside = 0
        self.systems: dict[str, int] = {}
        """Responses per system kept for the run."""
        self.other_systems: set[str] = set()
        self.strata_columns: set[str] = set()
        """The items' columns besides item_id, prompt and reference (any item's)."""
        self.scanned = False

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        self.path.unlink(missing_ok=True)

    # -- loading ---------------------------------------------------------------------------

    def load_items(self, path: Path, columns: Mapping[str, str] | None = None) -> ItemLookup:
        """Index the items table; returns its item ids (responses must answer one of them),
        looked up in the index rather than held in memory. `columns`: `data.columns`."""
        stored = SeenInIndex.storing(
            self._db,
            "items",
            ("item_id",),
            lambda row, position: (*item_values(row), position),
        )
        strata = self.strata_columns
        for row in iter_item_rows(path, seen=stored, columns=columns):
            self.items += 1
            if row.strata:
                strata.update(row.strata)
            if self.items % _BATCH == 0:
                self.check()
        return _Indexed(self._db)

    def load_responses(
        self,
        path: Path,
        item_ids: Container[str] | ItemLookup,
        *,
        allow_empty_outputs: bool,
        keep: Collection[str] | None,
        columns: Mapping[str, str] | None = None,
    ) -> None:
        """Index the responses table; those of systems not in `keep` (None: all) are counted
        and set aside."""
        # Repeats are looked for in this index, not in memory: flat at millions of items.
        stored: SeenKeys = SeenInIndex.storing(
            self._db,
            "responses",
            ("item_id", "system"),
            lambda row, position: (*response_values(row), None, None, position),
        )
        if keep is not None:
            other = SeenInIndex.storing(
                self._db,
                "set_aside",
                ("item_id", "system"),
                lambda row, position: (row.item_id, row.system, position),
            )
            stored = _Split(stored, other, keep)
        responses = iter_response_rows(
            path,
            item_ids,
            allow_empty_outputs=allow_empty_outputs,
            chunk_rows=_READ_ROWS,
            seen=stored,
            columns=columns,
        )
        for read, r in enumerate(responses, start=1):
            if read % _BATCH == 0:
                self.check()
            if keep is not None and r.system not in keep:
                self.set_aside += 1
                self.other_systems.add(r.system)
            else:
                self.systems[r.system] = self.systems.get(r.system, 0) + 1
        self.responses = sum(self.systems.values())

    def _many(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        # One transaction per batch: in autocommit every row would be a transaction of its own
        # (measured: 8 us a row, most of the input pass).
        with savepoint(self._db):
            self._db.executemany(sql, rows)

    # -- reading ---------------------------------------------------------------------------

    def groups(self) -> Iterator[ItemGroup]:
        """Every item that has responses, in item_id order, with its responses by system.
        Items no system answered are left out (nothing to judge)."""
        last = ""
        first = True
        while True:
            # Keyset pagination: no statement stays open while the caller works on a page.
            rows = self._db.execute(
                f"SELECT {RESPONSE_COLUMNS}, rule, answer FROM responses"
                + ("" if first else " WHERE item_id > ?")
                + " ORDER BY item_id, system LIMIT ?",
                (_BATCH,) if first else (last, _BATCH),
            ).fetchall()
            if not rows:
                return
            # A page may cut an item's responses: finish that item before yielding it.
            tail = rows[-1][0]
            rows += self._db.execute(
                f"SELECT {RESPONSE_COLUMNS}, rule, answer FROM responses WHERE item_id = ? "
                "ORDER BY system LIMIT -1 OFFSET ?",
                (tail, sum(1 for r in rows if r[0] == tail)),
            ).fetchall()
            items = self._items({r[0] for r in rows})
            group: list[tuple[Any, ...]] = []
            for row in rows:
                if group and group[0][0] != row[0]:
                    yield self._group(items, group)
                    group = []
                group.append(row)
            if group:
                yield self._group(items, group)
            last, first = tail, False

    def _items(self, ids: set[str]) -> dict[str, Item]:
        select = f"SELECT {ITEM_COLUMNS} FROM items"
        return {row[0]: item_of(row) for row in select_in(self._db, select, "item_id", sorted(ids))}

    @staticmethod
    def _group(items: dict[str, Item], rows: list[tuple[Any, ...]]) -> ItemGroup:
        return ItemGroup(
            item=items[rows[0][0]],
            responses=[response_of(r) for r in rows],
            scans=[r[-2:] for r in rows],
        )

    def unanswered_items(self) -> Iterator[Item]:
        """The items no kept response answers (stored with the run, never judged)."""
        for row in self._db.execute(
            f"SELECT {ITEM_COLUMNS} FROM items i WHERE NOT EXISTS "
            "(SELECT 1 FROM responses r WHERE r.item_id = i.item_id) ORDER BY item_id"
        ).fetchall():
            yield item_of(row)

    def answered(
        self, systems: Collection[str], flagged: Collection[tuple[str, str]]
    ) -> dict[str, list[str]]:
        """item_id -> the `systems` that gave it a non-empty answer not `flagged`."""
        out: dict[str, list[str]] = {}
        wanted = set(systems)
        for item_id, system in self._paged(
            "SELECT item_id, system FROM responses", 2, where="empty = 0"
        ):
            if system in wanted and (item_id, system) not in flagged:
                out.setdefault(item_id, []).append(system)
        return out

    def item_systems(self) -> Iterator[tuple[str, list[str]]]:
        """(item_id, its systems) for every answered item, in item_id order."""
        current: str | None = None
        present: list[str] = []
        for item_id, system in self._paged("SELECT item_id, system FROM responses", 2):
            if item_id != current and current is not None:
                yield current, present
                present = []
            current = item_id
            present.append(system)
        if current is not None:
            yield current, present

    def _paged(self, select: str, width: int, where: str = "") -> Iterator[tuple]:
        """`select` (over responses, keyed by item_id and system; `where`: a condition)
        page by page, in key order. Its first `width` columns are yielded; the key must be
        the first two."""
        last: tuple[str, str] | None = None
        while True:
            conditions = [
                c for c in (where, "" if last is None else "(item_id, system) > (?, ?)") if c
            ]
            clause = f" WHERE {' AND '.join(conditions)}" if conditions else ""
            rows = self._db.execute(
                f"{select}{clause} ORDER BY item_id, system LIMIT {_BATCH}",
                () if last is None else last,
            ).fetchall()
            if not rows:
                return
            yield from (row[:width] for row in rows)
            last = (rows[-1][0], rows[-1][1])

    # -- injection scan --------------------------------------------------------------------

    def scan(self, detect: Callable[[str], tuple[str | None, bytes | None]]) -> None:
        """Run `detect` on every response's output now (the canaries must know the flagged
        answers before pairing), storing its (rule, constant-answer key)."""
        updates: list[tuple[object, ...]] = []
        for item_id, system, output in self._paged(
            "SELECT item_id, system, output FROM responses", 3
        ):
            updates.append((*detect(output), item_id, system))
            if len(updates) >= _BATCH:
                self._update_scans(updates)
        self._update_scans(updates)
        self.scanned = True

    def record_scans(self, rows: Iterable[tuple[str | None, bytes | None, str, str]]) -> None:
        """Store (rule, constant-answer key, item_id, system) found while pairing."""
        self._update_scans(list(rows))

    def _update_scans(self, rows: list[tuple[object, ...]]) -> None:
        if rows:
            self._many(
                "UPDATE responses SET rule = ?, answer = ? WHERE item_id = ? AND system = ?", rows
            )
            rows.clear()

    def flagged(self) -> dict[tuple[str, str], str]:
        """(item_id, system) -> rule of every response the per-response rules flagged."""
        return {
            (item_id, system): rule
            for item_id, system, rule in self._db.execute(
                "SELECT item_id, system, rule FROM responses WHERE rule IS NOT NULL "
                "ORDER BY item_id, system"
            )
        }

    def constant_answers(self, min_items: int, min_share: float) -> set[tuple[str, str]]:
        """(item_id, system) of each response whose system gave the same constant-answer key
        to at least `min_items` items and `min_share` of its items."""
        out: set[tuple[str, str]] = set()
        # Only the repeated ones come back: most answers are their own (one row each).
        repeated = self._db.execute(
            "SELECT system, answer, COUNT(*) FROM responses WHERE answer IS NOT NULL "
            "GROUP BY system, answer HAVING COUNT(*) >= ?",
            (max(1, min_items),),
        ).fetchall()
        for system, answer, count in repeated:
            if count >= max(min_items, min_share * self.systems.get(system, 0)):
                out.update(
                    (item_id, system)
                    for (item_id,) in self._db.execute(
                        "SELECT item_id FROM responses WHERE system = ? AND answer = ?",
                        (system, answer),
                    )
                )
        return out

    # -- per-system figures ----------------------------------------------------------------

    def system_costs(self) -> dict[str, dict[str, float | int | None]]:
        """Per system, what the responses table says each answer cost and took (when it
        says): the report shows it beside quality. Systems with neither are left out."""
        out: dict[str, dict[str, float | int | None]] = {}
        for system in sorted(self.systems):
            (latencies, costs, total) = self._db.execute(
                "SELECT COUNT(latency_s), COUNT(cost_usd), SUM(cost_usd) FROM responses "
                "WHERE system = ?",
                (system,),
            ).fetchone()
            if not latencies and not costs:
                continue
            out[system] = {
                "responses": self.systems[system],
                "latency_median_s": self._median_latency(system, latencies),
                "latency_known": latencies,
                "cost_usd_total": total if costs else None,
                "cost_usd_mean": total / costs if costs else None,
                "cost_known": costs,
            }
        return out

    def _median_latency(self, system: str, known: int) -> float | None:
        if not known:
            return None
        middle = self._db.execute(
            "SELECT latency_s FROM responses WHERE system = ? AND latency_s IS NOT NULL "
            "ORDER BY latency_s LIMIT ? OFFSET ?",
            (system, 2 - known % 2, (known - 1) // 2),
        ).fetchall()
        values = [v for (v,) in middle]
        return sum(values) / len(values)

    # -- the blinded table, in presentation order ------------------------------------------

    def add_shown(self, rows: Iterable[tuple[bytes, BlindedResponse]]) -> None:
        """Blinded responses with their presentation-order keys, for `shown`."""
        self._many(
            "INSERT OR IGNORE INTO shown VALUES (?, ?, ?)",
            ((key, b.blind_id, b.model_dump_json()) for key, b in rows),
        )

    def add_pairs(self, pairs: Iterable[BlindedPair]) -> None:
        """Pairs as stored, for `pairs`."""
        self._many(
            "INSERT OR IGNORE INTO pairs VALUES (?, ?, ?)",
            ((p.item_id, p.pair_id, p.model_dump_json()) for p in pairs),
        )

    def pairs(self) -> Iterator[BlindedPair]:
        """Every pair added, by (item_id, pair_id)."""
        last: tuple[str, str] | None = None
        while True:
            where = "" if last is None else " WHERE (item_id, pair_id) > (?, ?)"
            rows = self._db.execute(
                f"SELECT item_id, pair_id, data FROM pairs{where} "
                f"ORDER BY item_id, pair_id LIMIT {_BATCH}",
                () if last is None else last,
            ).fetchall()
            if not rows:
                return
            yield from (BlindedPair.model_validate_json(r[2]) for r in rows)
            last = (rows[-1][0], rows[-1][1])

    def shown(self) -> Iterator[BlindedResponse]:
        """The blinded responses in presentation order."""
        last: tuple[bytes, str] | None = None
        while True:
            where = "" if last is None else " WHERE (order_key, blind_id) > (?, ?)"
            rows = self._db.execute(
                f"SELECT order_key, blind_id, data FROM shown{where} "
                f"ORDER BY order_key, blind_id LIMIT {_BATCH}",
                () if last is None else last,
            ).fetchall()
            if not rows:
                return
            yield from (BlindedResponse.model_validate_json(r[2]) for r in rows)
            last = (rows[-1][0], rows[-1][1])


class _Split:
    """Repeats among the kept responses and among the set-aside ones, each stored in its own
    table: a repeated (item_id, system) pair has one system, so both rows fall on one side."""

    def __init__(self, kept: SeenInIndex, other: SeenInIndex, keep: Collection[str]) -> None:
        self._sides, self._keep = (kept, other), keep

    def key(self, *parts: str) -> tuple[str, ...]:
        return parts

    def add(
        self, keys: list[Any], positions: Sequence[int], rows: Sequence[Any] = ()
    ) -> tuple[int, int] | None:
        kept = [key[1] in self._keep for key in keys]
        found: list[tuple[int, int]] = []
        for side, wanted in zip(self._sides, (True, False), strict=True):
            chosen = [i for i, k in enumerate(kept) if k is wanted]
            if not chosen:
                continue
            repeat = side.add(
                [keys[i] for i in chosen], [positions[i] for i in chosen], [rows[i] for i in chosen]
            )
            if repeat is not None:
                found.append((chosen[repeat[0]], repeat[1]))
        return min(found, default=None)


class _Indexed:
    """The item ids of the index, looked up a batch at a time (`judge.inputs.tables.ItemLookup`)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def among(self, ids: set[str]) -> set[str]:
        select = "SELECT item_id FROM items"
        return {item_id for (item_id,) in select_in(self._db, select, "item_id", sorted(ids))}
