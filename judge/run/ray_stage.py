"""Judging as a stage of a Ray Data pipeline, as Ray's own LLM stages are (`ray.data.llm`): a
callable class for `Dataset.map_batches` whose actors judge batches of rows, each an item and
two systems' outputs, through the run's own pipeline (blinded and scrubbed, rendered in both
orders, sent by the runner with its limits and retries, parsed, the two orders combined by the
project's aggregation) and return the rows with verdict columns.

    ds = ray.data.read_parquet("pairs.parquet")      # item_id, prompt, system_a, output_a, ...
    judged = judge_pairs(ds, "configs/judges.yaml", actors=4)
    judged.write_parquet("judged/")

or, as a stage of one's own pipeline:

    ds.map_batches(JudgeStage, fn_constructor_kwargs={"config": config, "actors": 4},
                   compute=ray.data.ActorPoolStrategy(size=4), batch_size=64)

Nothing is stored: a stage has no run directory, so no response cache and no resume (Ray Data
runs a failed block again, and its requests are sent again). What a run needs a store for
(the budget, canaries, calibration, the report) is `judge run --executor ray`'s.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
import ray.data

from judge.analysis.aggregate import Aggregation, PairJudgment
from judge.blinding.blind import blind_one, new_secret, pair_up
from judge.blinding.scrubber import Scrubber
from judge.cluster import cluster_refusal
from judge.cluster.limiter import ClusterLimit, RateBudget
from judge.cluster.shard import ShardRunner
from judge.config.run_config import RunConfig, config_from_mapping, load_config
from judge.errors import ConfigError, DataError
from judge.judging.calls import Limiter
from judge.judging.runner import Outcome
from judge.rubric.rubrics import load_rubric
from judge.run.requests import RequestPlanner
from judge.store.result_rows import ResultRow
from judge.types import (
    PANEL,
    BlindedPair,
    BlindingKey,
    Item,
    JudgeRequest,
    ParseFailure,
    Response,
    Verdict,
)

__all__ = ["PAIR_COLUMNS", "VERDICT_COLUMNS", "JudgeStage", "judge_pairs", "stage_config"]

PAIR_COLUMNS = ("item_id", "prompt", "system_a", "output_a", "system_b", "output_b")
"""What each row must hold; `reference` is read when present (reference-guided rubrics), and
every column is carried through to the judged rows."""

VERDICT_COLUMNS = (
    "judge", "winner", "score_a", "verdict_ab", "verdict_ba", "consistent", "orders",
    "failures", "same_family", "cost_usd", "reasoning_ab", "reasoning_ba", "failure_ab",
    "failure_ba",
)  # fmt: skip
"""Added to each row, one row per judge of the pair (and, with several judges, a `panel` row:
their majority), as in the run's judgments files: `winner` (a system, `tie`, or None without a
verdict), `score_a` (1, 0.5 or 0 for the row's `system_a`), each order's winner, whether they
agree, how many orders gave a verdict and how many failed (`failure_ab`: why)."""

_STAGE_DATA = {"items": "ray.data", "responses": "ray.data"}
"""A stage's `data` when its config gives none: the dataset's rows are its data."""

_BUDGETS: dict[str, Any] = {}
"""The `RateBudget` actors `judge_pairs` started, by name: a handle nobody holds is the end of
its actor, and the stage's actors find it by name (a handle in an actor's constructor would
stop Ray from restarting that actor)."""


def stage_config(config: RunConfig | Mapping[str, Any] | str | Path) -> RunConfig:
    """A run config (an object, the keys of one, or its YAML file) checked for a stage: a
    config's `data`, `pairs`, `calibration` and `compare` are not a stage's (its rows are the
    pairs), and what needs a run's store is refused."""
    if isinstance(config, RunConfig):
        checked = config
    elif isinstance(config, Mapping):
        raw = {"name": "ray-data", "data": _STAGE_DATA, **config}
        checked = config_from_mapping(raw, Path.cwd(), source="JudgeStage config")
    else:
        checked = load_config(Path(config))
    refusal = cluster_refusal(checked)
    if refusal is None and checked.budget.max_cost_usd is not None:
        refusal = "a budget is held by a run's store: use `judge run --executor ray`"
    if refusal is None and checked.canaries is not None:
        refusal = "canaries are planted by a run's prepare: use `judge run --executor ray`"
    if refusal is None and load_rubric(checked.rubric).kind != "pairwise":
        refusal = f"rubric {checked.rubric!r} is absolute; a stage judges pairs"
    if refusal is not None:
        raise ConfigError(f"JudgeStage: {refusal}")
    return checked


@dataclass(frozen=True)
class _Plan:
    """One row's pair, blinded, and its requests (both orders, each judge allowed)."""

    pair: BlindedPair
    key: BlindingKey
    lengths: tuple[int, int]
    requests: list[JudgeRequest]


