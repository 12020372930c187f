"""A finished run logged as one MLflow run: the summary's numbers as metrics, the run's settings
as params, its answer and verdicts as tags, and summary.json, report.html and
judgments.parquet as artifacts, into the tracking store a URI names (`judge export mlflow`).

`mlflow_record` is the mapping, a pure function of the summary (what `judge export mlflow`
would log, with no MLflow installed); `export_mlflow` logs it through `MlflowClient`. Nothing
secret is read: a judge is its model string and family (never its key, environment variable
or base URL), and the artifacts are the run's own owner-side files.

Metric names are `/`-separated paths whose parts are system, judge and metric names, each part
with the characters MLflow refuses (anything but letters, digits, `_ - . ` and space) written
as `_`: `win_rate/gpt-4/ci_low`, `diff/claude-v1/alpaca-13b`, `judge/openai_gpt-4.1/
position_consistency`. docs/exporting.md lists them all.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from judge.errors import ConfigError, DataError
from judge.exporters.finished_run import finished_summary, optional

if TYPE_CHECKING:
    from judge.store.rundir import RunDir
    from judge.summary.run_summary import Analysis, Calibration, RunComparison, RunSummary

SCHEMES = ("sqlite", "file", "http", "https", "postgresql", "mysql", "mssql", "databricks")
"""Tracking URI schemes MLflow's client knows (a database's `dialect+driver` counts as its
dialect)."""

_BATCH = {"metrics": 1000, "params": 100, "tags": 100}
"""The most of each that one `log_batch` call takes (MLflow's own limits)."""

_UNSAFE = re.compile(r"[^\w.\- ]")


@dataclass(frozen=True)
class MlflowRecord:
    """What one exported run logs (`mlflow_record`)."""

    run_name: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]


@dataclass(frozen=True)
class MlflowExport:
    """A run logged to MLflow: where, and how much."""

    tracking_uri: str
    experiment_id: str
    run_id: str
    record: MlflowRecord
    artifacts: list[str]

    def lines(self) -> list[str]:
        return [
            f"MLflow run {self.run_id} (experiment {self.experiment_id}) in {self.tracking_uri}",
            f"{len(self.record.metrics)} metrics, {len(self.record.params)} params, "
            f"{len(self.record.tags)} tags; artifacts: {', '.join(self.artifacts)}",
        ]


@dataclass
class _Metrics:
    """Metric name -> value, each name given once (two systems whose names differ only in
    characters MLflow refuses would share one: an error, not one silently overwriting the
    other); a value that is None or not finite is left out (MLflow stores numbers only)."""

    values: dict[str, float] = field(default_factory=dict)

    def add(self, value: float | int | bool | None, *parts: str) -> None:
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            return
        key = metric_key(*parts)
        if key in self.values:
            raise DataError(
                f"two metrics would both be named {key!r} in MLflow (names that differ only in "
                "characters MLflow refuses): rename a system"
            )
        self.values[key] = float(value)

    def estimate(
        self, value: float | None, low: float | None, high: float | None, *parts: str
    ) -> None:
        self.add(value, *parts)
        self.add(low, *parts, "ci_low")
        self.add(high, *parts, "ci_high")


def metric_key(*parts: str) -> str:
    """A metric's name in MLflow: the parts, each made safe, joined by `/`."""
    safe = [_UNSAFE.sub("_", part) or "_" for part in parts]
    return "/".join("_" if part in (".", "..") else part for part in safe)


def mlflow_record(summary: RunSummary) -> MlflowRecord:
    """The metrics, params and tags of a finished, analysed run's summary."""
    analysis = summary.analysed()
    metrics = _Metrics()
    for name, count in summary.counts.model_dump().items():
        metrics.add(count, "count", name)
    _win_rates(metrics, analysis)
    _comparison(metrics, analysis.comparison)
    if analysis.calibration is not None:
        _calibration(metrics, analysis.calibration)
    _judges(metrics, summary)
    _costs(metrics, summary)
    return MlflowRecord(
        run_name=summary.run.name,
        params=_params(summary),
        metrics=metrics.values,
        tags=_tags(summary, analysis),
    )


def _win_rates(metrics: _Metrics, analysis: Analysis) -> None:
    for rate in analysis.win_rates or []:
        metrics.estimate(rate.win_rate, rate.ci_low, rate.ci_high, "win_rate", rate.system)
        metrics.add(rate.items, "win_rate", rate.system, "items")


