"""A finished run as W&B Weave evaluations (`judge export weave`), through Weave's imperative
`EvaluationLogger`: one evaluation per system (its `model`), each item a prediction, so Weave's
evaluation comparison sets the systems side by side on the same items.

A prediction's inputs are the item's id; its output is what the compared judge (the panel, or
the only judge) decided on that item for the system: wins, losses and ties against each
opponent (pairwise) or the score (absolute); its scores are the system's mean score on the item
(`win_rate`, ties counting half; `score`) and, pairwise, the share of its pairs whose two
orders agreed (`consistent`). An evaluation's summary is the run's statistics for the system:
its win rate and rank with their intervals and each paired difference it is in, beside the
run's answer and the trust gate. Prompts and responses are not sent, nor anything secret.

`weave_evaluations` and `weave_predictions` are the mapping (what would be logged, with no
Weave installed and no server); `export_weave` logs it. Weave logs to a W&B server only: there
is no local store to read it back from, so the tests check the mapping, and run the logging
calls against Weave's own client with Weave disabled (`WEAVE_DISABLED=true`), which checks the
calls match the installed API but stores nothing.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judge.analysis.aggregate import PairJudgment, ScoreJudgment
from judge.errors import ConfigError
from judge.exporters.finished_run import Judgment, finished_summary, iter_judgments, optional

if TYPE_CHECKING:
    from judge.store.rundir import RunDir
    from judge.summary.run_summary import RunSummary

_PROJECT = re.compile(r"^(?:[\w.-]+/)?[\w.-]+$")


@dataclass(frozen=True)
class WeaveEvaluation:
    """One system's evaluation: `EvaluationLogger`'s arguments and the summary it ends with."""

    system: str
    name: str
    model: str
    dataset: str
    attributes: dict[str, Any]
    summary: dict[str, Any]


@dataclass(frozen=True)
class WeavePrediction:
    """One item of one system's evaluation (`EvaluationLogger.log_example`)."""

    system: str
    inputs: dict[str, Any]
    output: dict[str, Any]
    scores: dict[str, float | None]


@dataclass(frozen=True)
class WeaveExport:
    project: str
    evaluations: int
    predictions: int

    def lines(self) -> list[str]:
        return [
            f"{self.evaluations} Weave evaluations ({self.predictions} predictions) logged to "
            f"{self.project}"
        ]


def weave_evaluations(summary: RunSummary) -> list[WeaveEvaluation]:
    """Each compared system's evaluation, in the comparison's order of systems."""
    analysis = summary.analysed()
    comparison = analysis.comparison
    rates = {r.system: r for r in analysis.win_rates or []}
    ranks = {r.system: r for r in comparison.ranking}
    run = summary.run
    attributes = {
        "judge_run": run.name,
        "rubric": f"{run.rubric.id}@{run.rubric.version}",
        "rubric_hash": run.rubric.hash,
        "judge": comparison.judge,
        "judges": [j.model for j in run.judges],
        "config_hash": run.config_hash,
        "simulated": run.simulated,
    }
    out = []
    for system in comparison.systems:
        stats: dict[str, Any] = {
            "answer": analysis.decision.answer.text,
            "trust_gate": analysis.decision.gate,
        }
        if system in rates:
            rate = rates[system]
            stats["win_rate"] = {
                "mean": rate.win_rate,
                "ci_low": rate.ci_low,
                "ci_high": rate.ci_high,
                "items": rate.items,
            }
        if system in ranks:
            ranked = ranks[system]
            stats["rank"] = ranked.rank
            stats["strength"] = {
                "estimate": ranked.estimate,
                "ci_low": ranked.ci_low,
                "ci_high": ranked.ci_high,
            }
        for pair in comparison.comparisons:
            if system in (pair.a, pair.b):
                other, sign = (pair.b, 1.0) if pair.a == system else (pair.a, -1.0)
                low, high = pair.ci_low, pair.ci_high
                if sign < 0:
                    low, high = _negated(high), _negated(low)
                stats[f"diff_vs_{other}"] = {
                    "mean": sign * pair.mean_diff,
                    "ci_low": low,
                    "ci_high": high,
                    "told_apart": pair.told_apart,
                }
        out.append(
            WeaveEvaluation(
                system=system,
                name=f"{run.name}: {system}",
                model=system,
                dataset=f"{run.name}-items",
                attributes={**attributes, "system": system},
                summary=stats,
            )
        )
    return out


