"""The bundled MT-Bench tables are exactly what the conversion script makes of the sources."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from judge import load_items, load_responses
from tests.helpers import MT_BENCH, REPO


def test_converted_tables_are_reproducible(tmp_path: Path) -> None:
    for name in ("question.jsonl", "judged_answers.jsonl.gz", "gpt4_pair.jsonl", "human.jsonl"):
        shutil.copy(MT_BENCH / name, tmp_path / name)
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "convert_mt_bench.py"), str(tmp_path)], check=True
    )
    converted = (
        "items.jsonl",
        "responses.jsonl.gz",
        "gpt4_pair_recorded.jsonl",
        "human_labels.jsonl",
        "gpt4_pair_labels.jsonl",
    )
    for name in converted:
        assert (tmp_path / name).read_bytes() == (MT_BENCH / name).read_bytes(), name


def test_bundled_tables_load() -> None:
    items = load_items(MT_BENCH / "items.jsonl")
    responses = load_responses(
        MT_BENCH / "responses.jsonl.gz", items.keys(), allow_empty_outputs=True
    )
    assert len(items) == 160
    assert len(responses) == 930  # 465 two-turn conversations (SOURCE.md lists the 15 missing)
    assert items["81-t1"].strata == {"category": "writing", "turn": "1", "question_id": "81"}
    assert items["111-t1"].reference is not None  # math questions carry a reference
    turn2 = next(r for r in responses if r.item_id == "81-t2" and r.system == "claude-v1")
    assert [m.role for m in turn2.context] == ["user", "assistant"]
    assert turn2.context[0].content == items["81-t1"].prompt
    empty = [r for r in responses if not r.output.strip()]
    assert [(r.item_id, r.system) for r in empty] == [("127-t1", "llama-13b")]
