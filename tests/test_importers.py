"""The importers (issue 34, item 1) on files made by each tool itself (tests/fixtures/importers/,
scripts/make_importer_fixtures.py): Inspect AI logs, promptfoo results, lm-evaluation-harness
samples, a Hugging Face dataset in the hub's cache layout, and OpenAI Evals testing criteria
(written from the documented schema: the hosted API is gone). What each writes, what it
skips and why, the errors that name file, line (or JSON path) and field, the config's
`data.source` and the `judge import` command."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from judge.cli.import_command import import_command
from judge.config.import_source import ImportSource
from judge.config.run_config import config_from_mapping
from judge.errors import ConfigError, DataError
from judge.inputs import load_items, load_responses
from judge.inputs.importers import ImportReport, import_rubrics, import_tables
from judge.rubric import load_rubric
from judge.types import Item, Response
from tests.helpers import REPO

FIXTURES = REPO / "tests" / "fixtures" / "importers"
INSPECT_LOGS = FIXTURES / "inspect" / "logs"
PROMPTFOO = FIXTURES / "promptfoo"
LM_EVAL = FIXTURES / "lm_eval" / "results"
HF_CACHE = FIXTURES / "hf" / "hub"
HF_DATASET = "hf://judge-fixtures/tiny-qa-answers"
HF_COLUMNS = {
    "item_id": "qid",
    "prompt": "question",
    "reference": "answer",
    "system": "model",
    "output": "response",
}
CRITERIA = FIXTURES / "openai_evals" / "criteria.json"


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub client reading its cache only, as with HF_HUB_OFFLINE=1 (no hub is reachable)."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


def _tables(report: ImportReport) -> tuple[dict[str, Item], list[Response]]:
    """The written tables, read back by the project's own loader (what a run reads)."""
    items = load_items(report.items_file)
    return items, load_responses(report.responses_file, items.keys(), allow_empty_outputs=True)


def _import(tmp_path: Path, **source: Any) -> ImportReport:
    return import_tables(ImportSource.model_validate(source), tmp_path / "out")


# --------------------------------------------------------------------------- Inspect AI


def test_inspect_logs_of_two_models_merge_by_sample_id(tmp_path: Path) -> None:
    report = _import(tmp_path, kind="inspect", path=[str(INSPECT_LOGS)])
    items, responses = _tables(report)
    # Two logs of task tiny_qa, three samples each; mockllm/terse failed on q3 on purpose.
    assert (report.items, report.responses) == (3, 5)
    assert report.systems == {"mockllm/terse": 2, "mockllm/verbose": 3}
    assert report.skipped == {"the sample ended in an error (sample.error)": 1}
    assert items["q1"].prompt == "What is the capital of France?"
    assert items["q1"].reference == "Paris" and items["q1"].strata == {"topic": "geo"}
    by_key = {(r.item_id, r.system): r for r in responses}
    assert by_key["q2", "mockllm/verbose"].output.startswith("A spider has eight legs")
    assert by_key["q1", "mockllm/terse"].output == "Paris."
    assert by_key["q1", "mockllm/terse"].tokens == 1
    written = json.loads((report.out / "import_report.json").read_text())
    assert written["skipped"] == report.skipped and written["responses"] == 5


def test_inspect_json_log_is_read_a_sample_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect AI's reader loads a `.json` log whole to read one sample; the importer reads
    only its header with it and streams the samples."""
    import inspect_ai.log

    reads: list[bool] = []
    original = inspect_ai.log.read_eval_log

    def recorded(*args: Any, **kwargs: Any) -> Any:
        reads.append(bool(kwargs.get("header_only")))
        return original(*args, **kwargs)

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", recorded)
    report = _import(tmp_path, kind="inspect", path=[str(INSPECT_LOGS / "verbose.json")])
    assert report.responses == 3 and reads == [True]


def test_epochs_are_part_of_the_item_id(tmp_path: Path) -> None:
    """A log of two epochs: each epoch's answer is an item of its own (`id#epoch`), as the
    model answered it; made here by Inspect AI itself, its mockllm answering by default."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    def reply(*_: Any) -> ModelOutput:
        output = ModelOutput.from_content(model="mock", content="Four.")
        output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
        return output

    task = Task(dataset=MemoryDataset([Sample(id=7, input="2+2?", target="4")]), solver=generate())
    model = get_model("mockllm/counter", custom_outputs=reply)
    [log] = eval(task, model=model, epochs=2, log_dir=str(tmp_path / "logs"), display="none")
    report = _import(tmp_path, kind="inspect", path=[log.location])
    assert sorted(_tables(report)[0]) == ["7#1", "7#2"]
    assert report.systems == {"mockllm/counter": 2}


