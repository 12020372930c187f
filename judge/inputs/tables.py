"""Load the items and responses tables into `Item` and `Response` records.

Formats: JSONL (`.jsonl`, `.ndjson`) and CSV (`.csv`), each optionally gzip-compressed (`.gz`),
and Parquet (`.parquet`). Every row becomes a record or a `DataError` naming the file, where
the row is (JSONL: its physical line; CSV: the physical line it starts on, or "row N" when that
cannot be confirmed; Parquet: "row N"), the field, and what was expected instead of what was
found. Nothing is dropped silently.

Responses stream in chunks of `chunk_rows`: memory holds one chunk plus ~16 bytes per response
already read (duplicate detection, `judge.inputs.duplicates`), never the file or every record.

How each format is read, and why: see `judge.inputs.sources`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar, runtime_checkable

import numpy as np

from judge.errors import DataError
from judge.inputs.cells import MISSING, amount, count, described, identifier, is_blank, messages
from judge.inputs.duplicates import SeenIds, SeenKeys, SeenPairs
from judge.inputs.sources import (
    CsvSource,
    JsonlSource,
    ParquetSource,
    Problem,
    RenamedSource,
    Source,
    is_sequence,
)
from judge.types import ChatMessage, Item, Response

__all__ = [
    "SUPPORTED_FORMATS",
    "ItemLookup",
    "ItemRow",
    "ResponseRow",
    "iter_item_rows",
    "iter_items",
    "iter_response_rows",
    "iter_responses",
    "load_items",
    "load_responses",
]

SUPPORTED_FORMATS = (
    "JSONL (.jsonl, .ndjson) or CSV (.csv), optionally gzip-compressed (.gz), or Parquet (.parquet)"
)

_ITEM_REQUIRED = ("item_id", "prompt")
_ITEM_COLUMNS = frozenset((*_ITEM_REQUIRED, "reference"))
_RESPONSE_REQUIRED = ("item_id", "system", "output")
_RESPONSE_KNOWN = (*_RESPONSE_REQUIRED, "context", "latency_s", "cost_usd", "tokens")
_RESPONSE_COLUMNS = frozenset(_RESPONSE_KNOWN)
_ITEMS_CHUNK_ROWS = 10_000


class ResponseRow(NamedTuple):
    """A checked row of a responses table, as `Response` holds it but without building the
    model: a streaming prepare stores its fields as they are (`judge.run.staging`)."""

    item_id: str
    system: str
    output: str
    context: tuple[ChatMessage, ...]
    latency_s: float | None
    cost_usd: float | None
    tokens: int | None


class ItemRow(NamedTuple):
    """A checked row of an items table, as `Item` holds it but without building the model
    (see `ResponseRow`)."""

    item_id: str
    prompt: str | tuple[ChatMessage, ...]
    reference: str | None
    strata: dict[str, str]


@runtime_checkable
class ItemLookup(Protocol):
    """Item ids kept outside memory (an index), looked up a batch at a time: `among` returns
    which of `ids` are item ids. One query per batch instead of one per response."""

    def among(self, ids: set[str]) -> Container[str]: ...


_Row = TypeVar("_Row", ItemRow, ResponseRow)
_BATCH_ROWS = 4_096


# --------------------------------------------------------------------------- public API


def load_items(path: str | Path, *, columns: Mapping[str, str] | None = None) -> dict[str, Item]:
    """Read an items table: `item_id` and `prompt` required, `reference` optional, every other
    column a stratum. Returns the items by id, in file order. `columns`: the table's own names
    for the pipeline's columns (`data.columns`, e.g. `{"item_id": "ticket_id"}`)."""
    return {item.item_id: item for item in iter_items(path, columns=columns)}


def iter_items(
    path: str | Path,
    *,
    seen: SeenKeys | None = None,
    columns: Mapping[str, str] | None = None,
) -> Iterator[Item]:
    """Stream an items table as `Item`s, in file order (`load_items` holds them all). The path
    and format are checked at call time, rows while iterating: a `DataError` fails the whole
    load. `seen`: where repeated item ids are looked for (default: a set in memory; a
    streaming prepare keeps them in its index, `judge.inputs.duplicates.SeenInIndex`)."""
    rows = iter_item_rows(path, seen=seen, columns=columns)
    return (Item(**row._asdict()) for row in rows)


def iter_item_rows(
    path: str | Path,
    *,
    seen: SeenKeys | None = None,
    columns: Mapping[str, str] | None = None,
) -> Iterator[ItemRow]:
    """`iter_items` as checked `ItemRow`s (see `iter_response_rows`)."""
    source = _open_source(path, _table_names(columns, _ITEM_COLUMNS))
    return _stream_items(source, seen if seen is not None else SeenIds())


