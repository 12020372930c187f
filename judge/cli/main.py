"""Command line: `judge blind`, `judge prepare`, ...

Heavy imports (pandas, SDKs) happen inside commands so `judge --help` stays fast. User errors
(`JudgeError`) print one line and exit 2; a traceback only with `--debug`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from judge.cluster import Executor
from judge.errors import ConfigError, JudgeError

if TYPE_CHECKING:
    from judge.store.rundir import RunDir

app = typer.Typer(
    name="judge",
    help="Blinded LLM-as-judge pipeline: blind, judge in both orders, calibrate, compare.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_DEBUG_HELP = "Show full tracebacks."


def _show_version(wanted: bool) -> None:
    if wanted:
        from judge import DISTRIBUTION, __version__

        typer.echo(f"{DISTRIBUTION} {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help=_DEBUG_HELP)] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_show_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Blinded LLM-as-judge pipeline."""


@app.command()
def blind(
    responses: Annotated[Path, typer.Argument(help="Responses table (JSONL, CSV or Parquet).")],
    items: Annotated[Path, typer.Option("--items", help="Items table (item_id, prompt, ...).")],
    out: Annotated[Path, typer.Option("--out", help="Output directory.")],
    seed: Annotated[int, typer.Option(help="Seed for presentation order and A/B slots.")] = 0,
    pairs: Annotated[
        str, typer.Option(help="'all' (every pair of systems) or 'baseline:SYSTEM'.")
    ] = "all",
    extra_marker: Annotated[
        list[str] | None, typer.Option(help="Extra name to scrub (repeatable).")
    ] = None,
    scrub_ambiguous: Annotated[
        list[str] | None,
        typer.Option(help="Ambiguous word (e.g. llama) to scrub everywhere (repeatable)."),
    ] = None,
    allow_empty_outputs: Annotated[
        bool, typer.Option(help="Judge empty outputs as empty instead of failing.")
    ] = False,
) -> None:
    """Blind responses: opaque ids, scrubbed text, seeded pairs.

    Writes OUT/blinded.jsonl and OUT/pairs.jsonl (judge-visible), OUT/blinding_key.json
    (owner-only; the only file that names systems) and OUT/scrub_report.json.
    """
    from judge.run.blind_tables import blind_tables
    from judge.store.rundir import RunDir

    mode, baseline = _parse_pairs(pairs)
    target = RunDir(out)
    done = blind_tables(
        items,
        responses,
        target,
        seed=seed,
        mode=mode,
        baseline=baseline,
        extra_markers=extra_marker or (),
        scrub_ambiguous=scrub_ambiguous or (),
        allow_empty_outputs=allow_empty_outputs,
    )

    from judge.cli.console import print_scrub_report

    print_scrub_report(done.scrub)
    typer.echo(
        f"{done.responses} responses of {len(done.systems)} systems on {done.items} items; "
        f"{done.pairs} pairs"
        + (f" ({done.skipped} skipped: a response is missing)" if done.skipped else "")
    )
    typer.echo(f"judge-visible: {target.blinded_file}, {target.pairs_file}")
    typer.echo(f"blinding key (keep apart): {target.key_file}")


