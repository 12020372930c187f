"""`judge export` and `judge.exporters`: a finished run into a local MLflow tracking store (read
back through MLflow's own client), as OpenTelemetry `gen_ai.evaluation.result` events (captured
by the SDK's in-memory exporter, and sent over real HTTP to a local OTLP receiver that decodes
them with OpenTelemetry's own protobuf classes), as W&B Weave evaluations (the mapping; Weave
logs only to a W&B server), and the judge as an MLflow scorer in `mlflow.genai.evaluate`,
judging pairs through the pipeline with the simulator over real HTTP.

One simulated run (two judges of different families, human labels, both orders) is made once
for the module; each test reads it, or a copy it changes.
"""

from __future__ import annotations

import gzip
import json
import shutil
import threading
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import judge
from judge.cli.export_command import export_command
from judge.errors import ConfigError, DataError
from judge.exporters import finished_run
from judge.exporters.mlflow_run import export_mlflow, metric_key, mlflow_record
from judge.exporters.otel_events import (
    EVENT_NAME,
    SCHEMA_URL,
    emit_evaluation_events,
    evaluation_events,
)
from judge.exporters.weave_evaluation import export_weave, weave_evaluations, weave_predictions
from judge.store.rundir import RunDir
from tests.helpers import MT_BENCH

SECRET = "sk-export-test-9f1c3e7a-never-leaves"
"""The judges' API key: no exported metric, param, tag, artifact or event may hold it."""
SYSTEMS = ("alpaca-13b", "llama-13b", "vicuna-13b-v1.2")
ITEMS = 24


