"""What the importers share in reading: JSON Lines records with their line numbers, and chat
messages that a tool wrote as JSON text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judge.inputs.importers.written_tables import Where
from judge.untrusted import Problem, parse_json

ROLES = ("system", "user", "assistant")


def jsonl_records(path: Path, what: str) -> Iterator[tuple[Where, dict[str, Any]]]:
    """Each non-blank line of `path` as a JSON object, with where it is; `what` names a
    record in the error for a line that is not one ("result", "sample")."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            where = Where(path, line=number)
            try:
                record = parse_json(raw.decode("utf-8"))
            except Problem as problem:
                raise where.error(problem.message, problem.field) from None
            except json.JSONDecodeError as exc:
                raise where.error(f"malformed JSON: {exc.msg} at column {exc.colno}") from None
            except UnicodeDecodeError:
                raise where.error("not valid UTF-8; the file must be UTF-8 JSON Lines") from None
            if not isinstance(record, dict):
                raise where.error(f"expected one {what} object per line")
            yield where, record


def json_chat(text: str) -> list[dict[str, str]] | None:
    """The chat messages `text` holds when it is a JSON list of {role, content} (how promptfoo
    and the harness write a chat prompt), else None (the text is the prompt)."""
    if not text.lstrip().startswith("["):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, list) or not value:
        return None
    if not all(
        isinstance(m, dict) and m.get("role") in ROLES and isinstance(m.get("content"), str)
        for m in value
    ):
        return None
    return [{"role": m["role"], "content": m["content"]} for m in value]