@app.command()
def prepare(
    config: Annotated[Path, typer.Argument(help="Run config (YAML).")],
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="Run directory (default runs/<name>).")
    ] = None,
) -> None:
    """Load, blind, pair and render every judge request into the run dir; sends nothing."""
    from judge.cli.console import print_prepare_summary
    from judge.config.run_config import load_config
    from judge.run import prepare_run
    from judge.store.rundir import RunDir

    cfg = load_config(config)
    target = RunDir.for_config(cfg, run_dir)
    with _interruptible(target):
        summary = prepare_run(cfg, target, log=lambda msg: typer.echo(msg, err=True))
    print_prepare_summary(summary)


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="Run config (YAML).")],
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="Run directory (default runs/<name>).")
    ] = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes sharing the store (one per core).")
    ] = 1,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", help="Stop cleanly before spending more than this (USD)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print requests and estimated cost; send nothing.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="No progress display and no step messages.")
    ] = False,
    progress_every: Annotated[
        float,
        typer.Option(
            "--progress-every",
            min=0.1,
            help="When stderr is not a terminal (CI logs): seconds between progress lines.",
        ),
    ] = 5.0,
    cache: Annotated[
        Path | None,
        typer.Option(
            help="Shared response cache (default: response_cache.sqlite beside the run dir)."
        ),
    ] = None,
    batch: Annotated[
        bool, typer.Option("--batch", help="Every judge in mode: batch (provider batch APIs).")
    ] = False,
    executor: Annotated[
        Executor,
        typer.Option(
            help="local: this machine's processes (--workers); ray: shards over a Ray cluster "
            "(pip install 'judge-pipeline\\[ray]')."
        ),
    ] = Executor.local,
    address: Annotated[
        str | None,
        typer.Option(
            help="With --executor ray: auto (this machine's cluster), ray://HOST:10001, or "
            "none: Ray's default (a `ray start` cluster on this machine, else one started for "
            "the run)."
        ),
    ] = None,
) -> None:
    """Blind, judge (both orders, cross-family), aggregate. Resumable: run it again on the same
    run dir to continue where it stopped; nothing is paid for twice. Ctrl-C stops it and
    prints where it stopped and the command that continues (exit 130)."""
    if address is not None and executor is not Executor.ray:
        raise typer.BadParameter("--address is for --executor ray", param_hint="--address")
    if executor is Executor.ray and workers > 1:
        raise typer.BadParameter(
            "--executor ray spreads the run over the cluster's CPUs: leave --workers out",
            param_hint="--workers",
        )
    if workers <= 1 and not dry_run and executor is Executor.local:
        from judge.run.prepare_process import start_spare

        # Its imports (half a second) overlap this process's reading the config and locking.
        start_spare()
    from judge.cli.console import print_dry_run, print_run_outcome
    from judge.cli.progress import progress_display
    from judge.config.run_config import load_config, stand_in_notice
    from judge.store.rundir import RunDir

    cfg = load_config(config)
    if batch:
        from judge.batch import in_batch_mode

        cfg = in_batch_mode(cfg)
    target = RunDir.for_config(cfg, run_dir)
    # First and last: a simulated or replayed run says so before and after every number.
    notice = stand_in_notice(cfg.judges)
    _notice(notice)
    if dry_run:
        from judge.run import dry_run as plan

        log = (lambda _msg: None) if quiet else (lambda msg: typer.echo(msg, err=True))
        print_dry_run(plan(cfg, target, log=log, cache_path=cache))
        _notice(notice)
        return
    from judge.run import run_pipeline

    cluster = None
    if executor is Executor.ray:
        from judge.cluster import RayCluster

        cluster = RayCluster(address=address)
    # Taken here (run_pipeline takes it again) so a busy run dir is refused before any display.
    with (
        _interruptible(target),
        target.locked(),
        progress_display(enabled=not quiet, every_s=progress_every) as display,
    ):
        outcome = run_pipeline(
            cfg,
            target,
            workers=workers,
            max_cost_usd=max_cost,
            cache_path=cache,
            on_progress=None if display is None else display.update,
            log=(lambda _msg: None) if display is None else display.log,
            cluster=cluster,
        )
    print_run_outcome(outcome)
    _notice(notice)
    # 3: stopped with requests pending (budget); 1: a `compare.gates` check failed (printed).
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)


def _notice(notice: str | None) -> None:
    if notice:
        typer.secho(notice, err=True, fg=typer.colors.YELLOW, bold=True)


@contextlib.contextmanager
def _interruptible(target: RunDir) -> Iterator[None]:
    """Ctrl-C (SIGINT) in the block: say where the run stopped (answered, pending) and the
    command that continues it, and exit 130, as shells report an interrupted program."""
    try:
        yield
    except KeyboardInterrupt:
        import shlex

        from judge.cli.console import print_interrupted
        from judge.run import stopped_at

        print_interrupted(stopped_at(target), shlex.join(["judge", *sys.argv[1:]]))
        raise typer.Exit(130) from None


# `judge calibrate` and `judge compare` (judge/cli/table_commands.py: typer at module level only).
from judge.cli.table_commands import calibrate, compare  # noqa: E402

app.command()(calibrate)
app.command()(compare)


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory.")],
    human: Annotated[
        Path | None,
        typer.Option(
            "--human",
            help="Add (or replace) the run's human labels (JSONL/CSV/Parquet) and calibrate "
            "against them; later reports keep using them.",
        ),
    ] = None,
) -> None:
    """Re-render a finished run's report (report.md, report.html, summary.json) from its store:
    aggregate, calibrate, compare. Sends no judge request.

    With --human, the labels are checked, the run is analysed with them, and only then are
    they kept in the run dir (human_labels.*; the run's config and its hash stay as prepared).
    """
    from judge.cli.console import print_findings
    from judge.run import finish_run, relabel_run
    from judge.store.rundir import RunDir

    target = RunDir(run_dir)
    config = target.stored_config()
    if human is None:
        finished = finish_run(config, target)
    else:
        finished = relabel_run(config, target, human)
        typer.echo(f"human labels: {human} kept as {target.human_labels()}")
    print_findings(finished.summary)
    typer.echo(f"report: {target.report_html} (and report.md)")
    if finished.exit_code:
        raise typer.Exit(finished.exit_code)  # a `compare.gates` check failed (printed above)


