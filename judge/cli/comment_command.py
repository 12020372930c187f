"""`judge pr-comment`: a run's summary as the Markdown of a pull-request comment (registered by
`judge.cli.main`; the GitHub Action in .github/actions/judge posts it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def pr_comment(
    run_dir: Annotated[Path, typer.Argument(help="A run directory `judge run` wrote.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the Markdown here (default: stdout).")
    ] = None,
    link: Annotated[
        str | None,
        typer.Option(
            "--link", help="Where the whole report is (a CI run's page), linked at the end."
        ),
    ] = None,
) -> None:
    """A pull-request comment from a run's summary: the simulated notice when the judges are
    simulated, the decision and the judge's trust verdict, every gate with PASS or FAIL, and
    the paired differences with their intervals. Reads only; sends nothing. The first line
    is a hidden marker naming the run, so a CI job can edit its earlier comment."""
    from judge.report.pr_comment import pr_comment as render
    from judge.store.rundir import RunDir

    text = render(RunDir(run_dir).read_summary(), details_url=link)
    if out is None:
        typer.echo(text, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    typer.echo(f"comment: {out}", err=True)
