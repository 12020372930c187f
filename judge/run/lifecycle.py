"""A run from start to finish, as the CLI and the service both call it: prepare -> judge ->
outputs -> analyse -> report, under the run dir's lock, returning a typed outcome whose exit
meaning the edges translate (an exit code, a run status)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from judge.config.run_config import RunConfig
from judge.errors import ConfigError, DataError
from judge.judging.tally import Tally
from judge.run.execute import (
    Progress,
    ProgressCallback,
    execute,
    progress_of,
    simulator_for,
    worker_pool,
)
from judge.run.outputs import write_outputs
from judge.run.prepared import PrepareSummary
from judge.store.rundir import RunDir
from judge.summary.run_summary import GateOutcome, RunSummary

if TYPE_CHECKING:
    from judge.cluster import RayCluster
    from judge.judging.runner import RunStats

Status = Literal["complete", "gate_failed", "stopped"]
"""complete: every request answered and every `compare.gates` check (and canary) passed;
gate_failed: the run is complete but a gate failed; stopped: requests are still pending
(budget, interrupt)."""

EXIT_CODES: dict[Status, int] = {"complete": 0, "gate_failed": 1, "stopped": 3}


def failed_gates(summary: RunSummary) -> list[GateOutcome]:
    """The `compare.gates` checks that failed, and the canaries' (none before the
    analysis)."""
    if summary.analysis is None:
        return []
    return [g for _, g in summary.analysis.gates() if not g.passed]


def status_of(summary: RunSummary) -> Status:
    if not summary.complete:
        return "stopped"
    return "gate_failed" if failed_gates(summary) else "complete"


@dataclass(frozen=True)
class Finished:
    """An analysed run: its summary, with the report rendered from it."""

    rundir: RunDir
    summary: RunSummary

    @property
    def status(self) -> Status:
        return status_of(self.summary)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


@dataclass(frozen=True)
class RunOutcome(Finished):
    """A run as far as `run_pipeline` took it: `summary` is analysed when the run is complete,
    counts and judges' behaviour only otherwise (status `stopped`)."""

    prepared: PrepareSummary
    stats: RunStats
    answered_before: int = 0
    """Requests an earlier run had answered when this one started (a resumed run)."""

    @property
    def complete(self) -> bool:
        """Every request has a stored response (verdict, parse failure or error)."""
        return self.summary.complete


def run_pipeline(
    config: RunConfig,
    run_dir: RunDir | str | Path,
    *,
    workers: int = 1,
    max_cost_usd: float | None = None,
    cache_path: Path | None = None,
    human: Path | None = None,
    on_progress: ProgressCallback | None = None,
    log: Callable[[str], None] = lambda _msg: None,
    cluster: RayCluster | None = None,
) -> RunOutcome:
    """Prepare (or resume) the run, judge what is pending, write the outputs and, once nothing
    is pending, analyse and render the report. `human`: labels to calibrate against instead of
    the config's `calibration.human`. `cluster`: judge on Ray (`judge.cluster`) once prepared.
    Raises `RunDirBusy` when another process works on the run dir."""
    rundir = _as_rundir(run_dir)
    budget = max_cost_usd if max_cost_usd is not None else config.budget.max_cost_usd
    _check_priced(config, budget)
    if cluster is not None:
        from judge.cluster import check_cluster_config

        check_cluster_config(config)
        if workers > 1:
            raise ConfigError(
                "--executor ray spreads the run over the cluster: leave --workers out"
            )
    with rundir.locked():
        if workers <= 1:
            prepared, stats, before = _judge_while_preparing(
                config, rundir, budget, cache_path, on_progress, log, cluster
            )
        else:
            prepared, stats, before = _prepare_then_judge(
                config, rundir, workers, budget, cache_path, on_progress, log, cluster
            )
        summary = write_outputs(config, rundir)
        if summary.complete:
            summary = _finish(config, rundir, summary, human, log).summary
    return RunOutcome(rundir, summary, prepared=prepared, stats=stats, answered_before=before.done)


def _prepare_then_judge(
    config: RunConfig,
    rundir: RunDir,
    workers: int,
    budget: float | None,
    cache_path: Path | None,
    on_progress: ProgressCallback | None,
    log: Callable[[str], None],
    cluster: RayCluster | None = None,
) -> tuple[PrepareSummary, RunStats, Progress]:
    """Several worker processes, or a cluster: each reads the prepared run's pending requests,
    so the run is prepared first (they start, and import, meanwhile)."""
    with worker_pool(config, workers) as pool:
        from judge.run.prepare import prepare_run

        # Prepared from the config as written (a `simulator` base_url stays a name, not a
        # port), so the run's config hash and cache keys are stable across restarts.
        prepared = prepare_run(config, rundir, log=log)
        cache = rundir.cache_file(config, cache_path)
        budget, before = _before(rundir, budget, on_progress, log, False, workers)
        with simulator_for(config) as live:
            stats = execute(
                live,
                rundir,
                workers=workers,
                max_cost_usd=budget,
                cache_path=cache,
                on_progress=on_progress,
                pool=pool,
                tally=Tally(before),
                cluster=cluster,
            )
    return prepared, stats, before


