"""The public Python API (issue 30): `judge.evaluate` runs a config end to end from a plain
script with no `__main__` guard, from `python -` and from a Jupyter kernel, with the user's
own column names; `judge.calibrate` and `judge.compare` take DataFrames or files alike.

The judges are the local simulator over real HTTP (`base_url: simulator`): nothing is mocked.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import judge
from judge.errors import ConfigError, DataError
from tests.helpers import REPO

SYSTEMS = ("helpdesk-v1", "helpdesk-v2", "autoreply")
ITEMS = 8
COLUMNS = {"item_id": "ticket_id", "prompt": "question", "system": "model_name", "output": "reply"}
JUDGES = 2


def _tables(directory: Path) -> tuple[Path, Path]:
    """A support-ticket dataset in the user's own column names, as CSV."""
    items, replies = directory / "tickets.csv", directory / "replies.csv"
    with items.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["ticket_id", "question", "queue"])
        for i in range(ITEMS):
            writer.writerow([f"T{i:03d}", f"Order {i} is {i + 2} days late: what now?", "billing"])
    with replies.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["ticket_id", "model_name", "reply"])
        for i in range(ITEMS):
            for system in SYSTEMS:
                writer.writerow([f"T{i:03d}", system, f"{system} on order {i}: check tracking."])
    return items, replies


def _config(directory: Path, **data: object) -> Path:
    items, replies = _tables(directory)
    config = {
        "name": "tickets",
        "data": {"items": items.name, "responses": replies.name, "columns": COLUMNS, **data},
        "rubric": "pairwise_general",
        "judges": [
            {"model": "openai/sim-gpt", "base_url": "simulator", "transport": "http"},
            {"model": "anthropic/sim-claude", "base_url": "simulator", "transport": "http"},
        ],
        "simulator": {"seed": 1},
        "compare": {"resamples": 200},
    }
    path = directory / "tickets.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


SCRIPT = """
import json, sys
import pandas as pd
import judge

result = judge.evaluate(
    "tickets.yaml",
    responses=pd.read_csv("replies.csv"),
    run_dir="runs/from-python",
)
df = result.judgments
print(json.dumps({
    "rows": len(df),
    "panel": int(df["panel"].sum()),
    "judges": sorted(df.loc[~df["panel"], "judge"].unique()),
    "report": result.report_path.is_file(),
    "exit": result.exit_code,
    "complete": result.complete,
}))
"""


def _check_printed(stdout: str) -> None:
    pairs = ITEMS * len(SYSTEMS) * (len(SYSTEMS) - 1) // 2
    printed = json.loads(stdout.strip().splitlines()[-1])
    assert printed == {
        "rows": pairs * (JUDGES + 1),
        "panel": pairs,
        "judges": ["anthropic/sim-claude", "openai/sim-gpt"],
        "report": True,
        "exit": 0,
        "complete": True,
    }


def test_evaluate_in_a_plain_script_without_a_main_guard(tmp_path: Path) -> None:
    _config(tmp_path)
    (tmp_path / "evaluate.py").write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, "evaluate.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "prepare process" not in done.stderr
    _check_printed(done.stdout)


