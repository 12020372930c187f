"""The judgments files written as rows arrive: `judgments.jsonl` and `judgments.parquet` (in row
groups), rows ordered by judge, item, then pair (or system), from rows that arrive an item at a
time with every judge's rows of that item together.

Each judge's rows go to spool files of their own as they arrive (JSON lines, and Arrow record
batches for the Parquet file); `finish` joins the spools in judge order into the two files,
each written beside its target and renamed over it, so a crash at any moment leaves the old
files (and a spool directory the next writer clears). Memory: a batch of rows per judge, and
one row group while the Parquet file is written.

Parquet types come from the judgment record's fields (`judge.analysis.aggregate`): text columns as
large strings, numbers as double or int64, flags as bool, a mapping as its JSON text. A
column no row fills is written with Arrow's null type, as pandas, which wrote these files
before, typed it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

ROW_GROUP_ROWS = 50_000
"""Rows per Parquet row group."""
_BATCH_ROWS = 2_000
"""Rows a judge's spool holds in memory before they become an Arrow record batch."""


def arrow_schema(record: type) -> pa.Schema:
    """The Parquet columns of a judgment dataclass, in field order."""
    import pyarrow as pa

    types = {
        "str": pa.large_string(),
        "Outcome": pa.large_string(),
        "float": pa.float64(),
        "int": pa.int64(),
        "bool": pa.bool_(),
        "dict[str, float]": pa.large_string(),  # JSON text (`_JSON`)
    }
    fields = []
    for f in dataclasses.fields(record):
        base = str(f.type).removesuffix(" | None")
        if base not in types:
            raise TypeError(f"{record.__name__}.{f.name}: no Parquet type for {f.type!r}")
        fields.append(pa.field(f.name, types[base]))
    return pa.schema(fields)


def _json_columns(record: type) -> set[str]:
    return {f.name for f in dataclasses.fields(record) if str(f.type).startswith("dict")}


class _Spool:
    """One judge's rows so far: JSON lines in a file, and Arrow batches in another."""

    def __init__(self, directory: Path, index: int, parquet: bool, stack: ExitStack) -> None:
        self.lines_path = directory / f"{index}.jsonl"
        self.lines: IO[str] = stack.enter_context(self.lines_path.open("w", encoding="utf-8"))
        self.batches_path = directory / f"{index}.arrow" if parquet else None
        self.rows: list[dict[str, Any]] = []
        self.batches: Any = None  # an Arrow stream writer, opened with the first batch


class JudgmentsWriter:
    """Writes one judgments file (JSONL, and optionally Parquet); `add` rows, then `finish`.
    Rows of one judge must arrive in their final order; judges may interleave."""

    def __init__(
        self,
        jsonl: Path,
        parquet: Path | None,
        spool: Path,
        record: type,
        *,
        row_group_rows: int = ROW_GROUP_ROWS,
    ) -> None:
        self._jsonl, self._parquet, self._dir = jsonl, parquet, spool
        self._record = record
        self._row_group_rows = row_group_rows
        self._spools: dict[str, _Spool] = {}
        self._stack = ExitStack()
        self._schema: pa.Schema | None = None  # imported with the first batch
        self._filled: set[str] = set()
        """Columns some row holds a value in."""
        spool.mkdir(parents=True)

    def add(self, row: dict[str, Any]) -> None:
        judge = row["judge"]
        spool = self._spools.get(judge)
        if spool is None:
            spool = _Spool(self._dir, len(self._spools), self._parquet is not None, self._stack)
            self._spools[judge] = spool
        spool.lines.write(json.dumps(row, ensure_ascii=False))
        spool.lines.write("\n")
        if spool.batches_path is not None:
            spool.rows.append(row)
            if len(spool.rows) >= _BATCH_ROWS:
                self._flush(spool)

    def drop(self, judge: str) -> None:
        """Leave `judge`'s rows out of the files."""
        spool = self._spools.pop(judge, None)
        if spool is not None:
            spool.rows = []

    @property
    def judges(self) -> list[str]:
        return sorted(self._spools)

    def finish(self) -> None:
        """Join the spools, in judge order, into the files (each replaced atomically)."""
        for spool in self._spools.values():
            self._flush(spool)
        self._stack.close()
        order = [self._spools[judge] for judge in sorted(self._spools)]
        tmp = self._jsonl.with_name(self._jsonl.name + ".tmp")
        with tmp.open("wb") as out:
            for spool in order:
                with spool.lines_path.open("rb") as lines:
                    shutil.copyfileobj(lines, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        if self._parquet is not None:
            self._write_parquet(order)
        os.replace(tmp, self._jsonl)

    def close(self) -> None:
        """Close the spools (they are removed with their directory by the caller)."""
        self._stack.close()

    def _flush(self, spool: _Spool) -> None:
        if not spool.rows or spool.batches_path is None:
            return
        import pyarrow as pa

        if self._schema is None:
            self._schema = arrow_schema(self._record)
        schema = self._schema
        columns = {name: [row[name] for row in spool.rows] for name in schema.names}
        for name in _json_columns(self._record):
            columns[name] = [json.dumps(value) for value in columns[name]]
        batch = pa.RecordBatch.from_pydict(columns, schema=schema)
        spool.rows = []
        self._filled.update(
            name
            for name, column in zip(schema.names, batch.columns, strict=True)
            if column.null_count < len(column)
        )
        if spool.batches is None:
            sink = self._stack.enter_context(pa.OSFile(str(spool.batches_path), "wb"))
            spool.batches = self._stack.enter_context(pa.ipc.new_stream(sink, schema))
        spool.batches.write_batch(batch)

    def _write_parquet(self, order: list[_Spool]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        assert self._parquet is not None
        tmp = self._parquet.with_name(self._parquet.name + ".tmp")
        if self._schema is None:  # no rows: no columns, as pandas wrote an empty table
            pq.write_table(pa.table({}), tmp)
            os.replace(tmp, self._parquet)
            return
        schema = pa.schema(
            f if f.name in self._filled else pa.field(f.name, pa.null()) for f in self._schema
        )
        size = self._row_group_rows
        with pq.ParquetWriter(tmp, schema) as writer:
            pending: list[pa.RecordBatch] = []
            held = 0
            for batch in _batches(order):
                pending.append(_typed(batch, schema))
                held += batch.num_rows
                while held >= size:
                    table = pa.Table.from_batches(pending, schema)
                    writer.write_table(table.slice(0, size), row_group_size=size)
                    rest = table.slice(size)
                    pending, held = rest.to_batches(), rest.num_rows
            if held:
                writer.write_table(pa.Table.from_batches(pending, schema), row_group_size=size)
        os.replace(tmp, self._parquet)


def _batches(order: list[_Spool]) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    for spool in order:
        if spool.batches_path is None or spool.batches is None:
            continue
        with pa.OSFile(str(spool.batches_path), "rb") as source:
            yield from pa.ipc.open_stream(source)


def _typed(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` with the columns no row filled as nulls of Arrow's null type."""
    import pyarrow as pa

    if batch.schema.equals(schema):
        return batch
    columns = [
        column if field.type == column.type else pa.nulls(len(column))
        for field, column in zip(schema, batch.columns, strict=True)
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)
