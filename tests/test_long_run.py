"""`judge run` over long work (issue 14): Ctrl-C says where the run stopped and the command
that continues it (exit 130), the resumed run says what an earlier run had answered, output that
is not a terminal gets a progress line every few seconds, and a terminal's bar names the
preparing stage instead of reading "judging 0/?".

One real `judge run` process against a slow simulator (latency), sent SIGINT as a shell's
Ctrl-C would once its progress lines show answers; the printed command then finishes the run.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from judge import RunDir
from judge.cli.progress import PREPARING, progress_display
from judge.run.execute import Progress
from judge.simulator import LatencyConfig, SimulatorConfig, running_simulator
from tests.helpers import REPO, run_cli_here
from tests.test_runner import judge_entry, quality, write_config, write_dataset

ITEMS = 12
REQUESTS = ITEMS * 2  # one pair of systems per item, both orders
CONNECTIONS = 2
_PROGRESS = re.compile(r"^judging: (\d+) of (\d+) answered")


@dataclass
class Interrupted:
    config: Path
    run_dir: Path
    stderr: str
    """Everything the interrupted process wrote to stderr."""
    returncode: int
    answered: int
    """Responses in the store after the interrupt."""
    resumed: subprocess.CompletedProcess
    continued_with: list[str]
    sim_stats: dict


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Interrupted:
    root = tmp_path_factory.mktemp("long-run")
    items, responses = write_dataset(
        root,
        ITEMS,
        {
            "sys-a": lambda i: quality(0.8, f"A answers question {i} at some length."),
            "sys-b": lambda i: quality(0.3, f"B says {i}."),
        },
    )
    # 0.5 s a reply over 2 connections: 24 requests take 6 s, time to interrupt mid-way.
    slow = SimulatorConfig(seed=2, latency=LatencyConfig(median_s=0.25))
    with running_simulator(slow) as sim:
        judge = judge_entry(sim, "openai/sim-judge", family="simulated")
        config = write_config(
            root,
            items,
            responses,
            judges=[{**judge, "max_connections": CONNECTIONS}],
            compare={"resamples": 200},
        )
        run_dir = root / "runs" / "t"
        args = ["run", str(config), "--run-dir", str(run_dir), "--progress-every", "0.3"]
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        # `judge run` as a terminal starts it: with Ctrl-C's default handling, which a suite run
        # in the background (nohup, `&`) would otherwise pass on as "ignore SIGINT".
        start = (
            "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"sys.argv = ['judge', *{args!r}]; runpy.run_module('judge.cli', run_name='__main__')"
        )
        process = subprocess.Popen(
            [sys.executable, "-c", start],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        watchdog = threading.Timer(60, process.kill)  # never hang the suite
        watchdog.start()
        try:
            seen = []
            assert process.stderr is not None
            for line in process.stderr:  # not a terminal: progress comes as lines
                seen.append(line)
                found = _PROGRESS.match(line)
                if found and int(found.group(1)) >= 4:
                    break
            process.send_signal(signal.SIGINT)
            _, rest = process.communicate(timeout=30)
        finally:
            watchdog.cancel()
        stderr = "".join(seen) + rest
        with RunDir(run_dir).open_store() as store:
            answered = store.counts()["responses"]
        # The command it printed, as a user would paste it (no latency now: nothing to wait for).
        sim.update(latency={"median_s": 0.0})
        commands = [x for x in stderr.splitlines() if x.startswith("continue with: ")]
        assert len(commands) == 1, stderr
        continued_with = shlex.split(commands[0].removeprefix("continue with: "))
        resumed = run_cli_here(*continued_with[1:])
        stats = sim.stats()
    return Interrupted(
        config, run_dir, stderr, process.returncode, answered, resumed, continued_with, stats
    )


def test_ctrl_c_says_where_it_stopped_and_how_to_continue(interrupted: Interrupted) -> None:
    assert interrupted.returncode == 130, interrupted.stderr
    assert "Traceback" not in interrupted.stderr
    n = interrupted.answered
    assert 2 <= n < REQUESTS
    # The counts are the store's, as it was left.
    assert (
        f"interrupted: {n} of {REQUESTS} requests answered, {REQUESTS - n} pending"
        in interrupted.stderr
    )
    assert interrupted.continued_with == [
        "judge",
        "run",
        str(interrupted.config),
        "--run-dir",
        str(interrupted.run_dir),
        "--progress-every",
        "0.3",
    ]


def test_progress_lines_come_while_judging_when_not_a_terminal(interrupted: Interrupted) -> None:
    lines = interrupted.stderr.splitlines()
    # The preparing steps, each as a line, before any judging.
    steps = ["loading items from", "loading responses from", "blinding, pairing and rendering 24"]
    where = [next(i for i, line in enumerate(lines) if line.startswith(s)) for s in steps]
    assert where == sorted(where)
    counts = [int(m.group(1)) for m in map(_PROGRESS.match, lines) if m]
    assert len(counts) >= 2 and counts == sorted(counts)  # every 0.3 s here, 5 s by default
    assert all(f"of {REQUESTS} answered" in line for line in lines if _PROGRESS.match(line))


def test_the_resumed_run_says_what_was_already_answered(interrupted: Interrupted) -> None:
    resumed, n = interrupted.resumed, interrupted.answered
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"{n} of {REQUESTS} requests already answered (from an earlier run); sending "
        f"{REQUESTS - n}" in resumed.stderr
    )
    assert f"{REQUESTS} of {REQUESTS} requests answered ({n} by an earlier run" in resumed.stdout
    # Nothing answered was sent again: only requests in flight at the interrupt can repeat.
    stats = interrupted.sim_stats
    assert stats["answered"] - stats["duplicates"] == REQUESTS
    assert stats["duplicates"] <= CONNECTIONS


def _progress(done: int, total: int = 10) -> Progress:
    return Progress(total=total, done=done, cached=0, failed=0, parse_failures=0, spent_usd=0.0)


def test_a_terminal_bar_names_the_preparing_stage_not_judging_zero() -> None:
    out = io.StringIO()
    with progress_display(file=out, terminal=True) as display:
        assert display is not None
        display.log("loading items from items.jsonl")
        time.sleep(0.4)  # the bar refreshes 5 times a second
        display.update(_progress(3))
        time.sleep(0.4)
    screen = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out.getvalue())
    stage = screen.index(f"{PREPARING}: loading items from items.jsonl")
    assert stage < screen.index("judging") < screen.index("3/10")
    assert "0/?" not in screen


def test_without_a_terminal_a_long_step_still_gets_a_line() -> None:
    out = io.StringIO()
    with progress_display(file=out, every_s=0.1) as display:
        assert display is not None
        display.log("rendering the judge requests")
        time.sleep(0.5)
    lines = out.getvalue().splitlines()
    assert lines[0] == "rendering the judge requests"
    assert f"{PREPARING}: rendering the judge requests (0 s)" in lines[1:]
