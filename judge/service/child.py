"""One run's worker process: `python -m judge.service.child --root RUN_ROOT --cache FILE ...`.

It runs the library's `run_pipeline` (what `judge run` calls) on the run's config, then
refreshes the analysis with any uploaded human labels, and writes its outcome to
`worker.outcome.json` for the server to read.

Never two at once on one run, or replies would be paid twice:
- it dies with the server: `PR_SET_PDEATHSIG` delivers SIGINT when the server goes (even on
  SIGKILL); SIGINT makes the runner cancel, flush the replies it holds and exit;
- it holds the run dir's exclusive lock (`RunDir.locked`, the one `judge run` takes) while it
  works, and a new worker waits for it; an orphan that outlives its server (no pdeathsig off
  Linux) is waited for, then killed.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import io
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from judge.cluster import Executor
from judge.errors import JudgeError, RunDirBusy
from judge.service.layout import RunPaths
from judge.service.redaction import redact

CHILD_MODULE = "judge.service.child"
ORPHAN_WAIT_S = 20.0
"""How long a new worker waits for an older one on the same run before killing it."""
_PR_SET_PDEATHSIG = 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=CHILD_MODULE)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--parent-pid", type=int, required=True)
    parser.add_argument("--executor", type=Executor, choices=list(Executor), default=Executor.local)
    parser.add_argument("--ray-address", default=None)
    args = parser.parse_args(argv)
    # Everything this process prints goes to worker.log: tracebacks quote paths, URLs and
    # exception texts, which may carry a key. Masked as written, as the server's own log is.
    sys.stdout, sys.stderr = RedactingStream(sys.stdout), RedactingStream(sys.stderr)
    paths = RunPaths(args.root)
    if not _die_with_parent(args.parent_pid):
        return 1  # the server is already gone: its successor starts a worker of its own
    try:
        with _run_lock(paths):
            outcome = _work(paths, args.cache, args.executor, args.ray_address)
    except Exception as exc:  # the run dir itself is unusable (not a directory, no space...)
        traceback.print_exc()
        outcome = {"status": "failed", "error": _internal(exc, paths)}
    _write_outcome(paths, outcome)
    return {"finished": 0, "failed": 2, "interrupted": 130}.get(outcome["status"], 1)


class RedactingStream(io.TextIOBase):
    """A text stream writing through `redact`, a line at a time (a secret split across two
    writes is still masked)."""

    _MAX_PENDING = 1 << 16

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in self._pending:
            done, _, self._pending = self._pending.rpartition("\n")
            self._target.write(redact(done + "\n"))
        if len(self._pending) > self._MAX_PENDING:
            self._target.write(redact(self._pending))
            self._pending = ""
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._target.write(redact(self._pending))
            self._pending = ""
        self._target.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._target, "encoding", "utf-8")


def _work(
    paths: RunPaths,
    cache: Path,
    executor: Executor = Executor.local,
    ray_address: str | None = None,
) -> dict[str, Any]:
    from judge.config.run_config import load_config
    from judge.run import run_pipeline
    from judge.run.lifecycle import failed_gates

    started = time.time()
    try:
        config = load_config(paths.config)
        # One process: nothing outlives this one when the server dies (on Ray, the cluster
        # this process started, if any, stops with it).
        cluster = _cluster_for(config, executor, ray_address)
        outcome = run_pipeline(config, paths.rundir, workers=1, cache_path=cache, cluster=cluster)
    except JudgeError as exc:
        rescued = _without_labels(config, paths, exc) if "config" in locals() else None
        return rescued or {"status": "failed", "error": _client_text(str(exc), paths)}
    except KeyboardInterrupt:
        # Cancelled, or the server went away: what was answered is in the store; aggregate it
        # so a cancelled run still shows its partial judgments.
        with contextlib.suppress(Exception):
            from judge.run import write_partial_outputs

            write_partial_outputs(config, paths.rundir)
        return {"status": "interrupted", "error": None}
    except Exception as exc:
        traceback.print_exc()
        return {"status": "failed", "error": _internal(exc, paths)}
    if outcome.status == "stopped":
        return {
            "status": "failed",
            "error": "the run stopped before every request was answered, e.g. at the budget in "
            "the config; raise budget.max_cost_usd and resume",
        }
    # A failed gate leaves a complete run; the gate is in summary.json (comparison.gates, or
    # canaries.gates), which is where a client reads verdicts.
    note = None
    if outcome.status == "gate_failed":
        failed = ", ".join(g.expression for g in failed_gates(outcome.summary))
        note = f"a gate failed: {failed} (see comparison.gates and canaries.gates)"
    return _with_labels(paths, note, started)


def _cluster_for(config: Any, executor: Executor, ray_address: str | None) -> Any:
    """The Ray cluster to judge the run on (`judge serve --executor ray`), or None: judged in
    this process, as with the local executor, or when Ray cannot judge this config (the
    worker log says why). Ray is imported only here, and only for the ray executor."""
    if executor != Executor.ray:
        return None
    from judge.cluster import RayCluster, cluster_refusal

    refusal = cluster_refusal(config)
    if refusal is not None:
        print(f"judging locally, not on Ray: {refusal}", flush=True)
        return None
    print(f"judging on Ray (address: {ray_address or 'local'})", flush=True)
    return RayCluster(address=ray_address)


def _without_labels(config: Any, paths: RunPaths, exc: JudgeError) -> dict[str, Any] | None:
    """A run whose judging is done but whose analysis failed on its uploaded labels (systems
    that do not match, say): the paid judgments stand. The labels are set aside and the run
    finished without them, with a note; None when the failure was not theirs."""
    from judge.run import finish_run
    from judge.service.analysis import labels_file

    labels = labels_file(paths)
    if labels is None:
        return None
    rejected = labels.with_name(f"rejected-{labels.name}")
    os.replace(labels, rejected)
    try:
        finish_run(config, paths.rundir)
    except JudgeError:  # not the labels' fault (or not only): put them back, report the first
        os.replace(rejected, labels)
        return None
    message = (
        f"calibration with the uploaded labels failed: {exc}; the run finished without them "
        "(kept as rejected-" + labels.name + "): upload corrected labels"
    )
    return {"status": "finished", "error": _client_text(message, paths)}


def _with_labels(paths: RunPaths, note: str | None, started: float) -> dict[str, Any]:
    from judge.service.analysis import labels_file, refresh_analysis

    labels = labels_file(paths)
    # The run analysed with the labels its run dir held; labels uploaded since it started may
    # have come after the analysis read them: analyse again with them.
    if labels is not None and labels.stat().st_mtime >= started:
        try:
            refresh_analysis(paths)
        except Exception as exc:  # the judgments stand; only the calibration is missing
            traceback.print_exc()
            message = f"calibration with the uploaded labels failed: {exc}; upload corrected labels"
            return {"status": "finished", "error": _client_text(message, paths)}
    return {"status": "finished", "error": note}


def _internal(exc: Exception, paths: RunPaths) -> str:
    return _client_text(f"internal error: {type(exc).__name__}: {exc}", paths)


def _client_text(message: str, paths: RunPaths) -> str:
    """A message for the run's owner: redacted, and naming inputs by their file names."""
    message = message.replace(str(paths.inputs) + os.sep, "").replace(str(paths.root), "<run>")
    return redact(message)[:2000]


