"""`judge migrate OLD_RUN NEW.yaml --out DIR`: a run's judge replaced, measured on the labelled
items and a sample of the others (registered on the main CLI in `judge/cli/main.py`; the
library loads inside the command)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def migrate(
    old_run: Annotated[Path, typer.Argument(help="A finished pairwise run directory.")],
    new: Annotated[
        Path,
        typer.Argument(
            help="The new judge (YAML): `judges:` with one entry, as in a run config, and "
            "optionally a run config's `simulator:` block."
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Directory for the new judge's run (out/run), its inputs, migrate.json and "
            "migrate.md. Run again with the same arguments: nothing is sent twice.",
        ),
    ],
    sample: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Items without human labels to re-judge, a seeded random sample (default: "
            "200, or all when fewer).",
        ),
    ] = None,
    calibration: Annotated[
        int | None,
        typer.Option(
            "--calibration",
            min=0,
            help="Items with human labels to re-judge, a seeded random sample (default: all).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of both samples.")] = 1,
    human: Annotated[
        Path | None, typer.Option(help="Human labels instead of the run's (JSONL/CSV/Parquet).")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Write the chosen items' inputs, print the requests and their estimated "
            "cost; send nothing.",
        ),
    ] = False,
    max_cost_usd: Annotated[
        float | None,
        typer.Option(
            "--max-cost-usd",
            min=0,
            help="Stop cleanly before the new judge costs more than this (USD; default: the "
            "run config's budget).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No step messages.")] = False,
) -> None:
    """Re-judge a finished run's labelled items and a seeded sample of its other items with a
    new judge, then report how the two judges map onto each other, both against the humans
    (the trust gate), and which past comparisons would flip sign or lose (or gain) "told
    apart": the new judge's estimate on all items uses the old judge's verdicts as a predictor
    (difference estimator), with bootstrap intervals. Exit 3: the budget stopped the new run
    (run again to continue)."""
    from judge.report.migration_page import migration_lines
    from judge.run.migrate_run import migrate_run

    log = (lambda _msg: None) if quiet else (lambda msg: typer.echo(msg, err=True))
    outcome = migrate_run(
        old_run,
        new,
        out,
        labelled=calibration,
        sample=sample,
        seed=seed,
        human=human,
        dry_run=dry_run,
        max_cost_usd=max_cost_usd,
        log=log,
        # First and last: a simulated or replayed judge is said before and after every number.
        notify=_notice,
    )
    if outcome.estimate is not None:
        from judge.cli.console import print_dry_run

        print_dry_run(outcome.estimate)
    elif outcome.migration is None:
        typer.echo(
            f"stopped with {outcome.pending:,} requests pending (the budget): run the same "
            "command again, with a higher --max-cost-usd, to continue"
        )
    else:
        for line in migration_lines(outcome.migration):
            typer.echo(line)
        typer.echo(f"written: {outcome.dir.result_file}, {outcome.dir.page_file}")
    _notice(outcome.notice)
    if outcome.status == "stopped":
        raise typer.Exit(3)


def _notice(notice: str | None) -> None:
    if notice:
        typer.secho(notice, err=True, fg=typer.colors.YELLOW, bold=True)
