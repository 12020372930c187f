"""`judge serve` and `judge tokens ...`. Registered on the main CLI in `judge/cli/main.py`.

Only typer and the standard library are imported here: fastapi, uvicorn and sqlalchemy load
inside the commands, so `judge --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.cluster import Executor, require_ray
from judge.errors import ConfigError
from judge.service.settings import DEFAULT_DATA_DIR, DEFAULT_PORT, ServiceSettings

_DB_HELP = (
    "Service database: sqlite:///PATH or postgresql://USER@HOST:PORT/DB "
    "(default: sqlite in the data dir)."
)
_DATA_HELP = "Run directories, uploads and caches (and the default SQLite database)."

DbOption = Annotated[str | None, typer.Option("--db", help=_DB_HELP, envvar="JUDGE_SERVICE_DB")]
DataDirOption = Annotated[
    Path, typer.Option("--data-dir", help=_DATA_HELP, envvar="JUDGE_SERVICE_DATA_DIR")
]
_DEFAULTS = ServiceSettings()

tokens_app = typer.Typer(
    help="Bearer tokens for `judge serve` (stored hashed; shown once).",
    no_args_is_help=True,
    add_completion=False,
)


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.", min=0, max=65535)] = DEFAULT_PORT,
    db: DbOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
    max_running: Annotated[
        int, typer.Option("--max-running", min=1, help="Runs executing at once.")
    ] = _DEFAULTS.max_running,
    max_running_per_token: Annotated[
        int | None,
        typer.Option(
            "--max-running-per-token",
            min=1,
            help="Runs of one token executing at once; its others wait while other tokens' "
            "runs start (default: --max-running minus 1, at least 1).",
        ),
    ] = None,
    max_upload_mb: Annotated[
        float, typer.Option("--max-upload-mb", min=0.001, help="Largest request body (MB).")
    ] = _DEFAULTS.max_upload_mb,
    max_expanded_mb: Annotated[
        float | None,
        typer.Option(
            "--max-expanded-mb",
            min=0.001,
            help="Largest decompressed size of a submission's files together (MB; default: "
            "4 x --max-upload-mb).",
        ),
    ] = None,
    max_line_kb: Annotated[
        float,
        typer.Option(
            "--max-line-kb",
            min=0.001,
            help="Longest line of an uploaded text file, largest Parquet value (KB).",
        ),
    ] = _DEFAULTS.max_line_kb,
    max_requests: Annotated[
        int,
        typer.Option(
            "--max-requests",
            min=1,
            help="Judge requests one run may make (pairs x orders x judges); counted at "
            "submission, before anything is rendered or stored.",
        ),
    ] = _DEFAULTS.max_requests,
    max_template_output_kb: Annotated[
        float,
        typer.Option(
            "--max-template-output-kb",
            min=0.001,
            help="Text a rubric template may produce per prompt beyond the texts it renders (KB).",
        ),
    ] = _DEFAULTS.max_template_output_kb,
    max_render_s: Annotated[
        float,
        typer.Option("--max-render-s", min=0.001, help="Seconds rendering one prompt may take."),
    ] = _DEFAULTS.max_render_s,
    max_render_total_s: Annotated[
        float,
        typer.Option(
            "--max-render-total-s",
            min=0.001,
            help="Seconds rendering all prompts of one submission may take.",
        ),
    ] = _DEFAULTS.max_render_total_s,
    max_resamples: Annotated[
        int,
        typer.Option(
            "--max-resamples",
            min=100,
            help="Bootstrap resamples a config or an on-demand comparison may ask for.",
        ),
    ] = _DEFAULTS.max_resamples,
    max_wait_s: Annotated[
        float,
        typer.Option(
            "--max-wait-s",
            min=0.001,
            help="Longest wait a config may ask for: judge timeout_s, backoff, 60/rate "
            "limit; simulator latency, stall, retry-after.",
        ),
    ] = _DEFAULTS.max_wait_s,
    max_attempts: Annotated[
        int,
        typer.Option("--max-attempts", min=1, help="Attempts per judge request a config may ask."),
    ] = _DEFAULTS.max_attempts,
    allow_server_paths: Annotated[
        list[Path] | None,
        typer.Option(
            "--allow-server-paths",
            help="Directory whose files JSON-submitted configs may reference (repeatable).",
        ),
    ] = None,
    allow_base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-base-url",
            help="Judge base_url clients may use, and URLs below it (repeatable).",
        ),
    ] = None,
    allow_key_env: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-key-env", help="Variable name clients may give as api_key_env (repeatable)."
        ),
    ] = None,
    executor: Annotated[
        Executor,
        typer.Option(
            "--executor",
            help="Where runs are judged: local worker processes, or shards over a Ray cluster "
            "(needs pip install 'judge-pipeline\\[ray]').",
        ),
    ] = Executor.local,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="With --executor ray: auto (the cluster this machine joined with `ray start "
            "--head`), ray://HOST:10001, or unset: Ray's default (a `ray start` cluster on this "
            "machine, else one started for each run).",
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve the HTTP API (OpenAPI schema at /openapi.json) until stopped.

    Runs execute in worker processes; a restart resumes unfinished runs. Create tokens with
    `judge tokens create NAME`. Provider keys come from this process's environment.

    The --max-* limits bound the work one request can cause; a request over one is refused
    with a problem document naming it (`limit`).
    """
    import logging

    if ray_address is not None and executor is not Executor.ray:
        raise typer.BadParameter("--ray-address is for --executor ray", param_hint="--ray-address")
    _need_service_extra("judge serve")
    if executor is Executor.ray:
        require_ray()  # one line naming the install before the server starts
    import uvicorn

    from judge.service.app import create_app
    from judge.service.db import describe_url

    for directory in allow_server_paths or []:
        if not directory.is_dir():
            raise ConfigError(f"--allow-server-paths {directory}: not a directory")
    settings = ServiceSettings(
        data_dir=data_dir.resolve(),
        db_url=db,
        max_running=max_running,
        max_running_per_token=max_running_per_token,
        max_upload_mb=max_upload_mb,
        max_expanded_mb=max_expanded_mb,
        max_line_kb=max_line_kb,
        allow_server_paths=tuple(p.resolve() for p in allow_server_paths or []),
        allow_base_urls=tuple(allow_base_url or []),
        allow_key_envs=tuple(allow_key_env or []),
        max_requests=max_requests,
        max_template_output_kb=max_template_output_kb,
        max_render_s=max_render_s,
        max_render_total_s=max_render_total_s,
        max_resamples=max_resamples,
        max_wait_s=max_wait_s,
        max_attempts=max_attempts,
        executor=executor,
        ray_address=ray_address,
    )
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s: %(name)s: %(message)s")
    app = create_app(settings)
    typer.echo(
        f"judge service: data {settings.data_dir}, database "
        f"{describe_url(settings.database_url)}, at most {max_running} run(s) at once "
        f"({settings.running_per_token} per token), {_describe_executor(settings)}",
        err=True,
    )
    uvicorn.run(app, host=host, port=port, log_level=log_level)