def _stream_items(source: Source, seen: SeenKeys) -> Iterator[ItemRow]:
    columns = source.columns()
    if columns is not None:
        _check_header(source, columns, _ITEM_REQUIRED, None, "an items")

    def parse(record: Mapping[str, Any]) -> ItemRow:
        if columns is None:
            _check_keys(record, _ITEM_REQUIRED, None, "an items")
        return _item(record, encoded=source.encoded)

    count = 0
    for chunk in source.chunks(_ITEMS_CHUNK_ROWS):
        items = _check_batch(source, chunk.records, chunk.positions, parse, seen, ("item_id",))
        count += len(items)
        yield from items
    if not count:
        raise DataError("no rows: expected at least one item", path=str(source.path))


def iter_responses(
    path: str | Path,
    item_ids: Container[str] | ItemLookup,
    *,
    allow_empty_outputs: bool = False,
    chunk_rows: int = 50_000,
    seen: SeenKeys | None = None,
    columns: Mapping[str, str] | None = None,
) -> Iterator[Response]:
    """Stream a responses table (`item_id`, `system`, `output` required; `context`,
    `latency_s`, `cost_usd`, `tokens` optional) as `Response`s, in file order.

    The path and format are checked at call time; row errors surface while iterating, so a
    consumer that sees a `DataError` must treat the whole load as failed.
    """
    rows = iter_response_rows(
        path,
        item_ids,
        allow_empty_outputs=allow_empty_outputs,
        chunk_rows=chunk_rows,
        seen=seen,
        columns=columns,
    )
    return (Response(**row._asdict()) for row in rows)


def iter_response_rows(
    path: str | Path,
    item_ids: Container[str] | ItemLookup,
    *,
    allow_empty_outputs: bool = False,
    chunk_rows: int = 50_000,
    seen: SeenKeys | None = None,
    columns: Mapping[str, str] | None = None,
) -> Iterator[ResponseRow]:
    """`iter_responses` as checked `ResponseRow`s, for a consumer that stores the fields
    rather than the records (building a `Response` costs more than checking its row)."""
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    source = _open_source(path, _table_names(columns, _RESPONSE_COLUMNS))
    seen = seen if seen is not None else SeenPairs()
    return _stream_responses(source, item_ids, allow_empty_outputs, chunk_rows, seen)


def load_responses(
    path: str | Path,
    item_ids: Container[str],
    *,
    allow_empty_outputs: bool = False,
    columns: Mapping[str, str] | None = None,
) -> list[Response]:
    """Every response of a table at once: `iter_responses` for tables that fit in memory."""
    rows = iter_responses(path, item_ids, allow_empty_outputs=allow_empty_outputs, columns=columns)
    return list(rows)


def _table_names(columns: Mapping[str, str] | None, table: frozenset[str]) -> dict[str, str]:
    """The part of a `data.columns` mapping that names this table's columns."""
    return {name: column for name, column in (columns or {}).items() if name in table}


def _open_source(path: str | Path, names: Mapping[str, str] | None = None) -> Source:
    path = Path(path)
    name = path.name.lower()
    base = name.removesuffix(".gz")
    source: Source
    if base.endswith((".jsonl", ".ndjson")):
        source = JsonlSource(path)
    elif base.endswith(".csv"):
        source = CsvSource(path)
    elif name.endswith(".parquet"):
        source = ParquetSource(path)
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
    # Only a real renaming costs a pass over each record's keys.
    if names and any(name != column for name, column in names.items()):
        return RenamedSource(source, names)
    return source


# --------------------------------------------------------------------------- responses


def _stream_responses(
    source: Source,
    item_ids: Container[str] | ItemLookup,
    allow_empty: bool,
    chunk_rows: int,
    seen: SeenKeys,
) -> Iterator[ResponseRow]:
    columns = source.columns()
    if columns is not None:
        _check_header(source, columns, _RESPONSE_REQUIRED, _RESPONSE_COLUMNS, "a responses")
    lookup = item_ids if isinstance(item_ids, ItemLookup) else None
    known: Container[str] = () if lookup is not None else item_ids  # type: ignore[assignment]

    def parse(record: Mapping[str, Any]) -> ResponseRow:
        if columns is None:
            _check_keys(record, _RESPONSE_REQUIRED, _RESPONSE_COLUMNS, "a responses")
        return _response(record, known, allow_empty, source.encoded)

    count = 0
    for chunk in source.chunks(chunk_rows):
        # Responses are checked and yielded a few thousand at a time: a Response weighs ~1 KB
        # besides its text, so holding a whole chunk of them would double the peak memory.
        for start in range(0, len(chunk.records), _BATCH_ROWS):
            records = chunk.records[start : start + _BATCH_ROWS]
            positions = chunk.positions[start : start + _BATCH_ROWS]
            if lookup is not None:
                known = lookup.among(_named_items(records))
            responses = _check_batch(source, records, positions, parse, seen, ("item_id", "system"))
            count += len(responses)
            yield from responses
    if count == 0:
        raise DataError("no rows: expected at least one response", path=str(source.path))


