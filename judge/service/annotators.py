"""Annotator tokens: made by a run's owner for one person labelling that run's task.

They live in their own table, apart from the API's bearer tokens (`judge.service.auth`), so
that no API route can accept one: an annotator token opens its run's labelling page and
nothing else, not the run, its judgments, its report or another annotator's queue. Stored as
SHA-256 hashes and shown once, like bearer tokens.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select, update

from judge.service.auth import NAME, hash_token
from judge.service.db import annotators, as_utc, runs, utc_now
from judge.service.problems import ProblemError

ANNOTATOR_PREFIX = "jda_"


@dataclass(frozen=True)
class Annotator:
    id: str
    run_id: str
    name: str
    """Unique within the run: what the run's labels record as the annotator."""


def create_annotator(engine: Engine, run_id: str, name: str) -> tuple[str, Annotator]:
    """A new annotator of `run_id`; returns (its token, to show once, the annotator)."""
    if not NAME.match(name):
        raise ProblemError(
            422,
            "invalid-request",
            "Invalid request",
            "name: use 1-100 letters, digits, '_', '.', '@' or '-', starting with a letter or "
            "digit",
            field="name",
        )
    token = ANNOTATOR_PREFIX + secrets.token_urlsafe(32)
    who = Annotator(id=secrets.token_hex(8), run_id=run_id, name=name)
    with engine.begin() as conn:
        taken = conn.execute(
            select(annotators.c.id).where(annotators.c.run_id == run_id, annotators.c.name == name)
        ).first()
        if taken is not None:
            raise ProblemError(
                409,
                "conflict",
                "Conflict",
                f"this run has an annotator named {name!r} already (names stay reserved: "
                "their labels carry them)",
            )
        conn.execute(
            annotators.insert().values(
                id=who.id,
                run_id=run_id,
                name=name,
                token_hash=hash_token(token),
                created_at=utc_now(),
            )
        )
    return token, who


def list_annotators(engine: Engine, run_id: str) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(annotators.c.name, annotators.c.created_at, annotators.c.revoked_at)
            .where(annotators.c.run_id == run_id)
            .order_by(annotators.c.created_at)
        ).mappings()
        return [
            {
                "name": r["name"],
                "created_at": as_utc(r["created_at"]),
                "revoked_at": as_utc(r["revoked_at"]),
            }
            for r in rows
        ]


def revoke_annotator(engine: Engine, run_id: str, name: str) -> bool:
    with engine.begin() as conn:
        changed = conn.execute(
            update(annotators)
            .where(
                annotators.c.run_id == run_id,
                annotators.c.name == name,
                annotators.c.revoked_at.is_(None),
            )
            .values(revoked_at=utc_now())
        ).rowcount
    return bool(changed)


def authenticate_annotator(engine: Engine, token: str) -> Annotator | None:
    """The live annotator of this token, or None (also for a bearer token of the API: those
    are not annotators)."""
    if not token.startswith(ANNOTATOR_PREFIX):
        return None
    digest = hash_token(token)
    with engine.connect() as conn:
        row = conn.execute(
            select(annotators.c.id, annotators.c.run_id, annotators.c.name, annotators.c.token_hash)
            .join(runs, runs.c.id == annotators.c.run_id)
            .where(annotators.c.token_hash == digest, annotators.c.revoked_at.is_(None))
        ).first()
    if row is None or not hmac.compare_digest(row.token_hash, digest):
        return None
    return Annotator(id=row.id, run_id=row.run_id, name=row.name)
