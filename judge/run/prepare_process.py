"""Prepare in a process of its own while this one judges: `judge run` sends the first chunk's
requests as soon as they are stored, and rendering the rest (CPU-bound Python) runs on
another core instead of taking turns with the runner's event loop.

The child works under the run dir's lock its parent holds (it never takes it), reports its
steps, each stored chunk and its outcome through a queue, and stops at its next batch when
the parent asks (Ctrl-C, an error). What it stored stays stored: a later prepare completes it.

A spawned interpreter spends about half a second importing the prepare code before it can
read a line of input. `start_spare` (what `judge run` calls first) starts one before this
process has read its config, so the two start up side by side; the next `PrepareProcess`
hands it its job instead of spawning another.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from judge.errors import JudgeError
from judge.run.spawning import main_left_behind

if TYPE_CHECKING:  # `start_spare` runs before this process has loaded them
    from judge.config.run_config import RunConfig
    from judge.judging.tally import Tally
    from judge.store.rundir import RunDir

_PR_SET_PDEATHSIG = 1
_NICENESS = 10
_JOB_POLL_S = 0.5
_LAST_WORD_S = 1.0
"""How long a parent reads on after its child ended, for what the child wrote last."""
"""How often a waiting child looks whether its parent is still there."""


class _Child:
    """A process that imports the prepare code, then waits for its one job. Spawned (a fresh
    interpreter), or forked where that is safe: `forked` only from a process that has no
    other thread yet (a fork copies no thread, so a lock another thread held would stay held
    in the child), and only on Linux (macOS' system libraries do not survive a fork)."""

    def __init__(self, *, forked: bool = False) -> None:
        context = multiprocessing.get_context("fork" if forked else "spawn")
        self.jobs: Any = context.Queue()
        self.events: Any = context.Queue()
        self.stop = context.Event()
        self.process = context.Process(
            target=_child,
            args=(self.jobs, self.events, self.stop, os.getpid()),
            name="judge-prepare",
            daemon=True,
        )
        with main_left_behind():
            self.process.start()


_spare: _Child | None = None
_spare_guard = threading.Lock()


def start_spare() -> None:
    """Start the next `PrepareProcess`'s child now, so that its imports overlap whatever this
    process does before it has a prepare to give it. Unused, it ends with this process. Call
    it before this process opens files or starts threads (`judge run` does, first thing)."""
    global _spare
    # Forked, it starts with this process's imports and without an interpreter to start: the
    # child is ready a fifth of a second sooner.
    forked = sys.platform.startswith("linux") and threading.active_count() == 1
    with _spare_guard:
        if _spare is None:
            if forked:  # what is buffered would be written twice: by this process and the child
                sys.stdout.flush()
                sys.stderr.flush()
            _spare = _Child(forked=forked)


def _take_child() -> _Child:
    global _spare
    with _spare_guard:
        child, _spare = _spare, None
    if child is not None and child.process.is_alive():
        return child
    return _Child()


class PrepareProcess:
    """A prepare running in a child process. `started` is set once the first chunk is stored
    (or the prepare ended); `preparing` is set until the prepare ended, so a runner knows more
    requests may come."""

    def __init__(self, config: RunConfig, rundir: RunDir, log: Callable[[str], None]) -> None:
        # Absolute: a spare child was started earlier, perhaps in another working directory
        # (a notebook that changed it, a test calling the CLI in-process), and would resolve
        # a relative run dir there.
        self._job = (config, str(rundir.path.absolute()))
        self._child: _Child | None = None
        self._log = log
        self.started = threading.Event()
        self.preparing = threading.Event()
        self.preparing.set()
        self.failed = threading.Event()
        """Set when the prepare failed: judging must stop, not drain what was stored."""
        self._outcome: dict[str, Any] = {}
        self._stored = 0
        """Requests the store holds, as of the prepare's last chunk."""
        self._tally: Tally | None = None
        self._pump = threading.Thread(target=self._listen, name="judge-prepare-events", daemon=True)

    def start(self) -> None:
        """Give the prepare to a child (the spare one, if `start_spare` started it)."""
        self._child = _take_child()
        self._child.jobs.put(self._job)
        self._pump.start()

    @property
    def _process(self) -> Any:
        assert self._child is not None, "start() first"
        return self._child.process

    def follow(self, tally: Tally) -> None:
        """Keep `tally`'s total at what the store holds as chunks are stored, and final once
        the prepare ends."""
        self._tally = tally
        tally.set_total(self._stored)
        if not self.preparing.is_set():
            tally.close_total()

    def wait_started(self) -> None:
        """Until the first chunk is stored; raises the prepare's error if it failed first."""
        self.started.wait()
        self._raise()

    def stop(self) -> None:
        """Ask the child to stop at its next batch, and wait for it."""
        assert self._child is not None, "start() first"
        self._child.stop.set()
        self._pump.join()
        self._process.join()

    def result(self) -> Any:
        """The `PrepareSummary`, once the prepare ended; raises its error if it failed."""
        self._pump.join()
        self._process.join()
        self._raise()
        return self._outcome["done"]

    def _raise(self) -> None:
        if "error" in self._outcome:
            raise self._outcome["error"]

    def _listen(self) -> None:
        assert self._child is not None
        try:
            while True:
                try:
                    kind, value = self._child.events.get(timeout=0.2)
                except queue.Empty:
                    if self._process.is_alive() or self._process.exitcode is None:
                        continue
                    try:
                        # Its last event can reach the pipe just after the wait above gave
                        # up and before the exit was seen: the child flushes before it ends.
                        kind, value = self._child.events.get(timeout=_LAST_WORD_S)
                    except queue.Empty:
                        code = self._process.exitcode
                        self._outcome["error"] = JudgeError(
                            f"the prepare process ended without a word (exit code {code}); "
                            "run again to complete the prepare"
                        )
                        return
                if kind == "log":
                    self._log(value)
                elif kind == "stored":
                    self._stored = value
                    if self._tally is not None:
                        self._tally.set_total(value)
                    self.started.set()
                elif kind == "done":
                    self._outcome["done"] = value
                    return
                else:
                    self._outcome["error"] = pickle.loads(value)
                    return
        finally:
            if "error" in self._outcome:
                self.failed.set()
            self.preparing.clear()
            if self._tally is not None:
                self._tally.close_total()
            self.started.set()


@contextlib.contextmanager
def preparing_meanwhile(
    config: RunConfig, rundir: RunDir, log: Callable[[str], None]
) -> Iterator[PrepareProcess]:
    """A started `PrepareProcess`, stopped (at its next batch) if the block fails."""
    process = PrepareProcess(config, rundir, log)
    process.start()
    try:
        yield process
    except BaseException:
        process.stop()
        raise


class _Stop:
    """Set when the parent asks, or when the parent is gone: a prepare must not go on writing
    a run dir whose lock its parent no longer holds."""

    def __init__(self, event: Any, parent: int) -> None:
        self._event, self._parent = event, parent

    def is_set(self) -> bool:
        return bool(self._event.is_set()) or os.getppid() != self._parent


def _child(jobs: Any, events: Any, stop: Any, parent: int) -> None:
    # Ctrl-C is the parent's to handle: it sets `stop`, and this stops between batches.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        # Killed with the parent (kill -9 included), at once rather than at the next batch.
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    from judge.run.prepare import prepare_locked
    from judge.store.rundir import RunDir

    while True:
        try:
            config, path = jobs.get(timeout=_JOB_POLL_S)
            break
        except queue.Empty:
            if os.getppid() != parent or stop.is_set():
                return  # a spare nobody used
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: no os.nice (Windows)
        # Judging comes first: where the two share a core, the scheduler gives the runner's
        # event loop (which has requests waiting) the time, and prepare the rest.
        os.nice(_NICENESS)
    try:
        summary = prepare_locked(
            config,
            RunDir(path),
            log=lambda message: events.put(("log", message)),
            on_stored=lambda _requests, stored: events.put(("stored", stored)),
            stop=_Stop(stop, parent),  # type: ignore[arg-type]
        )
    except BaseException as exc:  # every outcome reaches the parent, which raises it
        events.put(("error", _pickled(exc)))
    else:
        events.put(("done", summary))
    events.close()
    events.join_thread()


def _pickled(exc: BaseException) -> bytes:
    """`exc` as the parent can raise it: itself when it survives pickling, else an error
    that says the same."""
    try:
        data = pickle.dumps(exc)
        pickle.loads(data)
        return data
    except Exception:
        return pickle.dumps(JudgeError(f"{type(exc).__name__}: {exc}"))
