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
