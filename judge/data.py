"""Load the items and responses tables into `Item` and `Response` records.

Formats: JSONL (`.jsonl`, `.ndjson`) and CSV (`.csv`), each optionally gzip-compressed (`.gz`),
and Parquet (`.parquet`). Every row becomes a record or a `DataError` naming the file, where
the row is (JSONL: its physical line; CSV: the physical line it starts on, or "row N" when that
cannot be confirmed; Parquet: "row N"), the field, and what was expected instead of what was
found. Nothing is dropped silently.

Responses stream in chunks of `chunk_rows`: memory holds one chunk plus ~16 bytes per response
already read (duplicate detection), never the file or every record.

How each format is read, and why:
- CSV goes through `pandas.read_csv` with every cell kept as the exact text of the file
  (`dtype=object`, `na_filter=False`): otherwise pandas turns item id "007" into 7 and an output
  reading "NA" or "null" into a missing value.
- Parquet goes through pyarrow's batch reader (pandas' own Parquet engine, which cannot stream)
  and `to_pandas`, with integer columns kept as Python ints even when nulls are present (pandas
  would make item id 3 a float and then "3.0").
- JSONL lines are parsed one by one with the `json` module instead of `pandas.read_json`, which
  parses a whole chunk at once and so cannot name the line that is malformed, not UTF-8, or
  holds a bad value.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import math
import numbers
import re
import zlib
from collections.abc import Container, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from judge.errors import DataError
from judge.types import ChatMessage, Item, Response

__all__ = ["SUPPORTED_FORMATS", "iter_responses", "load_items", "load_responses"]

SUPPORTED_FORMATS = (
    "JSONL (.jsonl, .ndjson) or CSV (.csv), optionally gzip-compressed (.gz), or Parquet (.parquet)"
)

_ITEM_REQUIRED = ("item_id", "prompt")
_ITEM_COLUMNS = frozenset((*_ITEM_REQUIRED, "reference"))
_RESPONSE_REQUIRED = ("item_id", "system", "output")
_RESPONSE_KNOWN = (*_RESPONSE_REQUIRED, "context", "latency_s", "cost_usd", "tokens")
_RESPONSE_COLUMNS = frozenset(_RESPONSE_KNOWN)
_ROLES = ("system", "user", "assistant")
_ITEMS_CHUNK_ROWS = 10_000
_BATCH_ROWS = 4_096
_MISSING = object()
"""A JSONL record without the key (as opposed to an explicit null)."""


class _Problem(Exception):
    """A bad value in one row; the reader that produced the row adds where it is."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


# --------------------------------------------------------------------------- public API


def load_items(path: str | Path) -> dict[str, Item]:
    """Read an items table: `item_id` and `prompt` required, `reference` optional, every other
    column a stratum. Returns the items by id, in file order."""
    source = _open_source(path)
    columns = source.columns()
    if columns is not None:
        _check_header(source, columns, _ITEM_REQUIRED, None, "an items")
    items: dict[str, Item] = {}
    first_seen: dict[str, int] = {}
    for chunk in source.chunks(_ITEMS_CHUNK_ROWS):
        for record, position in zip(chunk.records, chunk.positions, strict=True):
            try:
                if columns is None:
                    _check_keys(record, _ITEM_REQUIRED, None, "an items")
                item = _item(record, encoded=source.encoded)
            except _Problem as problem:
                raise source.error(position, record, problem) from None
            if item.item_id in first_seen:
                earlier = first_seen[item.item_id]
                raise source.duplicate(position, record, earlier, ("item_id",))
            first_seen[item.item_id] = position
            items[item.item_id] = item
    if not items:
        raise DataError("no rows: expected at least one item", path=str(source.path))
    return items


