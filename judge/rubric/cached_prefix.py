"""Where a rubric's trusted text sits, for the prompt cache, and writing a rubric as a file.

Providers cache the static start of a prompt: the rubric's system message (Anthropic up to
the breakpoint `prompt_cache` sets after it; OpenAI and Gemini by themselves). The anchors, the
scale and the criteria, are the same in every request; a rubric that renders them in its user
message sends them uncached in every request, and its static prefix may stay below the
model's cache minimum for want of them. `anchors_in_system` moves them: every line of the user
template that renders `{{ scale }}` or `{{ criteria }}` (and no candidate data, and outside any
`{% if %}`/`{% for %}` block), with the caption line just above it when that line ends in
`:`, goes to the end of the system template. The result is a new version of the rubric (its
hash changes, as any wording change does: no cached reply of the old one is reused).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from judge.rubric.rubrics import Rubric

ANCHORS = ("scale", "criteria")
_ANCHOR = re.compile(r"\{\{-?\s*(?:scale|criteria)\s*-?\}\}")
_ANY_PLACEHOLDER = re.compile(r"\{\{-?\s*([A-Za-z_][A-Za-z0-9_]*)")
_OPENS = re.compile(r"\{%-?\s*(?:if|for|with|macro|call|filter|block|raw)\b")
_CLOSES = re.compile(r"\{%-?\s*end(?:if|for|with|macro|call|filter|block|raw)\b")
_TRUSTED = {"scale", "criteria"}


@dataclass(frozen=True)
class AnchorMove:
    """A rubric with its anchors moved into the system message."""

    rubric: Rubric
    """The new version: `version + 1`, the moved lines at the end of its system template."""
    lines: tuple[str, ...]
    """The template lines moved, in order."""


def movable_lines(user: str) -> list[int]:
    """Indexes of the user template's lines `anchors_in_system` moves (see the module doc)."""
    lines = user.split("\n")
    depth, picked = 0, []
    for i, line in enumerate(lines):
        if depth == 0 and _ANCHOR.search(line) and "{%" not in line:
            names = set(_ANY_PLACEHOLDER.findall(line))
            if names <= _TRUSTED:
                caption = lines[i - 1].strip() if i else ""
                if caption.endswith(":") and "{" not in caption and i - 1 not in picked:
                    picked.append(i - 1)
                picked.append(i)
        depth += len(_OPENS.findall(line)) - len(_CLOSES.findall(line))
    return picked


def anchors_in_system(rubric: Rubric) -> AnchorMove | None:
    """`rubric` with its anchor lines moved to the end of its system template; None when its
    user template renders no anchor that can move."""
    picked = movable_lines(rubric.user)
    if not picked:
        return None
    lines = rubric.user.split("\n")
    moved = tuple(lines[i] for i in picked)
    # Lines that were together stay together; each run of them is a paragraph of its own.
    paragraphs: list[list[str]] = []
    for n, i in enumerate(picked):
        if n == 0 or i != picked[n - 1] + 1:
            paragraphs.append([])
        paragraphs[-1].append(lines[i])
    kept = "\n".join(line for i, line in enumerate(lines) if i not in set(picked))
    user = re.sub(r"\n{3,}", "\n\n", kept).strip("\n") + "\n"
    added = "\n\n".join("\n".join(p) for p in paragraphs)
    system = rubric.system.rstrip("\n") + "\n\n" + added + "\n"
    new = rubric.model_copy(update={"version": rubric.version + 1, "system": system, "user": user})
    return AnchorMove(rubric=new, lines=moved)


def rubric_yaml(rubric: Rubric, header: str) -> str:
    """The rubric as a YAML file a person could have written: templates as `|` blocks, the
    optional fields it leaves empty left out, `header` (comment lines) first."""
    data: dict[str, Any] = rubric.model_dump(mode="json", exclude_defaults=False)
    for name in ("clarifications", "examples", "provenance"):
        if not data[name]:
            del data[name]
    body = yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)
    return header + body


def write_rubric(rubric: Rubric, path: Path, header: str) -> None:
    from judge.files import write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, rubric_yaml(rubric, header))


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (the templates) as `|` blocks, as a person writes a rubric."""


def _block_strings(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _block_strings)
