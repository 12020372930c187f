"""The blinding key on disk, written while prepare streams: every opaque id reaches the disk
(fsynced) before a stored request can name it, without the key of millions of ids in memory.

Two files, owned by `RunDir`:

* `blinding_key.json`: the whole key, as `BlindingKey` serialises it (indented JSON). Written
  when a prepare finishes, streamed from the log below, then the log is removed.
* the log (`blinding_key.log.jsonl`): while a prepare runs, its secret on the first line, then
  one line per new response id (`{"r": [blind_id, system]}`) or pair (`{"p": [pair_id, a,
  b]}`), appended and fsynced chunk by chunk before that chunk's rows are stored.

Reading merges the two, so a prepare killed at any instant leaves a key that names every id
its store holds: the next prepare reuses its secret and finishes the file.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from judge.errors import DataError
from judge.files import fsync_dir
from judge.types import BlindingKey


def read_key(final: Path, log: Path) -> BlindingKey:
    """The key: `final`, with the entries of an unfinished prepare's `log` added."""
    # The log first: a prepare finishing meanwhile writes the whole key before it removes the
    # log, so a log read whole (or gone) and then the key file miss no entry.
    logged: list[tuple[str, object]] = []
    with contextlib.suppress(FileNotFoundError):
        logged = list(_log_entries(log))
    secret: str | None = None
    systems: dict[str, str] = {}
    pairs: dict[str, tuple[str, str]] = {}
    if final.exists():
        key = BlindingKey.model_validate_json(final.read_text(encoding="utf-8"))
        secret, systems, pairs = key.blinding_secret, dict(key.systems), dict(key.pairs)
    for kind, entry in logged:
        if kind == "secret":
            if secret is not None and secret != entry:
                raise DataError(
                    "the unfinished key log names another secret than the key file; "
                    "remove the run dir to start again",
                    path=str(log),
                )
            secret = entry
        elif kind == "r":
            systems[entry[0]] = entry[1]
        else:
            pairs[entry[0]] = (entry[1], entry[2])
    if secret is None:
        raise DataError("the blinding key holds no secret", path=str(final))
    return BlindingKey(blinding_secret=secret, systems=systems, pairs=pairs)


def log_usable(log: Path) -> bool:
    """The log holds at least its secret line, whole (a log cut before it names no stored
    id: the secret is fsynced before any entry)."""
    return _complete_size(log) > 0


def _complete_size(log: Path) -> int:
    """Bytes of `log` up to its last newline (0 when missing)."""
    try:
        with log.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            step = 1 << 16
            end = size
            while end > 0:
                start = max(0, end - step)
                fh.seek(start)
                block = fh.read(end - start)
                newline = block.rfind(b"\n")
                if newline >= 0:
                    return start + newline + 1
                end = start
            return 0
    except FileNotFoundError:
        return 0


def _log_entries(log: Path) -> Iterator[tuple[str, object]]:
    with log.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.endswith("\n"):
                return  # the line a kill cut short: its chunk's rows were never stored
            try:
                record = json.loads(line)
                ((kind, value),) = record.items()
            except ValueError:
                raise DataError(f"line {number} is not a key entry", path=str(log)) from None
            yield kind, value


_FLUSH_ENTRIES = 10_000


