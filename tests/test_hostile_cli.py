"""Hostile input through the real CLI: every case is one line `error: ...` naming the file, the
line and the field where there is one, exit 2, no traceback, never `internal error`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers import run_cli_here as run_cli

DEEP = "[" * 100_000 + "]" * 100_000
"""Nested far beyond Python's recursion limit (which `json.loads` hits first)."""
LONE = "\\ud800"
"""The JSON text of a lone surrogate escape: json.loads accepts it, UTF-8 cannot encode it."""

ITEMS = [
    {"item_id": "q1", "prompt": "What is 2 + 2?", "category": "math"},
    {"item_id": "q2", "prompt": "Name a colour.", "category": "general"},
]
RESPONSES = [
    {"item_id": item, "system": system, "output": f"answer of {system} to {item}"}
    for item in ("q1", "q2")
    for system in ("alpha", "beta")
]


def _jsonl(path: Path, rows: list[dict], *extra: str) -> Path:
    lines = [json.dumps(row) for row in rows] + list(extra)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _blind(tmp_path: Path, *, items: list[str] = (), responses: list[str] = ()) -> Path:
    """items.jsonl and responses.jsonl with `items` / `responses` lines appended."""
    _jsonl(tmp_path / "items.jsonl", ITEMS, *items)
    _jsonl(tmp_path / "responses.jsonl", RESPONSES, *responses)
    return tmp_path


def _run_blind(tmp_path: Path, items: str = "items.jsonl"):
    return run_cli(
        "blind", "responses.jsonl", "--items", items, "--out", "out", cwd=tmp_path, timeout=60
    )


