"""Service metadata in SQLAlchemy Core tables: tokens, runs, uploads, annotators. SQLite or
PostgreSQL.

Only metadata lives here. A run's judge requests, replies and verdicts stay in its run
directory (`store.sqlite`, written by the pipeline), so the service database stays small and
a run directory remains a complete, portable record that `judge` commands can read.

The schema evolves by migrations (an ordered list of small functions recorded by name in
`service_migrations`), as the run store does.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Engine,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    select,
    text,
)
from sqlalchemy.engine import Connection, make_url

from judge.errors import ConfigError

metadata = MetaData()

migrations_table = Table(
    "service_migrations",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("applied_at", DateTime(timezone=True), nullable=False),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    # SHA-256 of the bearer token: a leaked database does not leak usable tokens, and tokens
    # are long random strings, so a fast unsalted hash is enough (nothing to brute-force).
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("admin", Boolean, nullable=False, default=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
)

runs = Table(
    "runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("owner_id", String(32), ForeignKey("tokens.id"), nullable=False),
    Column("name", String(200), nullable=False),
    # queued -> running -> finished | failed | cancelled; resume puts failed/cancelled back
    # in queued. A server restart puts `running` back in `queued`.
    Column("status", String(16), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    Column("error", Text),
    # Times a worker process was started for this run (restarts and resumes add one).
    Column("attempts", Integer, nullable=False, default=0),
    # Human labels uploaded for calibration: a file name inside the run's inputs dir.
    Column("labels_file", String(255)),
    Index("ix_runs_owner_created", "owner_id", "created_at"),
    Index("ix_runs_status", "status"),
)

uploads = Table(
    "uploads",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False),
    Column("kind", String(16), nullable=False),
    # The client's file name (base name only), used in error messages and listings.
    Column("filename", String(255), nullable=False),
    Column("stored_as", String(255), nullable=False),
    Column("size_bytes", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_uploads_run", "run_id"),
)


annotators = Table(
    "annotators",
    metadata,
    Column("id", String(32), primary_key=True),
    # An annotator labels one run's task: its token opens that task's labelling page and
    # nothing else (it is not in `tokens`, so no API route accepts it).
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
    UniqueConstraint("run_id", "name", name="uq_annotators_run_name"),
)


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes: they were written in UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _m001_tables(conn: Connection) -> None:
    # Released migrations are never edited; a later change appends a function that alters
    # these tables (this one creates them as they were at version 1).
    metadata.create_all(conn, tables=[tokens, runs, uploads])


def _m002_annotators(conn: Connection) -> None:
    metadata.create_all(conn, tables=[annotators])


MIGRATIONS: list[tuple[str, Callable[[Connection], None]]] = [
    ("m001_tables", _m001_tables),
    ("m002_annotators", _m002_annotators),
]


def database_url(url: str) -> str:
    """`postgresql://` and `postgres://` mean psycopg 3 (SQLAlchemy's default is psycopg2)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def describe_url(url: str) -> str:
    """The URL with any password masked, for logs and messages."""
    try:
        return make_url(database_url(url)).render_as_string(hide_password=True)
    except Exception:  # a URL SQLAlchemy cannot parse: say so without echoing it
        return "<unparseable database URL>"


def make_engine(url: str, *, create: bool = True) -> Engine:
    """An engine for `url` with the schema brought up to date. `create=False` (commands that
    only read or change what exists): a SQLite file that does not exist is a `ConfigError`,
    never a new database and directory."""
    try:
        parsed = make_url(database_url(url))
    except Exception:
        raise ConfigError(
            "--db: not a database URL; expected sqlite:///PATH or "
            "postgresql://USER@HOST:PORT/DBNAME"
        ) from None
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            if not create and not Path(parsed.database).is_file():
                raise ConfigError(
                    f"no service database at {parsed.database}: give the server's --data-dir "
                    "(or --db), or create a token first with `judge tokens create NAME`"
                )
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        # Request handlers run in a thread pool and the scheduler in its own thread.
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    elif parsed.get_backend_name() == "postgresql":
        kwargs["pool_pre_ping"] = True
    else:
        raise ConfigError(
            f"--db {describe_url(url)}: only sqlite:/// and postgresql:// are supported"
        )
    engine = create_engine(parsed, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    migrate(engine)
    return engine


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL: the scheduler's writes never block request handlers' reads.
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA busy_timeout = 30000")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def migrate(engine: Engine) -> list[str]:
    """Apply the migrations this database has not seen, in order; returns their names."""
    applied: list[str] = []
    with engine.begin() as conn:
        migrations_table.create(conn, checkfirst=True)
        done = set(conn.execute(select(migrations_table.c.name)).scalars())
        known = {name for name, _ in MIGRATIONS}
        if done - known:
            raise ConfigError(
                f"the service database was written by a newer judge (migrations "
                f"{', '.join(sorted(done - known))}): upgrade judge-pipeline"
            )
        for name, apply in MIGRATIONS:
            if name not in done:
                apply(conn)
                conn.execute(migrations_table.insert().values(name=name, applied_at=utc_now()))
                applied.append(name)
    return applied


def ping(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))
