"""Convert the bundled MT-Bench files into judge's items and responses tables.

Input (copied from the public dataset, see data/mt_bench/SOURCE.md):
  question.jsonl           80 questions x 2 turns, category, reference for math/reasoning/coding
  judged_answers.jsonl.gz  465 of 480 (question, system) two-turn conversations

Output:
  items.jsonl              one item per (question, turn): item_id "<question_id>-t<turn>"
  responses.jsonl.gz       one response per (question, turn, system); turn 2 carries the
                           system's own turn-1 exchange as `context`, as MT-Bench's
                           multi-turn judge sees it
  gpt4_pair_recorded.jsonl GPT-4's published pairwise verdicts (gpt4_pair.jsonl) in the
                           `recorded` provider's format
  human_labels.jsonl       the 2,668 expert votes (human.jsonl, `expert_*` only, as in the
                           paper's Table 2) as a human-label table: item_id, system_a,
                           system_b, winner a|b|tie, annotator, turn, category
  gpt4_pair_labels.jsonl   GPT-4's published verdicts as a judge-label table (any tie,
                           including "tie (inconsistent)", is a tie, as in the paper)

Run: python scripts/convert_mt_bench.py [data/mt_bench]
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path


def item_id(question_id: int, turn: int) -> str:
    return f"{question_id}-t{turn}"


def convert(folder: Path) -> tuple[int, int]:
    questions = [json.loads(line) for line in (folder / "question.jsonl").open(encoding="utf-8")]
    items = []
    for q in questions:
        refs = q.get("reference") or []
        for turn, text in enumerate(q["turns"], start=1):
            items.append(
                {
                    "item_id": item_id(q["question_id"], turn),
                    "prompt": text,
                    "reference": refs[turn - 1] if len(refs) >= turn else None,
                    "category": q["category"],
                    "turn": turn,
                    "question_id": q["question_id"],
                }
            )
    with (folder / "items.jsonl").open("w", encoding="utf-8") as out:
        for row in items:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")

    responses = []
    with gzip.open(folder / "judged_answers.jsonl.gz", "rt", encoding="utf-8") as src:
        conversations = [json.loads(line) for line in src]
    conversations.sort(key=lambda c: (c["question_id"], c["model"]))
    for conv in conversations:
        turns = conv["turns"]
        roles = [t["role"] for t in turns]
        if roles != ["user", "assistant", "user", "assistant"]:
            raise SystemExit(f"unexpected roles {roles} for {conv['question_id']}/{conv['model']}")
        responses.append(
            {
                "item_id": item_id(conv["question_id"], 1),
                "system": conv["model"],
                "output": turns[1]["content"],
            }
        )
        responses.append(
            {
                "item_id": item_id(conv["question_id"], 2),
                "system": conv["model"],
                "output": turns[3]["content"],
                "context": turns[:2],
            }
        )
    buf = io.BytesIO()
    # mtime=0 keeps the gzip bytes identical across conversions.
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        for row in responses:
            gz.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
    (folder / "responses.jsonl.gz").write_bytes(buf.getvalue())

    winners = {"model_a": "system_a", "model_b": "system_b", "tie": "tie"}
    with (folder / "gpt4_pair_recorded.jsonl").open("w", encoding="utf-8") as out:
        for line in (folder / "gpt4_pair.jsonl").open(encoding="utf-8"):
            row = json.loads(line)
            record = {
                "item_id": item_id(row["question_id"], row["turn"]),
                "system_a": row["model_a"],
                "system_b": row["model_b"],
                # "tie (inconsistent)": GPT-4's two presentation orders disagreed.
                "winner": winners.get(row["winner"], "inconsistent"),
            }
            if row["winner"] not in winners and row["winner"] != "tie (inconsistent)":
                raise SystemExit(f"unexpected winner {row['winner']!r}")
            out.write(json.dumps(record) + "\n")

    categories = {q["question_id"]: q["category"] for q in questions}
    _label_table(folder / "human.jsonl", folder / "human_labels.jsonl", categories, experts=True)
    _label_table(folder / "gpt4_pair.jsonl", folder / "gpt4_pair_labels.jsonl", categories)
    return len(items), len(responses)


def _label_table(source: Path, target: Path, categories: dict[int, str], experts=False) -> None:
    labels = {"model_a": "a", "model_b": "b"}
    with target.open("w", encoding="utf-8") as out:
        for line in source.open(encoding="utf-8"):
            row = json.loads(line)
            if experts and not row["judge"].startswith("expert_"):
                continue  # authors' votes: excluded from the paper's agreement table
            record = {
                "item_id": item_id(row["question_id"], row["turn"]),
                "system_a": row["model_a"],
                "system_b": row["model_b"],
                "winner": "tie" if "tie" in row["winner"] else labels[row["winner"]],
            }
            if experts:
                record["annotator"] = row["judge"]
            record |= {"turn": row["turn"], "category": categories[row["question_id"]]}
            out.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "data/mt_bench")
    n_items, n_responses = convert(target)
    print(f"{target}: {n_items} items, {n_responses} responses")
