"""Exact duplicate detection for the (item_id, system) pairs of a responses table, in ~16
bytes per response."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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

    def key(self, item_id: str, system: str) -> int:
        """The packed key of one pair, as `add` takes it."""
        item = self._items.setdefault(item_id, len(self._items))
        system_index = self._systems.setdefault(system, len(self._systems))
        return (item << 32) | system_index

    def add(self, keys: list[int], positions: Sequence[int]) -> tuple[int, int] | None:
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
