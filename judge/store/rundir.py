"""A run directory: the one place that knows its layout, opens its store and holds its lock.

    runs/<name>/
      store.sqlite          every item, blinded response, pair, request, reply and verdict
      blinding_key.json     who wrote what (owner-only; the only file that names systems)
      blinded.jsonl, pairs.jsonl, scrub_report.json   judge-visible tables, the scrub counts
      judgments.jsonl, judgments.parquet              unblinded judgments (outputs)
      judgments.spool/      each judge's judgments while the outputs are written (then gone)
      summary.json, report.md, report.html, plots/    the analysis and the page
      human_labels.<ext>    labels added after the run was prepared (`judge report --human`,
                            the service's upload); the stored config stays as prepared
      run.lock              held by the one command (or service worker) working on the run
      dataframes/           tables `judge.evaluate` was given as DataFrames, as Parquet
      imported/             the tables a prepare read from `data.source` (another tool's files)

Nothing else in the package spells these names or opens the SQLite file (STYLE.md 15). The
lock is an exclusive `flock`: the kernel releases it when its holder dies, kill -9 included,
so a crashed run never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.errors import DataError, RunDirBusy
from judge.files import fsync_dir, write_json, write_jsonl, write_text
from judge.store.judgment_files import ROW_GROUP_ROWS
from judge.store.run_store import STORE_FILENAME, RunStore

if TYPE_CHECKING:
    from judge.blinding.key import KeyWriter
    from judge.config.run_config import RunConfig
    from judge.store.judgment_files import JudgmentsWriter
    from judge.summary.run_summary import RunSummary
    from judge.types import BlindedPair, BlindedResponse, BlindingKey, ScrubReport

RUNS_ROOT = Path("runs")
"""Where `judge run CONFIG` puts `runs/<config name>` unless told otherwise."""
CACHE_FILENAME = "response_cache.sqlite"
PLOTS = "plots"
LABELS_STEM = "human_labels"
INPUTS_DIRNAME = "dataframes"
IMPORTED_DIRNAME = "imported"
ALIGNMENT_DIRNAME = "alignment"
LABELLING_FILENAME = "labelling.sqlite"

_held: dict[tuple[str, int], list[int]] = {}
"""Locks this process holds: (lock file, thread) -> [file descriptor, depth]. Re-entrant per
thread, so `run_pipeline` can call `prepare_run` under the lock it already holds."""
_held_guard = threading.Lock()


class RunDir:
    """One run directory (it need not exist yet)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def __fspath__(self) -> str:
        return str(self.path)

    @classmethod
    def for_config(cls, config: RunConfig, explicit: str | Path | None = None) -> RunDir:
        """`explicit`, else `runs/<config name>`."""
        return cls(explicit if explicit is not None else RUNS_ROOT / config.name)

    # -- layout --------------------------------------------------------------------------------

    @property
    def store_file(self) -> Path:
        return self.path / STORE_FILENAME

    @property
    def key_file(self) -> Path:
        return self.path / "blinding_key.json"

    @property
    def key_log_file(self) -> Path:
        """The ids an unfinished prepare added to the key (`judge.blinding.key`)."""
        return self.path / "blinding_key.log.jsonl"

    def input_table(self, name: str) -> Path:
        """Where a table given to `judge.evaluate` as a DataFrame is written (`name`: items,
        responses, labels), so the run reads, hashes and resumes it as it does a file."""
        return self.path / INPUTS_DIRNAME / f"{name}.parquet"

    @property
    def imported_dir(self) -> Path:
        """Where a prepare writes the tables it imports from the config's `data.source`
        (`judge.inputs.importers`), so the run reads, hashes and resumes them as files."""
        return self.path / IMPORTED_DIRNAME

    @property
    def staging_file(self) -> Path:
        """Prepare's scratch index of the input (`judge.run.staging`); gone when it ends."""
        return self.path / "prepare-staging.sqlite"

    @property
    def blinded_file(self) -> Path:
        return self.path / "blinded.jsonl"

    @property
    def pairs_file(self) -> Path:
        return self.path / "pairs.jsonl"

    @property
    def scrub_file(self) -> Path:
        return self.path / "scrub_report.json"

    @property
    def judgments_jsonl(self) -> Path:
        return self.path / "judgments.jsonl"

    @property
    def canary_judgments_jsonl(self) -> Path:
        """The canaries' judgments, kept apart from `judgments.jsonl`
        (`judge.blinding.canaries`)."""
        return self.path / "canary_judgments.jsonl"

    @property
    def judgments_parquet(self) -> Path:
        return self.path / "judgments.parquet"

    @property
    def summary_file(self) -> Path:
        return self.path / "summary.json"

    @property
    def report_md(self) -> Path:
        return self.path / "report.md"

    @property
    def report_html(self) -> Path:
        return self.path / "report.html"

    @property
    def analysis_files(self) -> list[str]:
        """The names of the files an analysis writes (beside the figures)."""
        return [self.summary_file.name, self.report_md.name, self.report_html.name]

    @property
    def batches_dir(self) -> Path:
        """Batch bodies (`judge.batch`): one JSONL file per planned batch, read when it is
        submitted (again, after a crash)."""
        return self.path / "batches"

    @property
    def alignment_dir(self) -> Path:
        """`judge align --rejudge`: its runs (one per candidate rubric and split), their
        inputs, the chosen rubric, and `alignment_file`."""
        return self.path / ALIGNMENT_DIRNAME

    @property
    def alignment_file(self) -> Path:
        """What the last `judge align --rejudge` measured (`judge.summary.alignment`): the
        analysis reads it into the report."""
        return self.alignment_dir / "alignment.json"

    @property
    def plots_dir(self) -> Path:
        return self.path / PLOTS

    @property
    def lock_file(self) -> Path:
        return self.path / "run.lock"

    def default_cache(self) -> Path:
        """The response cache shared by the runs beside this one."""
        return self.path.parent / CACHE_FILENAME

    def cache_file(self, config: RunConfig, explicit: Path | None = None) -> Path:
        """The response cache: explicit, else the config's, else beside the run dir."""
        return explicit or config.cache or self.default_cache()

    # -- the store -------------------------------------------------------------------------

    def has_store(self) -> bool:
        return self.store_file.exists()

    def open_store(self, cache_path: str | Path | None = None) -> RunStore:
        return RunStore.open(self.path, cache_path)

    def discard_store(self) -> None:
        """Remove the store (and its WAL files): only for a store nothing was judged in."""
        for suffix in ("", "-wal", "-shm"):
            self.store_file.with_name(self.store_file.name + suffix).unlink(missing_ok=True)

    def stored_config(self) -> RunConfig:
        """The config the run was prepared with (paths already absolute)."""
        from judge.config.run_config import PREPARED_CONTEXT, RunConfig

        if not self.has_store():
            raise DataError("not a run directory (no store.sqlite)", path=str(self.path))
        with self.open_store() as store:
            raw = store.get_meta("config")
        if raw is None:
            raise DataError(
                "this run was never prepared (no config in its store)", path=str(self.path)
            )
        return RunConfig.model_validate(raw, context={PREPARED_CONTEXT: True})

    def item_strata(self) -> dict[str, dict[str, Any]]:
        """Each item's strata (category, turn, ...) as the store holds them."""
        if not self.has_store():  # never create a store only to read it
            raise DataError("not a run directory (no store.sqlite)", path=str(self.path))
        with self.open_store() as store:
            return store.item_strata()

    # -- the blinding key ----------------------------------------------------------------------

    def has_key(self) -> bool:
        from judge.blinding.key import log_usable

        return self.key_file.exists() or log_usable(self.key_log_file)

    def read_key(self) -> BlindingKey:
        from judge.blinding.key import read_key

        if not self.has_key():
            raise DataError(
                "the blinding key is missing: prepare the run again (`judge prepare` or "
                "`judge run` with its config)",
                path=str(self.key_file),
            )
        return read_key(self.key_file, self.key_log_file)

    def write_key(self, key: BlindingKey) -> None:
        """Durable before it returns (fsync of the file and of the directory): prepare writes
        the key before any request exists, so no request is ever stored without it."""
        write_json(self.key_file, key.model_dump(mode="json"), private=True)
        self.key_log_file.unlink(missing_ok=True)
        fsync_dir(self.path)

    def key_writer(self, secret: str, previous: BlindingKey | None) -> KeyWriter:
        """The key as a streaming prepare writes it: ids logged chunk by chunk, the whole key
        written at `finish` (`judge.blinding.key`)."""
        from judge.blinding.key import KeyWriter

        return KeyWriter(self.key_file, self.key_log_file, secret, previous)

    def write_blinding_tables(
        self,
        blinded: Iterable[BlindedResponse],
        pairs: Iterable[BlindedPair],
        scrub: ScrubReport,
    ) -> None:
        """The judge-visible tables and the scrub counts (no system names in any of them)."""
        write_jsonl(self.blinded_file, (b.model_dump(mode="json") for b in blinded))
        write_jsonl(self.pairs_file, (p.model_dump(mode="json") for p in pairs))
        write_json(self.scrub_file, scrub.model_dump(mode="json"))

    # -- the labelling task (judge.labelling) -------------------------------------------------

    @property
    def labelling_file(self) -> Path:
        """The labelling task, its queue and every human label given through it."""
        return self.path / LABELLING_FILENAME

    def has_labelling(self) -> bool:
        return self.labelling_file.is_file()

    # -- human labels added later ------------------------------------------------------------

    def human_labels(self) -> Path | None:
        """The labels added to this run after it was prepared (`keep_labels`), if any. They
        live beside the store, not in the stored config: the config's hash, which a resumed
        run checks, does not change when labels arrive."""
        found = sorted(self.path.glob(f"{LABELS_STEM}.*"))
        return next((p for p in found if not p.name.endswith(".tmp")), None)

    def labels_path(self, source: Path) -> Path:
        """Where `keep_labels(source)` puts the labels: `human_labels` + the source's format
        suffix (the format is read from the name)."""
        from judge.inputs.sources import table_suffix

        return self.path / f"{LABELS_STEM}{table_suffix(source)}"

    def keep_labels(self, source: Path, *, move: bool = False) -> Path:
        """Make `source` the run's human labels, replacing earlier ones (in whatever format);
        atomic: a reader sees the old file or the new one. `move`: rename instead of copying
        (same file system). Returns the stored file (`labels_path`)."""
        import shutil

        target = self.labels_path(source)
        if not source.is_file():
            raise DataError("human labels must be one file", path=str(source))
        tmp = target.with_name(target.name + ".tmp")
        if move:
            os.replace(source, tmp)
        else:
            shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        os.utime(target)  # when the run got them (a moved upload keeps its own time otherwise)
        for old in self.path.glob(f"{LABELS_STEM}.*"):
            if old != target:
                old.unlink(missing_ok=True)
        return target

    @contextlib.contextmanager
    def labels_replaced(self, source: Path, *, move: bool = False) -> Iterator[Path]:
        """`keep_labels(source)` for the block, which analyses with them; if the block
        raises, the previous labels (or none) are back, so labels that fail the analysis never
        stay in a run. Call it under the run's lock."""
        previous = self.human_labels()
        backup = None
        if previous is not None:
            backup = previous.with_name(f"previous-{previous.name}")
            os.replace(previous, backup)
        try:
            stored = self.keep_labels(source, move=move)
        except BaseException:
            if backup is not None and previous is not None:
                os.replace(backup, previous)
            raise
        try:
            yield stored
        except BaseException:
            stored.unlink(missing_ok=True)
            if backup is not None and previous is not None:
                os.replace(backup, previous)
            raise
        if backup is not None:
            backup.unlink(missing_ok=True)

    # -- outputs -------------------------------------------------------------------------------

    def has_judgments(self) -> bool:
        return self.judgments_jsonl.is_file()

    @contextlib.contextmanager
    def judgments_writers(
        self, record: type, *, row_group_rows: int = ROW_GROUP_ROWS
    ) -> Iterator[tuple[JudgmentsWriter, JudgmentsWriter]]:
        """Writers of `judgments.jsonl` with `judgments.parquet`, and of the canaries'
        `canary_judgments.jsonl` (`judge.store.judgment_files`), for rows of the dataclass `record`.
        A file is replaced when its writer's `finish` is called; the spools go at the end."""
        from judge.store.judgment_files import JudgmentsWriter

        spool = self.path / "judgments.spool"
        shutil.rmtree(spool, ignore_errors=True)  # left by a writer that crashed
        real = JudgmentsWriter(
            self.judgments_jsonl,
            self.judgments_parquet,
            spool / "judgments",
            record,
            row_group_rows=row_group_rows,
        )
        canary = JudgmentsWriter(self.canary_judgments_jsonl, None, spool / "canaries", record)
        try:
            yield real, canary
        finally:
            real.close()
            canary.close()
            shutil.rmtree(spool, ignore_errors=True)

    def has_summary(self) -> bool:
        return self.summary_file.is_file()

    def read_summary(self) -> RunSummary:
        from judge.summary.run_summary import RunSummary

        if not self.has_summary():
            raise DataError(
                "no summary.json: run `judge run` on this config first", path=str(self.path)
            )
        try:
            return RunSummary.from_json(self.summary_file.read_text(encoding="utf-8"))
        except ValueError as exc:  # pydantic's ValidationError and json's errors both are
            raise DataError(
                f"summary.json does not match this version's summary ({_first_line(exc)}): "
                f"rewrite it with `judge report {self.path}`",
                path=str(self.summary_file),
            ) from None

    def write_summary(self, summary: RunSummary) -> None:
        write_text(self.summary_file, summary.to_json())

    def write_report(self, markdown: str, page: str, figures: dict[str, bytes]) -> None:
        """The page in both forms, its figures first (report.md links them)."""
        self.plots_dir.mkdir(exist_ok=True)
        for name, png in figures.items():
            _write_bytes(self.plots_dir / f"{name}.png", png)
        write_text(self.report_md, markdown)
        write_text(self.report_html, page)

    # -- the lock ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(
        self,
        *,
        wait_s: float | None = 0.0,
        on_busy: Callable[[int | None], None] | None = None,
    ) -> Iterator[RunDir]:
        """Hold the run's exclusive lock (re-entrant within a thread).

        `wait_s`: how long to wait for another holder (0: not at all, None: forever); then
        `RunDirBusy` naming the holder's pid. `on_busy(pid)` is called once when the lock is
        found taken (to print a message, or to deal with an orphan)."""
        key = (str(self.lock_file.absolute()), threading.get_ident())
        with _held_guard:
            held = _held.get(key)
            if held is not None:
                held[1] += 1
        if held is not None:
            try:
                yield self
            finally:
                with _held_guard:
                    held[1] -= 1
            return
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            self._acquire(fd, wait_s, on_busy)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {_command()}\n".encode(), 0)
            with _held_guard:
                _held[key] = [fd, 1]
            try:
                yield self
            finally:
                with _held_guard:
                    del _held[key]
        finally:
            os.close(fd)  # releases the flock

    def holder(self) -> tuple[int | None, str]:
        """(pid, command) the lock file names: who holds it, or held it last."""
        try:
            text = self.lock_file.read_text(encoding="utf-8").strip()
        except OSError:
            return None, ""
        pid, _, command = text.partition(" ")
        return (int(pid) if pid.isdigit() else None), command

    def _acquire(
        self, fd: int, wait_s: float | None, on_busy: Callable[[int | None], None] | None
    ) -> None:
        deadline = None if wait_s is None else time.monotonic() + wait_s
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            pid, command = self.holder()
            if not told and on_busy is not None:
                on_busy(pid)
                told = True
            if deadline is not None and time.monotonic() >= deadline:
                who = f"process {pid}" if pid else "another process"
                what = f" ({command})" if command else ""
                raise RunDirBusy(
                    f"run dir {self.path} is in use by {who}{what}: wait for it to finish, "
                    "or choose another run dir (--run-dir, run_dir=)",
                    pid=pid,
                )
            time.sleep(0.1)


def _first_line(exc: Exception) -> str:
    """What does not match, shortly: the first field a pydantic error names, or the message."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        found = errors()
        if found:
            where = ".".join(str(part) for part in found[0]["loc"])
            return f"{len(found)} problem(s), the first at {where}: {found[0]['msg']}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def figure_link(name: str) -> str:
    """How report.md refers to its figure `name` (relative to the run dir)."""
    return f"{PLOTS}/{name}.png"


def _command() -> str:
    """A short description of this process for the lock file (no arguments: they may hold
    paths a user would rather not spread; the program and subcommand say enough)."""
    argv = sys.argv
    name = Path(argv[0]).name if argv else "python"
    if name == "__main__.py" and Path(argv[0]).parent.name == "cli":
        name = "judge"  # python -m judge.cli
    elif name == "-m" or name.endswith(".py") or name.startswith("python"):
        name = "python"
    sub = argv[1] if len(argv) > 1 and not argv[1].startswith("-") else ""
    return f"{name} {sub}".strip()


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