def _judge_while_preparing(
    config: RunConfig,
    rundir: RunDir,
    budget: float | None,
    cache_path: Path | None,
    on_progress: ProgressCallback | None,
    log: Callable[[str], None],
    cluster: RayCluster | None = None,
) -> tuple[PrepareSummary, RunStats, Progress]:
    """One process judging (or, with `cluster`, driving a cluster's judging): the prepare runs
    in another (`judge.run.prepare_process`), and each chunk of requests is judged as soon as
    it is stored, so the first request goes out while the rest are still being rendered. A
    Ctrl-C here stops the prepare at its next chunk."""
    from judge.run.prepare_process import preparing_meanwhile

    with preparing_meanwhile(config, rundir, log) as prepare:
        # While the prepare reads its input: the judges' clients and their imports.
        from judge.run.worker import warm_up

        if cluster is None:  # a cluster's actors import the judges' clients
            warm_up(config)
        prepare.wait_started()
        cache = rundir.cache_file(config, cache_path)
        budget, before = _before(rundir, budget, on_progress, log, prepare.preparing.is_set())
        # The total grows as the prepare stores requests, and is final when it ends.
        tally = Tally(before)
        prepare.follow(tally)
        with simulator_for(config) as live:
            stats = execute(
                live,
                rundir,
                max_cost_usd=budget,
                cache_path=cache,
                on_progress=on_progress,
                preparing=prepare.preparing,
                abort=prepare.failed,
                tally=tally,
                cluster=cluster,
            )
        prepared = prepare.result()
    return prepared, stats, before


def _before(
    rundir: RunDir,
    budget: float | None,
    on_progress: ProgressCallback | None,
    log: Callable[[str], None],
    preparing: bool,
    workers: int = 1,
) -> tuple[float | None, Progress]:
    """The budget left and the progress when judging starts (a resumed run's answers count as
    done), logged and shown."""
    # The one read of the store's counts: progress is counted in memory from here.
    with rundir.open_store() as store:
        before = progress_of(store)
    if budget is not None:
        budget = max(0.0, budget - before.spent_usd)
    if preparing:
        before = replace(before, total_final=False)
    if on_progress is not None:
        on_progress(before)  # a display moves on from "preparing"
    if before.done:
        log(
            f"{before.done:,} of {before.total:,} requests already answered (from an "
            f"earlier run); sending {before.total - before.done:,}"
            + (" and those still being prepared" if preparing else "")
        )
    elif preparing:
        log(f"judging requests as they are prepared ({before.total:,} stored so far)")
    else:
        log(f"judging {before.total:,} requests with {workers} worker(s)")
    return budget, before


def stopped_at(run_dir: RunDir | str | Path) -> Progress | None:
    """What the run's store holds now (answered, pending): where an interrupted run stopped.
    None when the run was never prepared (nothing can have been judged)."""
    rundir = _as_rundir(run_dir)
    if not rundir.has_store():
        return None
    with rundir.open_store() as store:
        if store.get_meta("config_hash") is None:
            return None
        return progress_of(store)


def finish_run(
    config: RunConfig,
    run_dir: RunDir | str | Path,
    *,
    human: Path | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> Finished:
    """Aggregate, calibrate, compare and render the report of a run whose judging is done
    (no judge calls: `judge report` re-renders with this)."""
    rundir = _as_rundir(run_dir)
    with rundir.locked():
        # summary.json is written once analysed: an analysis that fails (labels that do not
        # fit, a gate that does not parse) leaves the previous one in place, with its report.
        summary = write_outputs(config, rundir, summary_file=False)
        if not summary.complete:
            raise DataError(
                f"{summary.counts.pending} requests are still pending: finish the run with "
                "`judge run` first",
                path=str(rundir.path),
            )
        return _finish(config, rundir, summary, human, log)


def relabel_run(
    config: RunConfig,
    run_dir: RunDir | str | Path,
    labels: Path,
    *,
    move: bool = False,
    log: Callable[[str], None] = lambda _msg: None,
) -> Finished:
    """Add or replace the human labels of a finished run and analyse it again with them (no
    judge calls). The run dir keeps the labels beside the store (`RunDir.keep_labels`), so the
    stored config and its hash stay as prepared, and every later analysis (`judge report`, a
    resumed `judge run`, the service) uses them. Labels that fail the check or the analysis
    are not kept: the previous ones (or none) stay. `move`: rename `labels` into the run dir
    instead of copying it."""
    from judge.analysis.table_analysis import validate_labels

    rundir = _as_rundir(run_dir)
    with rundir.locked():
        validate_labels(labels)
        kept = rundir.human_labels()
        if kept is not None and kept.resolve() == labels.resolve():
            return finish_run(config, rundir, log=log)  # the run's own labels, again
        with rundir.labels_replaced(labels, move=move) as stored:
            try:
                return finish_run(config, rundir, log=log)
            except DataError as exc:
                raise exc.renamed(str(stored), str(labels)) from None


def write_partial_outputs(config: RunConfig, run_dir: RunDir | str | Path) -> RunSummary:
    """The judgments and counts of what the store holds now (a cancelled or stopped run)."""
    rundir = _as_rundir(run_dir)
    with rundir.locked():
        return write_outputs(config, rundir)


def _finish(
    config: RunConfig,
    rundir: RunDir,
    summary: RunSummary,
    human: Path | None,
    log: Callable[[str], None],
) -> Finished:
    from judge.report import write_report
    from judge.run.analyse import analyse_run

    log("calibrating and comparing")
    summary = analyse_run(config, rundir, summary, human=human)
    rundir.write_summary(summary)
    write_report(rundir, summary)
    return Finished(rundir, summary)


def _check_priced(config: RunConfig, budget: float | None) -> None:
    from judge.judging.pricing import unpriced

    missing = unpriced(config.judges) if budget is not None else []
    if missing:
        raise ConfigError(
            f"a budget of ${budget:g} is set but the price of {', '.join(missing)} is unknown: set "
            "input_cost_per_mtok and output_cost_per_mtok on the judge (0 for your own hardware)"
        )


def _as_rundir(run_dir: RunDir | str | Path) -> RunDir:
    return run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
