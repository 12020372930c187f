"""`judge align`: fit a finished run's judge to its human labels on half the items and score
it only on the other half (registered on the main CLI in `judge/cli/main.py`; the library loads
inside the command)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def align(
    run: Annotated[
        Path,
        typer.Argument(
            help="A finished pairwise run, or a judge table with an `order` column (then give "
            "--human)."
        ),
    ],
    human: Annotated[Path | None, typer.Option(help="Human labels (default: the run's).")] = None,
    judge_name: Annotated[
        str | None, typer.Option(help="The judge to align (default: the run's only one).")
    ] = None,
    share: Annotated[
        float, typer.Option(min=0.05, max=0.95, help="Share of the items fitted on.")
    ] = 0.5,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the split and the bootstrap.")] = 1,
    rejudge: Annotated[
        bool,
        typer.Option(
            "--rejudge",
            help="Also distil notes and examples from the judge's disagreements with people on "
            "the training items into candidate rubrics, judge the training items again with "
            "each, and score the best only on the held-out items (a live judge: this sends "
            "requests; see --dry-run).",
        ),
    ] = False,
    examples: Annotated[
        int, typer.Option(min=0, max=20, help="--rejudge: at most this many examples.")
    ] = 4,
    control: Annotated[
        bool,
        typer.Option(
            "--control",
            help="--rejudge: also run the whole choice on shuffled training labels (judges "
            "the training items again).",
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="--rejudge: price every run it could need; send nothing."),
    ] = False,
    max_cost_usd: Annotated[
        float | None,
        typer.Option(min=0, help="--rejudge: stop spending past this (default: the run's budget)."),
    ] = None,
) -> None:
    """Fit how the judge's two presentation orders are read (agree, disagree, one missing) to
    the human majority on a share of the items, and score the fitted reading only on the other
    items: agreement before and after with intervals, the trust gate on both, and the same fit
    on shuffled labels as a control."""
    from judge.analysis.align_run import align_run, align_tables

    if run.is_dir():
        result = align_run(run, judge=judge_name, human=human, share=share, seed=seed)
    elif human is None:
        raise typer.BadParameter("a judge table needs --human LABELS", param_hint="--human")
    else:
        result = align_tables(run, human, share=share, seed=seed)
    for line in result.lines():
        typer.echo(line)
    if rejudge:
        if not run.is_dir():
            raise typer.BadParameter("--rejudge needs a run dir", param_hint="RUN")
        _rejudge(run, human, judge_name, share, seed, examples, control, dry_run, max_cost_usd)


def _rejudge(
    run: Path,
    human: Path | None,
    judge_name: str | None,
    share: float,
    seed: int,
    examples: int,
    control: bool,
    dry_run: bool,
    max_cost_usd: float | None,
) -> None:
    from judge.run.align_rubric import align_rubric

    typer.echo("")
    typer.echo(
        "rejudging with distilled rubrics" + (" (dry run: nothing is sent)" if dry_run else "")
    )
    result = align_rubric(
        run,
        judge=judge_name,
        human=human,
        share=share,
        seed=seed,
        examples=examples,
        control=control,
        dry_run=dry_run,
        max_cost_usd=max_cost_usd,
        log=lambda message: typer.echo(message, err=True),
    )
    for line in result.lines():
        typer.echo(line)
