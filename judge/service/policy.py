"""What a client's run config may ask of the server.

Provider keys are server-side configuration: a config carrying `api_key` is refused (the key
would be stored with the run), and a client cannot point the server's keys elsewhere — a
`base_url`, `api_key_env` or provider-routing `params` key must be on the operator's allow-list
(`base_url: simulator`, the run's own loopback simulator, is always allowed). A client cannot
read or write server files: every path in the config must be one of its uploads or lie in a
directory the operator allowed; the response cache is the service's choice. Nor can it make
one run hold a worker for days or allocate gigabytes: waits, attempts and resamples are capped
(`check_caps`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from judge.config.run_config import RunConfig
from judge.service.problems import ProblemError
from judge.service.settings import ServiceSettings

_BUILTIN_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_JUDGE_WAITS = ("timeout_s", "backoff_initial_s", "backoff_max_s")


def refused(field: str, detail: str, **extra: Any) -> ProblemError:
    return ProblemError(
        400, "config-refused", "Config refused by the service", detail, field=field, **extra
    )


def check_raw(raw: dict[str, Any]) -> None:
    """Checks on the parsed YAML, before it is validated, written or stored anywhere."""
    judges = raw.get("judges")
    if isinstance(judges, list):
        for i, judge in enumerate(judges):
            if isinstance(judge, dict) and "api_key" in judge:
                field = f"judges[{i}].api_key"
                raise refused(
                    field,
                    f"{field}: the service does not accept API keys in configs (they would be "
                    "stored with the run); the operator configures provider keys on the server "
                    "— remove the key",
                )
    if "cache" in raw:
        raise refused(
            "cache",
            "cache: the service chooses the response cache (one per token); remove this key",
        )


def check_config(
    config: RunConfig, settings: ServiceSettings, uploaded: Iterable[Path] = ()
) -> None:
    """Checks on the validated config (paths resolved)."""
    check_caps(config, settings)
    own = {p.resolve() for p in uploaded}
    for i, judge in enumerate(config.judges):
        where = f"judges[{i}]"
        if judge.base_url is not None and not url_allowed(judge.base_url, settings):
            allowed = ", ".join(settings.allow_base_urls) or "none besides 'simulator'"
            raise refused(
                f"{where}.base_url",
                f"{where}.base_url: this server does not send judge requests there; allowed: "
                f"{allowed} (the operator adds more with --allow-base-url)",
            )
        if judge.api_key_env is not None and judge.api_key_env not in settings.allow_key_envs:
            raise refused(
                f"{where}.api_key_env",
                f"{where}.api_key_env: the server does not lend that variable to clients; "
                "omit api_key_env to use the provider's default key, or ask the operator to "
                "allow it (--allow-key-env)",
            )
        for key in judge.params:
            if key not in settings.allow_params:
                raise refused(
                    f"{where}.params.{key}",
                    f"{where}.params.{key}: not an allowed sampling parameter; allowed: "
                    f"{', '.join(settings.allow_params)}",
                )
    # Every path anywhere in the config (data, recorded verdicts, labels, published verdicts,
    # and any path field added later): found by type, not by a list that could fall behind.
    for where, path in _paths(config):
        _check_path(where, path, settings, own)
    if not _BUILTIN_ID.match(config.rubric):
        # Anything but a bare id is read as a file by `load_rubric` (a '/' is enough).
        _check_path("rubric", Path(config.rubric), settings, own)


def check_caps(config: RunConfig, settings: ServiceSettings) -> None:
    """Waits, attempts and resamples within the operator's caps (`max_wait_s`,
    `max_attempts`, `max_resamples`): a judge timeout of a day, a million attempts or a
    simulator that answers once an hour would hold a worker slot; 10^9 resamples would
    allocate gigabytes."""
    waits: list[tuple[str, float | None]] = []
    for i, judge in enumerate(config.judges):
        where = f"judges[{i}]"
        waits += [(f"{where}.{name}", getattr(judge, name)) for name in _JUDGE_WAITS]
        for name in ("requests_per_minute", "tokens_per_minute"):
            rate = getattr(judge, name)
            if rate is not None and 60.0 / rate > settings.max_wait_s:
                raise refused(
                    f"{where}.{name}",
                    f"{where}.{name}: {rate:g} per minute means waiting {60.0 / rate:g} s, "
                    f"over this server's cap of {settings.max_wait_s:g} s (max_wait_s); "
                    f"ask for at least {60.0 / settings.max_wait_s:g} per minute",
                    limit="max_wait_s",
                    maximum=settings.max_wait_s,
                )
        _cap(f"{where}.max_attempts", judge.max_attempts, settings.max_attempts, "max_attempts")
    if config.simulator is not None:
        sim = config.simulator
        waits.append(("simulator.latency.median_s", sim.latency.median_s))
        if sim.rate_stall > 0:
            waits.append(("simulator.stall_s", sim.stall_s))
        if sim.rate_429 > 0 or sim.rpm_capacity is not None:
            waits.append(("simulator.retry_after_s", sim.retry_after_s))
    for field, seconds in waits:
        _cap(field, seconds, settings.max_wait_s, "max_wait_s", unit=" s")
    for field, resamples in (
        ("compare.resamples", config.compare.resamples),
        ("calibration.resamples", config.calibration.resamples),
    ):
        _cap(field, resamples, settings.max_resamples, "max_resamples")


def _cap(field: str, value: float | None, cap: float, limit: str, unit: str = "") -> None:
    if value is not None and value > cap:
        most = f"{_number(cap)}{unit}"
        raise refused(
            field,
            f"{field}: {_number(value)}{unit} is over this server's cap of {most} ({limit}); "
            f"ask for at most {most}",
            limit=limit,
            maximum=cap,
        )


def _number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _paths(value: Any, where: str = "") -> Iterator[tuple[str, Path]]:
    """(location, path) of every `Path` in a config model, e.g. ("judges[0].recorded", ...)."""
    if isinstance(value, Path):
        yield where, value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _paths(getattr(value, name), f"{where}.{name}" if where else name)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _paths(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, f"{where}.{key}")


def url_allowed(url: str, settings: ServiceSettings) -> bool:
    """`simulator`, or an allowed URL or one below it (whole path segments: an allowed
    `http://host:8000/v1` does not allow `http://host:8000/v1evil` nor `...:80001`)."""
    if url == "simulator":
        return True
    url = url.rstrip("/")
    return any(
        url == base.rstrip("/") or url.startswith(base.rstrip("/") + "/")
        for base in settings.allow_base_urls
    )


def path_allowed(path: Path, settings: ServiceSettings) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(d.resolve()) for d in settings.allow_server_paths)


def _check_path(field: str, path: Path, settings: ServiceSettings, own: set[Path]) -> None:
    if path.resolve() in own or path_allowed(path, settings):
        return
    if not settings.allow_server_paths:
        hint = "upload the file instead (multipart); this server reads no server-side paths"
    else:
        hint = (
            "upload the file instead, or use an absolute path under an allowed directory: "
            + ", ".join(str(d) for d in settings.allow_server_paths)
        )
    raise refused(field, f"{field}: {hint}")