def _rows(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The libraries' own settings that keep them off the network: MLflow's usage telemetry,
    Weave's error reports to Sentry, and the price table LiteLLM fetches when it is imported
    (mlflow.genai imports it when installed, as the `litellm` extra does)."""
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    """A finished, analysed run: 24 MT-Bench items, three systems, two simulated judges (an
    OpenAI and an Anthropic wire format, so a panel too), the experts' labels of those pairs."""
    root = tmp_path_factory.mktemp("export-run")
    items = [i for i in _rows(MT_BENCH / "items.jsonl") if i["turn"] == 1][:ITEMS]
    ids = {i["item_id"] for i in items}
    responses = [
        r
        for r in _rows(MT_BENCH / "responses.jsonl.gz")
        if r["item_id"] in ids and r["system"] in SYSTEMS
    ]
    labels = [
        r
        for r in _rows(MT_BENCH / "human_labels.jsonl")
        if r["item_id"] in ids and {r["system_a"], r["system_b"]} <= set(SYSTEMS)
    ]
    judges = [
        {"model": "openai/sim-gpt", "base_url": "simulator", "transport": "http"},
        {"model": "anthropic/sim-claude", "base_url": "simulator", "transport": "http"},
    ]
    config = {
        "name": "export-me",
        "question": "Which of three assistants answers best?",
        "data": {
            "items": str(_write(root / "items.jsonl", items)),
            "responses": str(_write(root / "responses.jsonl", responses)),
            "allow_empty_outputs": True,
        },
        "rubric": "pairwise_general",
        "judges": [{**j, "api_key": SECRET} for j in judges],
        "simulator": {"seed": 3},
        "calibration": {"human": str(_write(root / "labels.jsonl", labels))},
        "compare": {"resamples": 300, "seed": 2},
    }
    result = judge.evaluate(config, run_dir=root / "run")
    assert result.complete and result.summary.analysis is not None
    assert result.summary.analysis.calibration is not None
    return result.run_dir


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """One local SQLite tracking store for the module (its tables take seconds to create) and
    the directory its experiments keep their artifacts in."""
    root = tmp_path_factory.mktemp("mlflow")
    return f"sqlite:///{root / 'mlflow.db'}", root / "artifacts"


def _cli(*args: str) -> Any:
    """`judge export ...` through the command as the main CLI registers it."""
    app = typer.Typer()
    app.command("export")(export_command)

    @app.command("unused")
    def _unused() -> None:  # a second command, so typer keeps `export` as a subcommand
        pass

    return CliRunner().invoke(app, ["export", *args])


def _copy(run: RunDir, target: Path) -> RunDir:
    shutil.copytree(run.path, target)
    return RunDir(target)


# --------------------------------------------------------------------------- MLflow


def test_a_local_mlflow_run_holds_the_summary(
    run: RunDir, mlflow_store: tuple[str, Path], tmp_path: Path
) -> None:
    from mlflow.tracking import MlflowClient

    uri, art = mlflow_store
    art = art / "export"
    result = _cli("mlflow", str(run.path), "--uri", uri, "--artifact-location", str(art))
    assert result.exit_code == 0, result.output
    assert "MLflow run" in result.output

    client = MlflowClient(tracking_uri=uri)
    (experiment,) = [e for e in client.search_experiments() if e.name == "export-me"]
    (logged,) = client.search_runs([experiment.experiment_id])
    data = logged.data
    summary = run.read_summary()
    analysis = summary.analysed()

    # Every number of the mapping, read back as MLflow stored it.
    assert data.metrics == mlflow_record(summary).metrics
    for rate in analysis.win_rates or []:
        assert data.metrics[f"win_rate/{rate.system}"] == pytest.approx(rate.win_rate)
        assert data.metrics[f"win_rate/{rate.system}/ci_low"] == pytest.approx(rate.ci_low)
        assert data.metrics[f"win_rate/{rate.system}/ci_high"] == pytest.approx(rate.ci_high)
    assert len(analysis.win_rates or []) == len(SYSTEMS)
    pair = analysis.comparison.comparisons[0]
    assert data.metrics[f"diff/{pair.a}/{pair.b}"] == pytest.approx(pair.mean_diff)
    assert data.metrics[f"diff/{pair.a}/{pair.b}/ci_low"] == pytest.approx(pair.ci_low)
    calibration = analysis.calibration
    assert calibration is not None
    alpha = calibration.overall.metrics["alpha"]
    assert data.metrics["calibration/alpha"] == pytest.approx(alpha.value)
    assert data.metrics["calibration/alpha/ci_high"] == pytest.approx(alpha.ci_high)
    assert summary.costs is not None
    assert data.metrics["cost/paid"] == summary.costs.total.paid > 0
    assert data.metrics["count/requests"] == summary.counts.requests
    consistency = summary.judges["openai/sim-gpt"].position_consistency
    assert data.metrics["judge/openai_sim-gpt/position_consistency"] == pytest.approx(consistency)

    # Params: what the run was, as its summary records it.
    assert data.params["rubric"] == "pairwise_general@1"
    assert data.params["rubric_hash"] == summary.run.rubric.hash
    assert data.params["judges"] == "openai/sim-gpt, anthropic/sim-claude"
    assert data.params["seed.blinding"] == str(summary.run.seeds["blinding"])
    assert data.params["seed.compare"] == "2"
    assert data.params["package_version"] == judge.__version__
    assert data.params["config_hash"] == summary.run.config_hash
    assert data.tags["judge.answer"] == analysis.decision.answer.text
    assert data.tags["judge.notice"].startswith("SIMULATED")

    # Artifacts: the run's own files, byte for byte.
    names = sorted(a.path for a in client.list_artifacts(logged.info.run_id))
    assert names == ["judgments.parquet", "report.html", "summary.json"]
    fetched = Path(client.download_artifacts(logged.info.run_id, "summary.json", str(tmp_path)))
    assert fetched.read_bytes() == run.summary_file.read_bytes()
    assert logged.info.status == "FINISHED"

    # Nothing secret anywhere in the MLflow store: its database and every artifact file
    # (the Parquet file read as a table: its pages may be compressed).
    import pandas as pd

    stored = [Path(uri.removeprefix("sqlite:///")).read_bytes().decode("utf-8", "replace")]
    for path in sorted(p for p in art.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            stored.append(pd.read_parquet(path).to_json())
        else:
            stored.append(path.read_text(encoding="utf-8"))
    assert len(stored) == 4 and "judge.answer" in stored[0]  # it read the store's rows
    assert not [text for text in stored if SECRET in text]


def test_mlflow_refuses_a_run_that_is_not_finished(run: RunDir, tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'never-made.db'}"
    pending = _copy(run, tmp_path / "pending")
    summary = pending.read_summary()
    pending.write_summary(
        summary.model_copy(update={"counts": summary.counts.model_copy(update={"pending": 5})})
    )
    with pytest.raises(DataError, match=r"not finished \(5 judge requests pending\)"):
        export_mlflow(pending, uri)

    unanalysed = _copy(run, tmp_path / "unanalysed")
    unanalysed.write_summary(summary.model_copy(update={"analysis": None}))
    with pytest.raises(DataError, match="not analysed: `judge report"):
        export_mlflow(unanalysed, uri)

    empty = RunDir(tmp_path / "empty")
    empty.path.mkdir()
    with pytest.raises(DataError, match=r"no summary\.json"):
        export_mlflow(empty, uri)
    assert not (tmp_path / "never-made.db").exists()  # refused before the store was touched


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("mlruns", "has no scheme"),
        ("ftp://host/mlruns", "scheme 'ftp'"),
        ("sqlite:///{tmp}/no/such/dir/mlflow.db", "does not exist"),
        ("sqlite://", "names no path"),
    ],
)
def test_mlflow_names_a_bad_uri(run: RunDir, tmp_path: Path, uri: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        export_mlflow(run, uri.format(tmp=tmp_path))


def test_mlflow_says_what_a_file_store_needs(
    run: RunDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # MLflow 3 refuses to write a new file store unless told to: its own fix, passed on.
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    with pytest.raises(ConfigError, match="MLFLOW_ALLOW_FILE_STORE"):
        export_mlflow(run, (tmp_path / "mlruns").as_uri())


def test_metric_names_are_ones_mlflow_takes() -> None:
    from mlflow.utils.validation import _validate_metric_name

    for parts in [("judge", "openai/gpt-4.1", "tie_rate"), ("diff", "a:b", "..", "c")]:
        _validate_metric_name(metric_key(*parts))  # raises for a name MLflow refuses
    assert metric_key("judge", "openai/gpt-4.1", "tie_rate") == "judge/openai_gpt-4.1/tie_rate"


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("mlflow", "mlflow"),
        ("weave", "weave"),
        ("opentelemetry.exporter.otlp.proto.http._log_exporter", "otel"),
    ],
)
def test_a_missing_package_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, extra: str
) -> None:
    import sys

    # None in sys.modules: the import fails as for a package that is not installed.
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ConfigError, match=rf"pip install 'judge-pipeline\[{extra}\]'"):
        finished_run.optional(module, "exporting")