def test_the_same_log_twice_is_a_system_answering_twice(tmp_path: Path) -> None:
    log = INSPECT_LOGS / "terse.eval"
    copy = tmp_path / "again.eval"
    shutil.copy(log, copy)
    with pytest.raises(DataError) as caught:
        _import(tmp_path, kind="inspect", path=[str(log), str(copy)])
    assert caught.value.path == str(copy)
    assert "sample 'q1', epoch 1" in str(caught.value)
    assert f"answers item 'q1' twice (also at {log}, record 1)" in str(caught.value)
    assert not (tmp_path / "out" / "items.jsonl").exists()  # no half table left behind


def test_a_file_that_is_not_a_log_is_named(tmp_path: Path) -> None:
    fake = tmp_path / "log.json"
    fake.write_text('{"samples": [')
    with pytest.raises(DataError, match="not a readable Inspect AI log") as caught:
        _import(tmp_path, kind="inspect", path=[str(fake)])
    assert caught.value.path == str(fake)
    with pytest.raises(DataError, match=r"expected a \.eval or \.json file"):
        _import(tmp_path, kind="inspect", path=[str(PROMPTFOO / "results.jsonl")])


def test_a_missing_optional_package_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # import inspect_ai -> ImportError
    with pytest.raises(ConfigError, match=r"pip install 'judge-pipeline\[inspect\]'"):
        _import(tmp_path, kind="inspect", path=[str(INSPECT_LOGS)])


# --------------------------------------------------------------------------- promptfoo


def test_promptfoo_results_json_and_jsonl_give_the_same_tables(tmp_path: Path) -> None:
    reports = [
        import_tables(ImportSource(kind="promptfoo", path=[PROMPTFOO / name]), tmp_path / name)
        for name in ("results.json", "results.jsonl")
    ]
    for report in reports:
        # Four tests x two providers; the local provider's call for test 3 failed on purpose.
        assert (report.items, report.responses) == (4, 7)
        assert report.systems == {"echo": 4, "table-answerer": 3}
        assert report.skipped == {"the provider call failed (promptfoo failureReason ERROR)": 1}
    items, responses = _tables(reports[0])
    assert sorted(items) == ["0", "1", "2", "3"]
    assert items["0"].prompt == "Answer briefly: What is the capital of France?"
    assert items["2"].strata == {"topic": "physics"}
    by_key = {(r.item_id, r.system): r for r in responses}
    # A failed assertion is still an output to judge.
    assert by_key["2", "table-answerer"].output == "I am not sure."
    assert by_key["0", "echo"].output == items["0"].prompt
    assert by_key["0", "table-answerer"].latency_s is not None
    assert _tables(reports[1])[0] == items


def test_promptfoo_errors_name_the_line_and_field(tmp_path: Path) -> None:
    lines = (PROMPTFOO / "results.jsonl").read_text().splitlines()
    broken = json.loads(lines[2])
    broken["prompt"] = {"label": "no raw"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], lines[1], json.dumps(broken), "{oops"]) + "\n")
    with pytest.raises(DataError) as caught:
        _import(tmp_path, kind="promptfoo", path=[str(bad)])
    assert (caught.value.path, caught.value.line, caught.value.field) == (
        str(bad),
        3,
        "prompt.raw",
    )
    bad.write_text("\n".join([lines[0], "{oops"]) + "\n")
    with pytest.raises(DataError, match="malformed JSON") as caught:
        _import(tmp_path, kind="promptfoo", path=[str(bad)])
    assert caught.value.line == 2


# --------------------------------------------------------------------------- lm-eval


def test_lm_eval_results_dirs_one_system_per_model(tmp_path: Path) -> None:
    report = _import(tmp_path, kind="lm-eval", path=[str(LM_EVAL)])
    items, responses = _tables(report)
    # dummy-lol ran tiny_qa and the multiple-choice tiny_mc; table-completer tiny_qa.
    assert (report.items, report.responses) == (3, 6)
    assert report.systems == {"dummy-lol": 3, "table-completer": 3}
    assert report.skipped == {
        "a loglikelihood request (multiple choice or perplexity): no text generated": 3
    }
    item = items["tiny_qa/1"]
    assert item.prompt == "Question: How many legs does a spider have?\nAnswer:"
    assert item.reference == "8" and item.strata == {"task": "tiny_qa"}
    by_key = {(r.item_id, r.system): r.output for r in responses}
    assert by_key["tiny_qa/0", "dummy-lol"] == "lol"
    assert by_key["tiny_qa/1", "table-completer"].startswith(" A spider has eight legs")