@app.command()
def show(
    run_dir: Annotated[Path, typer.Argument(help="A run directory with judgments.")],
    item_id: Annotated[str, typer.Argument(help="The item, as in judgments.jsonl.")],
    system: Annotated[
        list[str] | None,
        typer.Option(help="Only pairs holding this system (repeatable: both of a pair)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the trail as JSON.")] = False,
) -> None:
    """One item's audit trail: the question, each system's response as the judge saw it, every
    judgment with its line in judgments.jsonl, and each request's id, reply and verdict as
    store.sqlite holds them. Reads only."""
    from judge.cli.trail import item_trail, render_trail
    from judge.store.rundir import RunDir

    trail = item_trail(RunDir(run_dir), item_id, system)
    typer.echo(trail.model_dump_json(indent=2) if as_json else render_trail(trail))


def _parse_pairs(spec: str) -> tuple[str, str | None]:
    if spec == "all":
        return "all", None
    if spec.startswith("baseline:") and spec.split(":", 1)[1]:
        return "baseline", spec.split(":", 1)[1]
    raise ConfigError(f"--pairs '{spec}': expected 'all' or 'baseline:SYSTEM'")


def _os_error(exc: OSError) -> str:
    message = f"{exc.filename}: {exc.strerror or exc}"
    if isinstance(exc, FileExistsError | NotADirectoryError):
        message += " (a file is where a directory must go: move it or give another path)"
    return message


# `judge serve` and `judge tokens` (judge/service/commands.py imports only typer at module level).
from judge.service.commands import serve, tokens_app  # noqa: E402

app.command("serve")(serve)
app.add_typer(tokens_app, name="tokens")

# `judge simulate` (judge/cli/simulate_command.py, which imports only typer at module level).
from judge.cli.simulate_command import SIMULATE_HELP, simulate  # noqa: E402

app.command(help=SIMULATE_HELP)(simulate)

# `judge config schema` (judge/cli/config_command.py, which imports only typer at module level).
from judge.cli.config_command import config_app  # noqa: E402

app.add_typer(config_app, name="config")

# `judge panels` (judge/cli/panel_commands.py, which imports only typer at module level).
from judge.cli.panel_commands import panels  # noqa: E402

app.command()(panels)

# `judge cascade` (judge/cli/cascade_command.py, which imports only typer at module level).
from judge.cli.align_command import align  # noqa: E402
from judge.cli.cascade_command import cascade  # noqa: E402

app.command()(cascade)
app.command()(align)

# `judge import` (judge/cli/import_command.py, which imports only typer at module level).
from judge.cli.import_command import import_command  # noqa: E402

app.command("import")(import_command)

# `judge export` (judge/cli/export_command.py, which imports only typer at module level).
from judge.cli.export_command import export_command  # noqa: E402

app.command("export")(export_command)

# `judge pr-comment` (judge/cli/comment_command.py, which imports only typer at module level).
from judge.cli.comment_command import pr_comment  # noqa: E402

app.command("pr-comment")(pr_comment)

# `judge migrate` (judge/cli/migrate_command.py, which imports only typer at module level).
from judge.cli.migrate_command import migrate  # noqa: E402

app.command()(migrate)

# `judge label ...` (judge/cli/label_command.py, which imports only typer at module level).
from judge.cli.label_command import label_app  # noqa: E402

app.add_typer(label_app, name="label")

# `judge rubric ...` (judge/cli/rubric_command.py, which imports only typer at module level).
from judge.cli.rubric_command import rubric_app  # noqa: E402

app.add_typer(rubric_app, name="rubric")


def main() -> None:
    debug = "--debug" in sys.argv[1:]
    try:
        app()
    except JudgeError as exc:
        if debug:
            raise
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:  # outside a command (typer turns one inside into exit 130)
        sys.exit(130)
    except Exception as exc:
        if debug:
            raise
        if isinstance(exc, OSError) and exc.filename is not None:
            # A path the user gave cannot be made or written (a file where a directory must
            # go, no permission, disk full): theirs to fix, like a JudgeError.
            typer.echo(f"error: {_os_error(exc)}", err=True)
            sys.exit(2)
        typer.echo(
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback, "
            "and please report it)",
            err=True,
        )
        sys.exit(1)