def test_the_cli_refuses_options_of_another_kind(run: RunDir) -> None:
    result = _cli("otel-otlp", str(run.path), "--experiment", "x")
    assert result.exit_code == 2 and "only for mlflow" in result.output
    result = _cli("mlflow", str(run.path))
    assert isinstance(result.exception, ConfigError) and "--uri" in str(result.exception)


# --------------------------------------------------------------------------- OpenTelemetry


def _captured(run: RunDir, **options: Any) -> list[Any]:
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider(shutdown_on_exit=False)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    count = emit_evaluation_events(run, provider, **options)
    records = list(exporter.get_finished_logs())
    assert count == len(records)
    provider.shutdown()
    return records


def test_otel_events_one_per_judgment(run: RunDir) -> None:
    import pandas as pd
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as semconv

    records = _captured(run)
    table = pd.read_parquet(run.judgments_parquet)  # the same rows, read independently
    assert len(records) == len(table) > 3 * ITEMS

    # The names are the semantic conventions' (the installed package's constants).
    names = {
        semconv.GEN_AI_EVALUATION_NAME,
        semconv.GEN_AI_EVALUATION_SCORE_VALUE,
        semconv.GEN_AI_EVALUATION_SCORE_LABEL,
        semconv.GEN_AI_EVALUATION_EXPLANATION,
    }
    assert EVENT_NAME == "gen_ai.evaluation.result"
    for record in records:
        assert record.log_record.event_name == EVENT_NAME
        assert record.instrumentation_scope.schema_url == SCHEMA_URL
    attributes = [dict(r.log_record.attributes) for r in records]
    assert names <= set().union(*attributes)

    by_key = {(a["judge.judge"], a["judge.pair_id"]): a for a in attributes}
    assert len(by_key) == len(records)
    labels = {1.0: "win", 0.5: "tie", 0.0: "loss"}
    for row in table.itertuples():
        event = by_key[(row.judge, row.pair_id)]
        assert event["gen_ai.evaluation.name"] == "pairwise_general"
        assert event["judge.system"] == row.system_a
        assert event["judge.opponent"] == row.system_b
        if pd.isna(row.score_a):
            assert "error.type" in event and "gen_ai.evaluation.score.value" not in event
        else:
            assert event["gen_ai.evaluation.score.value"] == row.score_a
            assert event["gen_ai.evaluation.score.label"] == labels[row.score_a]
    panel = [a for a in attributes if a["judge.judge"] == "panel"]
    assert len(panel) == len(table[table.judge == "panel"]) > 0