def iter_responses(
    path: str | Path,
    item_ids: Container[str],
    *,
    allow_empty_outputs: bool = False,
    chunk_rows: int = 50_000,
) -> Iterator[Response]:
    """Stream a responses table (`item_id`, `system`, `output` required; `context`,
    `latency_s`, `cost_usd`, `tokens` optional) as `Response`s, in file order.

    The path and format are checked at call time; row errors surface while iterating, so a
    consumer that sees a `DataError` must treat the whole load as failed.
    """
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    source = _open_source(path)
    return _stream_responses(source, item_ids, allow_empty_outputs, chunk_rows)


def load_responses(
    path: str | Path, item_ids: Container[str], *, allow_empty_outputs: bool = False
) -> list[Response]:
    """Every response of a table at once: `iter_responses` for tables that fit in memory."""
    return list(iter_responses(path, item_ids, allow_empty_outputs=allow_empty_outputs))


# --------------------------------------------------------------------------- responses


def _stream_responses(
    source: _Source, item_ids: Container[str], allow_empty: bool, chunk_rows: int
) -> Iterator[Response]:
    columns = source.columns()
    if columns is not None:
        _check_header(source, columns, _RESPONSE_REQUIRED, _RESPONSE_COLUMNS, "a responses")
    seen = _SeenPairs()
    count = 0
    for chunk in source.chunks(chunk_rows):
        # Responses are checked and yielded a few thousand at a time: a Response weighs ~1 KB
        # besides its text, so holding a whole chunk of them would double the peak memory.
        for start in range(0, len(chunk.records), _BATCH_ROWS):
            records = chunk.records[start : start + _BATCH_ROWS]
            positions = chunk.positions[start : start + _BATCH_ROWS]
            responses = _check_batch(
                source, records, positions, columns, seen, item_ids, allow_empty
            )
            count += len(responses)
            yield from responses
    if count == 0:
        raise DataError("no rows: expected at least one response", path=str(source.path))


def _check_batch(
    source: _Source,
    records: list[Mapping[str, Any]],
    positions: list[int],
    columns: list[str] | None,
    seen: _SeenPairs,
    item_ids: Container[str],
    allow_empty: bool,
) -> list[Response]:
    responses: list[Response] = []
    keys: list[int] = []
    failure: tuple[int, Mapping[str, Any], _Problem] | None = None
    for record, position in zip(records, positions, strict=True):
        try:
            if columns is None:
                _check_keys(record, _RESPONSE_REQUIRED, _RESPONSE_COLUMNS, "a responses")
            response = _response(record, item_ids, allow_empty, source.encoded)
        except _Problem as problem:
            failure = (position, record, problem)
            break
        responses.append(response)
        keys.append(seen.key(response.item_id, response.system))
    # Rows before a bad one are checked for duplicates first, so the error reported is always
    # the first one in file order.
    duplicate = seen.add(keys, positions[: len(keys)])
    if duplicate is not None:
        index, earlier = duplicate
        raise source.duplicate(positions[index], records[index], earlier, ("item_id", "system"))
    if failure is not None:
        raise source.error(*failure)
    return responses


