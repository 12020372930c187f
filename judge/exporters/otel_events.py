"""A finished run's judgments as OpenTelemetry `gen_ai.evaluation.result` events, one per row
of `judgments.jsonl` (each judge's and the panel's), streamed from the file (`judge export
otel-otlp`).

The event and its attributes are those of the OpenTelemetry semantic conventions v1.41.0
(`SEMCONV_VERSION`; the event is unchanged from v1.39.0, where it first appeared, to v1.41.1,
the last release that held the GenAI conventions before they moved to their own repository),
and every event's logger carries that version's schema URL. The event is in the conventions'
"development" stability, so the version is pinned here rather than read from an installed
package that may follow a later one.

What an event holds: `gen_ai.evaluation.name` (the rubric's id), `gen_ai.evaluation.score.value`
(a pairwise judgment's score of its first system: 1 won, 0.5 tie, 0 lost; an absolute
judgment's score), `gen_ai.evaluation.score.label` (pairwise: `win`, `tie` or `loss`, for that
first system), `gen_ai.evaluation.explanation` (the judge's reasoning in each order, unless
left out), `error.type` when the judgment has no verdict (`parse_failure`, `judge_error`,
`no_verdict`), and `judge.*` attributes naming the run, item, pair, judge and systems.

These events are results, for the run's owner, as `judgments.jsonl` is: they name the systems.
They are never judge-facing and never carry what would undo the blinding for someone who holds
the judge-visible tables: no blinded id (an absolute judgment's `blind_id` beside its system
would publish a line of the blinding key), no key or secret, no prompt or response text, no
reply a judge gave that could not be parsed, no API key, base URL or header. The reasoning is
the judge's own text about the blinded responses; `explanations=False` leaves it out where the
responses' content must not reach the telemetry backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from judge.analysis.aggregate import PairJudgment, ScoreJudgment
from judge.errors import ConfigError
from judge.exporters.finished_run import Judgment, finished_summary, iter_judgments, optional

if TYPE_CHECKING:
    from judge.store.rundir import RunDir
    from judge.summary.run_summary import RunSummary

SEMCONV_VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
EVENT_NAME = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
ERROR_TYPE = "error.type"

SCOPE = "judge.exporters.otel_events"
"""The instrumentation scope's name: the code that makes the events."""

_FLUSH_EVERY = 1024
"""Events between flushes of the logger provider: half a batching processor's default queue
(2048), which then never fills (a full queue drops events), however long the judgments file."""

_LABELS = {"a": "win", "b": "loss", "tie": "tie"}


@dataclass(frozen=True)
class EvaluationEvent:
    """One `gen_ai.evaluation.result` event, as it is emitted."""

    attributes: dict[str, Any]


def evaluation_events(
    summary: RunSummary, judgments: Iterator[Judgment], *, explanations: bool = True
) -> Iterator[EvaluationEvent]:
    """The event of each judgment, in the order they come."""
    run = summary.run
    common = {
        EVALUATION_NAME: run.rubric.id,
        "judge.run": run.name,
        "judge.rubric.version": run.rubric.version,
    }
    for judgment in judgments:
        if isinstance(judgment, PairJudgment):
            own = _pairwise(judgment, explanations)
        else:
            own = _absolute(judgment, explanations)
        yield EvaluationEvent({**common, **own})


def _pairwise(row: PairJudgment, explanations: bool) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "judge.item_id": row.item_id,
        "judge.pair_id": row.pair_id,
        "judge.judge": row.judge,
        "judge.system": row.system_a,
        "judge.opponent": row.system_b,
        "judge.orders": row.orders,
        "judge.same_family": row.same_family,
    }
    if row.outcome is not None and row.score_a is not None:
        attributes[SCORE_VALUE] = float(row.score_a)
        attributes[SCORE_LABEL] = _LABELS[row.outcome]
        attributes["judge.winner"] = row.winner
    else:
        attributes[ERROR_TYPE] = _error_type([row.failure_ab, row.failure_ba])
    if row.consistent is not None:
        attributes["judge.consistent"] = row.consistent
    if row.lost_by_flag is not None:
        attributes["judge.lost_by_flag"] = row.lost_by_flag
    requests = [r for r in (row.request_ab, row.request_ba) if r]
    if requests:
        attributes["judge.request_ids"] = requests
    said = [(o, t) for o, t in (("AB", row.reasoning_ab), ("BA", row.reasoning_ba)) if t]
    if explanations and said:
        attributes[EXPLANATION] = "\n".join(f"{order}: {text}" for order, text in said)
    return attributes


def _absolute(row: ScoreJudgment, explanations: bool) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "judge.item_id": row.item_id,
        "judge.judge": row.judge,
        "judge.system": row.system,
        "judge.same_family": row.same_family,
        "judge.lost_by_flag": row.lost_by_flag,
    }
    if row.score is not None:
        attributes[SCORE_VALUE] = float(row.score)
    else:
        attributes[ERROR_TYPE] = _error_type([row.failure])
    if row.request_id:
        attributes["judge.request_ids"] = [row.request_id]
    if explanations and row.reasoning:
        attributes[EXPLANATION] = row.reasoning
    return attributes


