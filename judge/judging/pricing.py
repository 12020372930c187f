"""What a judge reply cost: config prices first, else LiteLLM's price table, else unknown.

A reply is priced in four parts: plain input tokens (the prompt less its cached parts), tokens
read from the provider's prompt cache, tokens written to it, and output tokens; each at the
synchronous rate, or at the batch rate for a reply a provider batch answered. A rate is
resolved per part (`rate_card`):

- synchronous: the config's `*_cost_per_mtok`, else the table's; a missing cached or
  cache-write rate is the plain input rate (a provider without a cache price charges cached
  tokens as any other);
- batch: the config's `batch_discount` off every synchronous rate when given; else the
  table's batch price of that part (when its synchronous rate is the table's too); else the
  provider's published batch discount (half price: OpenAI Batch, Anthropic Message Batches);
  else unknown.

A `recorded/...` judge replays verdicts and costs nothing, and so does a `base_url: simulator`
judge without prices of its own. An unknown rate makes the cost
unknown (None), never 0. The table is read as a JSON data file
from the installed litellm package, never by importing litellm (seconds of import for one
dictionary). Without litellm installed only config prices are known.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from judge.config.run_config import JudgeSpec
from judge.types import Usage

__all__ = [
    "PER_MTOK",
    "PRICE_TABLE_FILE",
    "PUBLISHED_BATCH_DISCOUNT",
    "RateCard",
    "Rates",
    "price",
    "price_table_path",
    "rate_card",
    "unpriced",
]

PRICE_TABLE_FILE = "model_prices_and_context_window_backup.json"
PER_MTOK = 1_000_000
PUBLISHED_BATCH_DISCOUNT: Mapping[str, float] = {"openai": 0.5, "anthropic": 0.5, "google": 0.5}
"""Provider -> share of the price its batch API saves, as the provider publishes it (Gemini:
ai.google.dev/gemini-api/docs/batch-api, "50% of the standard cost")."""
PUBLISHED_FLEX_DISCOUNT: Mapping[str, float] = {"google": 0.5}
"""Provider -> share of the price its synchronous flex tier saves (`service_tier: flex`;
Gemini: ai.google.dev/gemini-api/docs/flex-inference, "a 50% cost reduction")."""

# The table's keys: (synchronous, batch) per part of a reply.
_INPUT = ("input_cost_per_token", "input_cost_per_token_batches")
_OUTPUT = ("output_cost_per_token", "output_cost_per_token_batches")
_CACHE_READ = ("cache_read_input_token_cost", "cache_read_input_token_cost_batches")
_CACHE_WRITE = ("cache_creation_input_token_cost", "cache_creation_input_token_cost_batches")
_FLEX = {
    key[1]: key[1].replace("_batches", "_flex")
    for key in (_INPUT, _OUTPUT, _CACHE_READ, _CACHE_WRITE)
}
"""A part's batch key -> its flex key (LiteLLM's table prices Gemini's Flex tier so)."""
_TABLE_KEYS = (*_INPUT, *_OUTPUT, *_CACHE_READ, *_CACHE_WRITE, *_FLEX.values())

