"""Creating a run from a request: uploads (multipart) or server-side paths (JSON).

The submission is checked by the library itself: the config by `load_config`, the data by
`prepare_run` (which loads, validates, blinds, pairs and renders every request, exactly as
`judge prepare` does). Its `DataError`s and `ConfigError`s come back as 422 problems naming the
client's file, line and field; the service's own rules (`policy`) as 400 problems. Nothing of a
refused submission is kept.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import yaml
from sqlalchemy import Engine
from starlette.datastructures import FormData, UploadFile

from judge.analysis.table_analysis import validate_labels
from judge.errors import ConfigError, DataError, JudgeError, LimitError
from judge.service import policy
from judge.service.auth import Principal
from judge.service.layout import RunPaths, run_paths
from judge.service.models import CreateRunFromPaths
from judge.service.problems import ProblemError, data_problem, limit_problem, rename_paths
from judge.service.registry import insert_run, new_run_id
from judge.service.settings import ServiceSettings
from judge.service.upload_limits import ExpansionBudget

if TYPE_CHECKING:
    from judge.config.run_config import RunConfig

REQUIRED_PARTS = ("config", "items", "responses")
OPTIONAL_PARTS = ("labels", "rubric")
_SUFFIXES = re.compile(r"(\.[a-z0-9]{1,10}){0,2}$")
_UNSAFE = re.compile(r"[^\w.@+-]")


def bad_request(detail: str, **extra: Any) -> ProblemError:
    return ProblemError(400, "bad-request", "Bad request", detail, **extra)


def create_from_upload(
    form: FormData, principal: Principal, settings: ServiceSettings, engine: Engine
) -> str:
    """Multipart parts: config (YAML), items, responses [, labels, rubric]; returns the run id."""
    unknown = sorted(set(form.keys()) - {*REQUIRED_PARTS, *OPTIONAL_PARTS})
    if unknown:
        raise bad_request(
            f"unknown form part(s) {', '.join(unknown)}; expected config, items, responses "
            "and optionally labels, rubric"
        )
    missing = [p for p in REQUIRED_PARTS if p not in form]
    if missing:
        raise bad_request(
            f"missing form part(s) {', '.join(missing)}: send the run config (YAML) as "
            "`config`, and the tables as `items` and `responses` (JSONL, CSV or Parquet)"
        )
    for part in form:
        if len(form.getlist(part)) > 1:
            raise bad_request(f"form part {part!r} is given more than once")
        if part != "config" and not isinstance(form[part], UploadFile):
            raise bad_request(f"form part {part!r} must be a file upload", field=part)
    config_part = form["config"]
    if isinstance(config_part, UploadFile):
        config_name = client_name(config_part.filename, "config.yaml")
        config_bytes = config_part.file.read()
    else:
        config_name, config_bytes = "config.yaml", config_part.encode("utf-8")
    try:
        config_text = config_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProblemError(
            422,
            "invalid-config",
            "Invalid config",
            f"{config_name}: not UTF-8 text (byte {exc.start})",
            file=config_name,
        ) from None
    raw = _parse_yaml(config_text, config_name)
    policy.check_raw(raw)

    run_id = new_run_id()
    paths = run_paths(settings.data_dir, run_id)
    paths.inputs.mkdir(parents=True)
    try:
        names = {str(paths.config): config_name}
        files: list[dict[str, Any]] = []
        stored: dict[str, Path] = {}
        budget = ExpansionBudget(settings)
        for part in ("items", "responses", *OPTIONAL_PARTS):
            upload = form.get(part)
            if isinstance(upload, UploadFile):
                name = client_name(upload.filename, part)
                target = paths.inputs / stored_name(part, name, ".yaml" if part == "rubric" else "")
                files.append(save_upload(upload.file, target, part, name))
                names[str(target)] = name
                stored[part] = target
                checked(budget, target, names)  # before anything loads it
        data = raw.get("data") if isinstance(raw.get("data"), dict) else {}
        raw["data"] = {**data, "items": stored["items"].name, "responses": stored["responses"].name}
        if "rubric" in stored:
            raw["rubric"] = stored["rubric"].name
        if "labels" in stored and isinstance(raw.get("calibration"), dict):
            # Uploaded labels are the service's to apply (and to replace later).
            raw["calibration"] = {k: v for k, v in raw["calibration"].items() if k != "human"}
        config = _finish(raw, paths, names, stored.values(), stored.get("labels"), settings)
        _keep_labels(paths, stored.get("labels"), files)
        insert_run(engine, run_id, principal, config.name, files)
    except BaseException:
        shutil.rmtree(paths.root, ignore_errors=True)
        raise
    return run_id


def create_from_paths(
    body: CreateRunFromPaths, principal: Principal, settings: ServiceSettings, engine: Engine
) -> str:
    """A config whose files are on the server, under an allowed directory."""
    if not settings.allow_server_paths:
        raise ProblemError(
            403,
            "forbidden",
            "Server-side paths are disabled",
            "this server reads no server-side paths: upload the config and tables as "
            "multipart/form-data parts config, items, responses",
        )
    raw = dict(body.config)
    policy.check_raw(raw)
    labels = Path(body.labels) if body.labels else None
    if labels is not None and not policy.path_allowed(labels, settings):
        raise policy.refused("labels", "labels: not a file under an allowed directory")
    run_id = new_run_id()
    paths = run_paths(settings.data_dir, run_id)
    paths.inputs.mkdir(parents=True)
    try:
        files: list[dict[str, Any]] = []
        copied = None
        names = {str(paths.config): "config"}
        if labels is not None:
            copied = paths.inputs / stored_name("labels", labels.name, "")
            if not labels.is_file():
                raise DataError("file not found", path=str(labels))
            with labels.open("rb") as fh:
                files.append(save_upload(fh, copied, "labels", labels.name))
            names[str(copied)] = str(labels)
            checked(ExpansionBudget(settings), copied, names)
        config = _finish(raw, paths, names, [], copied, settings)
        _keep_labels(paths, copied, files)
        insert_run(engine, run_id, principal, config.name, files)
    except BaseException:
        shutil.rmtree(paths.root, ignore_errors=True)
        raise
    return run_id


def _keep_labels(paths: RunPaths, labels: Path | None, files: list[dict[str, Any]]) -> None:
    """Labels given with the run, checked and the run prepared: kept by its run dir, the one
    place a run's added labels live (`RunDir.keep_labels`), where a later upload replaces
    them."""
    if labels is None:
        return
    stored = paths.rundir.keep_labels(labels, move=True)
    for record in files:
        if record["kind"] == "labels":
            record["stored_as"] = stored.name


def checked(budget: ExpansionBudget, path: Path, names: dict[str, str]) -> None:
    """`budget.check` on a saved upload, its read errors as 422 problems."""
    try:
        budget.check(path, names[str(path)])
    except DataError as exc:
        raise data_problem(exc, names) from None


def _finish(
    raw: dict[str, Any],
    paths: RunPaths,
    names: dict[str, str],
    uploaded: Any,
    labels: Path | None,
    settings: ServiceSettings,
) -> RunConfig:
    """Write the config the run executes, validate it and prepare the run (all by the
    library), mapping its errors to problems."""
    from judge.config.run_config import load_config
    from judge.rubric.templates import render_limits
    from judge.run import prepare_run

    paths.config.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    try:
        config = load_config(paths.config)
        policy.check_config(config, settings, uploaded)
        if labels is not None:
            # Checked now, as `judge calibrate` would (columns, values): a run must not end
            # with "calibration failed" for labels that were wrong when they arrived.
            validate_labels(labels)
        with render_limits(settings.render_limits):
            prepare_run(config, paths.run_dir, max_requests=settings.max_requests)
        return config
    except DataError as exc:
        raise data_problem(exc, names) from None
    except LimitError as exc:
        raise limit_problem(exc, names) from None
    except ConfigError as exc:
        raise ProblemError(
            422,
            "invalid-config",
            "Invalid config",
            rename_paths(str(exc), names),
            file=names[str(paths.config)],
        ) from None
    except JudgeError as exc:
        raise ProblemError(
            422, "invalid-run", "Invalid run", rename_paths(str(exc), names)
        ) from None


class _ClientText:
    """The client's config text under the client's file name, read by the library's YAML
    reader (`read_yaml_mapping` uses only `read_text` and `str`): a config carrying a key is
    refused before anything of it touches the disk."""

    def __init__(self, name: str, text: str) -> None:
        self._name = name
        self._text = text

    def read_text(self, encoding: str = "utf-8") -> str:
        return self._text

    def __str__(self) -> str:
        return self._name


def _parse_yaml(text: str, name: str) -> dict[str, Any]:
    from judge.yamlfile import read_yaml_mapping

    try:
        return read_yaml_mapping(_ClientText(name, text), "config")  # type: ignore[arg-type]
    except ConfigError as exc:
        raise ProblemError(422, "invalid-config", "Invalid config", str(exc), file=name) from None


def client_name(filename: str | None, default: str) -> str:
    """The base name the client gave, made safe to echo in messages."""
    name = Path(filename or "").name
    name = _UNSAFE.sub("_", name)[:200]
    return name or default


def stored_name(stem: str, client: str, default_suffix: str) -> str:
    """`stem` with the client's extension(s) (`.jsonl.gz`): the library reads the format from
    it, and rejects what it cannot read with its own message."""
    match = _SUFFIXES.search(client.lower())
    suffix = match.group(0) if match else ""
    return stem + (suffix or default_suffix)


def save_upload(source: BinaryIO, target: Path, kind: str, name: str) -> dict[str, Any]:
    digest = hashlib.sha256()
    size = 0
    with target.open("wb") as out:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    return {
        "kind": kind,
        "filename": name,
        "stored_as": target.name,
        "size_bytes": size,
        "sha256": digest.hexdigest(),
    }
