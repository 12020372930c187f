"""Reading a YAML file whose top level is a mapping (run configs, rubrics), with errors that
name the file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from judge.errors import ConfigError


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """The top-level mapping of `path`; `what` ("config", "rubric") words the errors."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{what} file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        raise ConfigError(f"{path}:{where} invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping of {what} keys at the top level")
    return raw