def _need_service_extra(command: str) -> None:
    """A one-line error naming the install, not an internal ImportError, when the service's
    packages are missing: `make demo` installs the core package only."""
    import importlib.util

    missing = [
        name
        for name in ("fastapi", "uvicorn", "sqlalchemy", "multipart")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise ConfigError(
            f"{command} needs the service extra ({', '.join(missing)} missing): "
            "pip install 'judge-pipeline[service]' (make test installs it)"
        )


def _describe_executor(settings: ServiceSettings) -> str:
    if settings.executor == Executor.local:
        return "judged in local worker processes"
    where = settings.ray_address or "a local Ray cluster per run"
    return f"judged on Ray ({where})"


def _engine(db: str | None, data_dir: Path, *, create: bool = True):  # type: ignore[no-untyped-def]
    from judge.service.db import make_engine

    url = ServiceSettings(data_dir=data_dir, db_url=db).database_url
    return make_engine(url, create=create)


@tokens_app.command("create")
def tokens_create(
    name: Annotated[str, typer.Argument(help="Who the token is for (unique).")],
    admin: Annotated[bool, typer.Option("--admin", help="May see every run.")] = False,
    db: DbOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Create a token and print it once (only its hash is stored)."""
    _need_service_extra("judge tokens")
    from judge.service.auth import create_token

    token, principal = create_token(_engine(db, data_dir), name, admin=admin)
    typer.echo(token)
    kind = "admin token" if admin else "token"
    typer.echo(f"{kind} {principal.name!r} created; it is not shown again", err=True)


@tokens_app.command("list")
def tokens_list(db: DbOption = None, data_dir: DataDirOption = DEFAULT_DATA_DIR) -> None:
    """List tokens (names and dates; never the tokens)."""
    _need_service_extra("judge tokens")
    from judge.service.auth import list_tokens

    # Reading creates nothing: without a database there is nothing to list, and an empty
    # listing would hide a wrong --data-dir.
    for row in list_tokens(_engine(db, data_dir, create=False)):
        state = f"revoked {row['revoked_at']:%Y-%m-%d}" if row["revoked_at"] else "active"
        role = "admin" if row["admin"] else "user"
        typer.echo(f"{row['name']}\t{role}\t{state}\tcreated {row['created_at']:%Y-%m-%d}")


@tokens_app.command("revoke")
def tokens_revoke(
    name: Annotated[str, typer.Argument(help="The token's name.")],
    db: DbOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Revoke a token: it stops working at once; its runs stay (admins still see them)."""
    _need_service_extra("judge tokens")
    from judge.service.auth import revoke_token

    if not revoke_token(_engine(db, data_dir, create=False), name):
        raise ConfigError(f"no active token named {name!r} (see `judge tokens list`)")
    typer.echo(f"token {name!r} revoked", err=True)