def _assert_error(result, *parts: str) -> str:
    """Exit 2 and one `error:` line (the last on stderr: `prepare` and `run` log progress
    first) holding every part; nothing that looks like a crash."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: "), result.stderr
    for part in parts:
        assert part in line, line
    return line


# --------------------------------------------------------------------------- items, responses


@pytest.mark.parametrize(
    ("line", "where"),
    [
        (DEEP, "items.jsonl, line 3: "),
        ('{"item_id": "q3", "prompt": ' + DEEP + "}", "items.jsonl, line 3, field 'prompt': "),
    ],
    ids=["deep-line", "deep-field"],
)
def test_deeply_nested_items_line(tmp_path: Path, line: str, where: str) -> None:
    result = _run_blind(_blind(tmp_path, items=[line]))
    _assert_error(result, where, "nested more than 100 levels deep")


def test_deeply_nested_response_context(tmp_path: Path) -> None:
    line = json.dumps({"item_id": "q1", "system": "gamma", "output": "x"})[:-1]
    result = _run_blind(_blind(tmp_path, responses=[line + ', "context": ' + DEEP + "}"]))
    _assert_error(result, "responses.jsonl, line 5, field 'context': ", "nested more than 100")


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ('{"item_id": "q1", "system": "gamma", "output": "a' + LONE + '"}', "field 'output'"),
        ('{"item_id": "q1", "system": "g' + LONE + '", "output": "a"}', "field 'system'"),
    ],
    ids=["output", "system"],
)
def test_lone_surrogate_in_a_response_is_refused_at_load(
    tmp_path: Path, line: str, where: str
) -> None:
    result = _run_blind(_blind(tmp_path, responses=[line]))
    _assert_error(result, f"responses.jsonl, line 5, {where}: text holds a lone surrogate")


def test_lone_surrogate_in_an_item_is_refused_at_load(tmp_path: Path) -> None:
    line = '{"item_id": "q3", "prompt": "hi ' + LONE + '"}'
    result = _run_blind(_blind(tmp_path, items=[line]))
    _assert_error(result, "items.jsonl, line 3, field 'prompt': ", "\\ud800 at character 4")


@pytest.mark.parametrize("content", [DEEP, '"' + LONE + '"'], ids=["deep", "surrogate"])
def test_csv_chat_cell_is_checked_like_a_jsonl_line(tmp_path: Path, content: str) -> None:
    cell = '[{"role": "user", "content": ' + content + "}]"
    (tmp_path / "items.csv").write_text(
        'item_id,prompt\nq1,"' + cell.replace('"', '""') + '"\nq2,hello\n', encoding="utf-8"
    )
    result = _run_blind(_blind(tmp_path), items="items.csv")
    _assert_error(result, "items.csv, line 2, field 'prompt': ")


def test_duplicate_key_in_a_line_is_refused_not_silently_dropped(tmp_path: Path) -> None:
    line = '{"item_id": "q3", "prompt": "first", "prompt": "second"}'
    result = _run_blind(_blind(tmp_path, items=[line]))
    _assert_error(result, "items.jsonl, line 3, field 'prompt': key 'prompt' appears twice")


def test_integer_too_long_for_python(tmp_path: Path) -> None:
    line = '{"item_id": "q3", "prompt": "p", "rank": 1' + "0" * 5000 + "}"
    result = _run_blind(_blind(tmp_path, items=[line]))
    _assert_error(result, "items.jsonl, line 3, field 'rank': a number with more than")


def test_integer_beyond_the_largest_float(tmp_path: Path) -> None:
    line = '{"item_id": "q1", "system": "gamma", "output": "a", "latency_s": 1' + "0" * 400 + "}"
    result = _run_blind(_blind(tmp_path, responses=[line]))
    _assert_error(result, "responses.jsonl, line 5, field 'latency_s': expected a non-negative")


def test_parquet_text_that_is_not_utf8(tmp_path: Path) -> None:
    # pyarrow writes what it is given as raw buffers; the bytes fail only when converted.
    raw = pa.array([b"What is 2 + 2?", b"bad \xed\xa0\x80"], pa.binary())
    prompts = pa.Array.from_buffers(pa.string(), len(raw), raw.buffers())
    pq.write_table(
        pa.table({"item_id": ["q1", "q2"], "prompt": prompts}), tmp_path / "items.parquet"
    )
    result = _run_blind(_blind(tmp_path), items="items.parquet")
    _assert_error(result, "items.parquet, row 2, field 'prompt': not valid UTF-8")


# --------------------------------------------------------------------------- label tables

JUDGE_LABELS = [
    {"item_id": item, "system_a": "alpha", "system_b": "beta", "winner": "a"}
    for item in ("q1", "q2")
]
HUMAN_LABELS = [dict(row, annotator="ann1") for row in JUDGE_LABELS]


def _calibrate(tmp_path: Path, human: str = "human.jsonl"):
    _jsonl(tmp_path / "judge.jsonl", JUDGE_LABELS)
    return run_cli(
        "calibrate", "--judge", "judge.jsonl", "--human", human, cwd=tmp_path, timeout=60
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (DEEP, "human.jsonl, line 3: lists and objects nested more than 100 levels deep"),
        (
            json.dumps(HUMAN_LABELS[0])[:-1] + ', "note": "' + LONE + '"}',
            "human.jsonl, line 3, field 'note': text holds a lone surrogate",
        ),
        (
            '{"item_id": "q1", "winner": "a", "winner": "b"}',
            "human.jsonl, line 3, field 'winner': key 'winner' appears twice",
        ),
    ],
    ids=["deep", "surrogate", "duplicate-key"],
)
def test_label_tables_are_read_line_by_line(tmp_path: Path, line: str, expected: str) -> None:
    _jsonl(tmp_path / "human.jsonl", HUMAN_LABELS, line)
    _assert_error(_calibrate(tmp_path), expected)


def test_label_table_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "human.jsonl").mkdir()
    _assert_error(_calibrate(tmp_path), "human.jsonl: not a file (a directory?)")


def test_compare_table_names_the_bad_line(tmp_path: Path) -> None:
    line = '{"item_id": "q3' + LONE + '", "system_a": "alpha", "system_b": "beta", "winner": "a"}'
    _jsonl(tmp_path / "judge.jsonl", JUDGE_LABELS, line)
    result = run_cli("compare", "judge.jsonl", cwd=tmp_path, timeout=60)
    _assert_error(result, "judge.jsonl, line 3, field 'item_id': text holds a lone surrogate")


# --------------------------------------------------------------------------- recorded verdicts

RECORDED = [
    {"item_id": item, "system_a": "alpha", "system_b": "beta", "winner": "system_a"}
    for item in ("q1", "q2")
]


def _run_recorded(tmp_path: Path):
    """`judge run` replaying tmp_path/rec.jsonl (written by the test)."""
    _blind(tmp_path)
    config = {
        "name": "hostile",
        "data": {"items": "items.jsonl", "responses": "responses.jsonl"},
        "rubric": "pairwise_general",
        "judges": [{"model": "recorded/x", "family": "test", "recorded": "rec.jsonl"}],
    }
    (tmp_path / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
    return run_cli("run", "config.yaml", "--run-dir", "run", "--quiet", cwd=tmp_path)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (DEEP, "rec.jsonl, line 3: lists and objects nested more than 100 levels deep"),
        (
            '{"item_id": "q1", "first": "alpha", "second": "beta", "reply": "' + LONE + '"}',
            "rec.jsonl, line 3, field 'reply': text holds a lone surrogate",
        ),
        (
            '{"item_id": "q1", "first": ["alpha"], "second": "beta", "reply": "A"}',
            "rec.jsonl, line 3, field 'first': expected text, found ['alpha']",
        ),
        (
            '{"item_id": "q1", "first": "alpha", "second": "beta", "reply": 5}',
            "rec.jsonl, line 3, field 'reply': expected text, found 5",
        ),
        (
            '{"item_id": "q3", "system_a": {"a": 1}, "system_b": "beta", "winner": "tie"}',
            "rec.jsonl, line 3, field 'system_a': expected text",
        ),
        (
            '{"item_id": NaN, "system_a": "alpha", "system_b": "beta", "winner": "tie"}',
            "rec.jsonl, line 3, field 'item_id': expected an item id (text or integer)",
        ),
        ("[1, 2]", "rec.jsonl, line 3: expected a JSON object per line"),
    ],
    ids=["deep", "surrogate", "list-system", "number-reply", "object-system", "nan-id", "list"],
)
def test_recorded_verdicts_are_checked_at_load(tmp_path: Path, line: str, expected: str) -> None:
    _jsonl(tmp_path / "rec.jsonl", RECORDED, line)
    _assert_error(_run_recorded(tmp_path), expected)


def test_recorded_verdicts_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "rec.jsonl").write_bytes(b'{"item_id": "q\xff1"}\n')
    _assert_error(_run_recorded(tmp_path), "rec.jsonl, line 1: not valid UTF-8")


def test_recorded_verdicts_path_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "rec.jsonl").mkdir()
    result = _run_recorded(tmp_path)
    _assert_error(result, "rec.jsonl: cannot read the recorded verdicts: Is a directory")


def test_empty_label_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "human.jsonl").write_bytes(b"")
    _assert_error(_calibrate(tmp_path), "human.jsonl: no labels: the file holds nothing")


def test_csv_label_table_with_a_column_twice(tmp_path: Path) -> None:
    (tmp_path / "human.csv").write_text(
        "item_id,system_a,system_b,winner,winner,annotator\nq1,alpha,beta,a,b,ann1\n",
        encoding="utf-8",
    )
    result = _calibrate(tmp_path, "human.csv")
    _assert_error(result, "human.csv: column 'winner' appears twice")


# --------------------------------------------------------------------------- YAML configs

CONFIG = """\
name: hostile
data: {items: items.jsonl, responses: responses.jsonl}
rubric: pairwise_general
judges:
  - {model: openai/j, family: test, base_url: simulator}
