"""The file readers behind `judge.inputs.tables`: one `Source` per table file, yielding chunks of
records
and saying where a record came from (line or row), and turning a `Problem` in a record into a
`DataError` that names that place.

How each format is read, and why:
- CSV goes through `pandas.read_csv` with every cell kept as the exact text of the file
  (`dtype=object`, `na_filter=False`): otherwise pandas turns item id "007" into 7 and an output
  reading "NA" or "null" into a missing value.
- Parquet goes through pyarrow's batch reader (pandas' own Parquet engine, which cannot stream)
  and `to_pandas`, with integer columns kept as Python ints even when nulls are present (pandas
  would make item id 3 a float and then "3.0").
- JSONL lines are parsed one by one with the `json` module instead of `pandas.read_json`, which
  parses a whole chunk at once and so cannot name the line that is malformed, not UTF-8, or
  holds a bad value. `parse_json` refuses what `json.loads` lets through: keys given twice,
  deep nesting, lone surrogates.
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
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from judge.errors import DataError
from judge.untrusted import Problem, parse_json

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

TABLE_SUFFIXES = (".jsonl.gz", ".ndjson.gz", ".csv.gz", ".jsonl", ".ndjson", ".csv", ".parquet")
"""The file names a table may have: the format is read from the name."""


def table_suffix(path: Path) -> str:
    """The format a table's name says (`.jsonl`, `.ndjson`, `.csv`, each optionally `.gz`, or
    `.parquet`), lower case; `DataError` for any other name."""
    name = path.name.lower()
    for suffix in TABLE_SUFFIXES:
        if name.endswith(suffix):
            return suffix
    raise DataError("unsupported file type: expected .jsonl, .csv or .parquet", path=str(path))


def is_pandas_missing(value: Any) -> bool:
    """Whether `value` is pandas' NA or NaT. pandas is imported only by the CSV and Parquet
    readers (its import costs most of a second at start-up), and no value can be either
    before it is."""
    pd = sys.modules.get("pandas")
    return pd is not None and (value is pd.NA or value is pd.NaT)


def is_sequence(value: Any) -> bool:
    """Whether `value` is a list as the readers deliver one: a list (JSONL) or a numpy array
    (Parquet list columns); tuples count too."""
    return isinstance(value, list | tuple | np.ndarray)


def describe(value: Any) -> str:
    """How an error message names a value read from a file: "null", "the number 3",
    "the text 'abc'", "a list", ..."""
    if value is None or is_pandas_missing(value):
        return "null"
    if isinstance(value, float) and math.isnan(value):
        return "a missing value (NaN)"
    if isinstance(value, bool | np.bool_):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, numbers.Number):
        number = str(value)
        return f"the number {number if len(number) <= 40 else number[:37] + '...'}"
    if isinstance(value, str):
        if not value:
            return "an empty string"
        clipped = value if len(value) <= 40 else value[:37] + "..."
        return f"the text {clipped!r}"
    if isinstance(value, Mapping):
        return "an object"
    if is_sequence(value):
        return "a list"
    return f"a value of type {type(value).__name__}"


@dataclass
class Chunk:
    """Consecutive records of one file, as `Source.chunks` yields them."""

    records: list[Mapping[str, Any]]
    positions: list[int]
    """Per record: its physical line (JSONL) or 1-based data row (CSV, Parquet)."""


class Source:
    """One input file: yields chunks of records and says where a record came from."""

    encoded = True
    """Chat messages arrive as JSON-encoded text (CSV, Parquet) rather than as lists."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.gzipped = path.name.lower().endswith(".gz")

    def columns(self) -> list[str] | None:
        """The header, or None when each record has its own keys (JSONL)."""
        return None

    def chunks(self, chunk_rows: int) -> Iterator[Chunk]:
        raise NotImplementedError

    def locate(self, wanted: Mapping[int, Mapping[str, Any]]) -> dict[int, int | None]:
        """Physical line of each wanted position, None where it cannot be told for certain.
        `wanted` maps a position to column values the record there must hold."""
        return dict.fromkeys(wanted)

    def error(self, position: int, record: Mapping[str, Any], problem: Problem) -> DataError:
        """`problem` in `record` at `position`, named by its line, or by its row when the line
        cannot be told for certain."""
        return self.error_at(position, self.locate({position: record})[position], problem)

    def error_at(self, position: int, line: int | None, problem: Problem) -> DataError:
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
        problem = Problem(
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


MAX_LINE_BYTES = 32 * 2**20
"""The longest JSONL line read (32 MiB): a record is one item or one response, and a text of
that size is past every judge's context window (about 4 MB for a million tokens); a longer
line is a file that is not JSON Lines (one array, no newlines) or a mistake, refused before it
is held in memory whole."""


class JsonlSource(Source):
    """A JSON Lines file (`.jsonl`, `.ndjson`, optionally `.gz`): one object per line."""

    encoded = False

    def locate(self, wanted: Mapping[int, Mapping[str, Any]]) -> dict[int, int | None]:
        return {position: position for position in wanted}

    def chunks(self, chunk_rows: int) -> Iterator[Chunk]:
        try:
            with self._open() as stream:
                yield from self._chunks(stream, chunk_rows)
        except (OSError, EOFError, zlib.error) as exc:
            raise self._read_error(exc) from None

    def _chunks(self, stream: IO[bytes], chunk_rows: int) -> Iterator[Chunk]:
        records: list[Mapping[str, Any]] = []
        positions: list[int] = []
        offset = 0
        number = 0
        while raw := stream.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise DataError(
                    f"a line longer than {MAX_LINE_BYTES // 2**20} MiB: each line must be one "
                    "JSON object (an item or a response), and no judge reads a text that long",
                    path=str(self.path),
                    line=number,
                )
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
                record = parse_json(text)
            except Problem as problem:
                raise self.error_at(number, number, problem) from None
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"malformed JSON: {exc.msg} at column {exc.colno}; each line must be one "
                    "JSON object",
                    path=str(self.path),
                    line=number,
                ) from None
            if not isinstance(record, dict):
                raise DataError(
                    f"expected a JSON object per line, found {describe(record)}",
                    path=str(self.path),
                    line=number,
                )
            records.append(record)
            positions.append(number)
            if len(records) >= chunk_rows:
                yield Chunk(records, positions)
                records, positions = [], []
        if records:
            yield Chunk(records, positions)