class _SeenPairs:
    """Exact duplicate detection over millions of (item_id, system) pairs in ~16 bytes each.

    A pair is packed into one 64-bit integer from two small dictionaries (item_id -> index,
    system -> index): they hold one entry per distinct item and system, which number in the
    thousands, not per response. The packed keys and their line numbers live in a few sorted
    numpy arrays of geometrically growing size (merged like a binary counter), searched with
    `searchsorted` one chunk at a time. A Python dict of tuples would cost ~250 bytes per
    response and one of 8-byte blake2b digests ~115 bytes (measured over 1M keys), and digests
    can collide; packed indices cannot.
    """

    def __init__(self) -> None:
        self._items: dict[str, int] = {}
        self._systems: dict[str, int] = {}
        self._runs: list[tuple[np.ndarray, np.ndarray]] = []
        """(sorted keys, positions in the same order), largest first."""

    def key(self, item_id: str, system: str) -> int:
        item = self._items.setdefault(item_id, len(self._items))
        system_index = self._systems.setdefault(system, len(self._systems))
        return (item << 32) | system_index

    def add(self, keys: list[int], positions: Sequence[int]) -> tuple[int, int] | None:
        """Record one chunk's keys. Returns (index in the chunk, earlier position) of the first
        key already seen, in file order; nothing is recorded then."""
        if not keys:
            return None
        new = np.array(keys, dtype=np.uint64)
        where = np.array(positions, dtype=np.int64)
        earlier = np.full(len(new), -1, dtype=np.int64)
        for run_keys, run_positions in self._runs:
            at = np.minimum(np.searchsorted(run_keys, new), len(run_keys) - 1)
            hit = run_keys[at] == new
            earlier[hit] = run_positions[at[hit]]
        order = np.argsort(new, kind="stable")
        ordered = new[order]
        repeat = np.flatnonzero(ordered[1:] == ordered[:-1]) + 1
        if repeat.size:
            # A repeat inside the chunk points at the key's first occurrence in the chunk: the
            # start of its run of equal keys (the stable sort keeps file order within a run).
            # Had that key been seen before the chunk, the first occurrence is itself a repeat
            # and comes earlier, so it is the one reported.
            starts = np.where(np.r_[True, ordered[1:] != ordered[:-1]], np.arange(len(new)), 0)
            first = order[np.maximum.accumulate(starts)]
            earlier[order[repeat]] = where[first[repeat]]
        found = np.flatnonzero(earlier >= 0)
        if found.size:
            return int(found[0]), int(earlier[found[0]])
        self._runs.append((ordered, where[order]))
        while len(self._runs) > 1 and len(self._runs[-2][0]) <= len(self._runs[-1][0]):
            (keys_b, pos_b), (keys_a, pos_a) = self._runs.pop(), self._runs.pop()
            merged = np.concatenate([keys_a, keys_b])
            merge_order = np.argsort(merged, kind="stable")
            self._runs.append((merged[merge_order], np.concatenate([pos_a, pos_b])[merge_order]))
        return None


def _response(
    record: Mapping[str, Any], item_ids: Container[str], allow_empty: bool, encoded: bool
) -> Response:
    item_id = _identifier(record.get("item_id", _MISSING))
    if item_id not in item_ids:
        raise _Problem(
            f"unknown item_id {item_id!r}: no item with this id in the items table "
            "(responses must answer items of that table)",
            "item_id",
        )
    system = record.get("system", _MISSING)
    if not isinstance(system, str) or not system.strip():
        raise _Problem(f"expected a system name (text), found {_describe(system)}", "system")
    output = record.get("output", _MISSING)
    if not isinstance(output, str):
        raise _Problem(f"expected the output as text, found {_describe(output)}", "output")
    if not allow_empty and not output.strip():
        raise _Problem(
            "empty output (whitespace only counts as empty); to judge empty outputs as empty "
            "instead, pass allow_empty_outputs=True (config: data.allow_empty_outputs: true)",
            "output",
        )
    context = record.get("context")
    return Response(
        item_id=item_id,
        system=system,
        output=output,
        context=() if context is None or _is_blank(context) else _messages(context, encoded),
        latency_s=_amount(record.get("latency_s"), "latency_s"),
        cost_usd=_amount(record.get("cost_usd"), "cost_usd"),
        tokens=_count(record.get("tokens"), "tokens"),
    )


# --------------------------------------------------------------------------- items


def _item(record: Mapping[str, Any], *, encoded: bool) -> Item:
    item_id = _identifier(record.get("item_id", _MISSING))
    prompt = _prompt(record.get("prompt", _MISSING), encoded)
    reference = record.get("reference")
    if _is_blank(reference):
        reference = None
    elif not isinstance(reference, str):
        raise _Problem(
            f"expected the reference answer as text, found {_describe(reference)}", "reference"
        )
    strata = {}
    for name, value in record.items():
        if name not in _ITEM_COLUMNS and not _is_blank(value):
            strata[name] = _stratum(value)
    return Item(item_id=item_id, prompt=prompt, reference=reference, strata=strata)


