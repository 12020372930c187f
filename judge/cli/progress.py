"""What `judge run` shows while it works: the stage it is in (preparing: load, blind, pair,
render), then the judging's progress.

A terminal gets a live bar that names the stage while preparing (never "judging 0/?") and
counts once requests are sent. Output that is not a terminal (CI logs, `| tee`) gets lines
instead: each stage as it starts, and every `every_s` seconds the progress (answered of
total, rate, spend, time left), or the stage still running, so a log never goes quiet for
long.

Every refresh reads counts kept in memory (`judge.judging.tally`), never the store. While prepare is
still storing requests the total is a lower bound: "of at least N", without a share or a time
left.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress as Bar
    from rich.progress import TaskID

    from judge.judging.tally import BatchProgress, Progress

PREPARING = "preparing (load, blind, pair, render)"


class RunDisplay:
    """Fed by `judge.run.run_pipeline`'s `log` (stage messages) and `on_progress` (the run's
    counts); renders them as a bar (terminal) or as periodic lines."""

    def __init__(self, console: Console, every_s: float) -> None:
        self._console = console
        self._every_s = every_s
        self._lock = threading.Lock()
        self._stage = PREPARING
        self._stage_started = time.monotonic()
        self._progress: Progress | None = None
        self._judging = False
        """Progress arrived since the last step message: the judging is what is running."""
        self._first: tuple[float, int] | None = None
        """(time, answered) at the first progress: the rate counts this run's answers only."""
        self._last_line = time.monotonic()
        self._bar: Bar | None = None
        self._task: TaskID | None = None

    def attach(self, bar: Bar) -> None:
        """Render on `bar` (a terminal) instead of in lines."""
        self._bar = bar
        self._task = bar.add_task(self._stage, total=None, count="", detail="")

    # -- fed by the pipeline -------------------------------------------------------------------

    def log(self, message: str) -> None:
        """A step of the run: printed, and the stage the bar (or the next line) names."""
        with self._lock:
            if self._judging and self._bar is None and self._answered():
                self._print(self.line())  # the judging is over: its last state first
            self._judging = False
            self._print(message)
            self._stage = message if self._progress else f"{PREPARING}: {message}"
            self._stage_started = time.monotonic()
            if self._bar is not None and self._task is not None:
                self._bar.update(self._task, description=self._stage)

    def update(self, progress: Progress) -> None:
        with self._lock:
            now = time.monotonic()
            if self._first is None:
                self._first = (now, progress.done)
            self._progress = progress
            self._judging = True
            if self._bar is not None and self._task is not None:
                final = progress.total_final
                self._bar.update(
                    self._task,
                    description="judging",
                    # A growing total: a pulsing bar, not one that fills and empties again.
                    total=progress.total if final else None,
                    completed=progress.done,
                    count=f"{progress.done:,}/{progress.total:,}{'' if final else '+'}",
                    detail=self._detail(progress, now),
                )

    # -- lines ---------------------------------------------------------------------------------

    def heartbeat(self) -> None:
        """Without a terminal: the state as a line, when none was printed for `every_s`."""
        with self._lock:
            now = time.monotonic()
            if now - self._last_line < self._every_s:
                return
            if self._judging:
                self._print(self.line())
            else:
                self._print(f"{self._stage} ({now - self._stage_started:.0f} s)")

    def line(self) -> str:
        """The judging's state in one line."""
        p = self._progress
        if p is None:
            return self._stage
        if not p.total_final:
            head = f"{p.done:,} of at least {p.total:,} answered"
        else:
            share = f" ({100 * p.done / p.total:.1f}%)" if p.total else ""
            head = f"{p.done:,} of {p.total:,} answered{share}"
        return f"judging: {head}; " + self._detail(p, time.monotonic())

    def _answered(self) -> bool:
        """Whether answers arrived since the first progress (this run's own)."""
        return bool(self._progress and self._first and self._progress.done > self._first[1])

    def close(self) -> None:
        """Without a terminal: the last state, once the block ends (a bar shows its own)."""
        with self._lock:
            if self._bar is None and self._judging:
                self._print(self.line())

    def _detail(self, p: Progress, now: float) -> str:
        rate = None
        if self._first is not None and now - self._first[0] >= 0.5:
            rate = (p.done - self._first[1]) / (now - self._first[0])
        parts = [f"cached {p.cached:,}", f"failed {p.failed:,}", f"unparsed {p.parse_failures:,}"]
        if rate is not None:
            parts.append(f"{rate:,.1f}/s")
        parts.append(f"${p.spent_usd:,.4f}")
        if p.batches is not None:
            parts.append(_batches(p.batches))
        if rate and p.total_final and p.total > p.done and p.batches is None:
            # Batch answers arrive a batch at a time, hours apart: no rate predicts them.
            parts.append(f"about {_duration((p.total - p.done) / rate)} left")
        return ", ".join(parts)

    def _print(self, text: str) -> None:
        self._console.print(text, highlight=False, markup=False, soft_wrap=True)
        self._last_line = time.monotonic()


def _batches(b: BatchProgress) -> str:
    text = f"batches: {b.submitted:,} in progress"
    if b.planned:
        text += f", {b.planned:,} to submit"
    return text + f" ({b.in_flight:,} requests), {b.done:,} done ({b.answered:,} answered)"


@contextlib.contextmanager
def progress_display(
    *,
    enabled: bool = True,
    every_s: float = 5.0,
    file: TextIO | None = None,
    terminal: bool | None = None,
) -> Iterator[RunDisplay | None]:
    """A `RunDisplay` on stderr (or `file`) for the block; None when not `enabled`.
    `terminal`: treat the output as a terminal or not (default: ask it)."""
    if not enabled:
        yield None
        return
    console = Console(stderr=file is None, file=file, highlight=False, force_terminal=terminal)
    display = RunDisplay(console, every_s)
    if console.is_terminal:
        with _bar(display, console):
            yield display
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(min(1.0, every_s)):
            display.heartbeat()

    thread = threading.Thread(target=beat, name="judge-progress", daemon=True)
    thread.start()
    try:
        yield display
    finally:
        stop.set()
        thread.join()
        display.close()


@contextlib.contextmanager
def _bar(display: RunDisplay, console: Console) -> Iterator[None]:
    from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar
    from rich.table import Column

    bar = Bar(
        SpinnerColumn(),
        # A long stage (a file's path) is cut, not wrapped: the bar stays one line.
        TextColumn(
            "{task.description}",
            table_column=Column(max_width=72, no_wrap=True, overflow="ellipsis"),
        ),
        BarColumn(),
        TextColumn("{task.fields[count]}"),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
        # Each frame takes about a millisecond of CPU (rich's own thread, holding the GIL):
        # rich's default of 10 a second would be ~1% of a core taken from the judging loop.
        refresh_per_second=5,
    )
    display.attach(bar)
    with bar:
        yield


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