"""


def _prepare(tmp_path: Path, config: str):
    _blind(tmp_path)
    (tmp_path / "config.yaml").write_text(config, encoding="utf-8")
    return run_cli("prepare", "config.yaml", "--run-dir", "run", cwd=tmp_path, timeout=60)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("question: " + DEEP, "config.yaml: line 6: invalid YAML: lists and objects nested"),
        (
            "question:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(3000)),
            "config.yaml: line 105: invalid YAML: lists and objects nested more than 100",
        ),
        ('question: "' + LONE + '"', "config.yaml: line 6: invalid YAML: text holds a lone"),
        ("name: other", "config.yaml: line 6: invalid YAML: key 'name' appears twice"),
        ("question: a\x00b", "config.yaml: line 6: invalid YAML: character U+0000 is not"),
    ],
    ids=["deep-flow", "deep-block", "surrogate", "duplicate-key", "nul"],
)
def test_hostile_yaml_config(tmp_path: Path, extra: str, expected: str) -> None:
    _assert_error(_prepare(tmp_path, CONFIG + extra + "\n"), expected)


def test_deeply_nested_rubric(tmp_path: Path) -> None:
    (tmp_path / "rubric.yaml").write_text("id: " + DEEP + "\n", encoding="utf-8")
    config = CONFIG.replace("rubric: pairwise_general", "rubric: rubric.yaml")
    _assert_error(_prepare(tmp_path, config), "rubric.yaml: line 1: invalid YAML: lists and")


def test_deeply_nested_simulator_config(tmp_path: Path) -> None:
    (tmp_path / "sim.yaml").write_text("seed: " + DEEP + "\n", encoding="utf-8")
    result = run_cli("simulate", "--config", "sim.yaml", cwd=tmp_path, timeout=60)
    _assert_error(result, "sim.yaml: line 1: invalid YAML: lists and objects nested")


@pytest.mark.parametrize(
    "name",
    ["../../escaped", "/tmp/escaped", "runs/x", '"a\\0b"', '""', ".hidden", "x" * 129],
    ids=["parent", "absolute", "slash", "nul", "empty", "dot", "long"],
)
def test_config_name_must_be_a_plain_name(tmp_path: Path, name: str) -> None:
    config = CONFIG.replace("name: hostile", f"name: {name}")
    (tmp_path / "work").mkdir()
    _blind(tmp_path)
    (tmp_path / "config.yaml").write_text(config, encoding="utf-8")
    # No --run-dir: the default runs/<name> is what the name must not escape.
    result = run_cli("prepare", "../config.yaml", cwd=tmp_path / "work", timeout=60)
    _assert_error(result, "config.yaml: name: ", "is not a plain name: use letters, digits")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "config.yaml",
        "items.jsonl",
        "responses.jsonl",
        "work",
    ]
    assert not Path("/tmp/escaped").exists()


@pytest.mark.parametrize("section", ["calibration", "compare"])
def test_negative_seed_in_config_is_refused_before_the_run(tmp_path: Path, section: str) -> None:
    result = _prepare(tmp_path, CONFIG + f"{section}: {{seed: -1}}\n")
    _assert_error(result, f"config.yaml: {section}.seed: -1: expected a seed from 0 up")


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (("compare", "judge.jsonl"), "--seed"),
        (("calibrate", "--judge", "judge.jsonl", "--human", "human.jsonl"), "--seed"),
        (("calibrate", "--judge", "judge.jsonl", "--human", "human.jsonl"), "--shuffle-judge"),
    ],
    ids=["compare", "calibrate", "shuffle"],
)
def test_negative_seed_option(tmp_path: Path, command: tuple[str, ...], option: str) -> None:
    _jsonl(tmp_path / "judge.jsonl", JUDGE_LABELS)
    _jsonl(tmp_path / "human.jsonl", HUMAN_LABELS)
    result = run_cli(*command, option, "-1", cwd=tmp_path, timeout=60)
    _assert_error(result, f"{option} -1: expected a seed from 0 up")


# --------------------------------------------------------------------------- paths and stores


def test_run_store_that_is_not_sqlite(tmp_path: Path) -> None:
    _blind(tmp_path)
    (tmp_path / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "store.sqlite").write_bytes(b"not a database" * 100)
    result = run_cli("report", "run", cwd=tmp_path, timeout=60)
    _assert_error(result, "run/store.sqlite: cannot use as an SQLite database (file is not a")


def test_cache_path_that_is_a_directory(tmp_path: Path) -> None:
    _blind(tmp_path)
    (tmp_path / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "cache").mkdir()
    result = run_cli(
        "run", "config.yaml", "--run-dir", "run", "--cache", "cache", "--dry-run", cwd=tmp_path
    )
    _assert_error(result, "cache: a directory, not an SQLite file: give the path of a file")


@pytest.mark.parametrize("command", ["blind", "prepare"])
def test_output_directory_that_is_a_file(tmp_path: Path, command: str) -> None:
    _blind(tmp_path)
    (tmp_path / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "taken").write_text("a file", encoding="utf-8")
    if command == "blind":
        args = ("blind", "responses.jsonl", "--items", "items.jsonl", "--out", "taken")
    else:
        args = ("prepare", "config.yaml", "--run-dir", "taken")
    result = run_cli(*args, cwd=tmp_path, timeout=60)
    _assert_error(result, "taken: File exists (a file is where a directory must go")


# --------------------------------------------------------------------------- compare


@pytest.mark.parametrize(
    "gate", ["(" * 100_000, "not " * 10_000 + "diff(alpha, beta) > 0"], ids=["groups", "not"]
)
def test_gate_nested_beyond_the_stack(tmp_path: Path, gate: str) -> None:
    _jsonl(tmp_path / "judge.jsonl", JUDGE_LABELS)
    result = run_cli("compare", "judge.jsonl", "--gate", gate, cwd=tmp_path, timeout=60)
    line = _assert_error(result, "'(' and 'not' nested more than 50 deep at column")
    assert len(line) < 300  # the expression is clipped in the message


def test_pair_compared_on_one_item_prints_without_an_interval(tmp_path: Path) -> None:
    extra = {"item_id": "q1", "system_a": "gamma", "system_b": "delta", "winner": "a"}
    _jsonl(tmp_path / "judge.jsonl", [*JUDGE_LABELS, extra])
    result = run_cli("compare", "judge.jsonl", "--resamples", "200", cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if "gamma" in line and "delta" in line)
    assert "n/a" in row


def test_a_line_longer_than_the_bound_is_refused_by_its_number(tmp_path: Path) -> None:
    """One 33 MiB line (a JSON array written without newlines, a pasted dump): refused as
    line 5 before it is held whole, not read into memory and judged."""
    from judge.inputs.sources import MAX_LINE_BYTES

    huge = json.dumps({"item_id": "q1", "system": "gamma", "output": "x" * MAX_LINE_BYTES})
    _blind(tmp_path, responses=[huge])
    line = _assert_error(_run_blind(tmp_path), "responses.jsonl", "line 5", "longer than 32 MiB")
    assert len(line) < 300


@pytest.mark.parametrize(
    ("knob", "value", "says"),
    [
        ("max_attempts", "1.0e+12", "less than or equal to 100"),
        ("max_connections", "1000000000", "less than or equal to 10000"),
        ("timeout_s", "1e300", "less than or equal to 86400"),
    ],
)
def test_judge_knobs_out_of_any_use_are_refused(
    tmp_path: Path, knob: str, value: str, says: str
) -> None:
    config = CONFIG.replace("base_url: simulator}", f"base_url: simulator, {knob}: {value}}}")
    _assert_error(_prepare(tmp_path, config), "config.yaml", knob, says)


@pytest.mark.parametrize("command", ["simulate", "serve"])
def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path, command: str) -> None:
    result = run_cli(command, "--port", "-1", cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "--port" in result.stderr and "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
