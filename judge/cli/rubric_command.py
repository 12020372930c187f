"""`judge rubric ...`: rewriting a rubric for the prompt cache. Registered on the main CLI in
`judge/cli/main.py`; the rubric modules load inside the command, so `judge --help` stays fast."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

rubric_app = typer.Typer(
    help="Rubrics: move the anchors into the cached system message.",
    no_args_is_help=True,
    add_completion=False,
)


@rubric_app.command("move-anchors")
def move_anchors(
    rubric: Annotated[str, typer.Argument(help="A built-in rubric id or a rubric YAML file.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the new rubric (YAML).")],
) -> None:
    """Write the rubric with the lines of its user template that render `{{ scale }}` or
    `{{ criteria }}` moved to the end of its system template, the static prefix a provider
    caches (`--dry-run` says when this pays). Its version is bumped and its hash changes, so
    no reply cached for the old one is reused. Exit 1, writing nothing, when no anchor line
    can move (none in the user template, or only inside an `{% if %}`/`{% for %}` block or
    beside candidate data)."""
    from judge.judging.cost_estimate import estimate_tokens
    from judge.rubric.cached_prefix import anchors_in_system, write_rubric
    from judge.rubric.rubrics import Rubric, load_rubric
    from judge.types import ChatMessage

    source = load_rubric(rubric)
    move = anchors_in_system(source)
    if move is None:
        typer.echo(
            f"rubric '{source.id}': no line of its user template renders the scale or the "
            "criteria outside a block and beside no candidate data: nothing to move",
            err=True,
        )
        raise typer.Exit(1)

    def tokens(r: Rubric) -> int:
        return estimate_tokens([ChatMessage(role="system", content=r.system_text())])

    header = (
        f"# Written by `judge rubric move-anchors` from {source.id}@{source.version}\n"
        f"# ({source.hash}):\n"
        "# the anchor lines of its user template moved to its system message.\n"
    )
    write_rubric(move.rubric, out, header)
    typer.echo(
        f"moved {len(move.lines)} lines into the system message: static prefix "
        f"~{tokens(source):,} -> ~{tokens(move.rubric):,} tokens; "
        f"{source.id}@{move.rubric.version} written to {out}",
        err=True,
    )
