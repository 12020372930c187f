"""Judge requests per run (judge/config/limits.py): counted without pairing or rendering, equal to
what `prepare_run` renders, and refused before the run store exists."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from judge import RunConfig, RunDir
from judge.errors import LimitError
from judge.run import prepare_run

SYSTEMS = ["gpt-4o", "llama-2-13b", "mystery-model", "mistral-7b", "claude-3-haiku"]
JUDGES = [
    {"model": "openai/gpt-4.1-mini"},  # may not grade gpt-4o
    {"model": "anthropic/claude-sonnet-4-5"},  # may not grade claude-3-haiku
    {"model": "litellm/some-judge", "family": "independent"},
]


def _data(root: Path) -> tuple[Path, Path]:
    """12 items; every system answers most of them, some skip some (pairs are skipped)."""
    items, responses = root / "items.jsonl", root / "responses.jsonl"
    with items.open("w") as fh:
        for i in range(12):
            fh.write(json.dumps({"item_id": f"q{i}", "prompt": f"Question {i}?"}) + "\n")
    with responses.open("w") as fh:
        for i in range(12):
            for k, system in enumerate(SYSTEMS):
                if (i + k) % 5 == 0 and i % 2:
                    continue
                row = {"item_id": f"q{i}", "system": system, "output": f"{system} says {i}."}
                fh.write(json.dumps(row) + "\n")
    return items, responses


CASES: dict[str, dict[str, Any]] = {
    "all pairs, two judges": {"judges": JUDGES[1:]},  # gpt-4o vs claude: only judge 3
    "all pairs, same-family judges excluded": {
        "judges": JUDGES[:2],
        "data": {"systems": SYSTEMS[1:4]},  # no pair needs both excluded families
    },
    "baseline, one order": {
        "judges": JUDGES,
        "pairs": {"mode": "baseline", "baseline": "llama-2-13b"},
        "orders": "AB",
    },
    "same family allowed": {"judges": JUDGES, "allow_same_family": True},
    "absolute rubric": {"judges": JUDGES, "rubric": "absolute_1to5"},
}


def _config(root: Path, **changes: Any) -> RunConfig:
    items, responses = _data(root)
    data = {"items": items, "responses": responses, **changes.pop("data", {})}
    raw = {"name": "t", "data": data, "rubric": "pairwise_general", **changes}
    return RunConfig.model_validate(raw)


@pytest.mark.parametrize("case", list(CASES))
def test_the_count_is_what_prepare_renders(tmp_path: Path, case: str) -> None:
    config = _config(tmp_path, **CASES[case])
    made = prepare_run(config, tmp_path / "full").requests
    assert made > 0
    # One below what prepare made is refused, with the count as `actual`: so the count is
    # exactly what it renders (and `max_requests=made` would pass). Nothing is stored.
    refused = tmp_path / "below"
    with pytest.raises(LimitError) as info:
        prepare_run(config, refused, max_requests=made - 1)
    assert (info.value.limit, info.value.maximum, info.value.actual) == (
        "max_requests",
        made - 1,
        made,
    )
    assert f"would send {made:,} judge requests, over the limit of {made - 1:,}" in str(info.value)
    # No store, no key: only the lock the refused prepare held.
    assert [p.name for p in refused.iterdir()] == [RunDir(refused).lock_file.name]


def test_a_huge_pairing_is_refused_without_being_made(tmp_path: Path) -> None:
    """A 100 KB upload asking for 2 x 1,999,000 requests (2,000 systems, all pairs, one
    item): the count is refused in well under a second, where making the pairs and rendering
    the prompts would take minutes and gigabytes."""
    items, responses = tmp_path / "items.jsonl", tmp_path / "responses.jsonl"
    items.write_text(json.dumps({"item_id": "q", "prompt": "Which?"}) + "\n")
    with responses.open("w") as fh:
        for k in range(2000):
            fh.write(json.dumps({"item_id": "q", "system": f"s{k}", "output": "x"}) + "\n")
    raw = {
        "name": "t",
        "data": {"items": items, "responses": responses},
        "rubric": "pairwise_general",
        "judges": [JUDGES[2]],
    }
    config = RunConfig.model_validate(raw)
    started = time.monotonic()
    with pytest.raises(LimitError) as info:
        prepare_run(config, tmp_path / "run", max_requests=20_000)
    assert info.value.actual == 2 * 2000 * 1999 // 2
    assert time.monotonic() - started < 5  # loading and blinding 2,000 rows included
