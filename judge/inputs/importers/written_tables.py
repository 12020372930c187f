"""What every importer writes: the project's own items and responses tables (JSONL, as
`judge.inputs.tables` reads them) and a report of what was written and what was not.

An importer hands the writer one record at a time (an item, then a response to it), or says
why a record cannot be imported (`Skip`, counted by reason: never a silent drop). The tables
are written to temporary files renamed at the end, so a failed import leaves no half table
that a run could mistake for a whole one.
"""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from judge.errors import DataError
from judge.files import write_json
from judge.inputs.duplicates import SeenPairs

ITEMS_FILE = "items.jsonl"
RESPONSES_FILE = "responses.jsonl"
REPORT_FILE = "import_report.json"
"""What an import writes into its output directory."""

_ITEM_COLUMNS = ("item_id", "prompt", "reference")
_FLUSH_ROWS = 4_096


class Skip(Exception):
    """A record that cannot be imported, and why (the reason is counted in the report)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Where:
    """Where a record came from, for error messages: a file and its line, sample or JSON
    path."""

    path: Path
    line: int | None = None
    field: str | None = None
    """A JSON path (`results.results[3]`) or a record's name (`sample 7, epoch 1`)."""

    def error(self, message: str, field: str | None = None) -> DataError:
        name = field if self.field is None else f"{self.field}.{field}" if field else self.field
        return DataError(message, path=str(self.path), line=self.line, field=name)

    def __str__(self) -> str:
        parts = [str(self.path)]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.field is not None:
            parts.append(self.field)
        return ", ".join(parts)


@dataclass
class ImportReport:
    """What one import read and wrote."""

    kind: str
    sources: list[str]
    """The files read."""
    out: Path
    items: int = 0
    responses: int = 0
    systems: dict[str, int] = field(default_factory=dict)
    """System -> responses written."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Why records were not imported -> how many."""
    notes: list[str] = field(default_factory=list)
    """What the reader noticed and the user should know (lossy mappings, empty outputs)."""
    empty_outputs: int = 0

    @property
    def items_file(self) -> Path:
        return self.out / ITEMS_FILE

    @property
    def responses_file(self) -> Path:
        return self.out / RESPONSES_FILE

    def lines(self) -> list[str]:
        """The report as `judge import` prints it."""
        out = [
            f"{self.kind}: read {len(self.sources)} file(s); wrote {self.items:,} items, "
            f"{self.responses:,} responses of {len(self.systems)} systems",
            f"  items:     {self.items_file}",
            f"  responses: {self.responses_file}",
        ]
        for system, count in sorted(self.systems.items()):
            out.append(f"  system {system}: {count:,} responses")
        skipped = sum(self.skipped.values())
        out.append(f"  skipped: {skipped:,} record(s)" + (":" if skipped else ""))
        for reason, count in sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"    {count:,} x {reason}")
        if self.empty_outputs:
            out.append(
                f"  {self.empty_outputs:,} empty output(s) written as they are: a run judges "
                "them only with data.allow_empty_outputs: true"
            )
        out += [f"  note: {note}" for note in self.notes]
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "sources": self.sources,
            "items": self.items,
            "responses": self.responses,
            "systems": self.systems,
            "skipped": self.skipped,
            "empty_outputs": self.empty_outputs,
            "notes": self.notes,
        }


