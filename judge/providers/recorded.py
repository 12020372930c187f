"""Replays judge verdicts recorded elsewhere (e.g. GPT-4's published MT-Bench judgments) through
the same parse -> store -> aggregate path as a live judge.

A recording names systems, so this provider is the one place after blinding that must know who
is in which slot: the runner attaches the run's blinding key to it. Nothing it returns names a
system; it answers in presented-slot terms like any judge.

Recording format (JSONL, one line per judged pair, `spec.recorded` points to it):

    {"item_id": "81-t1", "system_a": "gpt-4", "system_b": "claude-v1", "winner": "system_a"}

`winner` is `system_a`, `system_b`, `tie` or `inconsistent` (the judge's two orders disagreed and
the recording does not say how). Per-order replies, when a recording has them, are given as
`{"item_id", "first": <system shown first>, "second": <system shown second>, "reply": <text>}`
and are parsed like any live reply.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from judge.config.run_config import JudgeSpec
from judge.errors import ConfigError
from judge.providers.base import ErrorKind, Provider, ProviderCall, ProviderReply
from judge.types import BlindingKey
from judge.untrusted import Problem, parse_json

_WINNERS = ("system_a", "system_b", "tie", "inconsistent")


class NoRecording(LookupError):
    """The recording has no verdict for this request: recorded as a failed request (final)."""


class RecordedProvider(Provider):
    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        if spec.recorded is None:
            raise ConfigError(
                f"judge '{spec.model}' replays a recording: set `recorded: <file.jsonl>` on it"
            )
        self._pairs, self._replies = load_recording(spec.recorded)
        self._key: BlindingKey | None = None
        self.assumed_direction = 0
        """Inconsistent recordings replayed with an assumed direction (see `_reply_for`)."""

    def attach(self, read_key: Callable[[], BlindingKey]) -> None:
        """How to read the run's blinding key (which system sits in which slot of each pair).
        Read again when a request names a pair the copy in hand lacks: a prepare still running
        logs each chunk's pairs before it stores their requests."""
        self._read_key = read_key
        self._key = read_key()

    async def complete(self, call: ProviderCall) -> ProviderReply:
        request = call.request
        if self._key is None:
            raise RuntimeError("RecordedProvider used before the runner attached the blinding key")
        if request.pair_id is None or request.order is None:
            raise NoRecording("the recorded provider replays pairwise verdicts only")
        if request.pair_id not in self._key.pairs:
            self._key = self._read_key()
        slots = self._key.pairs.get(request.pair_id)
        if slots is None:
            raise NoRecording(f"the blinding key names no pair {request.pair_id!r}")
        slot_a, slot_b = slots
        first, second = (slot_a, slot_b) if request.order == "AB" else (slot_b, slot_a)
        reply = self._replies.get((request.item_id, first, second))
        if reply is None:
            reply = self._reply_for(request.item_id, first, second)
        return ProviderReply(text=reply, provider_request_id=f"recorded:{request.item_id}")

    def _reply_for(self, item_id: str, first: str, second: str) -> str:
        winner = self._pairs.get((item_id, frozenset((first, second))))
        if winner is None:
            raise NoRecording(f"no recorded verdict for item {item_id!r} and this pair")
        if winner == "tie":
            label = "tie"
        elif winner == "inconsistent":
            # The recording only says the two orders disagreed. Replaying "the first-shown wins"
            # in both orders reproduces exactly that disagreement (and the aggregated tie); the
            # direction is an assumption, counted so reports can say so.
            self.assumed_direction += 1
            label = "A"
        else:
            label = "A" if winner == first else "B"
        return json.dumps({"reasoning": "recorded verdict", "verdict": label})

    def classify_error(self, exc: BaseException) -> ErrorKind | None:
        return None  # nothing about a recording gets better by asking again

    def connection_key(self) -> str:
        return f"recorded|{self.spec.recorded}"


def load_recording(
    path: Path,
) -> tuple[dict[tuple[str, frozenset[str]], str], dict[tuple[str, str, str], str]]:
    pairs: dict[tuple[str, frozenset[str]], str] = {}
    replies: dict[tuple[str, str, str], str] = {}
    for number, row in _rows(path):
        if "reply" in row:
            _need(row, ("item_id", "first", "second", "reply"), path, number)
            key = (_item_id(row, path, number), *_texts(row, ("first", "second"), path, number))
            replies[key] = _texts(row, ("reply",), path, number)[0]
            continue
        _need(row, ("item_id", "system_a", "system_b", "winner"), path, number)
        if row["winner"] not in _WINNERS:
            raise ConfigError(
                f"{path}, line {number}, field 'winner': expected one of {', '.join(_WINNERS)}, "
                f"found {_clip(row['winner'])}"
            )
        system_a, system_b = _texts(row, ("system_a", "system_b"), path, number)
        winner = row["winner"]
        if winner in ("system_a", "system_b"):
            winner = row[winner]
        key = (_item_id(row, path, number), frozenset((system_a, system_b)))
        if key in pairs:
            raise ConfigError(f"{path}, line {number}: a second verdict for the same item and pair")
        pairs[key] = winner
    return pairs, replies


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line; a line that is not UTF-8, not JSON, not an
    object, or holds what `parse_json` refuses is an error naming the line (and field)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"recorded verdicts file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the recorded verdicts: {exc.strerror}") from None
    for number, raw in enumerate(data.removeprefix(codecs.BOM_UTF8).splitlines(), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{path}, line {number}: not valid UTF-8 (byte {exc.start + 1} of the line); "
                "save the file as UTF-8"
            ) from None
        if not line.strip():
            continue
        try:
            row = parse_json(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}, line {number}: malformed JSON: {exc.msg}") from None
        except Problem as problem:
            field = "" if problem.field is None else f", field '{problem.field}'"
            raise ConfigError(f"{path}, line {number}{field}: {problem.message}") from None
        if not isinstance(row, dict):
            raise ConfigError(f"{path}, line {number}: expected a JSON object per line")
        yield number, row


def _need(row: dict[str, Any], fields: tuple[str, ...], path: Path, number: int) -> None:
    for name in fields:
        if name not in row:
            raise ConfigError(f"{path}, line {number}, field '{name}': missing")


def _item_id(row: dict[str, Any], path: Path, number: int) -> str:
    value = row["item_id"]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    raise ConfigError(
        f"{path}, line {number}, field 'item_id': expected an item id (text or integer), "
        f"found {_clip(value)}"
    )


def _texts(row: dict[str, Any], fields: tuple[str, ...], path: Path, number: int) -> list[str]:
    for name in fields:
        if not isinstance(row[name], str):
            raise ConfigError(
                f"{path}, line {number}, field '{name}': expected text, found {_clip(row[name])}"
            )
    return [row[name] for name in fields]


def _clip(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."
