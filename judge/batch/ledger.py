"""The batch ledger: what a run has planned, submitted and collected of provider batches, in
the run store (tables `batches` and `batch_requests`, migration m005).

A batch goes planned -> submitting -> submitted -> collected (or abandoned: the provider
refused it). `submitting` is written, and committed, before the create call: a process killed
during the call leaves a batch the next one must look up at the provider before it submits
anything again, which is what keeps a request from being submitted twice. A request belongs
to at most one open batch; its row's `outcome` says how its batch ended for it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from judge.sqlite import select_in, transaction
from judge.store.migrations import utc_now
from judge.store.rows import REQUEST_FIELDS, column_list, request_from_row
from judge.store.run_store import RunStore
from judge.types import JudgeRequest

State = Literal["planned", "submitting", "submitted", "collected", "abandoned"]
Outcome = Literal["answered", "error", "failed", "expired", "canceled", "missing"]
OPEN_STATES: tuple[State, ...] = ("planned", "submitting", "submitted")
REQUEUED: tuple[Outcome, ...] = ("failed", "expired", "canceled", "missing")
"""Outcomes that send a request back to the queue (a new batch, or a synchronous call)."""

_FIELDS = (
    "batch_id", "judge", "api", "state", "requests", "bytes", "estimate_usd", "input_file_id",
    "provider_id", "provider_status", "counts", "adopted", "created_at", "submit_started_at",
    "submitted_at", "collected_at", "note",
)  # fmt: skip


@dataclass(frozen=True)
class Batch:
    """One row of `batches`."""

    batch_id: str
    judge: str
    api: Literal["openai", "anthropic", "gemini"]
    state: State
    requests: int
    bytes: int
    estimate_usd: float | None
    input_file_id: str | None
    provider_id: str | None
    provider_status: str | None
    counts: dict[str, int]
    adopted: bool
    created_at: str
    submit_started_at: str | None
    submitted_at: str | None
    collected_at: str | None
    note: str | None


def new_batch_id() -> str:
    """Ours, not the provider's: it names the body file and OpenAI's batch metadata."""
    return "jb_" + os.urandom(10).hex()


def custom_id(request_id: str) -> str:
    """A request's id inside a batch: its content hash without the `sha256:` prefix (Anthropic
    allows 64 characters of [A-Za-z0-9_-]; a sha256 is 64 hex digits)."""
    return request_id.removeprefix("sha256:")


def request_id_of(custom: str) -> str:
    return "sha256:" + custom


def seconds_since(stamp: str) -> float:
    return (datetime.now(UTC) - datetime.fromisoformat(stamp)).total_seconds()


@dataclass(frozen=True)
class Queued:
    """A pending request of a batch judge with the batches it was already sent in."""

    rowid: int
    request: JudgeRequest
    tries: int


class Ledger:
    """Reads and writes the ledger through the run store's connection (one per process)."""

    def __init__(self, store: RunStore) -> None:
        self.store = store

    @property
    def _db(self) -> Any:
        return self.store.connection

    # -- reading -------------------------------------------------------------------------------

    def batches(self, states: Sequence[State] = OPEN_STATES) -> list[Batch]:
        rows = self._db.execute(
            f"SELECT {', '.join(_FIELDS)} FROM batches WHERE state IN"
            f" ({', '.join('?' * len(states))}) ORDER BY created_at",
            tuple(states),
        ).fetchall()
        return [_batch(row) for row in rows]

    def batch(self, batch_id: str) -> Batch:
        row = self._db.execute(
            f"SELECT {', '.join(_FIELDS)} FROM batches WHERE batch_id = ?", (batch_id,)
        ).fetchone()
        return _batch(row)

    def known_provider_ids(self) -> set[str]:
        """Provider batches the ledger holds, or found not to be ours: never adopted."""
        known: set[str] = set()
        for provider_id, rejected in self._db.execute("SELECT provider_id, rejected FROM batches"):
            if provider_id:
                known.add(provider_id)
            known.update(json.loads(rejected) if rejected else ())
        return known

    def first_submitted(self, judge: str) -> str | None:
        (stamp,) = self._db.execute(
            "SELECT MIN(submitted_at) FROM batches WHERE judge = ?", (judge,)
        ).fetchone()
        return stamp

    def queued(self, judge: str, after: int, limit: int) -> list[Queued]:
        """Pending requests of `judge` in no open batch, in the order they were planned, with
        how many batches each was already sent in."""
        rows = self._db.execute(
            f"SELECT q.rowid, (SELECT COUNT(*) FROM batch_requests t"
            f" WHERE t.request_id = q.request_id), {column_list(REQUEST_FIELDS, 'q')}"
            " FROM judge_requests q WHERE q.judge = ? AND q.rowid > ?"
            " AND NOT EXISTS (SELECT 1 FROM judge_responses r WHERE r.request_id = q.request_id)"
            " AND NOT EXISTS (SELECT 1 FROM batch_requests b"
            " WHERE b.request_id = q.request_id AND b.outcome IS NULL)"
            " ORDER BY q.rowid LIMIT ?",
            (judge, after, limit),
        ).fetchall()
        return [Queued(row[0], request_from_row(row[2:]), int(row[1])) for row in rows]

    def requests(self, request_ids: Sequence[str]) -> dict[str, JudgeRequest]:
        rows = select_in(
            self._db,
            f"SELECT {column_list(REQUEST_FIELDS)} FROM judge_requests",
            "request_id",
            request_ids,
        )
        return {r.request_id: r for r in map(request_from_row, rows)}

    def answered(self, request_ids: Sequence[str]) -> set[str]:
        rows = select_in(
            self._db, "SELECT request_id FROM judge_responses", "request_id", request_ids
        )
        return {r[0] for r in rows}

    def open_items(self, batch_id: str) -> list[str]:
        rows = self._db.execute(
            "SELECT request_id FROM batch_requests WHERE batch_id = ? AND outcome IS NULL",
            (batch_id,),
        )
        return [r[0] for r in rows]

    def items(self, batch_id: str) -> int:
        (n,) = self._db.execute(
            "SELECT COUNT(*) FROM batch_requests WHERE batch_id = ?", (batch_id,)
        ).fetchone()
        return int(n)

    def outcomes(self) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT COALESCE(outcome, 'open'), COUNT(*) FROM batch_requests GROUP BY 1"
        )
        return {r[0]: int(r[1]) for r in rows}

    # -- writing -------------------------------------------------------------------------------

    def plan(
        self,
        batch_id: str,
        judge: str,
        api: str,
        request_ids: Sequence[str],
        size: int,
        estimate_usd: float | None,
    ) -> None:
        """A new batch and its requests, in one transaction (its body file is written first)."""
        with transaction(self._db) as conn:
            conn.execute(
                "INSERT INTO batches (batch_id, judge, api, state, requests, bytes, estimate_usd,"
                " created_at) VALUES (?, ?, ?, 'planned', ?, ?, ?, ?)",
                (batch_id, judge, api, len(request_ids), size, estimate_usd, utc_now()),
            )
            conn.executemany(
                "INSERT INTO batch_requests (batch_id, request_id) VALUES (?, ?)",
                ((batch_id, r) for r in request_ids),
            )

    def set_file(self, batch_id: str, file_id: str) -> None:
        self._update(batch_id, input_file_id=file_id)

    def submitting(self, batch_id: str) -> None:
        self._update(batch_id, state="submitting", submit_started_at=utc_now())

    def submitted(self, batch_id: str, provider_id: str, *, adopted: bool = False) -> None:
        self._update(
            batch_id,
            state="submitted",
            provider_id=provider_id,
            submitted_at=utc_now(),
            adopted=int(adopted),
        )

    def unsubmitted(self, batch_id: str, note: str) -> None:
        """The provider has no such batch: back to planned, to be submitted (once) again."""
        self._update(batch_id, state="planned", submit_started_at=None, note=note)

    def reject(self, batch_id: str, provider_id: str) -> None:
        """An adopted batch was someone else's: back to planned, and never adopted again."""
        (rejected,) = self._db.execute(
            "SELECT rejected FROM batches WHERE batch_id = ?", (batch_id,)
        ).fetchone()
        ids = [*(json.loads(rejected) if rejected else []), provider_id]
        self._update(
            batch_id,
            state="planned",
            provider_id=None,
            adopted=0,
            submit_started_at=None,
            rejected=json.dumps(ids),
            note=f"adopted {provider_id}, which was not this batch",
        )

    def seen(self, batch_id: str, status: str, counts: dict[str, int]) -> None:
        self._update(batch_id, provider_status=status, counts=json.dumps(counts, sort_keys=True))

    def close(
        self, batch_id: str, state: State, outcomes: Iterable[tuple[str, Outcome]], note: str = ""
    ) -> None:
        """End a batch: each open request's outcome, then the batch's state, in one transaction
        (requests without an outcome given become `answered` when the store holds their
        response, else `missing`, and are queued again)."""
        with transaction(self._db) as conn:
            conn.executemany(
                "UPDATE batch_requests SET outcome = ? WHERE batch_id = ? AND request_id = ?"
                " AND outcome IS NULL",
                ((outcome, batch_id, r) for r, outcome in outcomes),
            )
            conn.execute(
                "UPDATE batch_requests SET outcome = CASE WHEN EXISTS (SELECT 1 FROM"
                " judge_responses r WHERE r.request_id = batch_requests.request_id)"
                " THEN 'answered' ELSE 'missing' END WHERE batch_id = ? AND outcome IS NULL",
                (batch_id,),
            )
            conn.execute(
                "UPDATE batches SET state = ?, collected_at = ?, note = COALESCE(?, note)"
                " WHERE batch_id = ?",
                (state, utc_now(), note or None, batch_id),
            )

    def _update(self, batch_id: str, **values: Any) -> None:
        columns = ", ".join(f"{k} = ?" for k in values)
        with transaction(self._db) as conn:
            conn.execute(
                f"UPDATE batches SET {columns} WHERE batch_id = ?", (*values.values(), batch_id)
            )


def _batch(row: Sequence[Any]) -> Batch:
    data = dict(zip(_FIELDS, row, strict=True))
    data["counts"] = json.loads(data["counts"]) if data["counts"] else {}
    data["adopted"] = bool(data["adopted"])
    return Batch(**data)
