"""A finished run sent where teams already look at results (`judge export`): MLflow (the
summary as a run's metrics, params and artifacts, `mlflow_run`; and the judge as an MLflow
scorer for `mlflow.genai.evaluate`, `mlflow_scorer`), W&B Weave evaluations
(`weave_evaluation`) and OpenTelemetry `gen_ai.evaluation.result` events (`otel_events`).
Each reads the run's summary and judgments (`finished_run`) and imports its optional package
only when used.

The layer above the run lifecycle: the scorer judges each row with `judge.evaluate`."""

from judge.exports import lazy_exports

_EXPORTS = {
    "export_mlflow": "judge.exporters.mlflow_run",
    "mlflow_record": "judge.exporters.mlflow_run",
    "MlflowRecord": "judge.exporters.mlflow_run",
    "judge_scorer": "judge.exporters.mlflow_scorer",
    "export_otlp": "judge.exporters.otel_events",
    "emit_evaluation_events": "judge.exporters.otel_events",
    "evaluation_events": "judge.exporters.otel_events",
    "export_weave": "judge.exporters.weave_evaluation",
    "weave_evaluations": "judge.exporters.weave_evaluation",
    "weave_predictions": "judge.exporters.weave_evaluation",
    "finished_summary": "judge.exporters.finished_run",
    "iter_judgments": "judge.exporters.finished_run",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