def _write_outcome(paths: RunPaths, outcome: dict[str, Any]) -> None:
    tmp = paths.outcome.with_name(paths.outcome.name + ".tmp")
    tmp.write_text(json.dumps(outcome), encoding="utf-8")
    os.replace(tmp, paths.outcome)


def _die_with_parent(parent_pid: int) -> bool:
    """Ask the kernel for SIGINT when the server dies; False if it already has."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGINT), 0, 0, 0)
    # The server may have died between fork and prctl: then no signal would ever come.
    return os.getppid() == parent_pid


@contextlib.contextmanager
def _run_lock(paths: RunPaths) -> Iterator[None]:
    """Hold the run dir's lock (the one `judge run` takes), waiting for an older worker; an
    orphan that outlives its server (no pdeathsig off Linux) is waited for, then killed."""
    rundir = paths.rundir
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(rundir.locked(wait_s=ORPHAN_WAIT_S))
        except RunDirBusy as busy:
            _kill_orphan(busy.pid, paths)
            stack.enter_context(rundir.locked(wait_s=None))
        yield


def _kill_orphan(pid: int | None, paths: RunPaths) -> None:
    """Kill the process holding the run's lock, if it is really a worker of this run."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (TypeError, OSError):
        return
    if CHILD_MODULE.encode() in cmdline and str(paths.root).encode() in cmdline:
        print(f"killing worker {pid}, still holding {paths.rundir.lock_file}", file=sys.stderr)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