def _negated(value: float | None) -> float | None:
    return None if value is None else -value


def weave_predictions(
    summary: RunSummary, judgments: Iterator[Judgment]
) -> Iterator[WeavePrediction]:
    """Each (item, system) of the compared judge's judgments, an item at a time: the judgments
    file holds a judge's rows item by item, so one item's rows are in memory at once."""
    judge = summary.analysed().comparison.judge
    rows = (j for j in judgments if judge is None or j.judge == judge)
    for item_id, group in itertools.groupby(rows, key=lambda j: j.item_id):
        item_rows = list(group)
        if isinstance(item_rows[0], PairJudgment):
            yield from _pairwise(item_id, item_rows)  # type: ignore[arg-type]
        else:
            yield from _absolute(item_id, item_rows)  # type: ignore[arg-type]


def _pairwise(item_id: str, rows: list[PairJudgment]) -> Iterator[WeavePrediction]:
    against: dict[str, dict[str, str]] = defaultdict(dict)
    scores: dict[str, list[float]] = defaultdict(list)
    agreed: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        for system, other, mine in (
            (row.system_a, row.system_b, row.score_a),
            (row.system_b, row.system_a, None if row.score_a is None else 1 - row.score_a),
        ):
            against[system][other] = _result(mine)
            if mine is not None:
                scores[system].append(mine)
            if row.consistent is not None:
                agreed[system].append(row.consistent)
    for system in sorted(against):
        mine = scores[system]
        said = agreed[system]
        yield WeavePrediction(
            system=system,
            inputs={"item_id": item_id},
            output={"against": dict(sorted(against[system].items()))},
            scores={
                "win_rate": sum(mine) / len(mine) if mine else None,
                "consistent": sum(said) / len(said) if said else None,
            },
        )


def _result(score: float | None) -> str:
    if score is None:
        return "no verdict"
    return {1.0: "win", 0.5: "tie", 0.0: "loss"}.get(score, str(score))


def _absolute(item_id: str, rows: list[ScoreJudgment]) -> Iterator[WeavePrediction]:
    for row in sorted(rows, key=lambda r: r.system):
        yield WeavePrediction(
            system=row.system,
            inputs={"item_id": item_id},
            output={"score": row.score, "lost_by_flag": row.lost_by_flag},
            scores={"score": row.score},
        )


def export_weave(rundir: RunDir, project: str) -> WeaveExport:
    """Log the finished run to the W&B Weave project `project` (`entity/project`, or a project
    of the default entity). Needs a W&B API key (WANDB_API_KEY, or `wandb login`)."""
    summary = finished_summary(rundir)
    if not _PROJECT.fullmatch(project):
        raise ConfigError(
            f"Weave project {project!r}: give ENTITY/PROJECT or PROJECT (letters, digits, "
            "'_', '-', '.')"
        )
    weave = optional("weave", "exporting to W&B Weave")
    _check_credentials()
    client = weave.init(project)
    evaluations = weave_evaluations(summary)
    loggers = {
        e.system: weave.EvaluationLogger(
            name=e.name,
            model=e.model,
            dataset=e.dataset,
            eval_attributes=e.attributes,
        )
        for e in evaluations
    }
    count = 0
    for prediction in weave_predictions(summary, iter_judgments(rundir)):
        logger = loggers[prediction.system]
        logger.log_example(
            inputs=prediction.inputs, output=prediction.output, scores=prediction.scores
        )
        count += 1
    for evaluation in evaluations:
        loggers[evaluation.system].log_summary(evaluation.summary)
    client.flush()
    return WeaveExport(project, len(evaluations), count)


def _check_credentials() -> None:
    """Weave asks for a key on the terminal when it has none (and waits): say what to set
    instead. Disabled Weave (WEAVE_DISABLED=true) needs none."""
    if os.environ.get("WEAVE_DISABLED", "").lower() in ("1", "true", "yes"):
        return
    from weave.wandb_interface.context import get_wandb_auth_context

    if get_wandb_auth_context() is None:
        raise ConfigError(
            "exporting to W&B Weave needs a W&B API key: set WANDB_API_KEY (or run `wandb "
            "login`); nothing was sent"
        )
