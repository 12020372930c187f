"""What a run will cost (`judge.judging.cost_estimate`, `--dry-run`) and what it cost
(`judge.run.spend`,
the summary's `costs`, the report's Cost table).

Runs are prepared for real (`tests.outputs_runs`: judges at an unroutable address) and their
replies recorded straight into the store, with prompt-cache tokens and batch ids; expected
values are computed by hand from the configured per-million-token prices."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge import RunConfig, RunDir, load_config, prepare_run
from judge.cli.console import print_dry_run
from judge.config.run_config import JudgeSpec
from judge.judging import cost_estimate as estimate
from judge.judging.cost_estimate import estimate_run, estimate_tokens
from judge.report.blocks import to_markdown
from judge.report.cost_section import cost_blocks
from judge.report.format import traced
from judge.rubric.cached_prefix import anchors_in_system
from judge.rubric.rubrics import BUILTIN_DIR, load_rubric, render_absolute
from judge.run import dry_run
from judge.run.outputs import write_outputs
from judge.run.spend import _SELECT, realised_costs
from judge.summary import RunSummary
from judge.types import (
    BlindedResponse,
    Item,
    JudgeRequest,
    JudgeResponse,
    ParseFailure,
    Usage,
    Verdict,
)
from tests.helpers import run_cli
from tests.outputs_runs import config_for

SIM_X, SIM_Y = "openai/sim-x", "anthropic/sim-y"
# openai/sim-x's prices, USD per million tokens (the table knows neither sim model).
X_IN, X_OUT, X_READ, X_WRITE = 2.0, 8.0, 0.5, 2.5
MAX_TOKENS = 100


def _config(root: Path, *, long_prefix: bool = False, **x: Any) -> RunConfig:
    """The `pairwise` run of `tests.outputs_runs` (two judges, canaries), sim-x priced; with
    `long_prefix` its rubric's system message is padded past the cacheable minimum."""
    path = config_for(root, "pairwise", items=6)
    raw = yaml.safe_load(path.read_text())
    sim_x, sim_y = raw["judges"]
    sim_x.update(
        input_cost_per_mtok=X_IN,
        output_cost_per_mtok=X_OUT,
        cached_input_cost_per_mtok=X_READ,
        params={"max_tokens": MAX_TOKENS},
        **x,
    )
    sim_y.update(prompt_cache=False)
    if long_prefix:
        rubric = yaml.safe_load((BUILTIN_DIR / "pairwise_general.yaml").read_text())
        rubric["id"] = "pairwise_long"
        rubric["system"] += "\nBe careful and fair in every judgment you make.\n" * 120
        (root / "rubric.yaml").write_text(yaml.safe_dump(rubric))
        raw["rubric"] = str(root / "rubric.yaml")
    path.write_text(yaml.safe_dump(raw))
    return load_config(path)


def _requests(rundir: RunDir, judge: str) -> list[JudgeRequest]:
    with rundir.open_store() as store:
        return [q for q in store.iter_requests() if q.judge == judge]


def _systems(requests: list[JudgeRequest]) -> set[str]:
    return {m.content for q in requests for m in q.messages if m.role == "system"}


# --------------------------------------------------------------------------- the estimate


def test_estimate_prices_three_ways_with_a_short_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path)
    rundir = RunDir(tmp_path / "run")
    prepare_run(config, rundir)  # a dry run changes nothing: the requests are the prepare's
    plan = dry_run(config, rundir)
    requests = _requests(rundir, SIM_X)
    (system,) = _systems(requests)  # one static prefix across the rubric's requests
    n, tokens = len(requests), sum(estimate_tokens(q.messages) for q in requests)
    row = plan.judges[SIM_X]
    assert (row.requests, row.cached, row.input_tokens) == (n, 0, tokens)
    assert row.output_tokens == n * MAX_TOKENS
    sync = (tokens * X_IN + n * MAX_TOKENS * X_OUT) / 1e6
    assert row.cost_sync_usd == pytest.approx(sync)
    assert row.cost_batch_usd == pytest.approx(sync / 2)  # OpenAI's published batch discount
    # The prefix is under 1,024 tokens: nothing is cached, the cached estimate is the plain one.
    prefix = estimate_tokens([m for m in requests[0].messages if m.role == "system"])
    assert prefix < 1024 and len(system) // 4 < 1024
    assert [(p.tokens, p.requests, p.cacheable) for p in row.prefixes] == [(prefix, n, False)]
    assert (row.cache_read_tokens, row.cache_write_tokens) == (0, 0)
    assert row.cost_cached_usd == pytest.approx(sync)
    # sim-y's price is unknown: unknown in every column, never $0.
    unknown = plan.judges[SIM_Y]
    assert (unknown.cost_sync_usd, unknown.cost_batch_usd, unknown.cost_cached_usd) == (None,) * 3
    print_dry_run(plan)
    out = capsys.readouterr().out
    assert f"static prefix ~{prefix:,} tokens: below the 1,024-token minimum" in out
    assert "caching will not apply" in out
    assert re.search(rf"{SIM_Y} +│ sync │.*unknown price", out)