class KeyWriter:
    """Appends a prepare's new ids to the log (`add_*`, then `flush` before the rows naming
    them are stored) and writes the whole key at `finish`. `previous`: the key an earlier
    prepare left (ids in it are not logged again)."""

    def __init__(self, final: Path, log: Path, secret: str, previous: BlindingKey | None) -> None:
        self._final, self._log = final, log
        self._secret = secret
        self._previous = previous
        self._fh: IO[str] | None = None
        self._pending: list[str] = []
        self.added = 0

    def add_response(self, blind_id: str, system: str) -> None:
        if self._previous is None or self._previous.systems.get(blind_id) != system:
            self._add(json.dumps({"r": [blind_id, system]}, ensure_ascii=False))

    def add_pair(self, pair_id: str, a: str, b: str) -> None:
        if self._previous is None or self._previous.pairs.get(pair_id) != (a, b):
            self._add(json.dumps({"p": [pair_id, a, b]}, ensure_ascii=False))

    def _add(self, entry: str) -> None:
        self._pending.append(entry)
        # An id on disk before its row is stored is harmless; a million of them in this list
        # is not (`judge blind` flushes only at the end).
        if len(self._pending) >= _FLUSH_ENTRIES:
            self.flush()

    def flush(self) -> None:
        """Make the ids added so far durable (fsync)."""
        if not self._pending:
            return
        fh = self._open()
        fh.write("\n".join(self._pending) + "\n")
        self.added += len(self._pending)
        self._pending.clear()
        fh.flush()
        os.fsync(fh.fileno())

    def _open(self) -> IO[str]:
        if self._fh is None:
            # A kill mid-write leaves a cut last line (its rows were never stored): cut it off
            # before appending, or the next entry would be glued to it.
            complete = _complete_size(self._log)
            fd = os.open(self._log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.ftruncate(fd, complete)
            self._fh = os.fdopen(fd, "a", encoding="utf-8")
            if complete == 0:
                self._fh.write(json.dumps({"secret": self._secret}) + "\n")
                self._fh.flush()
                os.fsync(self._fh.fileno())
                fsync_dir(self._log.parent)
        return self._fh

    def finish(self) -> None:
        """Write the whole key to the key file (when anything was added) and drop the log.
        Streamed from the log: a first prepare holds no key in memory (a later one that adds
        ids holds the earlier key file's)."""
        self.flush()
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if not self._log.exists():
            return
        old = None
        if self._final.exists():
            old = BlindingKey.model_validate_json(self._final.read_text(encoding="utf-8"))
        _write_key_json(self._final, self._secret, old, self._log)
        self._log.unlink()
        fsync_dir(self._final.parent)

    def close(self) -> None:
        """Stop without finishing (the log stays for the next prepare)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _write_key_json(path: Path, secret: str, old: BlindingKey | None, log: Path) -> None:
    """The key file: `old`'s entries and then the log's new ones, written as
    `json.dumps(key.model_dump(mode="json"), indent=2, ensure_ascii=False)` writes a
    `BlindingKey`, entry by entry (atomic, owner-only, durable)."""

    def systems() -> Iterator[tuple[str, str]]:
        known = old.systems if old is not None else {}
        yield from ((k, _dumps(v)) for k, v in known.items())
        for kind, entry in _log_entries(log):
            if kind == "r" and entry[0] not in known:  # type: ignore[index]
                yield entry[0], _dumps(entry[1])  # type: ignore[index]

    def pairs() -> Iterator[tuple[str, str]]:
        known = old.pairs if old is not None else {}
        yield from ((k, _pair(v)) for k, v in known.items())
        for kind, entry in _log_entries(log):
            if kind == "p" and entry[0] not in known:  # type: ignore[index]
                yield entry[0], _pair(entry[1:])  # type: ignore[index]

    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write('{\n  "blinding_secret": ' + _dumps(secret) + ",\n")
        _write_mapping(fh, "systems", systems(), last=False)
        _write_mapping(fh, "pairs", pairs(), last=True)
        fh.write("}\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _pair(systems: object) -> str:
    a, b = systems  # type: ignore[misc]
    return f"[\n      {_dumps(a)},\n      {_dumps(b)}\n    ]"


def _write_mapping(
    fh: IO[str], name: str, entries: Iterator[tuple[str, str]], *, last: bool
) -> None:
    fh.write(f'  "{name}": {{')
    first = True
    for k, v in entries:
        fh.write(("\n" if first else ",\n") + f"    {_dumps(k)}: {v}")
        first = False
    fh.write("}" if first else "\n  }")
    fh.write("\n" if last else ",\n")
