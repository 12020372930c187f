"""Synthetic runs for the benchmarks and measurement scripts (`bench/`, `scripts/`): items,
responses whose quality the simulator reads (`⟦quality=q⟧`), and a run config for one or more
judges. The systems' outputs differ in more than their names, which blinding scrubs: outputs
equal but for a name would make a pair's two orders one request."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

SYSTEMS: tuple[tuple[str, float], ...] = (("sys-a", 0.55), ("sys-b", 0.5), ("sys-c", 0.45))
"""Three systems judged against `sys-b`: 2 pairs x 2 orders = 4 requests an item a judge."""


def write_inputs(
    root: Path,
    n_items: int,
    *,
    systems: Sequence[tuple[str, float]] = SYSTEMS,
    text: str = "{system} answers question {i} at some length.",
    prompt: str = "Question {i}?",
) -> tuple[Path, Path]:
    """`items.jsonl` and `responses.jsonl` in `root`: `text` and `prompt` are formatted with
    the item's index `i` (and `system`)."""
    items, responses = root / "items.jsonl", root / "responses.jsonl"
    with items.open("w") as fh:
        for i in range(n_items):
            fh.write(json.dumps({"item_id": f"q{i}", "prompt": prompt.format(i=i)}) + "\n")
    with responses.open("w") as fh:
        for i in range(n_items):
            for system, q in systems:
                output = text.format(system=system, i=i) + f" ⟦quality={q}⟧"
                fh.write(json.dumps({"item_id": f"q{i}", "system": system, "output": output}))
                fh.write("\n")
    return items, responses


def write_config(
    root: Path,
    name: str,
    items: Path,
    responses: Path,
    judges: list[dict[str, Any]],
    *,
    rubric: str | Path = "pairwise_general",
) -> Path:
    """`<name>.yaml` in `root`: both orders, every system against `sys-b`, a fixed blinding."""
    path = root / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": name,
                "data": {"items": str(items), "responses": str(responses)},
                "blinding": {"seed": 3, "secret": "ab" * 32},
                "rubric": str(rubric),
                "judges": judges,
                "orders": "both",
                "pairs": {"mode": "baseline", "baseline": "sys-b"},
            }
        )
    )
    return path