class CsvSource(Source):
    """A CSV file (`.csv`, optionally `.gz`) with a header line."""

    def columns(self) -> list[str]:
        try:
            with closing(self._records()) as records:
                for _, fields in records:
                    return fields
        except csv.Error as exc:
            raise DataError(f"malformed CSV header: {exc}", path=str(self.path)) from None
        raise DataError("empty file: expected a header line and rows", path=str(self.path))

    def chunks(self, chunk_rows: int) -> Iterator[Chunk]:
        import pandas as pd

        row = 0
        try:
            with self._open() as stream:
                frames = pd.read_csv(
                    io.BufferedReader(Utf8Checked(stream, self), buffer_size=1 << 20),
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
                    yield Chunk(records, list(range(row + 1, row + len(records) + 1)))
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
                    io.BufferedReader(Utf8Checked(stream, self)), encoding="utf-8-sig", newline=""
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


class ParquetSource(Source):
    """A Parquet file (`.parquet`), read one record batch at a time."""

    def columns(self) -> list[str]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(self.path).names)
        except (pa.ArrowException, OSError) as exc:
            raise DataError(f"not a readable Parquet file: {exc}", path=str(self.path)) from None

    def chunks(self, chunk_rows: int) -> Iterator[Chunk]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        row = 0
        try:
            # Without a read buffer pyarrow loads each column chunk whole: for a file written
            # by pandas (one row group of up to 1Mi rows) that is every output in the file.
            with pq.ParquetFile(self.path, buffer_size=1 << 20, pre_buffer=False) as table:
                for batch in table.iter_batches(batch_size=chunk_rows, use_threads=False):
                    try:
                        records = _batch_records(batch)
                    except UnicodeDecodeError:
                        raise self._not_utf8(batch, row) from None
                    yield Chunk(records, list(range(row + 1, row + len(records) + 1)))
                    row += len(records)
        except (pa.ArrowException, OSError) as exc:
            raise DataError(
                f"not a readable Parquet file (after row {row}): {exc}", path=str(self.path)
            ) from None

    def _not_utf8(self, batch: pa.RecordBatch, rows_before: int) -> DataError:
        """The first text cell of `batch` that is not UTF-8 (pyarrow writes such files when
        given raw buffers; they fail only when converted)."""
        import pyarrow as pa

        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            try:
                column.validate(full=True)
            except pa.ArrowInvalid as exc:
                index = re.search(r"string index (\d+)", str(exc))
                return DataError(
                    "not valid UTF-8 text; save the file with UTF-8 strings",
                    path=str(self.path),
                    row=rows_before + 1 + int(index.group(1)) if index else None,
                    field=name,
                )
        return DataError(
            f"not valid UTF-8 text after row {rows_before}; save the file with UTF-8 strings",
            path=str(self.path),
        )