def _comparison(metrics: _Metrics, comparison: RunComparison) -> None:
    for pair in comparison.comparisons + comparison.by_stratum:
        where = ["diff"] if pair.stratum is None else ["diff_by", comparison.by or "", pair.stratum]
        path = [*where, pair.a, pair.b]
        metrics.estimate(pair.mean_diff, pair.ci_low, pair.ci_high, *path)
        metrics.add(pair.p_holm, *path, "p_holm")
        metrics.add(pair.told_apart, *path, "told_apart")
        metrics.add(pair.n, *path, "items")
    for ranked in comparison.ranking:
        metrics.add(ranked.rank, "rank", ranked.system)
        metrics.estimate(
            ranked.estimate, ranked.ci_low, ranked.ci_high, "rank", ranked.system, "strength"
        )


def _calibration(metrics: _Metrics, calibration: Calibration) -> None:
    overall = calibration.overall
    metrics.add(overall.keys, "calibration", "keys")
    metrics.add(overall.labels, "calibration", "labels")
    for name, value in overall.metrics.items():
        metrics.estimate(value.value, value.ci_low, value.ci_high, "calibration", name)
    ceiling = overall.ceiling
    if ceiling is not None:
        for name in ("human_alpha", "judge_alpha_loho", "alpha_gap"):
            value = getattr(ceiling, name)
            metrics.estimate(value.value, value.ci_low, value.ci_high, "calibration", name)
    metrics.add(calibration.gate.verdict == "trusted", "calibration", "trusted")


def _judges(metrics: _Metrics, summary: RunSummary) -> None:
    for model, seen in summary.judges.items():
        for name in (
            "requests",
            "verdicts",
            "parse_failures",
            "errors",
            "parse_failure_rate",
            "position_consistency",
            "first_slot_win_rate",
            "tie_rate",
            "verbosity_preference",
            "latency_median_s",
        ):
            metrics.add(getattr(seen, name), "judge", model, name)
    for system, cost in summary.system_costs.items():
        metrics.add(cost.cost_usd_total, "system", system, "cost_usd_total")
        metrics.add(cost.latency_median_s, "system", system, "latency_median_s")


def _costs(metrics: _Metrics, summary: RunSummary) -> None:
    if summary.costs is None:
        return
    spent = [("total", summary.costs.total), *summary.costs.judges.items()]
    for who, cost in spent:
        where = ["cost"] if who == "total" else ["cost", "judge", who]
        metrics.add(cost.cost_usd, *where, "usd")
        metrics.add(cost.cost_per_1k_usd, *where, "usd_per_1k")
        metrics.add(cost.paid, *where, "paid")
        metrics.add(cost.from_cache, *where, "from_cache")
        metrics.add(cost.batch_discount_usd, *where, "batch_discount_usd")
        metrics.add(cost.cache_savings_usd, *where, "cache_savings_usd")
        metrics.add(cost.cached_share, *where, "cached_share")
        for kind, tokens in cost.tokens.model_dump().items():
            metrics.add(tokens, *where, "tokens", kind)


def _params(summary: RunSummary) -> dict[str, str]:
    from judge import DISTRIBUTION

    run = summary.run
    pairs = run.pairs.mode if run.pairs.baseline is None else f"baseline:{run.pairs.baseline}"
    params = {
        "run_name": run.name,
        "rubric": f"{run.rubric.id}@{run.rubric.version}",
        "rubric_hash": run.rubric.hash,
        "judges": ", ".join(j.model for j in run.judges),
        "orders": run.orders,
        "pairs": pairs,
        "allow_same_family": str(run.allow_same_family),
        "config_hash": run.config_hash,
        "simulated": str(run.simulated),
        "package_version": run.environment.packages.get(DISTRIBUTION, "unknown"),
        "python": run.environment.python,
    }
    for index, spec in enumerate(run.judges):
        params[f"judge.{index}.model"] = spec.model
        params[f"judge.{index}.family"] = str(spec.family)
    for name, seed in sorted(run.seeds.items()):
        params[f"seed.{name}"] = str(seed)
    return params


def _tags(summary: RunSummary, analysis: Analysis) -> dict[str, str]:
    decision = analysis.decision
    notice = summary.run.notice()
    tags = {
        "judge.outcome": decision.answer.outcome,
        "judge.answer": decision.answer.text,
        "judge.gate": decision.gate,
        "judge.trusted": str(decision.trusted),
        "judge.recorded_at": summary.run.environment.recorded_at,
        # The run page's description in MLflow's UI.
        "mlflow.note.content": "\n\n".join(t for t in (notice, decision.answer.text) if t),
    }
    if decision.leader is not None:
        tags["judge.leader"] = decision.leader
    if summary.run.question:
        tags["judge.question"] = summary.run.question
    if notice:
        tags["judge.notice"] = notice
    return tags


# --------------------------------------------------------------------------- logging


