"""What the judges cost, as the run's store records it: the `costs` part of `summary.json`.

Realised, not estimated: sums of the stored replies' `cost_usd` and usage, and what the same
usage would have cost synchronously or without the prompt cache, priced by `judge.judging.pricing`
with the run's judge specs (`judge.run.spend` computes them). An unknown price is None, never
0: a reader sees "unknown", not a free judge.
"""

from __future__ import annotations

from judge.summary.base_model import SummaryModel

__all__ = ["CostTokens", "JudgeCost", "RunCosts"]


class CostTokens(SummaryModel):
    """Tokens of the paid replies (those taken from the response cache left out)."""

    input: int
    """Every prompt token, those read from or written to the prompt cache included."""
    cache_read: int
    """Of `input`, read from the provider's prompt cache."""
    cache_write: int
    """Of `input`, written to the prompt cache."""
    output: int


class JudgeCost(SummaryModel):
    """One judge's spend (or the run's, `RunCosts.total`). Every request sent counts,
    canaries' included: this is what the provider bills."""

    judgments: int
    """Replies received, unparseable ones included (they were paid for); a failed request
    is none."""
    from_cache: int
    """Of those, taken from the response cache: nothing was paid for them, and they are left
    out of everything below."""
    paid: int
    """`judgments - from_cache`."""
    batch: int
    """Of the paid replies, those a provider batch answered."""
    unpriced: int
    """Paid replies without a cost: their price was unknown when they arrived."""
    cost_usd: float | None
    """What the paid replies cost (the sum of their `cost_usd`, failed requests' included
    where known); None when a paid reply is unpriced."""
    cost_per_1k_usd: float | None
    """`cost_usd` per 1,000 paid judgments: what more of them would cost."""
    tokens: CostTokens
    cached_share: float | None
    """`tokens.cache_read / tokens.input`: the share of prompt tokens the cache served."""
    batch_discount_usd: float | None
    """What the batch-answered replies would have cost at synchronous prices, less what they
    cost (a synchronous repair turn of a batch reply is at synchronous prices in both); 0
    with no batch replies; None when a price is unknown."""
    cache_savings_usd: float | None
    """What the paid replies would have cost with their cached tokens priced as plain input,
    less what they cost at their cache rates (each at the rates it was sent at: synchronous
    or batch); 0 with no cached tokens; None when a price is unknown."""


class RunCosts(SummaryModel):
    judges: dict[str, JudgeCost]
    """By judge (`provider/model`), every judge the store has a reply of."""
    total: JudgeCost
    """The judges' sums (a total is unknown when a judge's is)."""