def _prompt(value: Any, encoded: bool) -> str | tuple[ChatMessage, ...]:
    if isinstance(value, str):
        if encoded and _CHAT_JSON.match(value):
            return _messages(value, encoded, prompt=True)
        if not value.strip():
            raise _Problem(
                "expected a prompt (text or chat messages), found an empty string", "prompt"
            )
        return value
    if _is_sequence(value):
        return _messages(value, encoded, prompt=True)
    raise _Problem(
        f"expected a prompt: text or a list of chat messages, found {_describe(value)}", "prompt"
    )


_CHAT_JSON = re.compile(r'\s*\[\s*\{.*"role"', re.DOTALL)
"""A text cell that is JSON-encoded chat messages rather than a prompt that starts with "[":
it opens a list of objects and names a role. Such a cell must then be valid messages."""


def _stratum(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


# --------------------------------------------------------------------------- values


def _identifier(value: Any) -> str:
    if type(value) is str:
        if value.strip():
            return value
    elif isinstance(value, int | np.integer) and not isinstance(value, bool):
        return str(int(value))
    raise _Problem(f"expected an item id (text or integer), found {_describe(value)}", "item_id")


def _amount(value: Any, field: str) -> float | None:
    # Exact type checks first: this runs for every response, and the numbers.Real check
    # (an ABC) costs more than the rest of the function.
    kind = type(value)
    number: float | None = None
    if kind is float or kind is int:
        number = float(value)
    elif kind is str:
        if not value:
            return None
        try:
            number = float(value)
        except ValueError:
            number = None
    elif _is_missing(value):
        return None
    elif isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        number = float(value)
    if number is not None and math.isnan(number):
        return None  # NaN is how pandas and JSON writers spell "missing" in a number column
    if number is None or not 0 <= number < math.inf:
        raise _Problem(f"expected a non-negative number, found {_describe(value)}", field)
    return number


def _count(value: Any, field: str) -> int | None:
    kind = type(value)
    number: float | int | None = None
    if kind is int:
        number = value
    elif kind is str:
        if not value:
            return None
        try:
            number = int(value)
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                number = None
    elif _is_missing(value):
        return None
    elif isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        number = value
    if isinstance(number, float | np.floating):
        if math.isnan(number):
            return None
        # 12.0 is accepted: float columns are how pandas writes integers next to missing values.
        number = int(number) if math.isfinite(number) and number.is_integer() else None
    if number is None or number < 0:
        raise _Problem(f"expected a non-negative integer, found {_describe(value)}", field)
    return int(number)


def _messages(value: Any, encoded: bool, *, prompt: bool = False) -> tuple[ChatMessage, ...]:
    """Chat messages: a list of {role, content}; in CSV and Parquet text cells, JSON-encoded.
    A prompt needs at least one message and must end with the user's turn."""
    field = "prompt" if prompt else "context"
    if isinstance(value, str) and encoded:
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _Problem(
                f"expected chat messages as a JSON list of {{role, content}} objects, found "
                f"malformed JSON ({exc.msg} at character {exc.pos + 1})",
                field,
            ) from None
    if not _is_sequence(value):
        how = "a JSON-encoded list" if encoded else "a list"
        raise _Problem(
            f"expected chat messages as {how} of {{role, content}} objects, "
            f"found {_describe(value)}",
            field,
        )
    messages = []
    for number, message in enumerate(value, start=1):
        if not isinstance(message, Mapping):
            raise _Problem(
                f"message {number}: expected an object with role and content, "
                f"found {_describe(message)}",
                field,
            )
        extra = sorted(set(message) - {"role", "content"})
        if extra:
            raise _Problem(
                f"message {number}: unexpected key {extra[0]!r}; a message has only role "
                "and content",
                field,
            )
        role = message.get("role", _MISSING)
        if not isinstance(role, str) or role not in _ROLES:
            raise _Problem(
                f"message {number}: expected role system, user or assistant, "
                f"found {_describe(role)}",
                field,
            )
        content = message.get("content", _MISSING)
        if not isinstance(content, str):
            raise _Problem(
                f"message {number}: expected content as text, found {_describe(content)}", field
            )
        messages.append(ChatMessage(role=role, content=content))
    if prompt:
        if not messages:
            raise _Problem("expected at least one chat message, found an empty list", field)
        if messages[-1].role != "user":
            raise _Problem(
                f"the last message must be the user's turn, found role {messages[-1].role!r} "
                f"(message {len(messages)})",
                field,
            )
    return tuple(messages)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray)


