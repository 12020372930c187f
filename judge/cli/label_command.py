"""`judge label ...`: labelling tasks from the command line (the service serves the same tasks
on its labelling page). Registered on the main CLI in `judge/cli/main.py`; the library loads inside
the commands, so `judge --help` stays fast."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from judge.errors import ConfigError
from judge.labelling.label_store import open_labelling

if TYPE_CHECKING:
    from judge.store.rundir import RunDir

label_app = typer.Typer(
    help="Human labelling: create a task from a judged run, export pairs, import labels.",
    no_args_is_help=True,
    add_completion=False,
)

_RUN = Annotated[Path, typer.Argument(help="A finished run's directory.")]


def _rundir(path: Path) -> RunDir:
    from judge.store.rundir import RunDir

    rundir = RunDir(path)
    if not rundir.has_store():
        raise ConfigError(f"{path}: not a run directory (no store.sqlite)")
    return rundir


def _where(values: list[str]) -> dict[str, list[str]]:
    where: dict[str, list[str]] = {}
    for value in values:
        column, sep, wanted = value.partition("=")
        if not sep or not column or not wanted:
            raise ConfigError(f"--where {value!r}: expected COLUMN=VALUE[,VALUE...]")
        where.setdefault(column, []).extend(v for v in wanted.split(",") if v)
    return where


@label_app.command("create")
def create(
    run_dir: _RUN,
    mode: Annotated[
        str, typer.Option(help="active: uncertain pairs first, with known probabilities; uniform.")
    ] = "active",
    size: Annotated[int | None, typer.Option(help="Pairs to label at most.")] = None,
    overlap: Annotated[int, typer.Option(help="Annotators per pair (2+: human ceiling).")] = 1,
    where: Annotated[
        list[str] | None, typer.Option(help="Only items with COLUMN=VALUE[,VALUE]; repeatable.")
    ] = None,
    uniform_share: Annotated[float, typer.Option(help="active: uniform share of weight.")] = 0.2,
    seed: Annotated[int, typer.Option(help="Seed of the sampling order.")] = 0,
    instructions: Annotated[
        Path | None, typer.Option(help="Text file shown to annotators (default: the rubric).")
    ] = None,
) -> None:
    """Create the run's labelling task: which pairs humans label, in what order."""
    from pydantic import ValidationError

    from judge.config.run_config import format_validation_error
    from judge.labelling.task import TaskSpec, create_task

    rundir = _rundir(run_dir)
    try:
        spec = TaskSpec(
            mode=mode,  # type: ignore[arg-type]
            size=size,
            overlap=overlap,
            where=_where(where or []),
            uniform_share=uniform_share,
            seed=seed,
            instructions=instructions.read_text(encoding="utf-8") if instructions else None,
        )
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc)) from None
    task_id = create_task(rundir, spec)
    with open_labelling(rundir) as store:
        task = store.task()
    pool = task[2] if task else 0
    typer.echo(f"task {task_id}: {pool} pairs queued ({spec.mode}, overlap {spec.overlap})")


@label_app.command("status")
def status(
    run_dir: _RUN,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Where the task stands, and whether more labels would change the decision."""
    from judge.labelling.status import task_status

    try:
        now = task_status(_rundir(run_dir))
    except LookupError as exc:
        raise ConfigError(f"{run_dir}: {exc} (create one with `judge label create`)") from None
    if as_json:
        typer.echo(json.dumps(now.model_dump(mode="json"), indent=2))
        return
    typer.echo(
        f"task {now.task_id} ({now.spec.mode}): {now.labels} labels on {now.labelled} of "
        f"{now.pool} pairs; {now.skipped} skipped by all, {now.ahead} labelled ahead; "
        f"{now.annotators} annotators"
    )
    typer.echo(now.stopping.message)
    for part in now.stopping.parts:
        mark = "settled" if part.settled else "open"
        typer.echo(f"  {part.name}: {mark}: {part.message}")


@label_app.command("export")
def export(
    run_dir: _RUN,
    annotator: Annotated[str, typer.Option(help="Who will label the file.")],
    out: Annotated[Path, typer.Option(help="The file to write (.csv or .jsonl).")],
    count: Annotated[int, typer.Option(help="Pairs to export.", min=1)] = 50,
) -> None:
    """Export the annotator's next pairs to a file, blinded as on the labelling page."""
    from judge.labelling.offline import export_pairs

    written = export_pairs(_rundir(run_dir), annotator, count, out)
    typer.echo(f"{written} pairs for {annotator} in {out}: fill `choice` (1, 2, 3 = tie, s = skip)")


@label_app.command("import")
def import_(
    run_dir: _RUN,
    labels: Annotated[Path, typer.Argument(help="A file `judge label export` wrote, filled in.")],
    refresh: Annotated[
        bool, typer.Option(help="Analyse the run with the labels (summary, report).")
    ] = True,
) -> None:
    """Import the answers of an exported file; the run's calibration uses them at once."""
    from judge.labelling.offline import import_labels
    from judge.labelling.sample import publish

    rundir = _rundir(run_dir)
    done = import_labels(rundir, labels)
    typer.echo(
        f"{done.recorded} labels recorded, {done.already} recorded before, {done.blank} blank"
    )
    if refresh:
        state = publish(rundir)
        typer.echo(
            f"calibrated on {state.labels} labels ({state.labelled} pairs); report: "
            f"{rundir.report_html}"
        )
