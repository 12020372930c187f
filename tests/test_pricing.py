"""`judge.judging.pricing`: the rate card of a judge (config first, else LiteLLM's price table, else
the fallbacks) and the price of a reply's usage, synchronous and batch.

The reference is LiteLLM's price table itself, read here as plain JSON (the file
`price_table_path` locates), and hand computations from the per-token rates it lists."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from judge import JudgeSpec
from judge.judging.pricing import PER_MTOK, Rates, price, price_table_path, rate_card, unpriced
from judge.types import Usage


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    path = price_table_path()
    assert path is not None, "litellm's price table ships with the test extras"
    return json.loads(path.read_text(encoding="utf-8"))


def _spec(model: str, **fields: Any) -> JudgeSpec:
    return JudgeSpec(model=model, **fields)


def test_anthropic_rates_are_the_tables_every_one(table: dict[str, Any]) -> None:
    entry = table["claude-sonnet-4-5"]
    card = rate_card(_spec("anthropic/claude-sonnet-4-5"))
    assert card.sync == Rates(
        input=entry["input_cost_per_token"],
        cached_input=entry["cache_read_input_token_cost"],
        cache_write=entry["cache_creation_input_token_cost"],
        output=entry["output_cost_per_token"],
    )
    assert card.batch == Rates(
        input=entry["input_cost_per_token_batches"],
        cached_input=entry["cache_read_input_token_cost_batches"],
        cache_write=entry["cache_creation_input_token_cost_batches"],
        output=entry["output_cost_per_token_batches"],
    )
    # LiteLLM's own model string finds the same entry.
    assert rate_card(_spec("litellm/anthropic/claude-sonnet-4-5")).sync == card.sync


def test_openai_rates_fall_back_where_the_table_is_silent(table: dict[str, Any]) -> None:
    entry = table["gpt-4.1-mini"]
    # The table has no cache-write price (OpenAI charges none above input) and no batch price
    # of cached tokens: the plain input rate, and OpenAI's published half price.
    assert "cache_creation_input_token_cost" not in entry
    assert "cache_read_input_token_cost_batches" not in entry
    card = rate_card(_spec("openai/gpt-4.1-mini"))
    assert card.sync == Rates(
        input=entry["input_cost_per_token"],
        cached_input=entry["cache_read_input_token_cost"],
        cache_write=entry["input_cost_per_token"],
        output=entry["output_cost_per_token"],
    )
    assert card.batch == Rates(
        input=entry["input_cost_per_token_batches"],
        cached_input=pytest.approx(0.5 * entry["cache_read_input_token_cost"]),  # type: ignore[arg-type]
        cache_write=entry["input_cost_per_token_batches"],
        output=entry["output_cost_per_token_batches"],
    )


def test_a_reply_is_priced_in_four_parts() -> None:
    # claude-sonnet-4-5 per million tokens: input $3, cache read $0.30, cache write $3.75,
    # output $15; batch: half of each ($1.50, $0.15, $1.875, $7.50).
    spec = _spec("anthropic/claude-sonnet-4-5")
    usage = Usage(
        input_tokens=10_000, cache_read_tokens=6_000, cache_write_tokens=2_000, output_tokens=1_000
    )
    # plain 2,000 x 3 + read 6,000 x 0.30 + write 2,000 x 3.75 + output 1,000 x 15, per 1e6
    sync = (2_000 * 3 + 6_000 * 0.30 + 2_000 * 3.75 + 1_000 * 15) / 1e6
    assert sync == pytest.approx(0.0303)
    assert price(spec.model, usage, spec) == pytest.approx(sync)
    batch = (2_000 * 1.5 + 6_000 * 0.15 + 2_000 * 1.875 + 1_000 * 7.5) / 1e6
    assert price(spec.model, usage, spec, batch=True) == pytest.approx(batch)
    assert batch == pytest.approx(sync / 2)
    # Without cache tokens every input token is plain.
    plain = Usage(input_tokens=10_000, output_tokens=1_000)
    assert price(spec.model, plain, spec) == pytest.approx((10_000 * 3 + 1_000 * 15) / 1e6)


def test_batch_is_keyword_only() -> None:
    spec = _spec("openai/gpt-4.1-mini")
    with pytest.raises(TypeError):
        price(spec.model, Usage(input_tokens=1), spec, True)  # type: ignore[misc]


def test_config_prices_come_first_side_by_side(table: dict[str, Any]) -> None:
    entry = table["gpt-4.1-mini"]
    spec = _spec("openai/gpt-4.1-mini", input_cost_per_mtok=1.0, output_cost_per_mtok=3.0)
    card = rate_card(spec)
    # Input and output from the config; the cached rate still the table's; the cache-write
    # rate the (config's) input rate.
    assert card.sync == Rates(1.0 / PER_MTOK, entry["cache_read_input_token_cost"], 1e-6, 3e-6)
    # The table's batch prices belong to its own synchronous prices: beside a config price
    # the published discount (half) applies instead.
    assert card.batch.input == pytest.approx(0.5e-6)
    assert card.batch.output == pytest.approx(1.5e-6)
    assert card.batch.cache_write == pytest.approx(0.5e-6)
    assert card.batch.cached_input == pytest.approx(0.5 * entry["cache_read_input_token_cost"])
    both = _spec(
        "anthropic/claude-sonnet-4-5",
        cached_input_cost_per_mtok=0.1,
        cache_write_cost_per_mtok=5.0,
    )
    assert rate_card(both).sync.cached_input == pytest.approx(0.1e-6)
    assert rate_card(both).sync.cache_write == pytest.approx(5e-6)
    assert rate_card(both).sync.input == table["claude-sonnet-4-5"]["input_cost_per_token"]


def test_config_batch_discount_overrides_the_table_batch_prices() -> None:
    spec = _spec("anthropic/claude-sonnet-4-5", batch_discount=0.2)
    card = rate_card(spec)
    for sync, batch in zip(_all(card.sync), _all(card.batch), strict=True):
        assert batch == pytest.approx(0.8 * sync)
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert price(spec.model, usage, spec, batch=True) == pytest.approx(0.8 * (3 + 15))


def test_batch_price_of_other_providers_is_unknown_without_a_discount() -> None:
    spec = _spec(
        "vllm/my-7b",
        base_url="http://localhost:8000/v1",
        input_cost_per_mtok=0.1,
        output_cost_per_mtok=0.2,
    )
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert price(spec.model, usage, spec) == pytest.approx(0.3)
    assert price(spec.model, usage, spec, batch=True) is None
    discounted = spec.model_copy(update={"batch_discount": 0.5})
    assert price(spec.model, usage, discounted, batch=True) == pytest.approx(0.15)


def test_unknown_prices_are_none_never_zero() -> None:
    spec = _spec("vllm/my-finetune-7b", base_url="http://localhost:8000/v1")
    usage = Usage(input_tokens=100, output_tokens=10, cache_read_tokens=50)
    assert price(spec.model, usage, spec) is None
    assert price(spec.model, usage, spec, batch=True) is None
    assert unpriced([spec]) == [spec.model]
    # A cache rate is needed only by a usage that has cached tokens.
    rates = Rates(input=1e-6, cached_input=None, cache_write=None, output=2e-6)
    assert rates.cost(Usage(input_tokens=10, output_tokens=5)) == pytest.approx(2e-5)
    assert rates.cost(Usage(input_tokens=10, output_tokens=5, cache_read_tokens=4)) is None
    assert rates.cost(Usage(input_tokens=10, output_tokens=5, cache_write_tokens=4)) is None


def test_a_replay_costs_nothing() -> None:
    # `recorded/gpt-4` names a model the table prices; a replay calls none.
    spec = _spec("recorded/gpt-4", recorded="x.jsonl")
    usage = Usage(input_tokens=1_000, output_tokens=1_000)
    assert price(spec.model, usage, spec) == 0.0
    assert price(spec.model, usage, spec, batch=True) == 0.0


def test_unpriced_checks_the_rates_of_the_judges_mode() -> None:
    spec = _spec("openai/my-own-model", input_cost_per_mtok=1.0, output_cost_per_mtok=1.0)
    assert unpriced([spec, spec.model_copy(update={"mode": "batch"})]) == []


def test_per_mtok_states_the_rates_as_price_lists_do() -> None:
    card = rate_card(_spec("anthropic/claude-sonnet-4-5"))
    assert _all(card.sync.per_mtok()) == pytest.approx((3.0, 0.3, 3.75, 15.0))


def test_pricing_a_reply_is_cheap() -> None:
    # `price` runs once per reply: the rate card is resolved once per judge, not per call.
    spec = _spec("anthropic/claude-sonnet-4-5")
    usage = Usage(input_tokens=1_000, output_tokens=100, cache_read_tokens=500)
    price(spec.model, usage, spec)
    start = time.perf_counter()
    for _ in range(20_000):
        price(spec.model, usage, spec, batch=True)
    assert time.perf_counter() - start < 2.0  # ~50 ms on a laptop


def _all(rates: Rates) -> tuple[float | None, ...]:
    return (rates.input, rates.cached_input, rates.cache_write, rates.output)
