"""Exact duplicate detection for the loaders (`judge.inputs.tables`): repeated item ids (`SeenIds`),
repeated (item_id, system) pairs in ~16 bytes per response (`SeenPairs`), or either kept in a
SQLite index instead of memory (`SeenInIndex`, what a streaming prepare uses)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol

import numpy as np

from judge.sqlite import placeholders, savepoint


class SeenPairs:
    """Exact duplicate detection over millions of (item_id, system) pairs in ~16 bytes each.

    A pair is packed into one 64-bit integer from two small dictionaries (item_id -> index,
    system -> index): they hold one entry per distinct item and system, which number in the
    thousands, not per response. The packed keys and their line numbers live in a few sorted
    numpy arrays of geometrically growing size (merged like a binary counter), searched with
    `searchsorted` one chunk at a time. A Python dict of tuples would cost ~250 bytes per
    response and one of 8-byte blake2b digests ~115 bytes (measured over 1M keys), and digests
    can collide; packed indices cannot.
    """

    def __init__(self) -> None:
        self._items: dict[str, int] = {}
        self._systems: dict[str, int] = {}
        self._runs: list[tuple[np.ndarray, np.ndarray]] = []
        """(sorted keys, positions in the same order), largest first."""

    def key(self, *parts: str) -> int:
        """The packed key of one (item_id, system) pair, as `add` takes it."""
        item_id, system = parts
        item = self._items.setdefault(item_id, len(self._items))
        system_index = self._systems.setdefault(system, len(self._systems))
        return (item << 32) | system_index

    def add(
        self, keys: list[Any], positions: Sequence[int], rows: Sequence[Any] = ()
    ) -> tuple[int, int] | None:
        """Record one chunk's keys. Returns (index in the chunk, earlier position) of the first
        key already seen, in file order; nothing is recorded then."""
        if not keys:
            return None
        new = np.array(keys, dtype=np.uint64)
        where = np.array(positions, dtype=np.int64)
        earlier = np.full(len(new), -1, dtype=np.int64)
        for run_keys, run_positions in self._runs:
            at = np.minimum(np.searchsorted(run_keys, new), len(run_keys) - 1)
            hit = run_keys[at] == new
            earlier[hit] = run_positions[at[hit]]
        order = np.argsort(new, kind="stable")
        ordered = new[order]
        repeat = np.flatnonzero(ordered[1:] == ordered[:-1]) + 1
        if repeat.size:
            # A repeat inside the chunk points at the key's first occurrence in the chunk: the
            # start of its run of equal keys (the stable sort keeps file order within a run).
            # Had that key been seen before the chunk, the first occurrence is itself a repeat
            # and comes earlier, so it is the one reported.
            starts = np.where(np.r_[True, ordered[1:] != ordered[:-1]], np.arange(len(new)), 0)
            first = order[np.maximum.accumulate(starts)]
            earlier[order[repeat]] = where[first[repeat]]
        found = np.flatnonzero(earlier >= 0)
        if found.size:
            return int(found[0]), int(earlier[found[0]])
        self._runs.append((ordered, where[order]))
        while len(self._runs) > 1 and len(self._runs[-2][0]) <= len(self._runs[-1][0]):
            (keys_b, pos_b), (keys_a, pos_a) = self._runs.pop(), self._runs.pop()
            merged = np.concatenate([keys_a, keys_b])
            merge_order = np.argsort(merged, kind="stable")
            self._runs.append((merged[merge_order], np.concatenate([pos_a, pos_b])[merge_order]))
        return None


class SeenKeys(Protocol):
    """What the loaders ask of a duplicate detector: `add` one chunk's keys (any hashable,
    from `key`) with their positions and the rows they are the keys of; get back (index in
    the chunk, earlier position) of the first key seen before, in file order (the load then
    fails: the detector is not used again). A detector may keep the rows (`SeenInIndex`
    storing them) or ignore them."""

    def key(self, *parts: str) -> Hashable: ...

    def add(
        self, keys: list[Any], positions: Sequence[int], rows: Sequence[Any] = ()
    ) -> tuple[int, int] | None: ...


class SeenIds:
    """Repeated single keys (item ids), in memory: one dictionary entry each (`SeenKeys`)."""

    def __init__(self) -> None:
        self._first: dict[str, int] = {}

    def key(self, *parts: str) -> str:
        return parts[0]

    def add(
        self, keys: list[Any], positions: Sequence[int], rows: Sequence[Any] = ()
    ) -> tuple[int, int] | None:
        for index, key in enumerate(keys):
            if key in self._first:
                return index, self._first[key]
            self._first[key] = positions[index]
        return None


Values = Callable[[Any, int], Sequence[object]]
"""A row and its position -> the values of a table row that stores it."""


class SeenInIndex:
    """Exact duplicate detection in a SQLite table (`db`, a scratch connection its owner
    keeps): memory holds one chunk, not one entry per distinct item, which `SeenPairs`' item
    dictionary does (~100 bytes each: 50 MB at 500,000 items). `name` is the table, created
    here; `width` the number of key parts.

    `SeenInIndex.storing` makes the detector of a table that holds the rows themselves (a
    streaming prepare's index): each row is stored as it is checked, and the table's primary
    key is the check, so a row costs one insert rather than two."""

    def __init__(
        self,
        db: sqlite3.Connection,
        name: str,
        width: int,
        *,
        keys: Sequence[str] | None = None,
        values: Values | None = None,
    ) -> None:
        self._db, self._name, self._values = db, name, values
        names = list(keys) if keys is not None else [f"k{i}" for i in range(width)]
        if values is None:
            columns = ", ".join(f"{n} TEXT NOT NULL" for n in names)
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {name} ({columns}, position INTEGER NOT NULL, "
                f"PRIMARY KEY ({', '.join(names)})) WITHOUT ROWID"
            )
        # The owner's table (`storing`) has columns beyond the key and position.
        count = len(db.execute(f"SELECT * FROM {name} LIMIT 0").description)
        self._insert = f"INSERT INTO {name} VALUES ({placeholders(count)})"
        self._match = " AND ".join(f"{n} = ?" for n in names)

    @classmethod
    def storing(
        cls, db: sqlite3.Connection, table: str, keys: Sequence[str], values: Values
    ) -> SeenInIndex:
        """The detector of `table` (made by its owner, with `keys` its primary key and a
        `position` column): `values(row, position)` gives each row's values, in the table's
        column order."""
        return cls(db, table, len(keys), keys=keys, values=values)

    def key(self, *parts: str) -> tuple[str, ...]:
        return parts

    def add(
        self, keys: list[Any], positions: Sequence[int], rows: Sequence[Any] = ()
    ) -> tuple[int, int] | None:
        values = self._values
        stored = (
            [(*key, position) for key, position in zip(keys, positions, strict=False)]
            if values is None
            else [values(row, position) for row, position in zip(rows, positions, strict=False)]
        )
        # Repeats are rare: insert the chunk at once, and look for the repeat only when the
        # primary key refuses one (the chunk's rows are then undone).
        try:
            with savepoint(self._db, "seen"):
                self._db.executemany(self._insert, stored)
            return None
        except sqlite3.IntegrityError:
            pass
        first: dict[tuple[str, ...], int] = {}
        for index, key in enumerate(keys):
            found = self._db.execute(
                f"SELECT position FROM {self._name} WHERE {self._match}", key
            ).fetchone()
            if found is not None:
                return index, int(found[0])
            if key in first:
                return index, positions[first[key]]
            first[key] = index
        raise AssertionError("the primary key refused a row no lookup finds")  # pragma: no cover