def test_estimate_reads_the_prefix_from_the_cache_when_long_enough(tmp_path: Path) -> None:
    config = _config(tmp_path, long_prefix=True)
    rundir = RunDir(tmp_path / "run")
    prepare_run(config, rundir)
    row = dry_run(config, rundir).judges[SIM_X]
    requests = _requests(rundir, SIM_X)
    assert len(_systems(requests)) == 1
    n, tokens = len(requests), sum(estimate_tokens(q.messages) for q in requests)
    prefix = estimate_tokens([m for m in requests[0].messages if m.role == "system"])
    assert prefix >= 1024
    # The first request writes the prefix (at the input price: OpenAI has no write price),
    # the other n - 1 read it.
    read, written = prefix * (n - 1), prefix
    assert (row.cache_read_tokens, row.cache_write_tokens) == (read, written)
    out = n * MAX_TOKENS * X_OUT
    cached = ((tokens - read - written) * X_IN + read * X_READ + written * X_IN + out) / 1e6
    assert row.cost_cached_usd == pytest.approx(cached)
    assert row.cost_sync_usd == pytest.approx((tokens * X_IN + out) / 1e6)
    # An Anthropic judge with prompt_cache: false sets no breakpoint: nothing is cached.
    off = dry_run(config, rundir).judges[SIM_Y]
    assert off.prefixes[0].cacheable and not off.prompt_cache
    assert (off.cache_read_tokens, off.cache_write_tokens) == (0, 0)
    # In batch mode the cached estimate is at batch prices (half of each, config prices).
    (tmp_path / "b").mkdir()
    with rundir.open_store() as store:
        batched = _config(tmp_path / "b", long_prefix=True, mode="batch")
        batch = estimate_run(store, batched, load_rubric(batched.rubric))
    assert batch.judges[SIM_X].mode == "batch"
    assert batch.judges[SIM_X].cost_cached_usd == pytest.approx(cached / 2)


def test_estimate_reads_page_by_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(tmp_path)
    rundir = RunDir(tmp_path / "run")
    prepare_run(config, rundir)
    whole = dry_run(config, rundir)
    monkeypatch.setattr(estimate, "_PAGE", 7)
    with rundir.open_store() as store:
        assert estimate_run(store, config, load_rubric(config.rubric)) == whole


# --------------------------------------------------------------------------- realised


def _reply(q: JudgeRequest, usage: Usage, cost: float | None, **extra: Any) -> JudgeResponse:
    return JudgeResponse(request_id=q.request_id, text='{"verdict": "A"}', usage=usage,
                         cost_usd=cost, **extra)  # fmt: skip


_A = Verdict(label="A")


def _recorded(tmp_path: Path) -> tuple[RunConfig, RunDir]:
    """sim-x: a synchronous reply reading the cache, two batch replies (one writing the
    cache, one whose synchronous repair turn is in its cost), a parse failure, one from the
    response cache, one failure; sim-y (unpriced): a reply reading the cache.

    The costs are the replies' own, priced by hand (per million tokens; batch: half):
    x[0] 400 x 2 + 600 x 0.5 + 100 x 8 = 1,900; x[1] (1,500 x 2 + 500 x 2.5 + 200 x 8) / 2
    = 2,925; x[2] (1,200 x 2 + 150 x 8) / 2 = 1,800, and 300 for its repair turn; x[3] 300 x 2
    + 30 x 8 = 840."""
    config = _config(tmp_path, cache_write_cost_per_mtok=X_WRITE)
    rundir = RunDir(tmp_path / "run")
    prepare_run(config, rundir)
    x, y = _requests(rundir, SIM_X), _requests(rundir, SIM_Y)
    replies: list[tuple[JudgeResponse, Verdict | ParseFailure | None]] = [
        (_reply(x[0], Usage(input_tokens=1000, cache_read_tokens=600, output_tokens=100),
                1.9e-3), _A),
        (_reply(x[1], Usage(input_tokens=2000, cache_write_tokens=500, output_tokens=200),
                2.925e-3, batch_id="b1"), _A),
        (_reply(x[2], Usage(input_tokens=1200, output_tokens=150), 2.1e-3, batch_id="b1"), _A),
        (_reply(x[3], Usage(input_tokens=300, output_tokens=30), 8.4e-4),
         ParseFailure(reason="no verdict", excerpt="")),
        (_reply(x[4], Usage(input_tokens=500, output_tokens=50), 0.0, cached=True, attempts=0), _A),
        (JudgeResponse(request_id=x[5].request_id, error="timeout", attempts=6), None),
        (_reply(y[0], Usage(input_tokens=800, cache_read_tokens=400, output_tokens=80), None), _A),
    ]  # fmt: skip
    with rundir.open_store() as store:
        assert store.record_responses(replies) == len(replies)
    return config, rundir


