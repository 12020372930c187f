"""What a run's judges spent (`judge.summary.cost`), from one aggregate query over the store:
sums per judge, way of answering (synchronous or batch) and origin (paid or taken from the
response cache), never the rows themselves. Prices are linear in tokens, so pricing a group's
summed usage is pricing each reply and summing. Reads only, through the store's own
connection (`RunStore.connection`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from judge.config.run_config import JudgeSpec
from judge.judging.pricing import RateCard, rate_card
from judge.store.run_store import RunStore
from judge.summary.cost import CostTokens, JudgeCost, RunCosts
from judge.types import Usage

__all__ = ["realised_costs"]

# Grouped by judge, batch-answered or not, taken from the response cache or not, failed or
# not. A failed request has no usage; its cost is counted where one was recorded. The judge
# is read from the index `judge_requests_by_item`, which holds it with the request id: the
# rows of `judge_requests` (the rendered prompts, most of the file) are never visited.
_SELECT = """
SELECT q.judge, r.batch_id IS NOT NULL, r.cached, r.error IS NOT NULL,
       COUNT(*), COUNT(r.cost_usd), TOTAL(r.cost_usd),
       SUM(r.input_tokens), SUM(r.cache_read_tokens), SUM(r.cache_write_tokens),
       SUM(r.output_tokens)
FROM judge_requests q INDEXED BY judge_requests_by_item
     JOIN judge_responses r ON r.request_id = q.request_id
GROUP BY 1, 2, 3, 4
ORDER BY 1, 2, 3, 4
"""


@dataclass(frozen=True)
class _Group:
    """One judge's replies answered one way (synchronous or batch) and paid for."""

    replies: int
    priced: int
    """Of `replies`, those with a cost."""
    cost: float
    usage: Usage
    """Summed."""


@dataclass
class _Judge:
    judgments: int = 0
    from_cache: int = 0
    unpriced: int = 0
    error_cost: float = 0.0
    groups: dict[bool, _Group] = field(default_factory=dict)
    """batch? -> the paid replies answered so."""


def realised_costs(store: RunStore, judges: Iterable[JudgeSpec]) -> RunCosts:
    """Each judge's spend, tokens, cached share, and the batch discount and cache savings
    realised, priced with the run's `judges` (a judge the store has and the config no longer
    names: its savings are unknown)."""
    cards = {spec.model: rate_card(spec) for spec in judges}
    found: dict[str, _Judge] = {}
    for row in store.connection.execute(_SELECT):
        judge, batch, cached, failed, n, priced, cost, *tokens = row
        j = found.setdefault(judge, _Judge())
        if failed:
            j.error_cost += cost
            continue
        j.judgments += n
        if cached:
            j.from_cache += n
            continue
        j.unpriced += n - priced
        # One row per judge and way of answering: the query groups them.
        j.groups[bool(batch)] = _Group(n, priced, cost, _usage(*tokens))
    lines = {name: _line(j, cards.get(name)) for name, j in sorted(found.items())}
    return RunCosts(judges=lines, total=_total(list(lines.values())))


def _usage(inputs: int, read: int, written: int, output: int) -> Usage:
    return Usage(
        input_tokens=inputs,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def _line(j: _Judge, card: RateCard | None) -> JudgeCost:
    groups = j.groups.values()
    return _cost(
        judgments=j.judgments,
        from_cache=j.from_cache,
        paid=sum(g.replies for g in groups),
        batch=j.groups[True].replies if True in j.groups else 0,
        unpriced=j.unpriced,
        cost_usd=None if j.unpriced else sum(g.cost for g in groups) + j.error_cost,
        tokens=_tokens(_as_tokens(g.usage) for g in groups),
        batch_discount_usd=_batch_discount(j.groups.get(True), card),
        cache_savings_usd=_cache_savings(j.groups, card),
    )


def _tokens(parts: Iterable[CostTokens]) -> CostTokens:
    parts = list(parts)
    return CostTokens(
        input=sum(t.input for t in parts),
        cache_read=sum(t.cache_read for t in parts),
        cache_write=sum(t.cache_write for t in parts),
        output=sum(t.output for t in parts),
    )


def _as_tokens(u: Usage) -> CostTokens:
    return CostTokens(
        input=u.input_tokens,
        cache_read=u.cache_read_tokens,
        cache_write=u.cache_write_tokens,
        output=u.output_tokens,
    )


def _cost(
    *,
    judgments: int,
    from_cache: int,
    paid: int,
    batch: int,
    unpriced: int,
    cost_usd: float | None,
    tokens: CostTokens,
    batch_discount_usd: float | None,
    cache_savings_usd: float | None,
) -> JudgeCost:
    """A `JudgeCost` with its ratios: per 1,000 paid judgments, the cached share."""
    return JudgeCost(
        judgments=judgments,
        from_cache=from_cache,
        paid=paid,
        batch=batch,
        unpriced=unpriced,
        cost_usd=cost_usd,
        cost_per_1k_usd=None if cost_usd is None or not paid else 1000 * cost_usd / paid,
        tokens=tokens,
        cached_share=tokens.cache_read / tokens.input if tokens.input else None,
        batch_discount_usd=batch_discount_usd,
        cache_savings_usd=cache_savings_usd,
    )


def _batch_discount(group: _Group | None, card: RateCard | None) -> float | None:
    """The batch replies at synchronous prices, less what they cost. What they cost is the
    stored cost, not a re-pricing: a batch reply's synchronous repair turn is in its usage
    and, at the synchronous price, in its cost, so it cancels out here."""
    if group is None:
        return 0.0
    if card is None or group.priced < group.replies:
        return None
    at_sync = card.cost(group.usage)
    return None if at_sync is None else at_sync - group.cost


def _cache_savings(groups: dict[bool, _Group], card: RateCard | None) -> float | None:
    """Each way of answering priced at its own rates, cached tokens as plain input, less the
    same at the cache rates: the batch discount is not counted twice."""
    saved = 0.0
    for batch, group in groups.items():
        usage = group.usage
        if not (usage.cache_read_tokens or usage.cache_write_tokens):
            continue
        uncached = usage.model_copy(update={"cache_read_tokens": 0, "cache_write_tokens": 0})
        before = None if card is None else card.cost(uncached, batch=batch)
        after = None if card is None else card.cost(usage, batch=batch)
        if before is None or after is None:
            return None
        saved += before - after
    return saved


def _total(lines: Sequence[JudgeCost]) -> JudgeCost:
    return _cost(
        judgments=sum(line.judgments for line in lines),
        from_cache=sum(line.from_cache for line in lines),
        paid=sum(line.paid for line in lines),
        batch=sum(line.batch for line in lines),
        unpriced=sum(line.unpriced for line in lines),
        cost_usd=_known_sum(line.cost_usd for line in lines),
        tokens=_tokens(line.tokens for line in lines),
        batch_discount_usd=_known_sum(line.batch_discount_usd for line in lines),
        cache_savings_usd=_known_sum(line.cache_savings_usd for line in lines),
    )


def _known_sum(values: Iterable[float | None]) -> float | None:
    """The sum; None when a value is unknown (a total of unknowns is unknown, not 0)."""
    total = 0.0
    for value in values:
        if value is None:
            return None
        total += value
    return total
