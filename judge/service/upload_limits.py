"""What an upload may expand to, checked after it is saved and before anything reads it.

The request body limit bounds the bytes on the wire, not what they stand for: a 100 KB
`responses.jsonl.gz` can hold a 100 MB line, and a small Parquet file a dictionary-encoded
column whose one value repeats a million times. The service prepares a run in its own process,
so such a file would take the server's memory. Here each file is read as the library would see
it, in bounded chunks, and counted:

- `.gz` text is stream-decompressed (never held whole), plain text read as it is: the bytes
  count against `max_expanded_bytes`, and no line may pass `max_line_bytes`;
- Parquet: the footer's uncompressed sizes first, then the rows decoded a batch at a time with
  string columns kept dictionary-encoded, so what each value expands to is counted without
  being built; no single value may pass `max_line_bytes`.

Over a limit: a 413 problem naming the file (and line, or row and column).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import IO

from judge.errors import DataError
from judge.service.problems import ProblemError
from judge.service.settings import ServiceSettings

_CHUNK = 1 << 20
_PARQUET_BATCH_ROWS = 4096


class ExpansionBudget:
    """The decompressed bytes one request may still bring (a submission's files together)."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.limit = settings.max_expanded_bytes
        self.max_line = settings.max_line_bytes
        self.used = 0

    def check(self, path: Path, name: str) -> None:
        """Count the saved upload `path` (the client's `name`); 413 when over a limit. A file
        the check cannot read (not gzip, not Parquet) is left to the library's own error."""
        lower = path.name.lower()
        if lower.endswith(".parquet"):
            self._parquet(path, name)
        elif lower.endswith(".gz"):
            try:
                with gzip.open(path, "rb") as fh:
                    self._text(fh, name)
            except (OSError, EOFError, zlib.error) as exc:
                raise DataError(
                    f"cannot read this gzip-compressed file: {exc}", path=str(path)
                ) from None
        else:
            with path.open("rb") as fh:
                self._text(fh, name)

    def _spend(self, size: int, name: str) -> None:
        self.used += size
        if self.used > self.limit:
            raise ProblemError(
                413,
                "expanded-too-large",
                "Upload too large once decompressed",
                f"{name}: the uploaded data is larger than this server's limit of "
                f"{self.limit / (1 << 20):g} MB once decompressed (the files of one request "
                "together); send less data per run",
                file=name,
            )

    def _too_long(
        self,
        name: str,
        *,
        line: int | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> ProblemError:
        where = f"line {line}" if line is not None else f"row {row}, column {field!r}"
        what = "line" if line is not None else "value"
        return ProblemError(
            413,
            "line-too-long",
            "Line too long",
            f"{name}: {where}: the {what} is longer than this server's limit of "
            f"{self.max_line / 1024:g} KB",
            file=name,
            line=line,
            row=row,
            field=field,
        )

    def _text(self, fh: IO[bytes], name: str) -> None:
        line = 1  # the line `current` bytes of which were read so far
        current = 0
        while chunk := fh.read(_CHUNK):
            self._spend(len(chunk), name)
            parts = chunk.split(b"\n")
            current += len(parts[0])
            if current > self.max_line:
                raise self._too_long(name, line=line)
            if len(parts) == 1:
                continue
            for offset, part in enumerate(parts[1:-1], start=1):
                if len(part) > self.max_line:
                    raise self._too_long(name, line=line + offset)
            line += len(parts) - 1
            current = len(parts[-1])
            if current > self.max_line:
                raise self._too_long(name, line=line)

    def _parquet(self, path: Path, name: str) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        try:
            meta = pq.ParquetFile(path).metadata
            schema = pq.read_schema(path)
        except (pa.ArrowException, OSError, ValueError):
            return  # not Parquet: `prepare_run` / `load_table` say so in their words
        footer = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if self.used + footer > self.limit:
            self._spend(footer, name)  # refused before a page is decompressed
        # Dictionary-encoded pages are small whatever their values expand to: decode the rows
        # with string columns kept as dictionaries, and count the values' lengths.
        strings = [
            f.name
            for f in schema
            if pa.types.is_string(f.type)
            or pa.types.is_large_string(f.type)
            or pa.types.is_binary(f.type)
            or pa.types.is_large_binary(f.type)
        ]
        rows = 0
        try:
            batches = pq.ParquetFile(path, read_dictionary=strings).iter_batches(
                batch_size=_PARQUET_BATCH_ROWS
            )
            for batch in batches:
                for column_name, column in zip(batch.schema.names, batch.columns, strict=True):
                    if pa.types.is_dictionary(column.type):
                        lengths = pc.take(pc.binary_length(column.dictionary), column.indices)
                        longest = pc.max(lengths).as_py() or 0
                        if longest > self.max_line:
                            at = pc.index(pc.greater(lengths, self.max_line), True).as_py()
                            raise self._too_long(name, row=rows + at + 1, field=column_name)
                        self._spend(int(pc.sum(lengths).as_py() or 0), name)
                    else:
                        self._spend(column.nbytes, name)
                rows += batch.num_rows
        except (pa.ArrowException, OSError, ValueError):
            return  # unreadable rows: the library's loader reports them
