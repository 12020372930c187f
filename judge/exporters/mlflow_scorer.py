"""`judge` as an MLflow scorer: `mlflow.genai.evaluate(data, scorers=[judge_scorer(config)])`
judges each row's output against a baseline response through the whole pipeline, blinded and in
both orders, and returns the verdict with the judge's reasoning as an MLflow `Feedback`.

A row is the pair: `inputs` the prompt, `outputs` the candidate's response,
`expectations["baseline_response"]` the response it is compared with (and, when present,
`expectations["expected_response"]` the rubric's reference). Each row is one small run of
`judge.evaluate` in a run dir of its own, named by the hash of its content under `run_root`,
so scoring the same row again resumes that run and pays for nothing twice; every run there
shares one response cache. The config's judges, rubric, blinding, orders and simulator are used
as given; its data, pairs, calibration, comparison gates and canaries are the pair's own.

The verdict's value is the candidate's score (1 won, 0.5 tie, 0 lost), so MLflow's mean of it
is the candidate's win rate; with several judges it is the panel's verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.analysis.aggregate import PairJudgment
from judge.config.run_config import (
    CalibrationConfig,
    CompareConfig,
    PairsConfig,
    RunConfig,
    config_from_mapping,
    load_config,
)
from judge.errors import ConfigError
from judge.exporters.finished_run import iter_judgments, optional
from judge.hashing import canonical_json, content_hash
from judge.types import PANEL

BASELINE_KEY = "baseline_response"
"""The `expectations` key holding the response the row's output is compared with."""
REFERENCE_KEY = "expected_response"
"""The `expectations` key of a reference answer (MLflow's own name for one)."""
_PROMPT_KEYS = ("prompt", "question", "query", "request", "input")


@dataclass(frozen=True)
class PairVerdict:
    """What the pipeline said about one row: the candidate's score (None without a verdict),
    the winner (a system, `tie`, or None) and the reasoning, order by order."""

    score: float | None
    winner: str | None
    rationale: str
    consistent: bool | None
    judges: list[str]
    run_dir: Path


def judge_scorer(
    config: RunConfig | Mapping[str, Any] | str | Path,
    *,
    name: str = "judge",
    run_root: str | Path | None = None,
    candidate: str = "mlflow-candidate",
    baseline: str = "mlflow-baseline",
) -> Any:
    """An MLflow scorer (`mlflow.genai.scorers.scorer`) judging each row's `outputs` against
    `expectations["baseline_response"]` with `config`'s judges and rubric (a YAML path, a
    mapping of its keys, or a `RunConfig`; its `data` may be left out). `candidate` and
    `baseline` are the two systems' names in the runs, blinded as any system's: the scrubber
    removes them from the texts, and a judge of either's family is left out. Name them as
    their models are named when that is known; the defaults are names no text uses (a name
    such as "baseline" would be scrubbed from every response that says the word). `run_root`:
    where the runs go (default `runs/<config name>`)."""
    optional("mlflow", "the MLflow scorer")
    from mlflow.entities import AssessmentSource, Feedback
    from mlflow.genai.scorers import scorer

    pair_config = _pair_config(config, candidate, baseline)
    root = Path(run_root) if run_root is not None else Path("runs") / pair_config.name
    source = AssessmentSource(
        source_type="LLM_JUDGE", source_id=", ".join(j.model for j in pair_config.judges)
    )

    def judge(inputs: Any, outputs: Any, expectations: Any) -> Feedback:
        verdict = judge_pair(
            pair_config,
            root,
            prompt=_prompt(inputs),
            output=_text(outputs),
            baseline_output=_expected(expectations, BASELINE_KEY),
            reference=_optional_expected(expectations, REFERENCE_KEY),
            candidate=candidate,
            baseline=baseline,
        )
        metadata = {
            "winner": str(verdict.winner),
            "consistent": str(verdict.consistent),
            "judges": ", ".join(verdict.judges),
            "run_dir": str(verdict.run_dir),
        }
        if verdict.score is None:
            return Feedback(
                error=f"no verdict: {verdict.rationale}", source=source, metadata=metadata
            )
        return Feedback(
            value=verdict.score, rationale=verdict.rationale, source=source, metadata=metadata
        )

    return scorer(judge, name=name, description="Blinded pairwise judge, both orders")