_Source = Literal["config", "table", "input", None]
"""Where a synchronous rate came from (`input`: the plain input rate stands in)."""


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per token of one way of sending (synchronous or batch); None: unknown."""

    input: float | None
    """Plain input tokens: the prompt less what was read from or written to the cache."""
    cached_input: float | None
    cache_write: float | None
    output: float | None

    def cost(self, usage: Usage) -> float | None:
        """USD for `usage`; None when the input or output rate is unknown, or a cache rate
        that `usage` needs (tokens read or written) is."""
        if self.input is None or self.output is None:
            return None
        read, written = usage.cache_read_tokens, usage.cache_write_tokens
        # Clamped: a usage whose cache counts exceed its input (a provider counting them
        # apart) must not price a negative number of plain tokens.
        plain = max(0, usage.input_tokens - read - written)
        total = plain * self.input + usage.output_tokens * self.output
        for tokens, rate in ((read, self.cached_input), (written, self.cache_write)):
            if tokens:
                if rate is None:
                    return None
                total += tokens * rate
        return total

    def per_mtok(self) -> Rates:
        """The same rates in USD per million tokens (as configs and price lists state them)."""
        return Rates(*(None if r is None else r * PER_MTOK for r in self._all()))

    def _all(self) -> tuple[float | None, ...]:
        return (self.input, self.cached_input, self.cache_write, self.output)


@dataclass(frozen=True, slots=True)
class RateCard:
    """Every rate a judge is priced at: synchronous and batch."""

    model: str
    sync: Rates
    batch: Rates

    def rates(self, *, batch: bool = False) -> Rates:
        return self.batch if batch else self.sync

    def cost(self, usage: Usage, *, batch: bool = False) -> float | None:
        return self.rates(batch=batch).cost(usage)


def price(model: str, usage: Usage, spec: JudgeSpec, *, batch: bool = False) -> float | None:
    """USD for `usage` on `model` (`provider/model`, LiteLLM's own model string, or a bare
    name), priced as `spec` says (the module's docstring), at batch rates with `batch`. None
    when a rate it needs is unknown: an unknown cost is reported as unknown, never as 0."""
    return _card(model, *_price_knobs(spec)).rates(batch=batch).cost(usage)


def rate_card(spec: JudgeSpec, model: str | None = None) -> RateCard:
    """The rates `spec` is priced at (on `model`, default `spec.model`)."""
    return _card(model or spec.model, *_price_knobs(spec))


def _price_knobs(spec: JudgeSpec) -> tuple[float | None, ...]:
    knobs = (
        spec.input_cost_per_mtok,
        spec.output_cost_per_mtok,
        spec.cached_input_cost_per_mtok,
        spec.cache_write_cost_per_mtok,
        spec.batch_discount,
        spec.service_tier == "flex",
    )
    if spec.stand_in == "simulated" and knobs[:2] == (None, None):
        # The built-in simulator charges nothing ("cost unknown" read as money being spent);
        # prices set on its judge still stand, to rehearse a budget.
        return (0.0, 0.0, *knobs[2:])
    return knobs


@lru_cache(maxsize=1024)
def _card(
    model: str,
    input_mtok: float | None,
    output_mtok: float | None,
    cached_mtok: float | None,
    write_mtok: float | None,
    discount: float | None,
    flex: bool = False,
) -> RateCard:
    # Cached: `price` runs once per reply, and a run has a handful of distinct judges.
    if model.partition("/")[0] == "recorded":
        # A replay calls no model: its price is nothing, whatever model name it replays
        # (the table would otherwise price `recorded/gpt-4` as GPT-4).
        free = Rates(0.0, 0.0, 0.0, 0.0)
        return RateCard(model=model, sync=free, batch=free)
    entry = _table_entry(model)
    rate_in, src_in = _sync_rate(input_mtok, entry, _INPUT[0])
    rate_out, src_out = _sync_rate(output_mtok, entry, _OUTPUT[0])
    rate_read, src_read = _sync_rate(cached_mtok, entry, _CACHE_READ[0])
    rate_write, src_write = _sync_rate(write_mtok, entry, _CACHE_WRITE[0])
    if rate_read is None:
        rate_read, src_read = rate_in, "input"
    if rate_write is None:
        rate_write, src_write = rate_in, "input"
    # A flex reply answers synchronously but is billed at the flex rates, which are derived as
    # the batch rates are: from the table's flex prices, else the published flex discount.
    published = (PUBLISHED_FLEX_DISCOUNT if flex else PUBLISHED_BATCH_DISCOUNT).get(
        model.partition("/")[0]
    )

    def batch_rate(
        rate: float | None, source: _Source, key: str, instead: float | None
    ) -> float | None:
        if rate is None:
            return None
        if discount is not None:
            return rate * (1 - discount)
        # A table batch price belongs with the table's synchronous price: a config price is
        # another price list, which the table's batch price says nothing about.
        key = _FLEX[key] if flex else key
        if source == "table" and key in entry:
            return entry[key]
        if source == "input":
            return instead
        return None if published is None else rate * (1 - published)

    batch_in = batch_rate(rate_in, src_in, _INPUT[1], None)
    discounted = Rates(
        batch_in,
        batch_rate(rate_read, src_read, _CACHE_READ[1], batch_in),
        batch_rate(rate_write, src_write, _CACHE_WRITE[1], batch_in),
        batch_rate(rate_out, src_out, _OUTPUT[1], None),
    )
    if flex:  # flex judges are never in batch mode (JudgeSpec checks)
        return RateCard(model=model, sync=discounted, batch=discounted)
    return RateCard(
        model=model, sync=Rates(rate_in, rate_read, rate_write, rate_out), batch=discounted
    )


def _sync_rate(
    config_mtok: float | None, entry: Mapping[str, float], key: str
) -> tuple[float | None, _Source]:
    if config_mtok is not None:
        return config_mtok / PER_MTOK, "config"
    if key in entry:
        return entry[key], "table"
    return None, None


@lru_cache(maxsize=1024)
def _table_entry(model: str) -> Mapping[str, float]:
    """The table's rates (USD per token) for `model`, by table key; empty when unknown. The
    first candidate name with both an input and an output price is the model's entry."""
    table = _price_table()
    for key in _candidates(model) if table else ():
        entry = table.get(key)
        if not isinstance(entry, dict):
            continue
        if _is_rate(entry.get(_INPUT[0])) and _is_rate(entry.get(_OUTPUT[0])):
            return {k: float(entry[k]) for k in _TABLE_KEYS if _is_rate(entry.get(k))}
    return {}


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
    """Judges whose price per token is unknown (at the rates of their `mode`): a budget
    cannot be enforced for them."""
    probe = Usage(input_tokens=1_000, output_tokens=1_000)
    return [s.model for s in specs if price(s.model, probe, s, batch=s.mode == "batch") is None]
