"""What a judge reply cost: config prices first, else LiteLLM's price table, else unknown.

The table is read as a JSON data file from the installed litellm package, never by importing
litellm (seconds of import for one dictionary). Without litellm installed only config prices
are known.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from judge.config import JudgeSpec
from judge.types import Usage

PRICE_TABLE_FILE = "model_prices_and_context_window_backup.json"
_PER_MTOK = 1_000_000


def price(model: str, usage: Usage, spec: JudgeSpec) -> float | None:
    """USD for `usage` on `model` (`provider/model`, LiteLLM's own model string, or a bare
    name). Each side (input, output) is priced from the config when given there, else from the
    table; None when a side is unknown: an unknown cost is reported as unknown, never as 0."""
    table_in, table_out = _table_rates(model)
    if spec.input_cost_per_mtok is not None:
        rate_in: float | None = spec.input_cost_per_mtok / _PER_MTOK
    else:
        rate_in = table_in
    if spec.output_cost_per_mtok is not None:
        rate_out: float | None = spec.output_cost_per_mtok / _PER_MTOK
    else:
        rate_out = table_out
    if rate_in is None or rate_out is None:
        return None
    return usage.input_tokens * rate_in + usage.output_tokens * rate_out


@lru_cache(maxsize=1024)
def _table_rates(model: str) -> tuple[float | None, float | None]:
    """(USD per input token, USD per output token) from the table, or (None, None)."""
    table = _price_table()
    if not table:
        return None, None
    for key in _candidates(model):
        entry = table.get(key)
        if not isinstance(entry, dict):
            continue
        rate_in = entry.get("input_cost_per_token")
        rate_out = entry.get("output_cost_per_token")
        if _is_rate(rate_in) and _is_rate(rate_out):
            return float(rate_in), float(rate_out)
    return None, None


def _candidates(model: str) -> list[str]:
    # The table keys OpenAI and Anthropic models by bare name (`gpt-4.1-mini`,
    # `claude-sonnet-4-5`) and most others with LiteLLM's provider prefix (`groq/...`).
    names = [model]
    provider, _, rest = model.partition("/")
    if rest:
        names.append(rest)
        if provider == "litellm" and "/" in rest:
            names.append(rest.split("/", 1)[1])
    names.append(model.rsplit("/", 1)[-1])
    return [n for i, n in enumerate(names) if n and n != "sample_spec" and n not in names[:i]]


def _is_rate(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


@lru_cache(maxsize=1)
def _price_table() -> dict[str, Any]:
    path = price_table_path()
    if path is None:
        return {}
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def price_table_path() -> Path | None:
    """LiteLLM's bundled price table, located without importing litellm; None when absent."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / PRICE_TABLE_FILE
        if path.is_file():
            return path
    return None


def unpriced(specs: Iterable[JudgeSpec]) -> list[str]:
    """Judges whose price per token is unknown: a budget cannot be enforced for them."""
    probe = Usage(input_tokens=1_000, output_tokens=1_000)
    return [s.model for s in specs if price(s.model, probe, s) is None]