def _error_type(failures: list[str | None]) -> str:
    """`parse_failure` (a reply without a verdict), `judge_error` (a request that failed), or
    `no_verdict` (none of either: the aggregation left the judgment without a winner)."""
    said = [f for f in failures if f]
    if any(f.startswith("parse failure") for f in said):
        return "parse_failure"
    return "judge_error" if said else "no_verdict"


def emit_evaluation_events(
    rundir: RunDir, logger_provider: Any, *, explanations: bool = True
) -> int:
    """Emit the finished run's events through `logger_provider` (an OpenTelemetry
    `LoggerProvider`: the SDK's, or the global one), streaming `judgments.jsonl`; flushes the
    provider as it goes and at the end. Returns the number of events emitted."""
    summary = finished_summary(rundir)
    optional("opentelemetry._logs", "exporting OpenTelemetry events")
    from opentelemetry._logs import SeverityNumber

    from judge import __version__

    logger = logger_provider.get_logger(SCOPE, __version__, schema_url=SCHEMA_URL)
    flush = getattr(logger_provider, "force_flush", None)
    count = 0
    events = evaluation_events(summary, iter_judgments(rundir), explanations=explanations)
    for event in events:
        logger.emit(
            event_name=EVENT_NAME,
            severity_number=SeverityNumber.INFO,
            attributes=event.attributes,
        )
        count += 1
        if flush is not None and count % _FLUSH_EVERY == 0:
            flush()
    if flush is not None:
        flush()
    return count


@dataclass(frozen=True)
class OtelExport:
    """Events sent to an OTLP endpoint."""

    endpoint: str
    events: int

    def lines(self) -> list[str]:
        return [
            f"{self.events} {EVENT_NAME} events (semantic conventions v{SEMCONV_VERSION}) "
            f"sent to {self.endpoint}"
        ]


def export_otlp(
    rundir: RunDir,
    endpoint: str | None = None,
    *,
    explanations: bool = True,
    timeout_s: float = 10.0,
) -> OtelExport:
    """Send the finished run's events to an OTLP/HTTP logs endpoint (`http://HOST:4318`, its
    `/v1/logs` added when it has no path; default: the OTEL_EXPORTER_OTLP_LOGS_ENDPOINT or
    OTEL_EXPORTER_OTLP_ENDPOINT environment variable, else localhost:4318). Headers (an auth
    token) come from OTEL_EXPORTER_OTLP_HEADERS, as the OTLP exporter reads them; they are never
    printed. A `ConfigError` when any batch was not accepted."""
    finished_summary(rundir)  # before anything is set up or sent
    target = _logs_endpoint(endpoint)
    optional("opentelemetry.sdk._logs", "exporting OpenTelemetry events")
    exporter_module = optional(
        "opentelemetry.exporter.otlp.proto.http._log_exporter", "exporting OTLP over HTTP"
    )
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import Resource

    from judge import DISTRIBUTION, __version__

    exporter = _Counted(exporter_module.OTLPLogExporter(endpoint=target, timeout=timeout_s))
    resource = Resource.create({"service.name": DISTRIBUTION, "service.version": __version__})
    provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
    try:
        count = emit_evaluation_events(rundir, provider, explanations=explanations)
    finally:
        provider.shutdown()
    shown = target or "the endpoint OTEL_EXPORTER_OTLP_ENDPOINT names (or localhost:4318)"
    if exporter.failed:
        raise ConfigError(
            f"OTLP endpoint {shown} did not accept the events: {exporter.failed} of "
            f"{exporter.sent} not delivered (none sent after the first refused batch; the "
            "collector's log says why; check the URI and OTEL_EXPORTER_OTLP_HEADERS)"
        )
    return OtelExport(shown, count)


def _logs_endpoint(endpoint: str | None) -> str | None:
    if endpoint is None:
        return None
    parsed = urlparse(endpoint)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(
            f"OTLP endpoint {endpoint!r}: give an http(s) URL, e.g. http://localhost:4318 "
            "(its /v1/logs path is added) or https://collector.example/v1/logs"
        )
    if parsed.path in ("", "/"):
        return endpoint.rstrip("/") + "/v1/logs"
    return endpoint


class _Counted:
    """An OTLP exporter that counts what it was given and what was refused: the SDK's batching
    processor only logs a failed export, and an export that lost events must say so. After a
    refused batch the rest are not sent (each would wait out the exporter's retries: hours for
    a long run and a collector that is down) but counted as refused."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.sent = 0
        self.failed = 0

    def export(self, batch: Any) -> Any:
        from opentelemetry.sdk._logs.export import LogRecordExportResult

        self.sent += len(batch)
        if self.failed:
            self.failed += len(batch)
            return LogRecordExportResult.FAILURE
        result = self._inner.export(batch)
        if result is not LogRecordExportResult.SUCCESS:
            self.failed += len(batch)
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self._inner.force_flush(timeout_millis))