def test_realised_costs_by_hand(tmp_path: Path) -> None:
    config, rundir = _recorded(tmp_path)
    with rundir.open_store() as store:
        costs = realised_costs(store, config.judges)
    x = costs.judges[SIM_X]
    assert (x.judgments, x.from_cache, x.paid, x.batch, x.unpriced) == (5, 1, 4, 2, 0)
    spent = (1900 + 2925 + 2100 + 840) / 1e6
    assert x.cost_usd == pytest.approx(spent)
    assert x.cost_per_1k_usd == pytest.approx(1000 * spent / 4)
    assert x.tokens.model_dump() == {
        "input": 4500,
        "cache_read": 600,
        "cache_write": 500,
        "output": 480,
    }
    assert x.cached_share == pytest.approx(600 / 4500)
    # The batch replies at synchronous prices (per million: input 2, write 2.5, output 8):
    # x[1] 1,500 x 2 + 500 x 2.5 + 200 x 8 = 5,850; x[2] 1,200 x 2 + 150 x 8 = 3,600;
    # less what they cost (the repair turn, at the synchronous price, counts in both).
    assert x.batch_discount_usd == pytest.approx((5850 + 3600 - 2925 - 2100) / 1e6)
    # Cached tokens as plain input, less at cache rates, each at its own rates: x[0]
    # synchronously 600 x (2 - 0.5) = 900; x[1] in a batch (half price) 500 x (1 - 1.25)
    # = -125 (a cache write costs more than plain input).
    assert x.cache_savings_usd == pytest.approx((900 - 125) / 1e6)
    y = costs.judges[SIM_Y]
    assert (y.judgments, y.paid, y.unpriced) == (1, 1, 1)
    assert (y.cost_usd, y.cost_per_1k_usd, y.cache_savings_usd) == (None, None, None)
    assert y.batch_discount_usd == 0.0  # no batch replies: nothing to discount
    total = costs.total
    assert (total.judgments, total.paid, total.batch, total.unpriced) == (6, 5, 2, 1)
    assert total.cost_usd is None and total.cache_savings_usd is None  # sim-y's are unknown
    assert total.batch_discount_usd == pytest.approx(x.batch_discount_usd)
    assert total.tokens.input == 5300 and total.cached_share == pytest.approx(1000 / 5300)


def test_the_cost_query_reads_the_index_not_the_prompts(tmp_path: Path) -> None:
    _, rundir = _recorded(tmp_path)
    with rundir.open_store() as store:
        plan = store.connection.execute(f"EXPLAIN QUERY PLAN {_SELECT}").fetchall()
    assert any("COVERING INDEX judge_requests_by_item" in row[-1] for row in plan), plan


def test_costs_are_in_the_summary_and_survive_its_json(tmp_path: Path) -> None:
    config, rundir = _recorded(tmp_path)
    summary = write_outputs(config, rundir)
    with rundir.open_store() as store:
        assert summary.costs == realised_costs(store, config.judges)
    assert RunSummary.from_json(rundir.summary_file.read_text()) == summary
    assert RunSummary.from_json(summary.to_json()).costs == summary.costs
    # A summary written before costs were counted still reads.
    old = summary.to_dict()
    del old["costs"]
    assert RunSummary.from_dict(old).costs is None


