"""Bearer tokens: created by the operator (`judge tokens create NAME`), shown once, stored as
SHA-256 hashes. A token sees and changes only the runs it created; an admin token sees all."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Engine, select, update

from judge.errors import ConfigError
from judge.service.db import as_utc, tokens, utc_now
from judge.service.problems import ProblemError

TOKEN_PREFIX = "jdg_"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}$")
"""What a token's (or an annotator's) name may be."""


@dataclass(frozen=True)
class Principal:
    """Who is calling: a token's id (owner of its runs), name and admin flag."""

    id: str
    name: str
    admin: bool


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(engine: Engine, name: str, *, admin: bool = False) -> tuple[str, Principal]:
    """A new token named `name`; returns (the token, to show once, its principal)."""
    if not NAME.match(name):
        raise ConfigError(
            f"token name {name!r}: use 1-100 letters, digits, '_', '.', '@' or '-', "
            "starting with a letter or digit"
        )
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    principal = Principal(id=secrets.token_hex(8), name=name, admin=admin)
    with engine.begin() as conn:
        taken = conn.execute(select(tokens.c.id).where(tokens.c.name == name)).first()
        if taken is not None:
            raise ConfigError(
                f"a token named {name!r} exists already; choose another name "
                "(or `judge tokens revoke` it first: names stay reserved for the record)"
            )
        conn.execute(
            tokens.insert().values(
                id=principal.id,
                name=name,
                token_hash=hash_token(token),
                admin=admin,
                created_at=utc_now(),
            )
        )
    return token, principal


def list_tokens(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                tokens.c.id,
                tokens.c.name,
                tokens.c.admin,
                tokens.c.created_at,
                tokens.c.revoked_at,
            ).order_by(tokens.c.created_at)
        ).mappings()
        return [
            {
                **row,
                "created_at": as_utc(row["created_at"]),
                "revoked_at": as_utc(row["revoked_at"]),
            }
            for row in rows
        ]


def revoke_token(engine: Engine, name_or_id: str) -> bool:
    """Revoke the token with this name or id; False when there is no such live token."""
    with engine.begin() as conn:
        result = conn.execute(
            update(tokens)
            .where((tokens.c.name == name_or_id) | (tokens.c.id == name_or_id))
            .where(tokens.c.revoked_at.is_(None))
            .values(revoked_at=utc_now())
        )
        return bool(result.rowcount)


def authenticate(engine: Engine, token: str) -> Principal | None:
    """The live token's principal, or None. Lookup is by hash (indexed); the final comparison
    is constant-time anyway."""
    digest = hash_token(token)
    with engine.connect() as conn:
        row = conn.execute(
            select(tokens.c.id, tokens.c.name, tokens.c.admin, tokens.c.token_hash).where(
                tokens.c.token_hash == digest, tokens.c.revoked_at.is_(None)
            )
        ).first()
    if row is None or not hmac.compare_digest(row.token_hash, digest):
        return None
    return Principal(id=row.id, name=row.name, admin=bool(row.admin))


_bearer = HTTPBearer(
    auto_error=False,
    description="A token from `judge tokens create NAME`, sent as `Authorization: Bearer <token>`.",
)


def _unauthorized(detail: str, error: str | None = None) -> ProblemError:
    challenge = 'Bearer realm="judge"' + (f', error="{error}"' if error else "")
    return ProblemError(
        401, "unauthorized", "Unauthorized", detail, headers={"WWW-Authenticate": challenge}
    )


def cross_site(request: Request) -> bool:
    """A form post the pages must refuse: its Origin is another site, or `null` (a sandboxed
    frame, a redirect chain). No Origin at all (a non-browser client) passes: its cookie is
    the credential, and a browser sends Origin on every cross-site post."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin == "null"
    return origin.rstrip("/") != f"{request.url.scheme}://{request.url.netloc}"


def require_token(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None = Security(_bearer),  # noqa: B008
) -> Principal:
    """FastAPI dependency: the caller's principal, or 401 with a WWW-Authenticate challenge."""
    if credentials is None or not credentials.credentials:
        raise _unauthorized("send `Authorization: Bearer <token>` (see `judge tokens create`)")
    principal = authenticate(request.app.state.engine, credentials.credentials)
    if principal is None:
        raise _unauthorized("the bearer token is unknown or revoked", "invalid_token")
    return principal