def _is_missing(value: Any) -> bool:
    return (
        value is None
        or value is _MISSING
        or value is pd.NA
        or value is pd.NaT
        or (isinstance(value, float) and math.isnan(value))
    )


def _is_blank(value: Any) -> bool:
    """Missing, or an empty cell (CSV cannot tell an empty string from a missing value)."""
    return _is_missing(value) or (isinstance(value, str) and not value)


def _describe(value: Any) -> str:
    if value is _MISSING:
        return "nothing (the key is absent)"
    if value is None or value is pd.NA or value is pd.NaT:
        return "null"
    if isinstance(value, float) and math.isnan(value):
        return "a missing value (NaN)"
    if isinstance(value, bool | np.bool_):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, numbers.Number):
        return f"the number {value}"
    if isinstance(value, str):
        if not value:
            return "an empty string"
        clipped = value if len(value) <= 40 else value[:37] + "..."
        return f"the text {clipped!r}"
    if isinstance(value, Mapping):
        return "an object"
    if _is_sequence(value):
        return "a list"
    return f"a value of type {type(value).__name__}"


# --------------------------------------------------------------------------- header checks


def _check_header(
    source: _Source,
    columns: Sequence[str],
    required: Sequence[str],
    known: frozenset[str] | None,
    table: str,
) -> None:
    seen: set[str] = set()
    for number, name in enumerate(columns, start=1):
        if not str(name).strip():
            raise DataError(
                f"column {number} has no name; every column needs a header",
                path=str(source.path),
            )
        if name in seen:
            raise DataError(
                f"column {name!r} appears twice; column names must be unique",
                path=str(source.path),
                field=name,
            )
        seen.add(name)
    try:
        _check_keys(dict.fromkeys(columns), required, known, table)
    except _Problem as problem:
        raise DataError(
            f"{problem.message} (found columns: {', '.join(map(str, columns))})",
            path=str(source.path),
            field=problem.field,
        ) from None


def _check_keys(
    record: Mapping[str, Any],
    required: Sequence[str],
    known: frozenset[str] | None,
    table: str,
) -> None:
    for name in required:
        if name not in record:
            raise _Problem(
                f"missing required column {name!r}: {table} table needs {', '.join(required)}",
                name,
            )
    if known is not None and not known.issuperset(record):
        unknown = next(name for name in record if name not in known)
        raise _Problem(
            f"unknown column {unknown!r}; the known columns are {', '.join(_RESPONSE_KNOWN)}",
            unknown,
        )


# --------------------------------------------------------------------------- sources


@dataclass
class _Chunk:
    records: list[Mapping[str, Any]]
    positions: list[int]
    """Per record: its physical line (JSONL) or 1-based data row (CSV, Parquet)."""