def test_evaluate_from_python_stdin(tmp_path: Path) -> None:
    _config(tmp_path)
    done = subprocess.run(
        [sys.executable, "-"],
        input=SCRIPT,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    _check_printed(done.stdout)


def test_evaluate_in_a_jupyter_kernel(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    _config(tmp_path)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(SCRIPT)]
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = [o for o in notebook.cells[0].outputs if o.get("name") == "stdout"]
    _check_printed("".join(o["text"] for o in outputs))


def test_the_kernel_runs_this_interpreter(tmp_path: Path) -> None:
    """The notebook test means something only if its kernel has this package installed."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import sys, judge; print(sys.prefix)")]
    NotebookClient(notebook, timeout=60, kernel_name="python3").execute()
    assert notebook.cells[0].outputs[0]["text"].strip() == sys.prefix


def test_evaluate_matches_judge_run_on_the_same_config(tmp_path: Path) -> None:
    """The API is the CLI's pipeline: the same config gives the same verdicts and ranking."""
    config = _config(tmp_path)
    result = judge.evaluate(config, run_dir=tmp_path / "api")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "judge.cli",
            "run",
            str(config),
            "--quiet",
            "--run-dir",
            str(tmp_path / "cli"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    cli = pd.read_parquet(tmp_path / "cli" / "judgments.parquet")
    api = result.judgments
    key = ["item_id", "judge", "system_a", "system_b"]

    def verdicts(frame: pd.DataFrame) -> list[tuple[object, ...]]:
        rows = frame.sort_values(key)[[*key, "winner", "consistent"]]
        return [tuple(r) for r in rows.itertuples(index=False)]

    assert verdicts(api) == verdicts(cli) and len(api) > 0
    assert (
        result.summary.analysed().comparison
        == judge.RunDir(tmp_path / "cli").read_summary().analysed().comparison
    )


def test_a_dataframe_and_its_file_compare_and_calibrate_alike(tmp_path: Path) -> None:
    result = judge.evaluate(_config(tmp_path), run_dir=tmp_path / "run")
    everything = result.judgments
    one = everything[everything["judge"] == "openai/sim-gpt"]
    table = one[["item_id", "system_a", "system_b", "score_a"]]
    path = tmp_path / "table.csv"
    table.to_csv(path, index=False)
    from_frame = judge.compare(table, resamples=300, seed=4)
    from_file = judge.compare(path, resamples=300, seed=4)
    assert from_frame.to_dict() == from_file.to_dict()
    assert (
        from_frame.to_dict()
        == judge.compare(everything, judge="openai/sim-gpt", resamples=300, seed=4).to_dict()
    )
    # Labels that agree with the other judge: a DataFrame and its file give one report.
    other = everything[everything["judge"] == "anthropic/sim-claude"]
    human = other[["item_id", "system_a", "system_b", "outcome"]].rename(
        columns={"outcome": "winner"}
    )
    human = human.assign(annotator="h1")
    human.to_csv(tmp_path / "human.csv", index=False)
    one[["item_id", "system_a", "system_b", "winner"]].to_csv(tmp_path / "judge.csv", index=False)
    by_frame = judge.calibrate(everything, human, judge="openai/sim-gpt", resamples=200)
    by_file = judge.calibrate(tmp_path / "judge.csv", tmp_path / "human.csv", resamples=200)
    assert by_frame.to_dict() == by_file.to_dict()
    assert by_frame.to_dict()["join"]["matched_labels"] == len(human) > 0


def test_several_judges_need_a_choice_for_compare(tmp_path: Path) -> None:
    result = judge.evaluate(_config(tmp_path), run_dir=tmp_path / "run")
    with pytest.raises(ConfigError, match="holds 2 judges"):
        judge.compare(result.judgments)
    panel = judge.compare(result.judgments, judge="panel", resamples=200)
    assert panel.to_dict() == result.compare(judge="panel", resamples=200).to_dict()


def test_a_misspelt_mapped_column_is_named_with_its_file_and_key(tmp_path: Path) -> None:
    config = _config(tmp_path)
    with pytest.raises(DataError) as caught:
        judge.evaluate(config, columns={**COLUMNS, "output": "answer"}, run_dir=tmp_path / "run")
    message = str(caught.value)
    assert "replies.csv" in message and "'answer'" in message and "data.columns.output" in message
    assert "found columns: ticket_id, model_name, reply" in message


def test_bad_column_mappings_are_config_errors(tmp_path: Path) -> None:
    config = _config(tmp_path)
    with pytest.raises(ConfigError, match="'answer_text', which no table has"):
        judge.evaluate(config, columns={"answer_text": "reply"}, run_dir=tmp_path / "a")
    with pytest.raises(ConfigError, match="gives column 'reply' to both"):
        judge.evaluate(config, columns={"output": "reply", "prompt": "reply"}, run_dir=tmp_path)


def test_a_file_column_shadowed_by_the_mapping_is_refused(tmp_path: Path) -> None:
    """A responses file with both `reply` and `output`, mapping output to reply: which one
    is the output is ambiguous, so neither is picked silently."""
    config = _config(tmp_path)
    replies = pd.read_csv(tmp_path / "replies.csv").assign(output="other")
    with pytest.raises(DataError, match="column 'output' is in the file"):
        judge.evaluate(config, responses=replies, run_dir=tmp_path / "run")


def test_the_public_names_are_declared(tmp_path: Path) -> None:
    for name in judge.__all__:
        assert getattr(judge, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'run_eval'"):
        judge.run_eval  # noqa: B018
    assert (REPO / "judge" / "run" / "evaluate.py").is_file()


def test_a_stratum_of_one_item_has_no_interval_and_the_run_completes(tmp_path: Path) -> None:
    """A stratum holding one item has no spread, so no interval: its comparisons say so
    (None), and the run's analysis and report complete (they failed validating the summary)."""
    config = _config(tmp_path)
    items = pd.read_csv(tmp_path / "tickets.csv")
    items.loc[0, "queue"] = "returns"  # one item in its own stratum
    raw = json.loads(config.read_text())
    raw["compare"]["strata"] = ["queue"]
    result = judge.evaluate(
        raw
        | {
            "data": {
                **raw["data"],
                "items": str(tmp_path / "tickets.csv"),
                "responses": str(tmp_path / "replies.csv"),
            }
        },
        items=items,
        run_dir=tmp_path / "run",
    )
    by_stratum = result.summary.analysed().comparison.by_stratum
    lone = [c for c in by_stratum if c.stratum == "returns"]
    assert len(lone) == 3 and all(c.n == 1 and c.ci_low is None and c.se is None for c in lone)
    assert all(c.ci_low is not None for c in by_stratum if c.stratum == "billing")
    assert result.report_path.is_file() and result.exit_code == 0
