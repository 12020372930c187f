"""Three support bots with planted quality, for the pytest plugin's and the PR comment's tests
(issue 34, items 3 and 4): tables a test writes into its own directory.

Every reply ends in the simulator's hidden `⟦quality=x⟧` marker (docs/config.md, "How the
simulated judge decides"), so a judge at a simulator the test started itself (whose requests
it counts) judges as planted, with no `simulator.plant` (which needs `base_url: simulator`).
`bot-new` is better than `bot-old` on every item; `bot-close` on 3 items of 5 and worse on the
rest: a win rate near 0.6 whose interval, on 40 items, reaches below 0.5.
"""

from __future__ import annotations

import json
from pathlib import Path

ITEMS = 40
BASELINE = "bot-old"


def _quality(system: str, item: int) -> float:
    if system == "bot-new":
        return 0.8
    if system == "bot-close":
        return 0.7 if item % 5 < 3 else 0.3
    return 0.5


def write_bots(directory: Path, *, marked: bool = True, changed: str | None = None) -> None:
    """items.jsonl and responses.jsonl in `directory`; `marked=False` leaves the markers out
    (for `simulator.plant`); `changed`: that system's replies are reworded (same quality)."""
    items, responses = [], []
    for i in range(ITEMS):
        item = f"t{i:03d}"
        items.append({"item_id": item, "prompt": f"Ticket {i}: order {1000 + i} has not arrived."})
        for system in ("bot-new", "bot-old", "bot-close"):
            text = f"Thanks for writing about order {1000 + i}. We are looking into it."
            if system == changed:
                text = f"Order {1000 + i}: sorry for the wait, a courier is on it."
            if marked:
                text += f" ⟦quality={_quality(system, i):.2f}⟧"
            responses.append({"item_id": item, "system": system, "output": text})
    (directory / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    (directory / "responses.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in responses), encoding="utf-8"
    )


def bots_config(judge: dict[str, object], **extra: object) -> dict[str, object]:
    """A run config over the tables `write_bots` wrote (paths relative to its directory):
    every bot against `bot-old`, one judge."""
    return {
        "name": "bots",
        "question": "Can bot-new and bot-close replace bot-old?",
        "data": {"items": "items.jsonl", "responses": "responses.jsonl"},
        "pairs": {"mode": "baseline", "baseline": BASELINE},
        "rubric": "pairwise_general",
        "judges": [judge],
        "compare": {"resamples": 1000},
        **extra,
    }
