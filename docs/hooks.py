"""MkDocs hook: the generated parts of the docs, written from the code at every build.

`<!-- generated: rubric-schema -->` becomes the tables of the rubric models
(`judge.rubric.rubrics.Rubric` and the models in it), `<!-- generated: cli -->` the reference
of every `judge` command, read from the typer app as `--help` reads it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import typer.main

from judge.cli.main import app
from judge.config.reference import model_reference
from judge.rubric.rubrics import Rubric


def cli_reference() -> str:
    """Every command and group, depth first: usage, help, and a table of its parameters."""
    root = typer.main.get_command(app)
    return "\n".join(_command(root, root.context_class(root, info_name="judge")))


def _command(command: Any, ctx: Any) -> list[str]:
    path = ctx.command_path
    level = "#" * min(2 + path.count(" "), 4)
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    out = [f"{level} `{path}`", "", "```text", usage, "```", ""]
    out += [_text(inspect.cleandoc(command.help or "")), ""]
    rows = [_row(param, ctx) for param in command.params if not getattr(param, "hidden", False)]
    if rows:
        out += ["| parameter | default | description |", "|---|---|---|", *rows, ""]
    for name in command.list_commands(ctx) if hasattr(command, "list_commands") else []:
        sub = command.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            out += _command(sub, sub.context_class(sub, info_name=name, parent=ctx))
    return out


def _row(param: Any, ctx: Any) -> str:
    record = param.get_help_record(ctx)
    names = record[0] if record else param.name
    notes = [_text(param.help or "")]
    if getattr(param, "envvar", None):
        notes.append(f"Environment variable `{param.envvar}`.")
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is not None or high is not None:
        bounds = (str(v) for v in (low, "x", high) if v is not None)
        notes.append(f"Range: {' ≤ '.join(bounds)}.")
    cells = (f"`{names}`", _default(param, ctx), " ".join(n for n in notes if n))
    # One line per row; `|` ends a cell except inside a code span.
    escaped = [_outside_code(c.replace("\n", " "), _escape_pipes) for c in cells]
    return "| " + " | ".join(escaped) + " |"


def _escape_pipes(text: str) -> str:
    return text.replace("|", "\\|")


def _default(param: Any, ctx: Any) -> str:
    if param.required:
        return "required"
    value = param.get_default(ctx)
    if getattr(param, "is_flag", False):
        if param.secondary_opts:
            return f"`{param.opts[0] if value else param.secondary_opts[0]}`"
        return "on" if value else "off"
    if value is None or value in ((), []):
        return ""
    return f"`{getattr(value, 'value', value)}`"


def _text(help_text: str) -> str:
    """Help as Markdown: rich's `\\[` escapes undone, `<` outside code spans escaped so that
    `runs/<name>` is not read as an HTML tag."""
    return _outside_code(help_text.replace("\\[", "["), lambda t: t.replace("<", "&lt;"))


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else change(p) for p in parts)


_GENERATED: dict[str, Callable[[], str]] = {
    "<!-- generated: rubric-schema -->": lambda: model_reference(Rubric),
    "<!-- generated: cli -->": cli_reference,
}


def on_page_markdown(markdown: str, **_: object) -> str:
    for marker, generate in _GENERATED.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
