"""Gemini's three ways of sending (issue 34, item 5): synchronous calls (lean transport and
google-genai SDK), the synchronous Flex tier and the Batch API, each a whole run against the
simulator over real HTTP. The verdicts are the same whichever way a request went; Flex and
batch replies cost half of what the synchronous ones do.

Prices are given in the judge's config (Gemini 2.5 Flash's list price, USD per million
tokens: 0.30 input, 2.50 output; ai.google.dev/gemini-api/docs/pricing), so the ratios do not
depend on LiteLLM's table being installed: batch and flex rates are then the published
discounts (half price: ai.google.dev/gemini-api/docs/batch-api and .../flex-inference)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge import load_config
from judge.run import run_pipeline
from judge.simulator import SimulatorConfig, running_simulator
from tests.test_batch import FAST, dataset, ledger_rows
from tests.test_runner import judgments, write_config

pytest.importorskip("google.genai", reason="the gemini extra: pip install 'judge-pipeline[gemini]'")

MODEL = "google/gemini-2.5-flash"
PRICES = {"input_cost_per_mtok": 0.30, "output_cost_per_mtok": 2.50}


def _judge(sim: Any, **fields: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "base_url": sim.base_url,
        "api_key": "gemini-test-key-123",
        "backoff_initial_s": 0.01,
        "backoff_max_s": 0.05,
        **PRICES,
        **fields,
    }


def _run(tmp_path: Path, name: str, items: Path, responses: Path, judge: dict[str, Any]) -> Any:
    config = write_config(tmp_path, items, responses, judges=[judge])
    outcome = run_pipeline(
        load_config(config), tmp_path / name, cache_path=tmp_path / f"{name}-cache.sqlite"
    )
    assert outcome.complete
    return outcome


def test_sync_flex_and_batch_give_the_same_verdicts_flex_and_batch_at_half_price(
    tmp_path: Path,
) -> None:
    items, responses = dataset(tmp_path)
    with running_simulator(SimulatorConfig(seed=4)) as sim:
        runs = {
            "sync-http": _judge(sim, transport="http"),
            "sync-sdk": _judge(sim, transport="sdk"),
            "flex": _judge(sim, service_tier="flex"),
            "batch": _judge(sim, mode="batch", batch={"max_requests": 10, **FAST}),
        }
        outcomes: dict[str, Any] = {}
        stats: dict[str, Any] = {}
        for name, judge in runs.items():
            sim.reset()
            outcomes[name] = _run(tmp_path, name, items, responses, judge)
            stats[name] = sim.stats()
    # 12 items x 3 pairs x 2 orders.
    for name, outcome in outcomes.items():
        assert outcome.summary.counts.requests == 72, name
    verdicts = {name: judgments(tmp_path / name) for name in runs}
    assert len(verdicts["sync-http"]) == 36
    for name in ("sync-sdk", "flex", "batch"):
        assert verdicts[name] == verdicts["sync-http"], name
    assert stats["batch"]["requests"] == 0, "the batch run sent nothing synchronously"
    assert stats["batch"]["batches"]["requests"] == 72
    assert stats["batch"]["batches"]["double_submissions"] == 0
    assert {s for (s,) in ledger_rows(tmp_path / "batch", "SELECT state FROM batches")} == {
        "collected"
    }
    assert ledger_rows(tmp_path / "batch", "SELECT DISTINCT api FROM batches") == [("gemini",)]

    costs = {name: outcome.summary.costs.total for name, outcome in outcomes.items()}
    # The same requests, read the same way: the same usage whichever way they were sent.
    assert len({(c.tokens.input, c.tokens.output) for c in costs.values()}) == 1
    sync = costs["sync-http"].cost_usd
    assert sync is not None and sync > 0
    assert costs["sync-sdk"].cost_usd == pytest.approx(sync)
    assert costs["batch"].cost_usd / sync == pytest.approx(0.5)
    assert costs["flex"].cost_usd / sync == pytest.approx(0.5)
    assert costs["batch"].batch == 72
