"""The judges' cost in the Judge section: what was spent, on what tokens, and what the batch
API and the prompt cache saved, as the store recorded it (`RunSummary.costs`)."""

from __future__ import annotations

from judge.report.blocks import Block, Heading, Para, Table
from judge.report.format import count, pct, usd
from judge.summary.cost import JudgeCost
from judge.summary.run_summary import RunSummary

_HEADER = [
    "judge",
    "judgments",
    "cost",
    "per thousand judgments",
    "input tokens",
    "cache read",
    "cache write",
    "output tokens",
    "cached share",
    "batch discount",
    "cache savings",
]


def cost_blocks(summary: RunSummary) -> list[Block]:
    costs = summary.costs
    if costs is None:
        return []  # a summary written before the spend was counted
    rows = [_row(name, line) for name, line in costs.judges.items()]
    if len(costs.judges) > 1:
        rows.append(_row("all judges", costs.total))
    canaries = "canaries' included; " if summary.canary_setup is not None else ""
    blocks: list[Block] = [
        Heading("Cost", 3),
        Para(
            f"What the judges' replies cost as they arrived ({canaries}replies taken from the "
            "response cache cost nothing and are left out of the money and tokens). "
            "Batch discount: the batch-answered replies at synchronous prices, less what they "
            "cost. Cache savings: the replies with their cached tokens priced as plain input, "
            "less what they cost. Unknown: a price the config and the price table lack."
        ),
        Table(_HEADER, rows),
    ]
    replayed = [j.model for j in summary.run.judges if j.recorded]
    if replayed:
        blocks.append(
            Para(
                f"{', '.join(replayed)} replayed recorded verdicts: no model was called, "
                "nothing was paid."
            )
        )
    return blocks


def _row(name: str, c: JudgeCost) -> list[str]:
    return [
        name,
        _judgments(c),
        _usd(c.cost_usd),
        _usd(c.cost_per_1k_usd),
        count(c.tokens.input),
        count(c.tokens.cache_read),
        count(c.tokens.cache_write),
        count(c.tokens.output),
        pct(c.cached_share),
        _usd(c.batch_discount_usd),
        _usd(c.cache_savings_usd),
    ]


def _judgments(c: JudgeCost) -> str:
    parts = []
    if c.from_cache:
        parts.append(f"{count(c.from_cache)} from cache")
    if c.batch:
        parts.append(f"{count(c.batch)} by batch")
    if c.unpriced:
        parts.append(f"{count(c.unpriced)} unpriced")
    return count(c.judgments) + (f" ({', '.join(parts)})" if parts else "")


def _usd(x: float | None) -> str:
    # Cents; four places under a dollar, where a small run's spend is (zero is $0.00).
    return usd(x, 4 if x is not None and 0 < abs(x) < 1 else 2, missing="unknown")
