"""What a run will cost before it is sent: tokens estimated from the prompts, the reply from
the judge's `max_tokens` (or a typical length), priced as `judge.pricing` prices replies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.config import JudgeSpec, RunConfig
from judge.pricing import price
from judge.store import RunStore
from judge.types import ChatMessage, Usage

_EST_OUTPUT_TOKENS = 400
"""Expected reply length when the judge sets no `max_tokens` (tokens)."""
_PAGE = 1000


def estimate_tokens(messages: Sequence[ChatMessage]) -> int:
    # ~4 characters per token for English text: good enough for limits and budgets.
    return sum(len(m.content) for m in messages) // 4 + 4 * len(messages)


def max_tokens(spec: JudgeSpec) -> int:
    value = spec.params.get("max_tokens") or spec.params.get("max_completion_tokens")
    return int(value) if isinstance(value, int | float) else _EST_OUTPUT_TOKENS


def estimate_run(store: RunStore, config: RunConfig) -> dict[str, Any]:
    """Pending requests per judge and their estimated cost (for `--dry-run`), read a page at
    a time."""
    specs = {spec.model: spec for spec in config.judges}
    per_judge: dict[str, dict[str, Any]] = {}
    after = 0
    while rows := store.pending_after(after, _PAGE):
        after = rows[-1][0]
        for _, request in rows:
            spec = specs.get(request.judge)
            row = per_judge.setdefault(
                request.judge, {"requests": 0, "cached": 0, "input_tokens": 0, "cost_usd": 0.0}
            )
            row["requests"] += 1
            if store.cached_response(request.cache_key) is not None:
                row["cached"] += 1
                continue
            tokens = estimate_tokens(request.messages)
            row["input_tokens"] += tokens
            if spec is not None:
                usage = Usage(input_tokens=tokens, output_tokens=max_tokens(spec))
                cost = price(spec.model, usage, spec)
                if cost is None:
                    row["cost_usd"] = None
                elif row["cost_usd"] is not None:
                    row["cost_usd"] += cost
    return per_judge