def test_lm_eval_errors_name_the_line_and_field(tmp_path: Path) -> None:
    source = next((LM_EVAL / "table-completer").glob("samples_tiny_qa_*.jsonl"))
    lines = source.read_text().splitlines()
    record = json.loads(lines[1])
    del record["resps"]
    bad = tmp_path / "model" / source.name
    bad.parent.mkdir()
    bad.write_text("\n".join([lines[0], json.dumps(record)]) + "\n")
    with pytest.raises(DataError) as caught:
        _import(tmp_path, kind="lm-eval", path=[str(bad)])
    assert (caught.value.line, caught.value.field) == (2, "resps")
    with pytest.raises(DataError, match=r"samples_<task>_<date>\.jsonl"):
        _import(tmp_path, kind="lm-eval", path=[str(PROMPTFOO / "results.jsonl")])


# --------------------------------------------------------------------------- Hugging Face


@pytest.mark.usefixtures("offline_hub")
def test_hf_dataset_from_the_hub_cache_offline(tmp_path: Path) -> None:
    report = _import(
        tmp_path,
        kind="hf",
        dataset=HF_DATASET,
        columns=HF_COLUMNS,
        strata=["topic"],
        cache_dir=str(HF_CACHE),
    )
    items, _ = _tables(report)
    # Two systems x three questions, and a row whose response is null (skipped, counted).
    assert (report.items, report.responses) == (3, 6)
    assert report.systems == {"terse-model": 3, "verbose-model": 3}
    assert report.skipped == {"no output (null)": 1}
    assert items["q3"].reference == "144" and items["q3"].strata == {"topic": "math"}
    test = _import(
        tmp_path,
        kind="hf",
        dataset=f"{HF_DATASET}@main:test",
        columns={"prompt": "question", "output": "response"},
        system="one-model",
        cache_dir=str(HF_CACHE),
    )
    # Without an item_id column each row is its own item, numbered from 0.
    assert (test.items, test.systems) == (2, {"one-model": 2})
    assert sorted(_tables(test)[0]) == ["0", "1"]