def test_the_report_shows_the_cost_table(tmp_path: Path) -> None:
    config, rundir = _recorded(tmp_path)
    summary = write_outputs(config, rundir)
    with traced() as ledger:
        page = to_markdown(cost_blocks(summary))
    assert "### Cost" in page
    x = summary.costs.judges[SIM_X] if summary.costs else None
    assert x is not None and x.cost_usd is not None and x.batch_discount_usd is not None
    rows = [line for line in page.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| judge | judgments | cost | per thousand judgments |")
    # By judge name; dollars to the cent, under a dollar to four places.
    assert rows[2] == (
        f"| {SIM_X} | 5 (1 from cache, 2 by batch) | ${x.cost_usd:.4f} | "
        f"${x.cost_per_1k_usd:.2f} | 4500 | 600 | 500 | 480 | 13.3% | "
        f"${x.batch_discount_usd:.4f} | ${x.cache_savings_usd:.4f} |"
    )
    assert rows[1] == (
        f"| {SIM_Y} | 1 (1 unpriced) | unknown | unknown | 800 | 400 | 0 | 80 | 50.0% | "
        "$0.00 | unknown |"
    )
    assert rows[3].startswith("| all judges | 6 (1 from cache, 2 by batch, 1 unpriced) | unknown")
    # Every number on it is a value of the summary's costs.
    values = _leaves(summary.to_dict()["costs"])
    assert ledger and all(value in values for value, _ in ledger)


def _leaves(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return [leaf for v in obj.values() for leaf in _leaves(v)]
    return [obj]


# ------------------------------------------------------- each model's cache minimum; anchors


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        # docs.anthropic.com prompt caching, "Cache limitations" (read 2026-12)
        ("anthropic/claude-sonnet-4-5", 1024),
        ("anthropic/claude-opus-4-1", 1024),
        ("anthropic/claude-sonnet-4-6", 2048),
        ("anthropic/claude-3-5-haiku-latest", 2048),
        ("anthropic/claude-opus-4-5", 4096),
        ("anthropic/claude-haiku-4-5", 4096),
        ("litellm/anthropic/claude-opus-4-6", 4096),
        # ai.google.dev/gemini-api/docs/caching (updated 2026-10-13)
        ("google/gemini-2.5-flash", 2048),
        ("google/gemini-2.5-pro", 2048),
        ("google/gemini-3-pro-preview", 4096),
        ("google/gemini-3.5-flash", 4096),
        ("litellm/gemini/gemini-3.1-pro-preview", 4096),
        ("openai/gpt-4.1-mini", 1024),
        ("litellm/mistral/mistral-large", 1024),
    ],
)
def test_each_model_caches_from_its_published_minimum(model: str, minimum: int) -> None:
    assert estimate.cache_minimum(JudgeSpec(model=model)) == minimum


def test_a_prefix_cached_by_one_model_is_flagged_below_another_models_minimum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The padded rubric's ~1,900-token prefix: past OpenAI's 1,024, below Gemini 3's 4,096."""
    config = _config(tmp_path, long_prefix=True)
    gemini = config.judges[1].model_copy(update={"model": "google/gemini-3-pro-preview"})
    config = config.model_copy(update={"judges": [config.judges[0], gemini]})
    rundir = RunDir(tmp_path / "run")
    prepare_run(config, rundir)
    plan = dry_run(config, rundir)
    openai, google = plan.judges[SIM_X], plan.judges["google/gemini-3-pro-preview"]
    (prefix,) = {p.tokens for p in openai.prefixes + google.prefixes}
    assert 1024 <= prefix < 4096
    assert (openai.min_cacheable_tokens, google.min_cacheable_tokens) == (1024, 4096)
    assert openai.prefixes[0].cacheable and openai.cache_read_tokens > 0
    assert not google.prefixes[0].cacheable and google.cache_read_tokens == 0
    print_dry_run(plan)
    out = " ".join(capsys.readouterr().out.split())
    assert f"static prefix ~{prefix:,} tokens: below the 4,096-token minimum" in out


ANCHORS_LATE = """\
id: anchors_late
version: 3
kind: absolute
description: An absolute rubric that states its criteria and scale in the user message.
scale:
  min: 1
  max: 5
  anchors: {1: "Wrong or off-topic.", 3: "Acceptable.", 5: "Correct, complete and clear."}
criteria:
  - {id: quality, text: "%s"}
system: |
  You are an impartial judge of one response. Reply with one JSON object:
  {"reasoning": "<your assessment>", "score": <integer>}
user: |
  Judge on these criteria:
  {{ criteria }}

  {%% if reference %%}
  Score: {{ scale }}, against the reference below.
  [REFERENCE]
  {{ reference }}
  [/REFERENCE]
  {%% endif %%}
  [USER MESSAGE]
  {{ prompt }}
  [/USER MESSAGE]

  [RESPONSE]
  {{ response }}
  [/RESPONSE]

  Score: {{ scale }}
output: {format: json, fields: [reasoning, score]}
reference: optional
"""


