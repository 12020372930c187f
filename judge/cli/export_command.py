"""`judge export KIND RUN_DIR`: a finished run sent to MLflow, W&B Weave or an OpenTelemetry
collector (registered on the main CLI in `judge/cli/main.py`; the library, and the optional
package each kind needs, load inside the command)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class ExportKind(StrEnum):
    mlflow = "mlflow"
    weave = "weave"
    otel_otlp = "otel-otlp"


def export_command(
    kind: Annotated[
        ExportKind,
        typer.Argument(
            help="mlflow (a run in a tracking store), weave (W&B Weave evaluations), otel-otlp "
            "(gen_ai.evaluation.result events to an OTLP/HTTP collector)."
        ),
    ],
    run_dir: Annotated[Path, typer.Argument(help="A finished, analysed run directory.")],
    uri: Annotated[
        str | None,
        typer.Option(
            help="mlflow: the tracking URI (sqlite:///mlflow.db, http://HOST:5000, ...; "
            "default MLFLOW_TRACKING_URI); weave: ENTITY/PROJECT; otel-otlp: the collector "
            "(http://HOST:4318; default OTEL_EXPORTER_OTLP_ENDPOINT)."
        ),
    ] = None,
    experiment: Annotated[
        str | None, typer.Option(help="mlflow: the experiment (default: the run's name).")
    ] = None,
    artifact_location: Annotated[
        str | None,
        typer.Option(help="mlflow: where a new experiment keeps its artifacts."),
    ] = None,
    explanations: Annotated[
        bool,
        typer.Option(
            "--explanations/--no-explanations",
            help="otel-otlp: send the judges' reasoning (gen_ai.evaluation.explanation).",
        ),
    ] = True,
) -> None:
    """Send a finished run's results where a team already looks at them: its summary as an
    MLflow run (metrics, params, summary.json, report.html and judgments.parquet as
    artifacts), its systems as W&B Weave evaluations, or each judgment as an OpenTelemetry
    gen_ai.evaluation.result event. Reads the run; changes nothing in it."""
    import os

    from judge.errors import ConfigError
    from judge.store.rundir import RunDir

    if kind is not ExportKind.mlflow and (experiment or artifact_location):
        raise typer.BadParameter("only for mlflow", param_hint="--experiment/--artifact-location")
    if kind is not ExportKind.otel_otlp and not explanations:
        raise typer.BadParameter("only for otel-otlp", param_hint="--no-explanations")
    rundir = RunDir(run_dir)
    if kind is ExportKind.mlflow:
        from judge.exporters.mlflow_run import export_mlflow

        tracking = uri or os.environ.get("MLFLOW_TRACKING_URI")
        if not tracking:
            raise ConfigError("judge export mlflow needs --uri (or MLFLOW_TRACKING_URI)")
        done = export_mlflow(
            rundir, tracking, experiment=experiment, artifact_location=artifact_location
        )
    elif kind is ExportKind.weave:
        from judge.exporters.weave_evaluation import export_weave

        if not uri:
            raise ConfigError("judge export weave needs --uri ENTITY/PROJECT")
        done = export_weave(rundir, uri)  # type: ignore[assignment]
    else:
        from judge.exporters.otel_events import export_otlp

        done = export_otlp(rundir, uri, explanations=explanations)  # type: ignore[assignment]
    for line in done.lines():
        typer.echo(line)
