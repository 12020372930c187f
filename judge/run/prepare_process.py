"""Prepare in a process of its own while this one judges: `judge run` sends the first chunk's
requests as soon as they are stored, and rendering the rest (CPU-bound Python) runs on
another core instead of taking turns with the runner's event loop.

The child works under the run dir's lock its parent holds (it never takes it), reports its
steps, each stored chunk and its outcome through a queue, and stops at its next batch when
the parent asks (Ctrl-C, an error). What it stored stays stored: a later prepare completes it.
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
from typing import Any

from judge.config import RunConfig
from judge.errors import JudgeError
from judge.rundir import RunDir
from judge.tally import Tally

_PR_SET_PDEATHSIG = 1


class PrepareProcess:
    """A prepare running in a child process. `started` is set once the first chunk is stored
    (or the prepare ended); `preparing` is set until the prepare ended, so a runner knows more
    requests may come."""

    def __init__(self, config: RunConfig, rundir: RunDir, log: Callable[[str], None]) -> None:
        context = multiprocessing.get_context("spawn")
        self._events: Any = context.Queue()
        self._stop = context.Event()
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
        self._process = context.Process(
            target=_child,
            args=(config, str(rundir.path), self._events, self._stop, os.getpid()),
            name="judge-prepare",
            daemon=True,
        )
        self._pump = threading.Thread(target=self._listen, name="judge-prepare-events", daemon=True)

    def start(self) -> None:
        self._process.start()
        self._pump.start()

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
        self._stop.set()
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
        try:
            while True:
                try:
                    kind, value = self._events.get(timeout=0.2)
                except queue.Empty:
                    if not self._process.is_alive() and self._process.exitcode is not None:
                        code = self._process.exitcode
                        self._outcome["error"] = JudgeError(
                            f"the prepare process ended without a word (exit code {code}); "
                            "run again to complete the prepare"
                        )
                        return
                    continue
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


def _child(config: RunConfig, path: str, events: Any, stop: Any, parent: int) -> None:
    # Ctrl-C is the parent's to handle: it sets `stop`, and this stops between batches.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        # Killed with the parent (kill -9 included), at once rather than at the next batch.
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    from judge.run.prepare import prepare_locked

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