class JudgeStage:
    """A Ray Data stage: each actor holds the judges' clients and limits, and judges the
    batches it is handed (several at once: its calls share the connections).

    `config`: a run config (see `stage_config`). `actors`: how many actors judge (the pool's
    size): each takes that share of every judge's `max_connections` and, without
    `rate_budget`, of its rate limits. `rate_budget`: the name of a `RateBudget` actor holding
    the rate limits for all of them (`judge_pairs` starts one). `systems`: every system of the
    dataset, whose names are scrubbed from every output (by default those of the row).
    `secret`: the blinding secret (default `blinding.secret`, else one per actor: the pair ids
    then differ between actors; the verdicts do not)."""

    def __init__(
        self,
        config: RunConfig | Mapping[str, Any] | str | Path,
        *,
        actors: int = 1,
        rate_budget: str | None = None,
        systems: Sequence[str] = (),
        secret: str | None = None,
    ) -> None:
        self._config = stage_config(config)
        self._rubric = load_rubric(self._config.rubric)
        self._secret = secret or self._config.blinding.secret or new_secret()
        self._systems = frozenset(systems)
        self._budget_name = rate_budget
        self._budget: Any = None
        self._scrubbers: dict[frozenset[str], Scrubber | None] = {}
        self._planners: dict[tuple[str, str], RequestPlanner] = {}
        self._runner = ShardRunner(
            self._config,
            self._rubric,
            max(1, actors),
            limiter_for=self._limiter if rate_budget is not None else None,
        )

    def _limiter(self, key: str, rpm: float | None, tpm: float | None) -> Limiter:
        if self._budget is None:
            self._budget = ray.get_actor(self._budget_name)
        return ClusterLimit(self._budget, key, rpm, tpm)

    async def __call__(self, batch: Any) -> dict[str, list[Any]]:
        rows = _rows_of(batch)
        if not rows:
            return {}
        plans = [self._plan(row) for row in rows]
        requests = [q for plan in plans for q in plan.requests]
        replies = {r.request_id: (r, v) for r, v in await self._runner.judge_all(requests)}
        judged: dict[str, list[Any]] = {name: [] for name in (*rows[0], *VERDICT_COLUMNS)}
        for row, plan in zip(rows, plans, strict=True):
            for judgment in self._judgments(plan, replies):
                for name, value in row.items():
                    judged[name].append(value)
                for name, value in _verdict_columns(judgment, row, plan, replies).items():
                    judged[name].append(value)
        return judged

    def _plan(self, row: Mapping[str, Any]) -> _Plan:
        missing = [c for c in PAIR_COLUMNS if c not in row]
        if missing:
            raise DataError(
                f"JudgeStage rows need {', '.join(PAIR_COLUMNS)}; missing: {', '.join(missing)}"
            )
        item_id, first, second = str(row["item_id"]), str(row["system_a"]), str(row["system_b"])
        if first == second:
            raise DataError(f"item '{item_id}': a pair needs two systems, got '{first}' twice")
        item = Item(item_id=item_id, prompt=str(row["prompt"]), reference=_text(row, "reference"))
        scrubber = self._scrubber(frozenset({first, second}) | self._systems)
        blinded = {}
        for system, output in ((first, row["output_a"]), (second, row["output_b"])):
            response = Response(item_id=item_id, system=system, output=str(output))
            blinded[system] = blind_one(response, self._secret, scrubber)[0]
        present = {s: b.blind_id for s, b in blinded.items()}
        listed = [(item_id, first, second)]
        seed = self._config.blinding.seed
        (pair,), slots, _ = pair_up(self._secret, seed, {item_id: present}, listed)
        by_id = {b.blind_id: b for b in blinded.values()}
        planner = self._planner(slots[pair.pair_id])
        requests = list(planner.for_pairs(item, [pair], by_id, slots))
        key = BlindingKey(
            blinding_secret=self._secret,
            systems={b.blind_id: s for s, b in blinded.items()},
            pairs=slots,
        )
        lengths = (len(by_id[pair.slot_a].output), len(by_id[pair.slot_b].output))
        return _Plan(pair, key, lengths, requests)

    def _scrubber(self, systems: frozenset[str]) -> Scrubber | None:
        if systems not in self._scrubbers:
            blinding = self._config.blinding
            self._scrubbers[systems] = (
                Scrubber(
                    systems,
                    extra_markers=blinding.extra_markers,
                    scrub_ambiguous=blinding.scrub_ambiguous,
                )
                if blinding.scrub
                else None
            )
        return self._scrubbers[systems]

    def _planner(self, systems: tuple[str, str]) -> RequestPlanner:
        """The planner of one system pair (which judges may grade it: the families' rule)."""
        pair = (min(systems), max(systems))
        if pair not in self._planners:
            self._planners[pair] = RequestPlanner(self._config, self._rubric, [pair])
        return self._planners[pair]

    def _judgments(self, plan: _Plan, replies: Mapping[str, Outcome]) -> list[PairJudgment]:
        aggregation = Aggregation(
            plan.key, self._config.aggregate, panel=len(self._config.judges) > 1
        )
        results = sorted(
            (_result(q, replies[q.request_id], plan) for q in plan.requests),
            key=lambda r: (r.judge, r.order or ""),
        )
        return [j for _, j in aggregation.item(results) if isinstance(j, PairJudgment)]