def _batch_records(batch: pa.RecordBatch) -> list[Mapping[str, Any]]:
    frame = batch.to_pandas(integer_object_nulls=True)
    columns = [str(name) for name in frame.columns]
    return [
        dict(zip(columns, values, strict=True))
        for values in frame.itertuples(index=False, name=None)
    ]


class Utf8Checked(io.RawIOBase):
    """Passes bytes through unchanged, failing with the line and byte position of the first
    invalid UTF-8: pandas' own decoding error names only an offset into its read buffer."""

    def __init__(self, raw: IO[bytes], source: Source) -> None:
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


def _not_utf8(source: Source, line: int, column: int, byte: int, offset: int) -> DataError:
    whole = "the decompressed data" if source.gzipped else "the file"
    return DataError(
        f"not valid UTF-8: byte 0x{byte:02x} at byte {column} of the line (byte {offset + 1} "
        f"of {whole}); save the file as UTF-8",
        path=str(source.path),
        line=line,
    )


class RenamedSource(Source):
    """A source whose columns carry the user's names (`data.columns`): each record is read
    under the pipeline's names (`item_id`, `system`, `output`, ...), and an error names the
    column as the file spells it. `names` maps a pipeline name to the user's column."""

    def __init__(self, inner: Source, names: Mapping[str, str]) -> None:
        super().__init__(inner.path)
        self.inner = inner
        self.encoded = inner.encoded
        self.names = dict(names)
        self.canonical = {column: name for name, column in names.items()}
        # A file column named like a pipeline name that another column stands for would
        # give one record two values for it.
        self.shadowed = frozenset(name for name in names if name not in self.canonical)

    def columns(self) -> list[str] | None:
        columns = self.inner.columns()
        if columns is None:
            return None
        self._check(columns, None)
        return [self.canonical.get(column, column) for column in columns]

    def chunks(self, chunk_rows: int) -> Iterator[Chunk]:
        canonical, check = self.canonical, self.inner.columns() is None
        for chunk in self.inner.chunks(chunk_rows):
            if check:
                for position, record in zip(chunk.positions, chunk.records, strict=True):
                    self._check(record, position)
            records = [{canonical.get(k, k): v for k, v in r.items()} for r in chunk.records]
            yield Chunk(records, chunk.positions)

    def locate(self, wanted: Mapping[int, Mapping[str, Any]]) -> dict[int, int | None]:
        names = self.names
        return self.inner.locate(
            {p: {names.get(k, k): v for k, v in record.items()} for p, record in wanted.items()}
        )

    def error_at(self, position: int, line: int | None, problem: Problem) -> DataError:
        field = problem.field
        if field in self.names:
            column = self.names[field]
            message = problem.message.replace(repr(field), repr(column))
            problem = Problem(f"{message} (data.columns.{field}: {column!r})", column)
        return self.inner.error_at(position, line, problem)

    def _check(self, keys: Iterable[str], position: int | None) -> None:
        clash = next((key for key in keys if key in self.shadowed), None)
        if clash is None:
            return
        problem = Problem(
            f"column {clash!r} is in the file, and data.columns.{clash} names "
            f"{self.names[clash]!r} as that column: rename one, or map {clash!r} itself",
            clash,
        )
        if position is None:
            raise DataError(problem.message, path=str(self.path), field=clash)
        raise self.inner.error_at(position, position, problem)
