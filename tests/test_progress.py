"""The progress `judge run` shows comes from the runners' own counts, not from polling the store
(issue 15): at the end of a real run against the simulator the last progress equals what the
store holds, and no counting query runs while judging, however often the display refreshes.
One run dir, judged twice: by two processes until the budget stops them, then resumed by one.
Also: a total that grows while judging reads "of at least N".

Every SQLite statement this process runs is traced (each connection's trace callback), in one
timeline with the progress snapshots handed to the display: the store's counts are read before
the first snapshot of a run, never between two.
"""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from judge import RunDir, load_config
from judge.cli.progress import progress_display
from judge.judging.tally import Progress, Tally
from judge.run import run_pipeline
from judge.run.execute import progress_of
from judge.simulator import LatencyConfig, SimulatorConfig, running_simulator
from tests.test_runner import judge_entry, write_config

ITEMS = 24
DISTINCT = 16
"""Items 16-23 repeat the prompts and outputs of 0-7: their requests are answered from the
cache (or the in-flight twin), so `cached` is counted too."""
REQUESTS = ITEMS * 2


@dataclass
class Timeline:
    """SQL statements and progress snapshots of this process, in the order they happened."""

    events: list[tuple[str, Any]] = field(default_factory=list)

    def progress(self, p: Progress) -> None:
        self.events.append(("progress", p))

    def snapshots(self) -> list[Progress]:
        return [p for kind, p in self.events if kind == "progress"]

    def counting_between_snapshots(self) -> list[str]:
        """Counting queries run after the first snapshot and before the last one."""
        at = [i for i, (kind, _) in enumerate(self.events) if kind == "progress"]
        return [
            sql
            for kind, sql in self.events[at[0] : at[-1]]
            if kind == "sql" and ("COUNT(" in sql.upper() or "SUM(" in sql.upper())
        ]


@dataclass
class Runs:
    partial: Timeline
    """Two worker processes (`--workers 2`), stopped by the budget part of the way."""
    resumed: Timeline
    """The same run dir finished by one process: progress starts from what the store held."""
    run_dir: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    root = tmp_path_factory.mktemp("progress")
    items, responses = root / "items.jsonl", root / "responses.jsonl"
    with items.open("w") as fh, responses.open("w") as out:
        for i in range(ITEMS):
            k = i % DISTINCT
            fh.write(json.dumps({"item_id": f"q{i}", "prompt": f"Question number {k}?"}) + "\n")
            for system, text in (("sys-a", f"Answer {k} from a."), ("sys-b", f"B says {k}.")):
                row = {"item_id": f"q{i}", "system": system, "output": text}
                out.write(json.dumps(row) + "\n")
    # Failures (500s, one attempt) and replies that stay unparseable after the repair: every
    # count the display shows is non-zero. 40 ms a reply over 4 connections: the display gets
    # several refreshes a run.
    faults = SimulatorConfig(
        seed=4, latency=LatencyConfig(median_s=0.04), rate_500=0.15, rate_malformed=0.4
    )
    current = [Timeline()]
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(lambda sql: current[0].events.append(("sql", sql)))
        return conn

    with pytest.MonkeyPatch.context() as patch, running_simulator(faults) as sim:
        patch.setattr(sqlite3, "connect", connect)
        judge = judge_entry(
            sim,
            "openai/sim-judge",
            family="simulated",
            max_connections=4,
            max_attempts=1,
            input_cost_per_mtok=100.0,
            output_cost_per_mtok=100.0,
        )
        config = load_config(
            write_config(root, items, responses, judges=[judge], compare={"resamples": 100})
        )

        def run(run_dir: str, **kwargs: Any) -> Timeline:
            timeline = current[0] = Timeline()
            run_pipeline(config, root / run_dir, on_progress=timeline.progress, **kwargs)
            return timeline

        partial = run("run", workers=2, max_cost_usd=1.0)  # about half of what it all costs
        resumed = run("run")
        yield Runs(partial, resumed, root / "run")


def _stored(run_dir: Path) -> Progress:
    with RunDir(run_dir).open_store() as store:
        return progress_of(store)


def _same(shown: Progress, stored: Progress) -> bool:
    """Equal counts; costs equal up to the order they were added in (whether the total is final
    says whether a prepare still runs, not what the store holds)."""
    return shown == replace(
        stored,
        spent_usd=pytest.approx(stored.spent_usd, rel=1e-9),
        total_final=shown.total_final,
    )


def test_two_processes_stopped_by_the_budget_show_what_the_store_holds(runs: Runs) -> None:
    last = runs.partial.snapshots()[-1]
    assert 0 < last.done < REQUESTS and last.spent_usd > 0
    # The store as the stopped run left it: what the resumed run reads when it starts. The
    # worker process's counts are in it: the parent's own would fall short of the store's.
    stored = runs.resumed.snapshots()[0]
    assert _same(last, stored)


def test_a_resumed_run_ends_with_the_stores_counts(runs: Runs) -> None:
    last = runs.resumed.snapshots()[-1]
    assert _same(last, _stored(runs.run_dir))
    assert last.done == last.total == REQUESTS
    # Every count the display shows was exercised, so equality says something.
    assert last.cached > 0 and last.failed > 0 and last.parse_failures > 0
    assert last.spent_usd > runs.partial.snapshots()[-1].spent_usd
    # Counted on from where the earlier run stopped: monotonic, never from zero again.
    done = [p.done for p in runs.resumed.snapshots()]
    assert done == sorted(done) and done[0] > 0


@pytest.mark.parametrize("which", ["partial", "resumed"])
def test_no_refresh_queries_the_store(runs: Runs, which: str) -> None:
    timeline: Timeline = getattr(runs, which)
    assert len(timeline.snapshots()) >= 3  # refreshed while judging, not only at the ends
    assert any(kind == "sql" for kind, _ in timeline.events)  # the trace did see statements
    assert timeline.counting_between_snapshots() == []


def test_a_growing_total_reads_at_least() -> None:
    start = Progress(
        total=100, done=10, cached=1, failed=2, parse_failures=3, spent_usd=0.5, total_final=False
    )
    tally = Tally(start)
    tally.add_total(50)
    out = io.StringIO()
    with progress_display(file=out, every_s=0.1) as display:
        assert display is not None
        display.update(tally.snapshot())
        growing = display.line()
        tally.close_total()
        display.update(tally.snapshot())
        final = display.line()
    assert growing.startswith("judging: 10 of at least 150 answered; cached 1, failed 2,")
    assert "%" not in growing and "left" not in growing
    assert final.startswith("judging: 10 of 150 answered (6.7%); cached 1, failed 2, unparsed 3")
