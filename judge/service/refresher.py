"""Labels into calibration without holding up the annotator: each label marks its run, and one
background thread analyses marked runs again with their task's labels (`publish`), a run at a
time. Labels that arrive during an analysis mark the run again, so the last label is always
analysed; a burst of labels costs one analysis, not one each."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from judge.errors import JudgeError, RunDirBusy

_log = logging.getLogger("judge.service")
_BUSY_RETRY_S = 1.0


class LabelRefresher:
    def __init__(self) -> None:
        self._marked: dict[str, Path] = {}
        self._running: str | None = None
        self._errors: dict[str, str] = {}
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self, runs_dir: Path | None = None) -> None:
        """Start the thread; with `runs_dir`, first mark every run whose labels changed after
        its summary was written (the marks of a server that stopped are not kept: its runs'
        label stores are the record of what the calibration has not seen)."""
        if runs_dir is not None:
            for run_id, run_dir in stale_runs(runs_dir):
                self.mark(run_id, run_dir)
        self._thread = threading.Thread(target=self._loop, name="label-refresher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def mark(self, run_id: str, run_dir: Path) -> None:
        with self._cond:
            self._marked[run_id] = run_dir
            self._cond.notify_all()

    def pending(self, run_id: str) -> bool:
        """Labels of this run not analysed yet (marked, or being analysed now)."""
        with self._cond:
            return run_id in self._marked or self._running == run_id

    def error(self, run_id: str) -> str | None:
        with self._cond:
            return self._errors.get(run_id)

    def wait_idle(self, run_id: str, timeout: float) -> bool:
        """Block until the run has nothing pending (tests, and a CLI that wants the numbers)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while run_id in self._marked or self._running == run_id:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def _loop(self) -> None:
        from judge.labelling.sample import publish
        from judge.store.rundir import RunDir

        while True:
            with self._cond:
                while not self._marked and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                run_id, run_dir = next(iter(self._marked.items()))
                del self._marked[run_id]
                self._running = run_id
            retry = False
            try:
                publish(RunDir(run_dir))
                error = None
            except RunDirBusy:
                retry, error = True, None
            except (JudgeError, LookupError) as exc:
                error = str(exc)
            except Exception as exc:  # a bug: keep serving labels, say what happened
                _log.exception("analysing run %s with its labels failed", run_id)
                error = f"internal error: {type(exc).__name__}"
            with self._cond:
                self._running = None
                if error is None:
                    self._errors.pop(run_id, None)
                else:
                    self._errors[run_id] = error
                if retry:
                    self._marked.setdefault(run_id, run_dir)
                self._cond.notify_all()
            if retry:
                time.sleep(_BUSY_RETRY_S)


def stale_runs(runs_dir: Path) -> list[tuple[str, Path]]:
    """Runs under `runs_dir` (`<id>/run/`) whose labelling store was written after their
    summary: labels given that the calibration does not include."""
    from judge.store.rundir import RunDir

    found = []
    for store in sorted(runs_dir.glob("*/run/labelling.sqlite")):
        rundir = RunDir(store.parent)
        # The file and its WAL; not the -shm index, which readers write too.
        parts = (store, store.with_name(store.name + "-wal"))
        written = max((p.stat().st_mtime for p in parts if p.exists()), default=0.0)
        if not rundir.has_summary() or rundir.summary_file.stat().st_mtime < written:
            found.append((store.parent.parent.name, store.parent))
    return found
