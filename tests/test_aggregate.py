"""Aggregation of both orders x judges into unblinded judgments, and per-judge diagnostics."""

from __future__ import annotations

from itertools import groupby

from judge.analysis.aggregate import Aggregation, PairJudgment
from judge.analysis.judge_stats import JudgeStats
from judge.config.run_config import AggregateConfig
from judge.store.result_rows import ResultRow
from judge.types import BlindingKey

KEY = BlindingKey(
    blinding_secret="00" * 32,
    systems={"r1": "alpha", "r2": "beta", "r3": "alpha", "r4": "beta"},
    pairs={"p1": ("alpha", "beta"), "p2": ("beta", "alpha")},
)
SLOTS = {"p1": ("r1", "r2"), "p2": ("r4", "r3")}
# r1 (alpha) is longer than r2 (beta); r4 (beta) longer than r3 (alpha).
LENGTHS = {"r1": 100, "r2": 10, "r3": 10, "r4": 100}


def result(pair: str, order: str, label: str | None, judge: str = "openai/j") -> ResultRow:
    """A reply with a verdict `label`, or (None) one that did not parse."""
    slot_a, slot_b = SLOTS[pair]
    return ResultRow(
        request_id=f"{pair}-{order}-{judge}",
        judge=judge,
        item_id="i1" if pair == "p1" else "i2",
        pair_id=pair,
        order=order,
        blind_id=None,
        same_family=False,
        answered=True,
        error=None,
        cost_usd=None,
        latency_s=1.0,
        cached=False,
        verdict=label is not None,
        label=label,
        score=None,
        scores=None,
        reasoning="" if label is not None else None,
        failure_reason=None if label is not None else "x",
        reply=None if label is not None else "t",
        slot_a=slot_a,
        slot_b=slot_b,
        length_a=LENGTHS[slot_a],
        length_b=LENGTHS[slot_b],
    )


def aggregate_pairwise(
    results: list[ResultRow], config: AggregateConfig
) -> tuple[list[PairJudgment], dict[str, JudgeStats]]:
    """The results in the order the store gives them (`judge.store.result_rows.by_item`), an item
    at a time, through one `Aggregation`."""
    aggregation = Aggregation(KEY, config, panel=len({r.judge for r in results}) > 1)
    ordered = sorted(results, key=lambda r: (r.item_id, r.pair_id, r.judge, r.order))
    rows = [
        judgment
        for _, item in groupby(ordered, key=lambda r: r.item_id)
        for _, judgment in aggregation.item(list(item))
    ]
    return rows, aggregation.stats()  # type: ignore[return-value]


def test_orders_map_back_to_systems() -> None:
    # p1: AB says A (alpha first -> alpha); BA says B (beta shown first, B = alpha) -> alpha.
    rows, stats = aggregate_pairwise(
        [result("p1", "AB", "A"), result("p1", "BA", "B")], AggregateConfig()
    )
    (j,) = rows
    assert (j.system_a, j.system_b, j.winner, j.outcome, j.score_a) == (
        "alpha",
        "beta",
        "alpha",
        "a",
        1.0,
    )
    assert j.verdict_ab == j.verdict_ba == "alpha" and j.consistent is True
    assert stats["openai/j"].position_consistency == 1.0
    assert stats["openai/j"].first_slot_win_rate == 0.5


def test_position_bias_is_inconsistent_and_a_tie_by_default() -> None:
    # Always "A": the first-shown wins in each order -> inconsistent.
    results = [result("p1", "AB", "A"), result("p1", "BA", "A")]
    (j,), stats = aggregate_pairwise(results, AggregateConfig())
    assert j.consistent is False and j.winner == "tie" and j.score_a == 0.5
    assert stats["openai/j"].first_slot_win_rate == 1.0
    assert stats["openai/j"].position_consistency == 0.0
    (dropped,), _ = aggregate_pairwise(results, AggregateConfig(inconsistent="drop"))
    assert dropped.winner is None and dropped.score_a is None


def test_single_order_stands_and_failures_are_counted() -> None:
    rows, stats = aggregate_pairwise(
        [result("p2", "AB", "B"), result("p2", "BA", None)], AggregateConfig()
    )
    (j,) = rows
    # p2 slot A = beta, slot B = alpha; AB "B" -> alpha.
    assert j.winner == "alpha" and j.orders == 1 and j.consistent is None and j.failures == 1
    assert stats["openai/j"].parse_failures == 1
    assert stats["openai/j"].parse_failure_rate == 0.5


def test_verbosity_preference() -> None:
    # p1: alpha (longer) wins; p2: beta (longer) wins -> longer wins 2 of 2.
    results = [
        result("p1", "AB", "A"),
        result("p1", "BA", "B"),
        result("p2", "AB", "A"),
        result("p2", "BA", "B"),
    ]
    _, stats = aggregate_pairwise(results, AggregateConfig())
    assert stats["openai/j"].verbosity_preference == 1.0


def test_panel_majority_and_split() -> None:
    results = [
        result("p1", "AB", "A", "openai/j"),
        result("p1", "BA", "B", "openai/j"),  # alpha
        result("p1", "AB", "A", "anthropic/k"),
        result("p1", "BA", "B", "anthropic/k"),  # alpha
        result("p1", "AB", "B", "google/g"),
        result("p1", "BA", "A", "google/g"),  # beta
        result("p2", "AB", "A", "openai/j"),
        result("p2", "BA", "B", "openai/j"),  # beta
        result("p2", "AB", "B", "anthropic/k"),
        result("p2", "BA", "A", "anthropic/k"),  # alpha
    ]
    rows, _ = aggregate_pairwise(results, AggregateConfig())
    panel = {r.pair_id: r for r in rows if r.judge == "panel"}
    assert panel["p1"].winner == "alpha"
    assert panel["p2"].winner == "tie"  # one vote each
