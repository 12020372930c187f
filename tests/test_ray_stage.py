"""Judging as a Ray Data stage (issue 33): `judge_pairs` / `JudgeStage` in `Dataset.map_batches`
on a local 2-CPU Ray, against the simulator over real HTTP. The stage's verdicts are a local
run's on the same pairs (same blinding, prompts and aggregation), with a panel row for several
judges; a reply that does not parse is a row that says so; one rate budget holds across the
stage's actors; what a stage cannot judge is a config error before any request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import ray
import ray.data

from judge import load_config
from judge.errors import ConfigError
from judge.run import run_pipeline
from judge.run.ray_stage import VERDICT_COLUMNS, JudgeStage, judge_pairs
from judge.simulator import SimulatorConfig, running_simulator
from tests.test_runner import SECRET, judge_entry, judgments, quality, write_config, write_dataset

MODELS = ["openai/sim-alpha", "anthropic/sim-beta"]
OUTPUTS = {
    "sys-a": lambda i: quality(0.4 + (i % 3) / 10, f"Answer {i} from a."),
    "sys-b": lambda i: quality(0.5, f"B says {i}."),
    "sys-c": lambda i: quality(0.45, f"C thinks about {i}."),
}


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Any:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def pair_rows(n: int, baseline: str = "sys-b") -> list[dict[str, Any]]:
    """Each system against `baseline` on every item, the baseline listed second on odd items
    (a row's order of systems must not matter: slots are seeded from the pair)."""
    rows = []
    for i in range(n):
        for system in ("sys-a", "sys-c"):
            a, b = (system, baseline) if i % 2 == 0 else (baseline, system)
            rows.append(
                {
                    "item_id": f"q{i}",
                    "prompt": f"Question number {i}?",
                    "system_a": a,
                    "output_a": OUTPUTS[a](i),
                    "system_b": b,
                    "output_b": OUTPUTS[b](i),
                    "batch_tag": i,  # any other column is carried through
                }
            )
    return rows


def test_the_stage_judges_as_a_local_run_does(tmp_path: Path) -> None:
    with running_simulator(SimulatorConfig(seed=4, rate_malformed=0.1)) as sim:
        judges = [judge_entry(sim, m, backoff_initial_s=0.01) for m in MODELS]
        items, responses = write_dataset(tmp_path, 12, OUTPUTS)
        path = write_config(
            tmp_path,
            items,
            responses,
            judges=judges,
            pairs={"mode": "baseline", "baseline": "sys-b"},
        )
        config = load_config(path)
        local = run_pipeline(config, tmp_path / "local", cache_path=tmp_path / "local.cache")
        assert local.complete
        ran = sim.stats()
        sim.reset()
        ds = ray.data.from_items(pair_rows(12))
        judged = judge_pairs(ds, config, actors=2, batch_size=5, systems=list(OUTPUTS))
        rows = judged.take_all()
        stats = sim.stats()
    # 12 items x 2 pairs x 2 orders x 2 judges, and the repairs of the malformed replies: the
    # run's requests, each answered once.
    assert stats["distinct_answered"] == ran["distinct_answered"] >= 96
    assert stats["max_answers_per_request"] == 1
    assert set(VERDICT_COLUMNS) | {"batch_tag", "output_a"} <= set(rows[0])
    # Per pair: each judge's row and the panel's, as in the run's judgments file.
    assert len(rows) == 24 * 3
    by_key = {
        (r["item_id"], frozenset((r["system_a"], r["system_b"])), r["judge"]): r for r in rows
    }
    expected = judgments(tmp_path / "local")
    assert len(expected) == len(by_key) == 72
    for e in expected:
        got = by_key[(e["item_id"], frozenset((e["system_a"], e["system_b"])), e["judge"])]
        for column in ("winner", "verdict_ab", "verdict_ba", "consistent", "orders", "failures"):
            assert got[column] == e[column], (column, got, e)
    # The malformed replies: repaired, or a failure that says why; never a silent gap.
    for r in rows:
        assert r["orders"] + r["failures"] == 2 or r["judge"] == "panel"
        if r["failures"] and r["judge"] != "panel":
            assert r["failure_ab"] or r["failure_ba"]
    scored = [r for r in rows if r["winner"] is not None]
    assert all(
        r["score_a"] == (0.5 if r["winner"] == "tie" else float(r["winner"] == r["system_a"]))
        for r in scored
    )


def test_a_stage_in_map_batches_shares_one_rate_budget(tmp_path: Path) -> None:
    # The simulator refuses (429) anything over 660 a minute: the stage's 600 a minute over
    # two actors, held by one limiter actor, must never trip it.
    guarded = SimulatorConfig(seed=3, rpm_capacity=660, rpm_burst=12)
    with running_simulator(guarded) as sim:
        config = {
            "rubric": "pairwise_general",
            "blinding": {"seed": 3, "secret": SECRET},
            "judges": [judge_entry(sim, MODELS[0], requests_per_minute=600, max_connections=16)],
        }
        judged = judge_pairs(ray.data.from_items(pair_rows(10)), config, actors=2, batch_size=4)
        rows = judged.take_all()
        stats = sim.stats()
    assert len(rows) == 20 and all(r["winner"] is not None for r in rows)
    assert stats["by_outcome"].get("429", 0) == 0 and stats["requests"] == 40
    counts = [n for _, n in sorted(stats["requests_by_second"].items(), key=lambda s: int(s[0]))]
    sent = 0
    for k, n in enumerate(counts, start=1):
        sent += n
        assert sent <= 10 + 10 * k, (k, counts)


def test_the_stage_class_is_a_map_batches_callable(tmp_path: Path) -> None:
    """`ds.map_batches(JudgeStage, ...)` as Ray's LLM stages are used, on pandas batches."""
    with running_simulator(SimulatorConfig(seed=2)) as sim:
        config = {"rubric": "pairwise_general", "judges": [judge_entry(sim, MODELS[1])]}
        judged = ray.data.from_items(pair_rows(4)).map_batches(
            JudgeStage,
            fn_constructor_kwargs={"config": config},
            compute=ray.data.ActorPoolStrategy(size=1),
            batch_size=3,
            batch_format="pandas",
        )
        rows = judged.take_all()
    assert len(rows) == 8 and {r["judge"] for r in rows} == {MODELS[1]}
    assert all(r["orders"] == 2 and r["winner"] is not None for r in rows)


@pytest.mark.parametrize(
    ("extra", "refusal"),
    [
        ({"budget": {"max_cost_usd": 1.0}}, "budget"),
        ({"rubric": "absolute_1to5"}, "absolute"),
        ({"judges": [{"model": "openai/sim-alpha", "api_key": "sk-secret"}]}, "api_key_env"),
    ],
)
def test_what_a_stage_cannot_judge_is_a_config_error(extra: dict[str, Any], refusal: str) -> None:
    config = {"rubric": "pairwise_general", "judges": [{"model": "openai/sim-alpha"}], **extra}
    with pytest.raises(ConfigError, match=refusal) as raised:
        judge_pairs(ray.data.from_items(pair_rows(1)), config)
    assert "sk-secret" not in str(raised.value)