def test_otel_events_carry_no_secret_and_no_blinding(run: RunDir) -> None:
    texts = json.dumps(
        [dict(r.log_record.attributes) for r in _captured(run)], default=list, ensure_ascii=False
    )
    assert SECRET not in texts
    blinded = _rows(run.blinded_file)
    # A blinded id beside a system's name would publish a line of the blinding key.
    assert blinded and not [b["blind_id"] for b in blinded if b["blind_id"] in texts]
    key = json.loads(run.key_file.read_text())
    assert key["blinding_secret"] not in texts
    # No response text: outputs are long; their first 60 characters never appear.
    outputs = [b["output"][:60] for b in blinded if len(b["output"]) > 60]
    assert outputs and not [o for o in outputs if o in texts]


def test_otel_explanations_can_be_left_out(run: RunDir) -> None:
    with_reasons = _captured(run)
    without = _captured(run, explanations=False)
    key = "gen_ai.evaluation.explanation"
    assert any(key in r.log_record.attributes for r in with_reasons)
    assert not any(key in r.log_record.attributes for r in without)


def test_otel_events_stream_the_judgments_file(run: RunDir, tmp_path: Path) -> None:
    """20,000 judgments (14 MB): the events are made with a fraction of the file in memory."""
    big = _copy(run, tmp_path / "big")
    lines = run.judgments_jsonl.read_text(encoding="utf-8").splitlines()
    with big.judgments_jsonl.open("w", encoding="utf-8") as out:
        for n in range(20_000):
            row = json.loads(lines[n % len(lines)])
            row["pair_id"] = f"p_{n}"
            out.write(json.dumps(row) + "\n")
    size = big.judgments_jsonl.stat().st_size
    summary = big.read_summary()
    tracemalloc.start()
    try:
        count = sum(1 for _ in evaluation_events(summary, finished_run.iter_judgments(big)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20_000
    assert peak < size / 20, (peak, size)


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP logs endpoint: decodes each request with OpenTelemetry's protobuf classes."""

    received: list[Any]
    status = 200

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportLogsServiceRequest()
        request.ParseFromString(body)
        self.received.append((self.path, request))
        self.send_response(self.status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    handler = type("Handler", (_Receiver,), {"received": [], "status": 200})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_otlp_export_over_http(run: RunDir, receiver: tuple[str, type[_Receiver]]) -> None:
    url, handler = receiver
    result = _cli("otel-otlp", str(run.path), "--uri", url)
    assert result.exit_code == 0, result.output
    records = []
    for path, request in handler.received:
        assert path == "/v1/logs"
        for resource_logs in request.resource_logs:
            service = {a.key: a.value.string_value for a in resource_logs.resource.attributes}
            assert service["service.name"] == "judge-pipeline"
            for scope_logs in resource_logs.scope_logs:
                assert scope_logs.schema_url == SCHEMA_URL
                records.extend(scope_logs.log_records)
    assert len(records) == sum(1 for _ in finished_run.iter_judgments(run))
    assert {r.event_name for r in records} == {EVENT_NAME}
    assert f"{len(records)} {EVENT_NAME} events" in result.output
    assert SECRET not in str(handler.received)


def test_otlp_export_says_when_the_collector_refuses(
    run: RunDir, receiver: tuple[str, type[_Receiver]]
) -> None:
    url, handler = receiver
    handler.status = 400  # not retried by the exporter: refused at once
    result = _cli("otel-otlp", str(run.path), "--uri", url + "/v1/logs")
    assert isinstance(result.exception, ConfigError)
    events = sum(1 for _ in finished_run.iter_judgments(run))
    assert f"did not accept the events: {events} of {events} not delivered" in str(result.exception)
    assert handler.received  # it was sent, and refused
    result = _cli("otel-otlp", str(run.path), "--uri", "localhost:4318")
    assert isinstance(result.exception, ConfigError)
    assert "give an http(s) URL" in str(result.exception)


# --------------------------------------------------------------------------- W&B Weave


def test_weave_mapping(run: RunDir) -> None:
    import pandas as pd

    summary = run.read_summary()
    analysis = summary.analysed()
    evaluations = weave_evaluations(summary)
    assert [e.system for e in evaluations] == analysis.comparison.systems
    rates = {r.system: r for r in analysis.win_rates or []}
    for evaluation in evaluations:
        assert evaluation.summary["win_rate"]["mean"] == rates[evaluation.system].win_rate
        assert evaluation.attributes["rubric"] == "pairwise_general@1"
    first, second = evaluations[0], evaluations[1]
    forward = first.summary[f"diff_vs_{second.system}"]
    backward = second.summary[f"diff_vs_{first.system}"]
    assert forward["mean"] == pytest.approx(-backward["mean"])
    assert forward["ci_low"] == pytest.approx(-backward["ci_high"])

    predictions = list(weave_predictions(summary, finished_run.iter_judgments(run)))
    # Recomputed from the Parquet file: each system's mean score per item, the panel's rows.
    table = pd.read_parquet(run.judgments_parquet)
    table = table[table.judge == analysis.comparison.judge]
    mine = pd.concat(
        [
            table.assign(system=table.system_a, score=table.score_a),
            table.assign(system=table.system_b, score=1 - table.score_a),
        ]
    )
    expected = mine.groupby(["system", "item_id"]).score.mean()
    # (A system with no response to an item has no pair there, so no prediction.)
    assert len(predictions) == len(expected) > 2 * ITEMS
    for prediction in predictions:
        want = expected[(prediction.system, prediction.inputs["item_id"])]
        if pd.isna(want):
            assert prediction.scores["win_rate"] is None
        else:
            assert prediction.scores["win_rate"] == pytest.approx(want)
        others = set(SYSTEMS) - {prediction.system}
        assert prediction.output["against"] and set(prediction.output["against"]) <= others


# Weave 0.54 reads `model_fields` off instances, which pydantic 2.11+ deprecates: its warning,
# once per attribute read, not this test's.
@pytest.mark.filterwarnings("ignore:Accessing the 'model_fields' attribute")
def test_weave_logging_calls_match_the_installed_api(
    run: RunDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Weave logs to a W&B server only. Disabled, its own client takes every call (a wrong
    # argument fails here) and stores nothing: this checks the calls, not what W&B keeps.
    monkeypatch.setenv("WEAVE_DISABLED", "true")
    monkeypatch.setenv("WEAVE_PRINT_CALL_LINK", "false")
    done = export_weave(run, "judge-tests/export")
    assert done.evaluations == len(SYSTEMS)
    summary = run.read_summary()
    mapped = weave_predictions(summary, finished_run.iter_judgments(run))
    assert done.predictions == sum(1 for _ in mapped) > 2 * ITEMS


def test_weave_without_a_key_says_what_to_set(
    run: RunDir, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("WEAVE_DISABLED", "WANDB_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc to find a key in
    monkeypatch.setenv("NETRC", str(tmp_path / "none"))
    with pytest.raises(ConfigError, match="WANDB_API_KEY"):
        export_weave(run, "judge-tests/export")
    with pytest.raises(ConfigError, match="give ENTITY/PROJECT"):
        export_weave(run, "not a project")


# --------------------------------------------------------------------------- the scorer


def test_the_scorer_judges_a_pair_blinded_in_both_orders(
    tmp_path: Path, mlflow_store: tuple[str, Path]
) -> None:
    import mlflow

    from judge.exporters.mlflow_scorer import judge_scorer

    config = {
        "name": "scorer",
        "rubric": "pairwise_general",
        "judges": [{"model": "openai/sim-gpt", "base_url": "simulator", "transport": "http"}],
        # The simulator's planted qualities (its requests only: the texts stored are the
        # responses as given): the candidate is the better one, so the right verdict is known.
        "simulator": {"seed": 1, "plant": {"mlflow-candidate": 0.9, "mlflow-baseline": 0.1}},
    }
    scorer = judge_scorer(config, run_root=tmp_path / "pairs")
    data = [
        {
            "inputs": {"prompt": "Name a prime number above 10."},
            "outputs": "13 is prime: its only divisors are 1 and 13.",
            "expectations": {"baseline_response": "12, the baseline answer, has many divisors."},
        },
        {
            "inputs": {"prompt": "What is the capital of France?"},
            "outputs": "Paris.",
            "expectations": {"baseline_response": "Lyon, the largest city of France."},
        },
    ]
    uri, art = mlflow_store
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    try:
        experiment = mlflow.create_experiment("scorer", artifact_location=str(art / "scorer"))
        mlflow.set_experiment(experiment_id=experiment)
        result = mlflow.genai.evaluate(data=data, scorers=[scorer])
    finally:
        mlflow.set_tracking_uri(previous)
    frame = result.result_df
    assert list(frame["judge/value"]) == [1.0, 1.0]
    for rationale in frame["judge/rationale"]:
        assert "openai/sim-gpt, order AB: mlflow-candidate: " in rationale
        assert "openai/sim-gpt, order BA: mlflow-candidate: " in rationale

    # Each row was a run of the pipeline over HTTP to the simulator: both orders, the two
    # responses in swapped slots, and neither system's name in what the judge was sent.
    runs = sorted(p for p in (tmp_path / "pairs").iterdir() if p.is_dir())
    assert len(runs) == 2
    for row in data:
        rundir = RunDir(_run_of(runs, row))
        assert rundir.read_summary().counts.verdicts == 2
        with rundir.open_store() as store:
            sent = {q.order: q.messages[-1].content for q in store.iter_requests()}
        assert set(sent) == {"AB", "BA"}
        # `index` finds each text verbatim (the word "baseline" in one is not scrubbed).
        output, other = row["outputs"], row["expectations"]["baseline_response"]
        first = {order: text.index(output) < text.index(other) for order, text in sent.items()}
        assert first["AB"] != first["BA"]
        assert not [t for t in sent.values() if "mlflow-candidate" in t or "mlflow-baseline" in t]

    # Scored again: the same run dir, resumed (its replies are in its store).
    again = scorer(
        inputs=data[0]["inputs"], outputs=data[0]["outputs"], expectations=data[0]["expectations"]
    )
    assert again.value == 1.0
    assert sorted(p for p in (tmp_path / "pairs").iterdir() if p.is_dir()) == runs


def _run_of(runs: list[Path], row: dict[str, Any]) -> Path:
    """The run dir whose stored item is `row`'s prompt."""
    for path in runs:
        with RunDir(path).open_store() as store:
            if any(row["outputs"] in q.messages[-1].content for q in store.iter_requests()):
                return path
    raise AssertionError(f"no run judged {row['outputs']!r}")


def test_the_scorer_names_what_a_row_or_config_lacks(tmp_path: Path) -> None:
    from judge.exporters.mlflow_scorer import judge_scorer

    judges = [{"model": "openai/sim-gpt", "base_url": "simulator", "transport": "http"}]
    config = {"name": "scorer", "rubric": "pairwise_general", "judges": judges}
    with pytest.raises(ConfigError, match="needs a pairwise rubric"):
        judge_scorer({**config, "rubric": "absolute_1to5"})
    with pytest.raises(ConfigError, match="both named 'x'"):
        judge_scorer(config, candidate="x", baseline="x")
    scorer = judge_scorer(config, run_root=tmp_path)
    with pytest.raises(ConfigError, match=r"no expectations\['baseline_response'\]"):
        scorer(inputs="Q?", outputs="A.", expectations={"expected_response": "A."})
    assert list(tmp_path.iterdir()) == []  # refused before any run was made