def _anchors_late(root: Path, criterion: str = "How well the response fulfils it.") -> Path:
    path = root / "anchors_late.yaml"
    path.write_text(ANCHORS_LATE % criterion)
    return path


def test_move_anchors_puts_the_scale_and_criteria_in_the_system_message(tmp_path: Path) -> None:
    rubric = load_rubric(_anchors_late(tmp_path))
    move = anchors_in_system(rubric)
    assert move is not None
    # The caption goes with its anchor; the line inside `{% if %}` stays where it is.
    assert move.lines == ("Judge on these criteria:", "{{ criteria }}", "Score: {{ scale }}")
    moved = move.rubric
    assert (moved.id, moved.version) == ("anchors_late", 4) and moved.hash != rubric.hash
    item = Item(item_id="q1", prompt="What is 2 + 2?")
    response = BlindedResponse(blind_id="r1", item_id="q1", output="4")
    before = render_absolute(rubric, item, response)
    after = render_absolute(moved, item, response)
    scale = "an integer from 1 to 5, where:\n- 1: Wrong or off-topic."
    criteria = "- quality: How well the response fulfils it."
    assert scale in before[1].content and criteria in before[1].content
    assert scale not in after[1].content and criteria not in after[1].content
    assert scale in after[0].content and criteria in after[0].content
    assert after[0].content == moved.system_text()
    # Everything else of the user message is as it was, in order.
    assert after[1].content.startswith("[USER MESSAGE]\nWhat is 2 + 2?")
    assert after[1].content.endswith("[RESPONSE]\n4\n[/RESPONSE]")
    # A rubric whose anchors are all in the system message already has nothing to move.
    assert anchors_in_system(load_rubric("pairwise_general")) is None


def test_dry_run_offers_the_move_and_the_moved_rubric_is_cached(tmp_path: Path) -> None:
    """Long criteria in the user message: the prefix is ~40 tokens, uncacheable; the dry run
    says moving them makes it ~1,200, past sim-x's 1,024; `judge rubric move-anchors` writes
    that rubric, and its dry run reads the prefix from the cache."""
    criterion = "Judge whether the response answers the question fully and correctly. " * 64
    rubric_file = _anchors_late(tmp_path, criterion.strip())
    raw = yaml.safe_load(config_for(tmp_path, "absolute", items=4).read_text())
    raw["rubric"] = str(rubric_file)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(raw))
    config = load_config(tmp_path / "config.yaml")
    plan = dry_run(config, RunDir(tmp_path / "run"))
    assert not plan.judges[SIM_X].prefixes[0].cacheable
    (note,) = [n for n in plan.notes if "renders its anchors" in n]
    assert f"judge rubric move-anchors {rubric_file} --out rubric.yaml" in note
    assert f"past {SIM_X}'s 1,024-token cache minimum: cached from then on" in note
    assert f"past {SIM_Y}'s 1,024-token cache minimum" in note  # prompt_cache is on for it

    moved_file = tmp_path / "moved.yaml"
    result = run_cli("rubric", "move-anchors", str(rubric_file), "--out", str(moved_file))
    assert result.returncode == 0, result.stderr
    assert "moved 3 lines into the system message" in result.stderr
    moved = load_rubric(moved_file)
    assert (moved.id, moved.version) == ("anchors_late", 4)
    assert moved_file.read_text().startswith("# Written by `judge rubric move-anchors`")
    raw["rubric"] = str(moved_file)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(raw))
    after = dry_run(load_config(tmp_path / "config.yaml"), RunDir(tmp_path / "run2"))
    row = after.judges[SIM_X]
    assert row.prefixes[0].cacheable and row.cache_read_tokens > 0
    assert not [n for n in after.notes if "renders its anchors" in n]
    # Nothing to move: exit 1, nothing written.
    again = run_cli("rubric", "move-anchors", "pairwise_general", "--out", str(tmp_path / "x"))
    assert again.returncode == 1 and "nothing to move" in again.stderr
    assert not (tmp_path / "x").exists()