class TableWriter:
    """Writes the items and responses of one import into `out` (created if needed).

    Items are written once each, at their first record; a later record of the same item must
    carry the same prompt and reference (logs of one task agree on them), else the import
    fails naming both places. A system answering one item twice fails the import too: which
    answer to judge is the user's choice, not the importer's."""

    def __init__(self, out: Path, kind: str, sources: Sequence[Path]) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.report = ImportReport(kind, [str(p) for p in sources], out)
        self._items_tmp = out / (ITEMS_FILE + ".tmp")
        self._responses_tmp = out / (RESPONSES_FILE + ".tmp")
        self._items_fh = self._items_tmp.open("w", encoding="utf-8")
        self._responses_fh = self._responses_tmp.open("w", encoding="utf-8")
        self._items: dict[str, tuple[bytes, Where]] = {}
        self._seen = SeenPairs()
        self._pending: list[tuple[int, int, Where, dict[str, Any]]] = []
        # Where each response came from, in 12 bytes (file, line or record number): a repeat
        # found later names the first place without a Where kept per response.
        self._files: list[Path] = []
        self._file_index: dict[Path, int] = {}
        self._origin_file = array("i")
        self._origin_line = array("q")
        self._has_line = array("b")
        self._records: Counter[int] = Counter()
        self._skips: Counter[str] = Counter()
        self._notes: dict[str, None] = {}
        self._count = 0

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self._finish()
        else:
            self._abandon()

    def item(
        self,
        item_id: str,
        prompt: str | list[dict[str, str]],
        where: Where,
        *,
        reference: str | None = None,
        strata: Mapping[str, str] | None = None,
    ) -> None:
        """Record an item (written at its first record, checked against it after)."""
        if isinstance(prompt, str) and not prompt.strip():
            raise Skip("empty prompt")
        digest = hashlib.blake2b(
            json.dumps([prompt, reference], ensure_ascii=False).encode(), digest_size=16
        ).digest()
        known = self._items.get(item_id)
        if known is not None:
            if known[0] != digest:
                raise where.error(
                    f"item {item_id!r} has another prompt or reference than at {known[1]}: "
                    "the files are not of one task (import them separately)"
                )
            return
        self._items[item_id] = (digest, where)
        row: dict[str, Any] = {"item_id": item_id, "prompt": prompt}
        if reference is not None and reference.strip():
            row["reference"] = reference
        for name, value in (strata or {}).items():
            # A stratum must not pass for one of the item's own columns.
            row[f"metadata_{name}" if name in _ITEM_COLUMNS else name] = value
        self._items_fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.report.items += 1

    def response(
        self,
        item_id: str,
        system: str,
        output: str,
        where: Where,
        *,
        latency_s: float | None = None,
        cost_usd: float | None = None,
        tokens: int | None = None,
    ) -> None:
        """Record `system`'s output for `item_id` (whose item is recorded already)."""
        if item_id not in self._items:
            raise AssertionError(f"response to {item_id!r} before its item")  # an importer bug
        if not system.strip():
            raise Skip("no system name")
        row: dict[str, Any] = {"item_id": item_id, "system": system, "output": output}
        for name, value in (("latency_s", latency_s), ("cost_usd", cost_usd), ("tokens", tokens)):
            if value is not None and value >= 0:
                row[name] = value
        if not output.strip():
            self.report.empty_outputs += 1
        file = self._file_index.setdefault(where.path, len(self._files))
        if file == len(self._files):
            self._files.append(where.path)
        self._records[file] += 1
        self._origin_file.append(file)
        self._origin_line.append(where.line if where.line is not None else self._records[file])
        self._has_line.append(where.line is not None)
        position = self._count
        self._count += 1
        self._pending.append((self._seen.key(item_id, system), position, where, row))
        if len(self._pending) >= _FLUSH_ROWS:
            self._flush()

    def strata(self, values: Mapping[str, Any] | None, what: str) -> dict[str, str]:
        """The text, number and boolean values of `values` (a record's metadata) as strata;
        any other value is left out and said once (`what` names the mapping)."""
        strata = {}
        for name, value in (values or {}).items():
            if name.startswith("_"):
                continue  # a tool's own bookkeeping (promptfoo's `_promptfooFileMetadata`)
            if isinstance(value, bool):
                strata[name] = "true" if value else "false"
            elif isinstance(value, str | int | float):
                strata[name] = str(value)
            elif value is not None:
                self.note(f"{what} {name!r} is not text or a number: not a stratum")
        return strata

    def skip(self, reason: str) -> None:
        self._skips[reason] += 1

    def note(self, text: str) -> None:
        """Something the user should know, said once however often it happens."""
        self._notes.setdefault(text, None)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if not pending:
            return
        found = self._seen.add([p[0] for p in pending], [p[1] for p in pending])
        if found is not None:
            index, earlier = found
            _, _, where, row = pending[index]
            raise where.error(
                f"system {row['system']!r} answers item {row['item_id']!r} twice (also at "
                f"{self._origin(earlier)}): import one of the two"
            )
        for _, _, _, row in pending:
            self._responses_fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            system = row["system"]
            self.report.systems[system] = self.report.systems.get(system, 0) + 1
        self.report.responses += len(pending)

    def _origin(self, position: int) -> str:
        number = self._origin_line[position]
        place = f"line {number}" if self._has_line[position] else f"record {number}"
        return f"{self._files[self._origin_file[position]]}, {place}"

    def _finish(self) -> None:
        self._flush()
        self._items_fh.close()
        self._responses_fh.close()
        self.report.skipped = dict(self._skips)
        self.report.notes = list(self._notes)
        if not self.report.items or not self.report.responses:
            skipped = sum(self._skips.values())
            why = "; ".join(f"{n} x {r}" for r, n in self._skips.most_common(3))
            self._abandon()
            raise DataError(
                f"nothing to import: no response could be read ({skipped} record(s) skipped"
                + (f": {why}" if why else "")
                + ")",
                path=", ".join(self.report.sources),
            )
        os.replace(self._items_tmp, self.report.items_file)
        os.replace(self._responses_tmp, self.report.responses_file)
        write_json(self.report.out / REPORT_FILE, self.report.as_json())

    def _abandon(self) -> None:
        for fh, path in (
            (self._items_fh, self._items_tmp),
            (self._responses_fh, self._responses_tmp),
        ):
            fh.close()
            path.unlink(missing_ok=True)