def judge_pairs(
    dataset: ray.data.Dataset,
    config: RunConfig | Mapping[str, Any] | str | Path,
    *,
    actors: int | None = None,
    batch_size: int = 64,
    batches_per_actor: int = 4,
    systems: Sequence[str] = (),
    num_cpus: float = 1.0,
) -> ray.data.Dataset:
    """`dataset` with each row judged (`JudgeStage`, `VERDICT_COLUMNS` added), lazily, as Ray
    Data's transforms are. `actors`: the stage's actors (default: one per CPU of the cluster),
    each judging `batches_per_actor` batches of `batch_size` rows at once. The judges' rate
    limits are held for all the actors by one `RateBudget` actor started here (it lives as
    long as this process)."""
    checked = stage_config(config)
    if actors is None:
        actors = max(1, int(ray.cluster_resources().get("CPU", 1)))
    budget = None
    if any(j.requests_per_minute or j.tokens_per_minute for j in checked.judges):
        budget = f"judge-stage-rate-budget-{os.urandom(6).hex()}"
        _BUDGETS[budget] = RateBudget.options(name=budget).remote()  # type: ignore[attr-defined]
    return dataset.map_batches(
        JudgeStage,
        fn_constructor_kwargs={
            "config": checked,
            "actors": actors,
            "rate_budget": budget,
            "systems": list(systems),
            "secret": checked.blinding.secret or new_secret(),
        },
        batch_size=batch_size,
        compute=ray.data.ActorPoolStrategy(
            size=actors, max_concurrent_calls_per_actor=batches_per_actor
        ),
        num_cpus=num_cpus,
    )


def _rows_of(batch: Any) -> list[dict[str, Any]]:
    """A batch as Ray Data hands it (columns of numpy arrays, a pandas DataFrame, a pyarrow
    Table) as rows of plain values."""
    if hasattr(batch, "to_pylist"):  # pyarrow
        return list(batch.to_pylist())
    if hasattr(batch, "to_dict"):  # pandas
        return list(batch.to_dict("records"))
    columns = {name: list(values) for name, values in batch.items()}
    n = len(next(iter(columns.values()), []))
    return [{name: _plain(values[i]) for name, values in columns.items()} for i in range(n)]


def _plain(value: Any) -> Any:
    """numpy's scalars as Python's (a numpy string column holds `numpy.str_`)."""
    return value.item() if hasattr(value, "item") and not isinstance(value, str) else value


def _text(row: Mapping[str, Any], column: str) -> str | None:
    value = row.get(column)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def _result(request: JudgeRequest, outcome: Outcome, plan: _Plan) -> ResultRow:
    """A request's result as the aggregation reads it from a run's store."""
    response, parsed = outcome
    verdict = parsed if isinstance(parsed, Verdict) else None
    failure = parsed if isinstance(parsed, ParseFailure) else None
    return ResultRow(
        request_id=request.request_id,
        judge=request.judge,
        item_id=request.item_id,
        pair_id=request.pair_id,
        order=request.order,
        blind_id=request.blind_id,
        same_family=request.same_family,
        answered=True,
        error=response.error,
        cost_usd=response.cost_usd,
        latency_s=response.latency_s,
        cached=response.cached,
        verdict=verdict is not None,
        label=None if verdict is None else verdict.label,
        score=None if verdict is None else verdict.score,
        scores=json.dumps(verdict.scores) if verdict is not None and verdict.scores else None,
        reasoning=None if verdict is None else verdict.reasoning,
        failure_reason=None if failure is None else failure.reason,
        reply=response.text if failure is not None else None,
        slot_a=plan.pair.slot_a,
        slot_b=plan.pair.slot_b,
        length_a=plan.lengths[0],
        length_b=plan.lengths[1],
    )


def _verdict_columns(
    judgment: PairJudgment, row: Mapping[str, Any], plan: _Plan, replies: Mapping[str, Outcome]
) -> dict[str, Any]:
    first = str(row["system_a"])
    winner = judgment.winner
    score_a = None if winner is None else 0.5 if winner == "tie" else float(winner == first)
    costs = [
        replies[q.request_id][0].cost_usd
        for q in plan.requests
        if judgment.judge in (q.judge, PANEL)
    ]
    return {
        "judge": judgment.judge,
        "winner": winner,
        "score_a": score_a,
        "verdict_ab": judgment.verdict_ab,
        "verdict_ba": judgment.verdict_ba,
        "consistent": judgment.consistent,
        "orders": judgment.orders,
        "failures": judgment.failures,
        "same_family": judgment.same_family,
        "cost_usd": None if all(c is None for c in costs) else sum(c or 0.0 for c in costs),
        "reasoning_ab": judgment.reasoning_ab,
        "reasoning_ba": judgment.reasoning_ba,
        "failure_ab": judgment.failure_ab,
        "failure_ba": judgment.failure_ba,
    }