class _Source:
    """One input file: yields chunks of records and says where a record came from."""

    encoded = True
    """Chat messages arrive as JSON-encoded text (CSV, Parquet) rather than as lists."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.gzipped = path.name.lower().endswith(".gz")

    def columns(self) -> list[str] | None:
        """The header, or None when each record has its own keys (JSONL)."""
        return None

    def chunks(self, chunk_rows: int) -> Iterator[_Chunk]:
        raise NotImplementedError

    def locate(self, wanted: Mapping[int, Mapping[str, Any]]) -> dict[int, int | None]:
        """Physical line of each wanted position, None where it cannot be told for certain.
        `wanted` maps a position to column values the record there must hold."""
        return dict.fromkeys(wanted)

    def error(self, position: int, record: Mapping[str, Any], problem: _Problem) -> DataError:
        return self.error_at(position, self.locate({position: record})[position], problem)

    def error_at(self, position: int, line: int | None, problem: _Problem) -> DataError:
        row = position if line is None else None
        return DataError(
            problem.message, path=str(self.path), line=line, row=row, field=problem.field
        )

    def duplicate(
        self, position: int, record: Mapping[str, Any], earlier: int, key: tuple[str, ...]
    ) -> DataError:
        """`record` at `position` repeats the `key` columns of the record at `earlier`."""
        shared = {name: record[name] for name in key}
        lines = self.locate({position: record, earlier: shared})
        if lines[position] is None:
            # Only the full record at `position` proves the two parses agree up to there.
            lines[earlier] = None
        first = f"line {lines[earlier]}" if lines[earlier] is not None else f"row {earlier}"
        names = " and ".join(f"{name} {str(value)!r}" for name, value in shared.items())
        unique = key[0] if len(key) == 1 else f"({', '.join(key)}) pair"
        problem = _Problem(
            f"duplicate {names}: duplicate of {first}; each {unique} may appear only once",
            key[-1],
        )
        return self.error_at(position, lines[position], problem)

    def _open(self) -> IO[bytes]:
        if self.gzipped:
            return gzip.open(self.path, "rb")
        return open(self.path, "rb")

    def _read_error(self, exc: Exception) -> DataError:
        kind = "gzip-compressed file" if self.gzipped else "file"
        return DataError(f"cannot read this {kind}: {exc}", path=str(self.path))


class _JsonlSource(_Source):
    encoded = False

    def locate(self, wanted: Mapping[int, Mapping[str, Any]]) -> dict[int, int | None]:
        return {position: position for position in wanted}

    def chunks(self, chunk_rows: int) -> Iterator[_Chunk]:
        try:
            with self._open() as stream:
                yield from self._chunks(stream, chunk_rows)
        except (OSError, EOFError, zlib.error) as exc:
            raise self._read_error(exc) from None

    def _chunks(self, stream: IO[bytes], chunk_rows: int) -> Iterator[_Chunk]:
        records: list[Mapping[str, Any]] = []
        positions: list[int] = []
        offset = 0
        for number, raw in enumerate(stream, start=1):
            start, offset = offset, offset + len(raw)
            if number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw, start = raw[len(codecs.BOM_UTF8) :], start + len(codecs.BOM_UTF8)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _not_utf8(
                    self, number, exc.start + 1, raw[exc.start], start + exc.start
                ) from None
            if not text.strip():
                continue  # a blank line holds no record
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"malformed JSON: {exc.msg} at column {exc.colno}; each line must be one "
                    "JSON object",
                    path=str(self.path),
                    line=number,
                ) from None
            if not isinstance(record, dict):
                raise DataError(
                    f"expected a JSON object per line, found {_describe(record)}",
                    path=str(self.path),
                    line=number,
                )
            records.append(record)
            positions.append(number)
            if len(records) >= chunk_rows:
                yield _Chunk(records, positions)
                records, positions = [], []
        if records:
            yield _Chunk(records, positions)


class _CsvSource(_Source):
    def columns(self) -> list[str]:
        try:
            with closing(self._records()) as records:
                for _, fields in records:
                    return fields
        except csv.Error as exc:
            raise DataError(f"malformed CSV header: {exc}", path=str(self.path)) from None
        raise DataError("empty file: expected a header line and rows", path=str(self.path))

    def chunks(self, chunk_rows: int) -> Iterator[_Chunk]:
        row = 0
        try:
            with self._open() as stream:
                frames = pd.read_csv(
                    io.BufferedReader(_Utf8Checked(stream, self), buffer_size=1 << 20),
                    dtype=object,
                    keep_default_na=False,
                    na_filter=False,
                    encoding="utf-8",
                    chunksize=chunk_rows,
                )
                for frame in frames:
                    columns = [str(name) for name in frame.columns]
                    records: list[Mapping[str, Any]] = [
                        dict(zip(columns, values, strict=True))
                        for values in frame.itertuples(index=False, name=None)
                    ]
                    yield _Chunk(records, list(range(row + 1, row + len(records) + 1)))
                    row += len(records)
        except pd.errors.EmptyDataError:
            return
        except pd.errors.ParserError as exc:
            raise self._parser_error(exc, row) from None
        except (OSError, EOFError, zlib.error) as exc:
            raise self._read_error(exc) from None

    def locate(self, wanted: Mapping[int, Mapping[str, Any]]) -> dict[int, int | None]:
        # pandas cannot tell on which line a record starts (quoted cells span lines), so the
        # file is re-read with the csv module. A line is reported only if that parse holds the
        # same values at that row; otherwise the caller falls back to "row N".
        found: dict[int, int | None] = dict.fromkeys(wanted)
        last = max(wanted)
        header: list[str] | None = None
        try:
            with closing(self._records()) as records:
                for row, (line, fields) in enumerate(records):
                    if header is None:
                        header = fields
                        continue
                    if row in wanted:
                        cells = dict(zip(header, fields, strict=False))
                        if all(cells.get(k, "") == v for k, v in wanted[row].items()):
                            found[row] = line
                    if row >= last:
                        break
        except (csv.Error, DataError, OSError, EOFError, zlib.error):
            pass  # the caller still has the row number
        return found

    def _records(self) -> Iterator[tuple[int, list[str]]]:
        """(first physical line, cells) of each non-blank record, header first."""
        limit = csv.field_size_limit()
        csv.field_size_limit(2**31 - 1)  # the default (128 KiB) is smaller than some outputs
        try:
            with self._open() as stream:
                text = io.TextIOWrapper(
                    io.BufferedReader(_Utf8Checked(stream, self)), encoding="utf-8-sig", newline=""
                )
                reader = csv.reader(text)
                while True:
                    line = reader.line_num + 1
                    fields = next(reader, None)
                    if fields is None:
                        return
                    # pandas skips empty and whitespace-only lines, but keeps `""` (['']).
                    if len(fields) > 1 or (fields and (fields[0].strip() or not fields[0])):
                        yield line, fields
        finally:
            csv.field_size_limit(limit)

    def _parser_error(self, exc: pd.errors.ParserError, rows_read: int) -> DataError:
        # pandas counts "lines" without the newlines inside quoted cells, so its numbers are
        # neither physical lines nor rows; find the record again with the csv module.
        message = str(exc).split("C error: ")[-1].strip()
        records = self._records()
        try:
            header = next(records)[1]
            if counts := re.search(r"Expected (\d+) fields in line \d+, saw (\d+)", message):
                saw = int(counts.group(2))
                for line, fields in records:
                    if len(fields) > len(header) and len(fields) == saw:
                        return DataError(
                            f"expected {len(header)} cells as in the header, found {saw}; "
                            "quote cells that contain commas",
                            path=str(self.path),
                            line=line,
                        )
            elif "EOF inside string" in message:
                last = None
                for line, _ in records:
                    last = line
                return DataError(
                    "a quoted cell starting on this line is never closed (missing '\"')",
                    path=str(self.path),
                    line=last,
                )
        except (csv.Error, StopIteration):
            pass
        finally:
            records.close()
        return DataError(f"malformed CSV after row {rows_read}: {message}", path=str(self.path))


class _ParquetSource(_Source):
    def columns(self) -> list[str]:
        try:
            return list(pq.read_schema(self.path).names)
        except (pa.ArrowException, OSError) as exc:
            raise DataError(f"not a readable Parquet file: {exc}", path=str(self.path)) from None

    def chunks(self, chunk_rows: int) -> Iterator[_Chunk]:
        row = 0
        try:
            # Without a read buffer pyarrow loads each column chunk whole: for a file written
            # by pandas (one row group of up to 1Mi rows) that is every output in the file.
            with pq.ParquetFile(self.path, buffer_size=1 << 20, pre_buffer=False) as table:
                for batch in table.iter_batches(batch_size=chunk_rows, use_threads=False):
                    frame = batch.to_pandas(integer_object_nulls=True)
                    columns = [str(name) for name in frame.columns]
                    records: list[Mapping[str, Any]] = [
                        dict(zip(columns, values, strict=True))
                        for values in frame.itertuples(index=False, name=None)
                    ]
                    yield _Chunk(records, list(range(row + 1, row + len(records) + 1)))
                    row += len(records)
        except (pa.ArrowException, OSError) as exc:
            raise DataError(
                f"not a readable Parquet file (after row {row}): {exc}", path=str(self.path)
            ) from None


class _Utf8Checked(io.RawIOBase):
    """Passes bytes through unchanged, failing with the line and byte position of the first
    invalid UTF-8: pandas' own decoding error names only an offset into its read buffer."""

    def __init__(self, raw: IO[bytes], source: _Source) -> None:
        self._raw = raw
        self._source = source
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._offset = 0
        self._lines = 0
        self._line_start = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(len(buffer))
        pending = self._decoder.getstate()[0]  # the start of a character split across reads
        try:
            self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            bad = self._offset - len(pending) + exc.start
            before = data[: max(0, bad - self._offset)]
            newline = before.rfind(b"\n")
            line_start = self._offset + newline + 1 if newline >= 0 else self._line_start
            line = self._lines + before.count(b"\n") + 1
            raise _not_utf8(
                self._source, line, bad - line_start + 1, (pending + data)[exc.start], bad
            ) from None
        newline = data.rfind(b"\n")
        if newline >= 0:
            self._line_start = self._offset + newline + 1
        self._lines += data.count(b"\n")
        self._offset += len(data)
        buffer[: len(data)] = data
        return len(data)