@pytest.mark.usefixtures("offline_hub")
def test_hf_errors_name_the_column_and_what_is_there(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no column 'answer_text'") as caught:
        _import(
            tmp_path,
            kind="hf",
            dataset=HF_DATASET,
            columns={**HF_COLUMNS, "reference": "answer_text"},
            cache_dir=str(HF_CACHE),
        )
    assert "the columns are answer, model, qid, question, response, topic" in str(caught.value)
    with pytest.raises(DataError, match="no Parquet files of split 'validation'"):
        _import(
            tmp_path,
            kind="hf",
            dataset=f"{HF_DATASET}:validation",
            columns=HF_COLUMNS,
            cache_dir=str(HF_CACHE),
        )
    with pytest.raises(DataError, match="Hugging Face cache"):
        _import(
            tmp_path,
            kind="hf",
            dataset="hf://judge-fixtures/not-downloaded",
            columns=HF_COLUMNS,
            cache_dir=str(HF_CACHE),
        )


# --------------------------------------------------------------------------- OpenAI Evals


def test_openai_evals_criteria_become_rubrics_and_the_rest_is_listed(tmp_path: Path) -> None:
    report = import_rubrics(CRITERIA, tmp_path / "rubrics")
    mapped = {w.criterion: w for w in report.written}
    assert {name: w.kind for name, w in mapped.items()} == {
        "correctness": "absolute",
        "helpfulness": "absolute",
        "preference vs baseline": "pairwise",
    }
    assert {(m.criterion, m.type) for m in report.not_mapped} == {
        ("grounded in context", "score_model"),
        ("exact match", "string_check"),
        ("fuzzy match", "text_similarity"),
    }
    reasons = {m.criterion: m.reason for m in report.not_mapped}
    assert "{{item.context}}" in reasons["grounded in context"]
    assert "not a judge" in reasons["exact match"]
    text = "\n".join(report.lines())
    assert text.count("NOT MAPPED") == 3
    helpfulness = load_rubric(mapped["helpfulness"].path)
    assert (helpfulness.scale.min, helpfulness.scale.max) == (1, 7)  # type: ignore[union-attr]
    assert any("pass_threshold 5" in note for note in mapped["helpfulness"].notes)
    correctness = load_rubric(mapped["correctness"].path)
    assert correctness.reference == "required"
    assert (correctness.scale.min, correctness.scale.max) == (0, 1)  # type: ignore[union-attr]
    preference = load_rubric(mapped["preference vs baseline"].path)
    assert preference.labels == ("A", "B", "tie")
    # The grader's wording is kept, its values delimited in the user message.
    assert "Which reply answers the customer better?" in preference.system
    assert "Reply A:\n[RESPONSE A]\n{{ slot_a }}\n[/RESPONSE A]" in preference.user


def test_criteria_that_all_fail_to_map_are_an_error(tmp_path: Path) -> None:
    only = tmp_path / "criteria.json"
    criteria = json.loads(CRITERIA.read_text())["testing_criteria"]
    only.write_text(json.dumps([c for c in criteria if c["type"] == "string_check"]))
    with pytest.raises(DataError, match=r"no testing criterion maps.*exact match"):
        import_rubrics(only, tmp_path / "rubrics")
    only.write_text(json.dumps({"testing_criteria": [{"name": "x"}]}))
    with pytest.raises(DataError) as caught:
        import_rubrics(only, tmp_path / "rubrics")
    assert caught.value.field == "testing_criteria[0].type"


# --------------------------------------------------------------------------- config and CLI


def _data_config(tmp_path: Path, data: dict[str, Any]) -> Any:
    raw = {"name": "t", "data": data, "rubric": "pairwise_general"}
    return config_from_mapping(raw, tmp_path, source="config.yaml")


def test_data_source_is_strict_and_resolves_paths(tmp_path: Path) -> None:
    config = _data_config(tmp_path, {"source": {"kind": "inspect", "path": "logs/run.eval"}})
    assert config.data.source.path == [(tmp_path / "logs" / "run.eval").resolve()]
    refused = [
        ({"source": {"kind": "inspect", "path": "x.eval"}, "items": "i.jsonl"}, "not both"),
        ({"source": {"kind": "inspect", "paths": "x.eval"}}, "unknown key (did you mean path?)"),
        ({"source": {"kind": "inspect", "path": "x", "system": "m"}}, "a key of kind hf"),
        ({"source": {"kind": "hf", "dataset": HF_DATASET}}, "needs columns.prompt"),
        ({"source": {"kind": "hf", "dataset": "org/name", "columns": {}}}, "not of the form"),
        ({"source": {"kind": "mlflow", "path": "x"}}, "data.source.kind"),
        ({"items": "i.jsonl"}, "data.responses is missing"),
    ]
    for data, message in refused:
        with pytest.raises(ConfigError, match=re.escape(message)):
            _data_config(tmp_path, data)


def _cli(*args: str) -> Any:
    app = typer.Typer()
    app.command("import")(import_command)
    app.command("noop")(lambda: None)  # a second command, so `import` is a subcommand
    return CliRunner().invoke(app, ["import", *args])


def test_judge_import_prints_what_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "tables"
    result = _cli("lm-eval", str(LM_EVAL), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "lm-eval: read 3 file(s); wrote 3 items, 6 responses of 2 systems" in result.output
    assert "3 x a loglikelihood request" in result.output
    assert (out / "items.jsonl").is_file() and (out / "responses.jsonl").is_file()
    rubrics = _cli("openai-evals", str(CRITERIA), "--out", str(tmp_path / "rubrics"))
    assert rubrics.exit_code == 0, rubrics.output
    assert "3 mapped to rubrics, 3 not mapped" in rubrics.output
    assert len(list((tmp_path / "rubrics").glob("*.yaml"))) == 3


def test_judge_import_refuses_options_of_another_kind(tmp_path: Path) -> None:
    result = _cli("inspect", str(INSPECT_LOGS), "--out", str(tmp_path), "--column", "prompt=q")
    assert isinstance(result.exception, ConfigError)
    assert "--column is a key of kind hf" in str(result.exception)
    result = _cli("hf", HF_DATASET, "--out", str(tmp_path), "--column", "prompt")
    assert result.exit_code == 2 and "expected KEY=COLUMN" in result.output