def export_mlflow(
    rundir: RunDir,
    uri: str,
    *,
    experiment: str | None = None,
    artifact_location: str | None = None,
) -> MlflowExport:
    """Log the finished run in `rundir` as a new MLflow run of `experiment` (default: the run's
    name; created if missing, its artifacts under `artifact_location` when given, else where
    the tracking store puts them) in the store at `uri`. Each call logs a new MLflow run."""
    summary = finished_summary(rundir)
    record = mlflow_record(summary)
    artifacts = _artifacts(rundir)
    check_tracking_uri(uri)
    optional("mlflow", "exporting to MLflow")
    from mlflow.entities import Metric, Param, RunTag

    client, experiment_id = _open(uri, experiment or record.run_name, artifact_location)
    run = client.create_run(experiment_id, run_name=record.run_name)
    run_id = run.info.run_id
    now = int(time.time() * 1000)
    try:
        metrics = [Metric(k, v, now, 0) for k, v in record.metrics.items()]
        params = [Param(k, v) for k, v in record.params.items()]
        tags = [RunTag(k, v) for k, v in record.tags.items()]
        for start in range(0, len(metrics), _BATCH["metrics"]):
            client.log_batch(run_id, metrics=metrics[start : start + _BATCH["metrics"]])
        for start in range(0, len(params), _BATCH["params"]):
            client.log_batch(run_id, params=params[start : start + _BATCH["params"]])
        for start in range(0, len(tags), _BATCH["tags"]):
            client.log_batch(run_id, tags=tags[start : start + _BATCH["tags"]])
        for path in artifacts:
            client.log_artifact(run_id, str(path))
    except BaseException:
        client.set_terminated(run_id, status="FAILED")
        raise
    client.set_terminated(run_id)
    return MlflowExport(uri, experiment_id, run_id, record, [p.name for p in artifacts])


def _artifacts(rundir: RunDir) -> list[Path]:
    files = [rundir.summary_file, rundir.report_html, rundir.judgments_parquet]
    missing = [p.name for p in files if not p.is_file()]
    if missing:
        raise DataError(
            f"{', '.join(missing)} missing: `judge report {rundir.path}` writes it",
            path=str(rundir.path),
        )
    return files


def check_tracking_uri(uri: str) -> None:
    """A `ConfigError` naming the forms MLflow takes, for a URI it would not: no scheme (a
    bare path), an unknown scheme, or a local store whose directory does not exist."""
    parsed = urlparse(uri)
    scheme = parsed.scheme.split("+")[0].lower()
    forms = "sqlite:///PATH/mlflow.db, file:///PATH/mlruns, http(s)://HOST:PORT, postgresql://..."
    if scheme not in SCHEMES:
        what = "no scheme" if not parsed.scheme else f"scheme {parsed.scheme!r}"
        raise ConfigError(f"MLflow tracking URI {uri!r} has {what}: give one of {forms}")
    if scheme in ("sqlite", "file"):
        # sqlite:///relative.db and sqlite:////absolute.db; file:///absolute/dir.
        raw = parsed.path[1:] if scheme == "sqlite" else parsed.path
        if not raw.strip("/"):
            # (sqlite:// alone is an in-memory database: the run would vanish with the process.)
            raise ConfigError(f"MLflow tracking URI {uri!r} names no path: give {forms}")
        path = Path(raw)
        where = path.parent if scheme == "sqlite" else path
        if scheme == "sqlite" and not where.is_dir():
            raise ConfigError(f"MLflow tracking URI {uri!r}: directory {where} does not exist")
        if scheme == "file" and where.exists() and not where.is_dir():
            raise ConfigError(f"MLflow tracking URI {uri!r}: {where} is not a directory")


def _open(uri: str, name: str, artifact_location: str | None) -> tuple[Any, str]:
    """A client of the store at `uri` and the id of its experiment `name` (created if
    missing); the store's own refusals (a file store MLflow no longer writes, a database it
    cannot open) become `ConfigError`s."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    try:
        client = MlflowClient(tracking_uri=uri)
        found = client.get_experiment_by_name(name)
        if found is not None:
            return client, str(found.experiment_id)
        return client, str(client.create_experiment(name, artifact_location=artifact_location))
    except MlflowException as exc:
        first = str(exc.message).strip().splitlines()[0]
        raise ConfigError(f"MLflow tracking store {uri}: {first}") from None
    except ModuleNotFoundError as exc:
        # mlflow-skinny's SQL stores need alembic and sqlalchemy, which it does not bring.
        raise ConfigError(
            f"MLflow tracking store {uri} needs {exc.name}, which is not installed: "
            "pip install 'judge-pipeline[mlflow]'"
        ) from None