def _not_utf8(source: _Source, line: int, column: int, byte: int, offset: int) -> DataError:
    whole = "the decompressed data" if source.gzipped else "the file"
    return DataError(
        f"not valid UTF-8: byte 0x{byte:02x} at byte {column} of the line (byte {offset + 1} "
        f"of {whole}); save the file as UTF-8",
        path=str(source.path),
        line=line,
    )


def _open_source(path: str | Path) -> _Source:
    path = Path(path)
    name = path.name.lower()
    base = name.removesuffix(".gz")
    source: _Source
    if base.endswith((".jsonl", ".ndjson")):
        source = _JsonlSource(path)
    elif base.endswith(".csv"):
        source = _CsvSource(path)
    elif name.endswith(".parquet"):
        source = _ParquetSource(path)
    else:
        hint = (
            " (JSON Lines files, one object per line, end in .jsonl)"
            if base.endswith(".json")
            else ""
        )
        suffix = "".join(path.suffixes[-2:]) or "no extension"
        raise DataError(
            f"unsupported file type ({suffix}): expected {SUPPORTED_FORMATS}{hint}",
            path=str(path),
        )
    if not path.exists():
        raise DataError("file not found", path=str(path))
    if not path.is_file():
        raise DataError("not a file (a directory?)", path=str(path))
    if path.stat().st_size == 0:
        raise DataError("empty file: expected rows", path=str(path))
    return source
