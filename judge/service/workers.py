"""Background execution: a scheduler thread starts one worker process per run
(`judge.service.child`), at most `max_running` at once and `max_running_per_token` of one
token's, and records how each ended. Queued runs start in the order they were created, except
that a token at its cap is passed over for the next token's run: a token with many slow runs
delays another token's run by no more than the slots it may hold.

Why processes: cancel is a signal (the run store keeps every flushed reply, so stopping at any
point is safe), a crashing run cannot take the server down, and the server's event loop never
runs judge traffic. The scheduler thread lives as long as the server and is the only thread
that starts workers: a worker's parent-death signal fires when the thread that forked it ends.

Status lives in the database; the scheduler only moves runs `queued -> running` (claimed with a
conditional UPDATE) and `running -> finished | failed`. Cancel (the API) moves `queued |
running -> cancelled`, and the scheduler then signals the worker. A restart moves `running`
back to `queued`, so unfinished runs resume where their store stopped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import IO

from sqlalchemy import Engine, func, select, update

from judge.cluster import Executor
from judge.service.child import CHILD_MODULE
from judge.service.db import runs, utc_now
from judge.service.layout import cache_path, run_paths
from judge.service.redaction import redact
from judge.service.settings import ServiceSettings

_log = logging.getLogger("judge.service")
_POLL_S = 0.2


@dataclass
class _Worker:
    run_id: str
    owner_id: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    stop_sent_at: float | None = None
    killed: bool = False
    started: float = field(default_factory=time.monotonic)


class Scheduler:
    def __init__(self, engine: Engine, settings: ServiceSettings) -> None:
        self._engine = engine
        self._settings = settings
        self._workers: dict[str, _Worker] = {}
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Requeue runs a previous server left running, then start scheduling."""
        with self._engine.begin() as conn:
            resumed = conn.execute(
                update(runs)
                .where(runs.c.status == "running")
                .values(status="queued", updated_at=utc_now())
            ).rowcount
        if resumed:
            _log.info("resuming %d run(s) left unfinished by the previous server", resumed)
        self._thread = threading.Thread(target=self._loop, name="judge-scheduler", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        """Stop the workers (they flush and exit) and leave their runs queued for next time."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    def running(self) -> int:
        """Workers alive now (read from request threads: `len` of a dict is atomic)."""
        return len(self._workers)

    # -- the scheduler thread ----------------------------------------------------------------

    def _loop(self) -> None:
        try:
            while not self._stopping.is_set():
                try:
                    self._reap()
                    self._stop_cancelled()
                    self._spawn()
                except Exception as exc:  # a database hiccup must not end scheduling
                    _log.error("scheduler: %s: %s", type(exc).__name__, redact(str(exc)))
                self._wake.wait(_POLL_S)
                self._wake.clear()
        finally:
            self._shutdown()

    def _spawn(self) -> None:
        free = self._settings.max_running - len(self._workers)
        if free <= 0:
            return
        per_token = self._settings.running_per_token
        holding = Counter(w.owner_id for w in self._workers.values())
        capped = [owner for owner, n in holding.items() if n >= per_token]
        # Read only what can be claimed, however long the queue: runs of tokens below their
        # cap, at most `per_token` per token, oldest first. Rows passed over below are those
        # of tokens holding some slots already (fewer than len(self._workers)), so `free`
        # more rows than that always reach every claimable run.
        place = (
            func.row_number()
            .over(partition_by=runs.c.owner_id, order_by=(runs.c.created_at, runs.c.id))
            .label("place")
        )
        waiting = (
            select(runs.c.id, runs.c.owner_id, runs.c.created_at, place)
            .where(
                runs.c.status == "queued",
                runs.c.owner_id.not_in(capped),
                runs.c.id.not_in(list(self._workers)),
            )
            .subquery()
        )
        with self._engine.connect() as conn:
            queued = conn.execute(
                select(waiting.c.id, waiting.c.owner_id)
                .where(waiting.c.place <= per_token)
                .order_by(waiting.c.created_at, waiting.c.id)
                .limit(free + len(self._workers))
            ).all()
        for run_id, owner_id in queued:
            if len(self._workers) >= self._settings.max_running:
                break
            if run_id in self._workers:
                continue  # cancelled and resumed while its old worker is still stopping
            if holding[owner_id] >= per_token:
                continue  # stays queued; the next token's run goes first
            with self._engine.begin() as conn:
                claimed = conn.execute(
                    update(runs)
                    .where(runs.c.id == run_id, runs.c.status == "queued")
                    .values(
                        status="running",
                        started_at=utc_now(),
                        updated_at=utc_now(),
                        finished_at=None,
                        error=None,
                        attempts=runs.c.attempts + 1,
                    )
                ).rowcount
            if claimed:
                self._start_worker(run_id, owner_id)
                holding[owner_id] += 1

    def _start_worker(self, run_id: str, owner_id: str) -> None:
        paths = run_paths(self._settings.data_dir, run_id)
        paths.outcome.unlink(missing_ok=True)
        command = [
            sys.executable,
            "-m",
            CHILD_MODULE,
            "--root",
            str(paths.root),
            "--cache",
            str(cache_path(self._settings.data_dir, owner_id)),
            "--parent-pid",
            str(os.getpid()),
        ]
        if self._settings.executor == Executor.ray:
            command += ["--executor", Executor.ray.value]
            if self._settings.ray_address:
                command += ["--ray-address", self._settings.ray_address]
        log = paths.log.open("ab")
        try:
            # Own session: a Ctrl-C at the server's terminal reaches the server, which stops
            # its workers itself (and leaves their runs queued).
            process = subprocess.Popen(
                command,
                cwd=paths.root,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            log.close()
            self._finish(run_id, "failed", f"could not start the worker process: {exc}")
            return
        self._workers[run_id] = _Worker(run_id, owner_id, process, log)
        _log.info("run %s: worker %d started", run_id, process.pid)

    def _reap(self) -> None:
        for run_id, worker in list(self._workers.items()):
            code = worker.process.poll()
            if code is None:
                continue
            worker.log.close()
            del self._workers[run_id]
            status, error = self._outcome(run_id, code)
            # What the run is now: a cancelled run stays cancelled whatever its worker said.
            final = self._finish(run_id, status, error)
            _log.info("run %s: worker exited (%s): %s", run_id, code, final)

    def _outcome(self, run_id: str, code: int) -> tuple[str, str | None]:
        paths = run_paths(self._settings.data_dir, run_id)
        try:
            outcome = json.loads(paths.outcome.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            outcome = None
        if outcome is None or outcome.get("status") == "interrupted":
            how = f"signal {-code}" if code < 0 else f"exit status {code}"
            return "failed", f"the worker process stopped ({how}); resume the run to continue"
        return str(outcome["status"]), outcome.get("error")

    def _finish(self, run_id: str, status: str, error: str | None) -> str | None:
        """Record how the run ended; returns its status now. Only a run still `running`
        changes: a cancelled run stays cancelled whatever its worker did."""
        with self._engine.begin() as conn:
            changed = conn.execute(
                update(runs)
                .where(runs.c.id == run_id, runs.c.status == "running")
                .values(
                    status=status,
                    error=redact(error) if error else None,
                    finished_at=utc_now(),
                    updated_at=utc_now(),
                )
            ).rowcount
            if changed:
                return status
            return conn.execute(select(runs.c.status).where(runs.c.id == run_id)).scalar()

    def _stop_cancelled(self) -> None:
        if not self._workers:
            return
        with self._engine.connect() as conn:
            statuses = dict(
                conn.execute(
                    select(runs.c.id, runs.c.status).where(runs.c.id.in_(list(self._workers)))
                ).all()
            )
        for run_id, worker in self._workers.items():
            if statuses.get(run_id) != "running":
                self._signal(worker)

    def _signal(self, worker: _Worker) -> None:
        """SIGINT first (the runner flushes its replies and exits), SIGKILL after the grace."""
        if worker.process.poll() is not None:
            return
        if worker.stop_sent_at is None:
            worker.stop_sent_at = time.monotonic()
            _send(worker.process, signal.SIGINT)
        elif (
            not worker.killed
            and time.monotonic() - worker.stop_sent_at > self._settings.cancel_grace_s
        ):
            worker.killed = True
            _send(worker.process, signal.SIGKILL)

    def _shutdown(self) -> None:
        for worker in self._workers.values():
            self._signal(worker)
        deadline = time.monotonic() + self._settings.cancel_grace_s
        for worker in self._workers.values():
            try:
                worker.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _send(worker.process, signal.SIGKILL)
                worker.process.wait()
            worker.log.close()
        if self._workers:
            with self._engine.begin() as conn:
                conn.execute(
                    update(runs)
                    .where(runs.c.id.in_(list(self._workers)), runs.c.status == "running")
                    .values(status="queued", updated_at=utc_now())
                )
        self._workers.clear()


def _send(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(sig)