def _check_batch(
    source: Source,
    records: list[Mapping[str, Any]],
    positions: list[int],
    parse: Callable[[Mapping[str, Any]], _Row],
    seen: SeenKeys,
    key: tuple[str, ...],
) -> list[_Row]:
    """`records` parsed, in file order, or the first error among them: a bad row, or a row
    whose `key` columns repeat an earlier one's."""
    rows: list[_Row] = []
    failure: tuple[int, Mapping[str, Any], Problem] | None = None
    for record, position in zip(records, positions, strict=True):
        try:
            rows.append(parse(record))
        except Problem as problem:
            failure = (position, record, problem)
            break
    # Rows before a bad one are checked for duplicates first, so the error reported is always
    # the first one in file order.
    parts = attrgetter(*key)
    keys = (
        [seen.key(*parts(row)) for row in rows]
        if len(key) > 1
        else [seen.key(parts(row)) for row in rows]
    )
    duplicate = seen.add(keys, positions[: len(keys)], rows)
    if duplicate is not None:
        index, earlier = duplicate
        raise source.duplicate(positions[index], records[index], earlier, key)
    if failure is not None:
        raise source.error(*failure) from None
    return rows


def _named_items(records: list[Mapping[str, Any]]) -> set[str]:
    """The item ids a batch of records names (those `identifier` accepts)."""
    ids: set[str] = set()
    for record in records:
        value = record.get("item_id", MISSING)
        if type(value) is str:
            ids.add(value)  # a blank one is looked up in vain, then refused by `_response`
        else:
            with contextlib.suppress(Problem):
                ids.add(identifier(value))
    return ids


def _response(
    record: Mapping[str, Any], item_ids: Container[str], allow_empty: bool, encoded: bool
) -> ResponseRow:
    item_id = identifier(record.get("item_id", MISSING))
    if item_id not in item_ids:
        raise Problem(
            f"unknown item_id {item_id!r}: no item with this id in the items table "
            "(responses must answer items of that table)",
            "item_id",
        )
    system = record.get("system", MISSING)
    if not isinstance(system, str) or not system.strip():
        raise Problem(f"expected a system name (text), found {described(system)}", "system")
    output = record.get("output", MISSING)
    if not isinstance(output, str):
        raise Problem(f"expected the output as text, found {described(output)}", "output")
    if not allow_empty and not output.strip():
        raise Problem(
            "empty output (whitespace only counts as empty); to judge empty outputs as empty "
            "instead, pass allow_empty_outputs=True (config: data.allow_empty_outputs: true)",
            "output",
        )
    context = record.get("context")
    return ResponseRow(
        item_id,
        system,
        output,
        () if context is None or is_blank(context) else messages(context, encoded),
        amount(record.get("latency_s"), "latency_s"),
        amount(record.get("cost_usd"), "cost_usd"),
        count(record.get("tokens"), "tokens"),
    )


# --------------------------------------------------------------------------- items


def _item(record: Mapping[str, Any], *, encoded: bool) -> ItemRow:
    item_id = identifier(record.get("item_id", MISSING))
    prompt = _prompt(record.get("prompt", MISSING), encoded)
    reference = record.get("reference")
    if is_blank(reference):
        reference = None
    elif not isinstance(reference, str):
        raise Problem(
            f"expected the reference answer as text, found {described(reference)}", "reference"
        )
    strata = {}
    for name, value in record.items():
        if name not in _ITEM_COLUMNS and not is_blank(value):
            strata[name] = _stratum(value)
    return ItemRow(item_id, prompt, reference, strata)


def _prompt(value: Any, encoded: bool) -> str | tuple[ChatMessage, ...]:
    if isinstance(value, str):
        if encoded and _CHAT_JSON.match(value):
            return messages(value, encoded, prompt=True)
        if not value.strip():
            raise Problem(
                "expected a prompt (text or chat messages), found an empty string", "prompt"
            )
        return value
    if is_sequence(value):
        return messages(value, encoded, prompt=True)
    raise Problem(
        f"expected a prompt: text or a list of chat messages, found {described(value)}", "prompt"
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


# --------------------------------------------------------------------------- header checks


def _check_header(
    source: Source,
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
    except Problem as problem:
        message, field, found = problem.message, problem.field, columns
        if isinstance(source, RenamedSource):
            found = source.inner.columns() or columns
            if field in source.names:
                column = source.names[field]
                message = message.replace(repr(field), repr(column))
                message += f" (data.columns.{field})"
                field = column
        raise DataError(
            f"{message} (found columns: {', '.join(map(str, found))})",
            path=str(source.path),
            field=field,
        ) from None


def _check_keys(
    record: Mapping[str, Any],
    required: Sequence[str],
    known: frozenset[str] | None,
    table: str,
) -> None:
    for name in required:
        if name not in record:
            raise Problem(
                f"missing required column {name!r}: {table} table needs {', '.join(required)}",
                name,
            )
    if known is not None and not known.issuperset(record):
        unknown = next(name for name in record if name not in known)
        raise Problem(
            f"unknown column {unknown!r}; the known columns are {', '.join(_RESPONSE_KNOWN)}",
            unknown,
        )
