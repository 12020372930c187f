"""What the outputs read of each request: its ids, how it was answered and what the answer
said, without the rendered prompt (`judge.run.outputs`, `judge.analysis.aggregate`).

Requests arrive grouped by item, and within an item by pair (or response), judge and order:
one item's results at a time, read in the order of the index `judge_requests_by_item`
(`judge.store.migrations`), which holds every request column read here, so neither a sort of the
whole run nor a visit to the rows that hold the prompts is needed. Reads only, through the
store's own connection (`RunStore.connection`).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from operator import attrgetter
from typing import Literal, NamedTuple

from judge.store.run_store import RunStore

_BATCH = 1000
"""Rows fetched at a time."""


class ResultRow(NamedTuple):
    """One request with what the store holds for it (LEFT JOINs: pending requests too)."""

    request_id: str
    judge: str
    item_id: str
    pair_id: str | None
    order: str | None
    blind_id: str | None
    same_family: bool
    answered: bool
    """A response is stored (a reply, or an error)."""
    error: str | None
    cost_usd: float | None
    latency_s: float | None
    cached: bool
    verdict: bool
    """The reply parsed into a verdict."""
    label: str | None
    score: float | None
    scores: str | None
    """The verdict's per-criterion scores as stored (JSON text)."""
    reasoning: str | None
    failure_reason: str | None
    """Why a reply did not parse (None: it did, or there is no reply)."""
    reply: str | None
    """The reply as received, only when it did not parse."""
    slot_a: str | None
    """Pairwise: the blind ids in the pair's slots, and their outputs' lengths (characters)."""
    slot_b: str | None
    length_a: int | None
    length_b: int | None

    @property
    def status(self) -> Literal["pending", "error", "verdict", "parse_failure"]:
        if not self.answered:
            return "pending"
        if self.error is not None:
            return "error"
        return "verdict" if self.verdict else "parse_failure"


# length() stops at a NUL character; an output holding one is measured in Python instead.
_LENGTH = "CASE WHEN instr({0}.output, char(0)) = 0 THEN length({0}.output) END"

_SELECT = (
    'SELECT q.request_id, q.judge, q.item_id, q.pair_id, q."order", q.blind_id, q.same_family,'
    " r.request_id IS NOT NULL, r.error, r.cost_usd, r.latency_s, r.cached,"
    " v.request_id IS NOT NULL AND v.parse_failure_reason IS NULL,"
    " v.label, v.score, v.scores, v.reasoning, v.parse_failure_reason,"
    # The reply's text only where a judgment quotes it: a reply that did not parse.
    " CASE WHEN r.error IS NULL AND (v.request_id IS NULL OR v.parse_failure_reason IS NOT NULL)"
    " THEN r.text END,"
    f" p.slot_a, p.slot_b, {_LENGTH.format('a')}, {_LENGTH.format('b')}"
    " FROM judge_requests q INDEXED BY judge_requests_by_item"
    " LEFT JOIN judge_responses r ON r.request_id = q.request_id"
    " LEFT JOIN verdicts v ON v.request_id = q.request_id"
    " LEFT JOIN pairs p ON p.pair_id = q.pair_id"
    " LEFT JOIN blinded_responses a ON a.blind_id = p.slot_a"
    " LEFT JOIN blinded_responses b ON b.blind_id = p.slot_b"
    ' ORDER BY q.item_id, q.pair_id, q.blind_id, q.judge, q."order"'
)


def by_item(store: RunStore) -> Iterator[list[ResultRow]]:
    """Every request's result, one item at a time, items in id order; within an item by pair
    (or response), judge and order.

    One read from start to end: the results are one snapshot of the store. Nothing may be
    written through `store` until the iteration ends (the open read pins its snapshot)."""
    return (list(rows) for _, rows in groupby(_rows(store), key=attrgetter("item_id")))


def _rows(store: RunStore) -> Iterator[ResultRow]:
    cursor = store.connection.execute(_SELECT)
    try:
        while batch := cursor.fetchmany(_BATCH):
            for row in batch:
                result = ResultRow(
                    *row[:6], bool(row[6]), bool(row[7]), *row[8:11], bool(row[11]), *row[12:]
                )
                if result.pair_id is not None and None in (result.length_a, result.length_b):
                    result = _measured(store, result)
                yield result
    finally:
        cursor.close()


def _measured(store: RunStore, result: ResultRow) -> ResultRow:
    """`result` with the lengths SQL could not measure (an output holding a NUL)."""
    return result._replace(
        length_a=len(_output(store, result.slot_a)), length_b=len(_output(store, result.slot_b))
    )


def _output(store: RunStore, blind_id: str | None) -> str:
    row = store.connection.execute(
        "SELECT output FROM blinded_responses WHERE blind_id = ?", (blind_id,)
    ).fetchone()
    return "" if row is None else str(row[0])


def kind(store: RunStore) -> Literal["pairwise", "absolute"] | None:
    """The run's kind of judging (every request has the same); None before any request."""
    row = store.connection.execute("SELECT kind FROM judge_requests LIMIT 1").fetchone()
    return None if row is None else row[0]


def judges(store: RunStore) -> list[str]:
    """The judges that have requests, by name."""
    rows = store.connection.execute("SELECT DISTINCT judge FROM judge_requests ORDER BY judge")
    return [judge for (judge,) in rows]