def judge_pair(
    config: RunConfig,
    root: Path,
    *,
    prompt: str,
    output: str,
    baseline_output: str,
    reference: str | None,
    candidate: str,
    baseline: str,
) -> PairVerdict:
    """Judge `output` (system `candidate`) against `baseline_output` on `prompt` as a run of
    `judge.evaluate` in `root / <content hash>`."""
    import pandas as pd

    from judge.run.evaluate import evaluate

    item = {"item_id": "item", "prompt": prompt}
    if reference is not None:
        item["reference"] = reference
    responses = [
        {"item_id": "item", "system": candidate, "output": output},
        {"item_id": "item", "system": baseline, "output": baseline_output},
    ]
    key = content_hash({"config": config, "item": item, "responses": responses})
    run_dir = root / key.removeprefix("sha256:")[:24]
    result = evaluate(
        config, items=pd.DataFrame([item]), responses=pd.DataFrame(responses), run_dir=run_dir
    )
    if not result.complete:
        raise ConfigError(
            f"the pair's run stopped with requests pending (budget): {run_dir}; raise "
            "budget.max_cost_usd or score the row again to continue it"
        )
    rows = [r for r in iter_judgments(result.run_dir) if isinstance(r, PairJudgment)]
    return _verdict(rows, candidate, run_dir)


def _verdict(rows: list[PairJudgment], candidate: str, run_dir: Path) -> PairVerdict:
    own = [r for r in rows if r.judge != PANEL]
    panel = [r for r in rows if r.judge == PANEL]
    decisive = (panel or own)[0]
    score = decisive.score_a
    if score is not None and decisive.system_a != candidate:
        score = 1.0 - score
    lines = []
    for row in own:
        for order, verdict, reasoning, failure in (
            ("AB", row.verdict_ab, row.reasoning_ab, row.failure_ab),
            ("BA", row.verdict_ba, row.reasoning_ba, row.failure_ba),
        ):
            said = f"{verdict}: {reasoning}" if verdict is not None else failure
            if said:
                lines.append(f"{row.judge}, order {order}: {said}")
    return PairVerdict(
        score=score,
        winner=decisive.winner,
        rationale="\n".join(lines) or "no judge gave a verdict",
        consistent=decisive.consistent,
        judges=[r.judge for r in own],
        run_dir=run_dir,
    )


def _pair_config(
    config: RunConfig | Mapping[str, Any] | str | Path, candidate: str, baseline: str
) -> RunConfig:
    if candidate == baseline:
        raise ConfigError(f"candidate and baseline are both named {candidate!r}: name them apart")
    if isinstance(config, RunConfig):
        loaded = config
    elif isinstance(config, str | Path):
        loaded = load_config(config)
    elif isinstance(config, Mapping):
        # The pair's own tables replace the data; a config written for the scorer need not
        # name any.
        raw = {"data": {"items": "items.jsonl", "responses": "responses.jsonl"}, **config}
        loaded = config_from_mapping(raw, Path.cwd(), source="config")
    else:
        raise ConfigError(
            f"config: expected a YAML path, a mapping or a RunConfig, got {type(config).__name__}"
        )
    from judge.rubric.rubrics import load_rubric

    kind = load_rubric(loaded.rubric).kind
    if kind != "pairwise":
        raise ConfigError(
            f"rubric {loaded.rubric!r} is {kind}: the scorer compares two responses, so it "
            "needs a pairwise rubric (e.g. pairwise_general)"
        )
    return loaded.model_copy(
        update={
            "pairs": PairsConfig(mode="baseline", baseline=baseline),
            "calibration": CalibrationConfig(),
            "compare": CompareConfig(),
            "canaries": None,
        }
    )


def _prompt(inputs: Any) -> str:
    """The prompt of a row's `inputs`: a string as it is; a mapping's only value, or its
    `prompt` (`question`, `query`, `request`, `input`) value; else the mapping as JSON."""
    if isinstance(inputs, Mapping):
        if len(inputs) == 1:
            return _text(next(iter(inputs.values())))
        for key in _PROMPT_KEYS:
            if key in inputs:
                return _text(inputs[key])
    return _text(inputs)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        raise ConfigError("the row has no outputs to judge")
    return canonical_json(value)


def _expected(expectations: Any, key: str) -> str:
    found = _optional_expected(expectations, key)
    if found is None:
        raise ConfigError(
            f"the row has no expectations[{key!r}]: give the response to compare with there"
        )
    return found


def _optional_expected(expectations: Any, key: str) -> str | None:
    if not isinstance(expectations, Mapping) or expectations.get(key) is None:
        return None
    return _text(expectations[key])
