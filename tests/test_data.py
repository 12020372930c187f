"""Loading items and responses: every format, every bad-input case, bounded memory."""

from __future__ import annotations

import gzip
import io
import json
import random
import sqlite3
import tracemalloc
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from judge import iter_responses, load_items, load_responses
from judge.errors import DataError
from judge.inputs import SUPPORTED_FORMATS, iter_items
from judge.inputs.duplicates import SeenInIndex, SeenKeys, SeenPairs
from judge.inputs.sources import JsonlSource, Utf8Checked
from judge.types import ChatMessage, Response

ITEMS = {"q1", "q2", "q3"}


def jsonl(path: Path, rows: Iterable[dict[str, Any] | str]) -> Path:
    """Write rows as JSON lines; a str row is written verbatim (for malformed lines)."""
    text = "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")
    return path


def text_file(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def parquet(path: Path, columns: dict[str, list[Any]]) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


def data_error(call: Any, *args: Any, **kwargs: Any) -> DataError:
    with pytest.raises(DataError) as err:
        result = call(*args, **kwargs)
        if not isinstance(result, dict | list):
            list(result)
    return err.value


# --------------------------------------------------------------------------- items


def test_items_jsonl_prompt_forms_reference_and_strata(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "items.jsonl",
        [
            {"item_id": 7, "prompt": "Say hi.", "reference": None, "category": "chat", "turn": 1},
            {
                "item_id": "q2",
                "prompt": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "2+2?"},
                ],
                "reference": "4",
                "hard": True,
            },
            {"item_id": "q3", "prompt": "x", "reference": "", "category": None},
        ],
    )
    items = load_items(path)
    assert list(items) == ["7", "q2", "q3"]  # file order, int ids as text
    assert items["7"].prompt == "Say hi."
    assert items["7"].reference is None
    assert items["7"].strata == {"category": "chat", "turn": "1"}
    assert items["q2"].prompt == (
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="2+2?"),
    )
    assert items["q2"].reference == "4"
    assert items["q2"].strata == {"hard": "true"}
    assert items["q3"].reference is None
    assert items["q3"].strata == {}  # null stratum: key absent, never "None" or "nan"


def test_items_csv_keeps_text_exact_and_decodes_chat_cells(tmp_path: Path) -> None:
    chat = json.dumps([{"role": "user", "content": "Hi, there"}]).replace('"', '""')
    path = text_file(
        tmp_path / "items.csv",
        "item_id,prompt,reference,language,level\n"
        '007,"Line one\nline two",,en,NA\n'
        f'q2,"{chat}",ref,,3\n'
        'q3,"[1, 2] - sort this list",,fr,\n',
    )
    items = load_items(path)
    assert list(items) == ["007", "q2", "q3"]  # "007" is not turned into 7
    assert items["007"].prompt == "Line one\nline two"
    assert items["007"].reference is None
    assert items["007"].strata == {"language": "en", "level": "NA"}  # "NA" is text in CSV
    assert items["q2"].prompt == (ChatMessage(role="user", content="Hi, there"),)
    assert items["q2"].strata == {"level": "3"}
    assert items["q3"].prompt == "[1, 2] - sort this list"  # not chat JSON: stays text
    assert items["q3"].strata == {"language": "fr"}


def test_items_parquet_int_ids_nullable_strata_and_native_chat(tmp_path: Path) -> None:
    path = parquet(
        tmp_path / "items.parquet",
        {
            "item_id": [1, 2],
            "prompt": pa.array(
                [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]
            ),
            "reference": ["r", None],
            "level": pa.array([3, None], type=pa.int64()),
            "score": [0.5, float("nan")],
        },
    )
    items = load_items(path)
    assert list(items) == ["1", "2"]
    assert items["1"].prompt == (ChatMessage(role="user", content="a"),)
    assert items["1"].strata == {"level": "3", "score": "0.5"}  # "3", not "3.0"
    assert items["2"].reference is None
    assert items["2"].strata == {}  # null and NaN: key absent


def test_items_gzip_and_ndjson(tmp_path: Path) -> None:
    rows = [{"item_id": "q1", "prompt": "p"}]
    with gzip.open(tmp_path / "items.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(json.dumps(rows[0]) + "\n")
    with gzip.open(tmp_path / "items.csv.gz", "wt", encoding="utf-8") as f:
        f.write("item_id,prompt\nq1,p\n")
    jsonl(tmp_path / "items.ndjson", rows)
    for name in ("items.jsonl.gz", "items.csv.gz", "items.ndjson"):
        assert load_items(tmp_path / name)["q1"].prompt == "p"


def test_items_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "items.jsonl",
        [
            {"item_id": "q1", "prompt": "a"},
            {"item_id": "q2", "prompt": "b"},
            {"item_id": "q1", "prompt": "c"},
        ],
    )
    err = data_error(load_items, path)
    assert str(err) == (
        f"{path}, line 3, field 'item_id': duplicate item_id 'q1': duplicate of line 1; "
        "each item_id may appear only once"
    )
    assert (err.line, err.field) == (3, "item_id")
    # Looked for in a prepare's index instead of memory: the same error.
    indexed = SeenInIndex(sqlite3.connect(":memory:"), "seen_items", 1)
    assert str(data_error(iter_items, path, seen=indexed)) == str(err)


def test_items_missing_prompt_column(tmp_path: Path) -> None:
    path = text_file(tmp_path / "items.csv", "item_id,question\nq1,hi\n")
    err = data_error(load_items, path)
    assert str(err) == (
        f"{path}, field 'prompt': missing required column 'prompt': an items table needs "
        "item_id, prompt (found columns: item_id, question)"
    )


def test_items_prompt_wrong_types(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "items.jsonl", [{"item_id": "q1", "prompt": {"text": "hi"}}])
    err = data_error(load_items, path)
    assert str(err) == (
        f"{path}, line 1, field 'prompt': expected a prompt: text or a list of chat messages, "
        "found an object"
    )
    path = jsonl(
        tmp_path / "items.jsonl",
        [
            {"item_id": "q1", "prompt": "ok"},
            {
                "item_id": "q2",
                "prompt": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
            },
        ],
    )
    assert str(data_error(load_items, path)) == (
        f"{path}, line 2, field 'prompt': the last message must be the user's turn, found role "
        "'assistant' (message 2)"
    )
    path = jsonl(
        tmp_path / "items.jsonl", [{"item_id": "q1", "prompt": [{"role": "bot", "content": "a"}]}]
    )
    assert "message 1: expected role system, user or assistant, found the text 'bot'" in str(
        data_error(load_items, path)
    )


def test_items_csv_chat_cell_that_is_broken_json_is_an_error(tmp_path: Path) -> None:
    path = text_file(
        tmp_path / "items.csv", 'item_id,prompt\nq1,"[{""role"": ""user"", ""content"": }]"\n'
    )
    err = data_error(load_items, path)
    assert str(err).startswith(
        f"{path}, line 2, field 'prompt': expected chat messages as a JSON list of "
        "{role, content} objects, found malformed JSON (Expecting value at character "
    )


def test_items_empty_string_prompt(tmp_path: Path) -> None:
    path = text_file(tmp_path / "items.csv", "item_id,prompt\nq1,\n")
    assert str(data_error(load_items, path)) == (
        f"{path}, line 2, field 'prompt': expected a prompt (text or chat messages), "
        "found an empty string"
    )


# --------------------------------------------------------------------------- responses


def test_responses_jsonl_all_fields(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "r.jsonl",
        [
            {
                "item_id": "q1",
                "system": "a",
                "output": "x",
                "latency_s": 1,
                "cost_usd": 0.5,
                "tokens": 12,
            },
            "",  # blank lines hold no record and are skipped
            {
                "item_id": "q1",
                "system": "b",
                "output": "y",
                "context": [
                    {"role": "user", "content": "t1"},
                    {"role": "assistant", "content": "a1"},
                ],
                "latency_s": None,
                "tokens": 12.0,
            },
        ],
    )
    first, second = load_responses(path, ITEMS)
    assert first == Response(
        item_id="q1", system="a", output="x", latency_s=1.0, cost_usd=0.5, tokens=12
    )
    assert second.context == (
        ChatMessage(role="user", content="t1"),
        ChatMessage(role="assistant", content="a1"),
    )
    assert (second.latency_s, second.cost_usd, second.tokens) == (None, None, 12)


def test_responses_csv_and_parquet_parse_numbers_and_context(tmp_path: Path) -> None:
    context = json.dumps([{"role": "user", "content": "t1"}]).replace('"', '""')
    path = text_file(
        tmp_path / "r.csv",
        "item_id,system,output,context,latency_s,cost_usd,tokens\n"
        f'q1,a,"multi\nline",,0.25,,7\n'
        f'q2,a,NA,"{context}",,1e-3,\n',
    )
    first, second = load_responses(path, ITEMS)
    assert (first.output, first.latency_s, first.tokens, first.context) == (
        "multi\nline",
        0.25,
        7,
        (),
    )
    assert (second.output, second.cost_usd, second.latency_s) == ("NA", 0.001, None)
    assert second.context == (ChatMessage(role="user", content="t1"),)

    path = parquet(
        tmp_path / "r.parquet",
        {
            "item_id": ["q1", "q2"],
            "system": ["a", "a"],
            "output": ["x", "y"],
            "latency_s": [1.5, None],
            "tokens": pa.array([None, 3], type=pa.int64()),
        },
    )
    first, second = load_responses(path, ITEMS)
    assert (first.latency_s, first.tokens, second.latency_s, second.tokens) == (1.5, None, None, 3)


def test_responses_missing_required_column(tmp_path: Path) -> None:
    path = text_file(tmp_path / "r.csv", "item_id,system,answer\nq1,a,x\n")
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, field 'output': missing required column 'output': a responses table needs "
        "item_id, system, output (found columns: item_id, system, answer)"
    )
    path = jsonl(
        tmp_path / "r.jsonl",
        [{"item_id": "q1", "system": "a", "output": "x"}, {"item_id": "q2", "system": "a"}],
    )
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 2, field 'output': missing required column 'output': a responses table "
        "needs item_id, system, output"
    )
    path = parquet(tmp_path / "r.parquet", {"item_id": ["q1"], "output": ["x"]})
    assert str(data_error(load_responses, path, ITEMS)).startswith(
        f"{path}, field 'system': missing required column 'system'"
    )


def test_responses_unknown_column_lists_known_ones(tmp_path: Path) -> None:
    path = text_file(tmp_path / "r.csv", "item_id,system,output,latency\nq1,a,x,1\n")
    err = data_error(load_responses, path, ITEMS)
    assert str(err) == (
        f"{path}, field 'latency': unknown column 'latency'; the known columns are item_id, "
        "system, output, context, latency_s, cost_usd, tokens "
        "(found columns: item_id, system, output, latency)"
    )
    path = jsonl(
        tmp_path / "r.jsonl", [{"item_id": "q1", "system": "a", "output": "x", "model": "m"}]
    )
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 1, field 'model': unknown column 'model'; the known columns are "
        "item_id, system, output, context, latency_s, cost_usd, tokens"
    )


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"output": 42}, "output", "expected the output as text, found the number 42"),
        ({"output": None}, "output", "expected the output as text, found null"),
        ({"system": ""}, "system", "expected a system name (text), found an empty string"),
        (
            {"item_id": 1.5},
            "item_id",
            "expected an item id (text or integer), found the number 1.5",
        ),
        (
            {"item_id": True},
            "item_id",
            "expected an item id (text or integer), found the boolean true",
        ),
        ({"latency_s": -1.5}, "latency_s", "expected a non-negative number, found the number -1.5"),
        (
            {"latency_s": "fast"},
            "latency_s",
            "expected a non-negative number, found the text 'fast'",
        ),
        ({"cost_usd": True}, "cost_usd", "expected a non-negative number, found the boolean true"),
        ({"tokens": 2.5}, "tokens", "expected a non-negative integer, found the number 2.5"),
        ({"tokens": -3}, "tokens", "expected a non-negative integer, found the number -3"),
        (
            {"context": "hi"},
            "context",
            "expected chat messages as a list of {role, content} objects, found the text 'hi'",
        ),
        (
            {"context": [{"role": "user", "content": "a", "name": "x"}]},
            "context",
            "message 1: unexpected key 'name'; a message has only role and content",
        ),
        (
            {"context": [{"role": "user", "content": 3}]},
            "context",
            "message 1: expected content as text, found the number 3",
        ),
    ],
)
def test_responses_wrong_types_name_line_field_and_expectation(
    tmp_path: Path, row: dict[str, Any], field: str, message: str
) -> None:
    good = {"item_id": "q1", "system": "a", "output": "fine"}
    path = jsonl(tmp_path / "r.jsonl", [good, {**good, "system": "b", **row}])
    err = data_error(load_responses, path, ITEMS)
    assert str(err) == f"{path}, line 2, field '{field}': {message}"
    assert (err.path, err.line, err.field) == (str(path), 2, field)


def test_responses_csv_bad_number_reports_physical_line(tmp_path: Path) -> None:
    # Row 2 starts on line 4: row 1's output spans lines 2-3.
    path = text_file(
        tmp_path / "r.csv",
        'item_id,system,output,tokens\nq1,a,"two\nlines",3\nq2,a,x,three\n',
    )
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 4, field 'tokens': expected a non-negative integer, found the text 'three'"
    )


def test_responses_parquet_wrong_type_reports_row(tmp_path: Path) -> None:
    path = parquet(
        tmp_path / "r.parquet", {"item_id": ["q1", "q2"], "system": ["a", "a"], "output": [1, 2]}
    )
    err = data_error(load_responses, path, ITEMS)
    assert (
        str(err)
        == f"{path}, row 1, field 'output': expected the output as text, found the number 1"
    )
    assert err.line is None


def test_responses_malformed_json_line(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "r.jsonl",
        [
            {"item_id": "q1", "system": "a", "output": "x"},
            "",
            '{"item_id": "q2", "system": "a" "output": "y"}',
        ],
    )
    err = data_error(load_responses, path, ITEMS)
    assert str(err) == (
        f"{path}, line 3: malformed JSON: Expecting ',' delimiter at column 33; each line must "
        "be one JSON object"
    )
    path = jsonl(tmp_path / "r.jsonl", ['["q1", "a", "x"]'])
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 1: expected a JSON object per line, found a list"
    )


def test_non_utf8_jsonl_reports_line_and_byte(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(
        b'{"item_id": "q1", "system": "a", "output": "x"}\n'
        b'{"item_id": "q2", "system": "a", "output": "caf\xe9"}\n'
    )
    err = data_error(load_responses, path, ITEMS)
    # Line 1 is 48 bytes long; 0xe9 is the 48th byte of line 2.
    assert str(err) == (
        f"{path}, line 2: not valid UTF-8: byte 0xe9 at byte 48 of the line (byte 96 of the "
        "file); save the file as UTF-8"
    )


def test_non_utf8_csv_reports_physical_line_and_byte(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes(b'item_id,system,output\nq1,a,"caf\xc3\xa9\nsecond"\nq2,a,na\xefve\n')
    err = data_error(load_responses, path, ITEMS)
    assert str(err) == (
        f"{path}, line 4: not valid UTF-8: byte 0xef at byte 8 of the line (byte 50 of the "
        "file); save the file as UTF-8"
    )


def test_non_utf8_csv_deep_in_a_large_file(tmp_path: Path) -> None:
    # 3 MB of 2-byte characters: reads split characters across buffers, which must pass, and
    # the bad byte is still located exactly.
    rows = "".join(f"q1,s{i},{'é' * 500}\n" for i in range(3000))
    path = tmp_path / "r.csv"
    path.write_bytes(b"item_id,system,output\n" + rows.encode() + b"q2,z,bad\xff byte\n")
    err = data_error(load_responses, path, ITEMS)
    assert err.line == 3002
    assert "not valid UTF-8: byte 0xff at byte 9 of the line" in str(err)


def test_duplicate_pair_reports_both_lines(tmp_path: Path) -> None:
    rows = [
        {"item_id": "q1", "system": "a", "output": "x"},
        {"item_id": "q1", "system": "b", "output": "x"},
        {"item_id": "q2", "system": "a", "output": "x"},
        {"item_id": "q1", "system": "b", "output": "again"},
    ]
    path = jsonl(tmp_path / "r.jsonl", rows)
    in_memory = [SeenPairs() for _ in range(3)]
    in_index = [SeenInIndex(sqlite3.connect(":memory:"), "seen", 2) for _ in range(3)]
    for chunk_rows, seen in zip((1, 2, 50_000) * 2, in_memory + in_index, strict=True):
        # Across chunks and within one, in memory and in a prepare's index.
        err = data_error(iter_responses, path, ITEMS, chunk_rows=chunk_rows, seen=seen)
        assert str(err) == (
            f"{path}, line 4, field 'system': duplicate item_id 'q1' and system "
            "'b': duplicate of line 2; each (item_id, system) pair may appear only once"
        )


def test_duplicate_pair_csv_lines_and_parquet_rows(tmp_path: Path) -> None:
    path = text_file(
        tmp_path / "r.csv", 'item_id,system,output\nq1,a,"x\ny"\nq2,a,z\nq1,a,"w\n\nv"\n'
    )
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 5, field 'system': duplicate item_id 'q1' and system 'a': "
        "duplicate of line 2; each (item_id, system) pair may appear only once"
    )
    path = parquet(
        tmp_path / "r.parquet",
        {"item_id": ["q1", "q2", "q1"], "system": ["a", "a", "a"], "output": ["x", "y", "z"]},
    )
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, row 3, field 'system': duplicate item_id 'q1' and system 'a': "
        "duplicate of row 1; each (item_id, system) pair may appear only once"
    )


def test_first_error_in_file_order_wins(tmp_path: Path) -> None:
    rows = [
        {"item_id": "q1", "system": "a", "output": "x"},
        {"item_id": "q1", "system": "a", "output": "dup"},
        {"item_id": "q2", "system": "a", "output": 5},
    ]
    err = data_error(load_responses, jsonl(tmp_path / "r.jsonl", rows), ITEMS)
    assert err.line == 2 and "duplicate" in str(err)


def test_unknown_item_is_named(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "r.jsonl", [{"item_id": 99, "system": "a", "output": "x"}])
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 1, field 'item_id': unknown item_id '99': no item with this id in the "
        "items table (responses must answer items of that table)"
    )


def test_empty_output_is_an_error_unless_allowed(tmp_path: Path) -> None:
    path = text_file(tmp_path / "r.csv", 'item_id,system,output\nq1,a,x\nq1,b,"  \n "\nq2,a,\n')
    err = data_error(load_responses, path, ITEMS)
    assert str(err) == (
        f"{path}, line 3, field 'output': empty output (whitespace only counts as empty); to "
        "judge empty outputs as empty instead, pass allow_empty_outputs=True "
        "(config: data.allow_empty_outputs: true)"
    )
    kept = load_responses(path, ITEMS, allow_empty_outputs=True)
    assert [r.output for r in kept] == ["x", "  \n ", ""]  # kept as is, none dropped


def test_path_errors(tmp_path: Path) -> None:
    for name in ("r.txt", "r.parquet.gz"):
        err = data_error(load_responses, tmp_path / name, ITEMS)
        assert f"unsupported file type ({name[1:]}): expected {SUPPORTED_FORMATS}" in str(err)
    err = data_error(load_responses, tmp_path / "r.json", ITEMS)
    assert str(err).endswith("(JSON Lines files, one object per line, end in .jsonl)")
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(DataError) as raised:
        iter_responses(missing, ITEMS)  # checked at call time, before iterating
    assert str(raised.value) == f"{missing}: file not found"
    (tmp_path / "dir.csv").mkdir()
    assert str(data_error(load_items, tmp_path / "dir.csv")).endswith("not a file (a directory?)")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("r.jsonl", b"", "empty file: expected rows"),
        ("r.csv", b"", "empty file: expected rows"),
        ("r.parquet", b"", "empty file: expected rows"),
        ("r.jsonl", b"\n  \n", "no rows: expected at least one response"),
        ("r.csv", b"item_id,system,output\n", "no rows: expected at least one response"),
        ("r.csv", b"\n\n", "empty file: expected a header line and rows"),
    ],
)
def test_empty_tables(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert str(data_error(load_responses, path, ITEMS)) == f"{path}: {message}"


def test_empty_parquet_and_items(tmp_path: Path) -> None:
    path = parquet(
        tmp_path / "r.parquet",
        {
            "item_id": pa.array([], pa.string()),
            "system": pa.array([], pa.string()),
            "output": pa.array([], pa.string()),
        },
    )
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}: no rows: expected at least one response"
    )
    path = text_file(tmp_path / "items.csv", "item_id,prompt\n")
    assert str(data_error(load_items, path)) == f"{path}: no rows: expected at least one item"


def test_malformed_csv_structure(tmp_path: Path) -> None:
    path = text_file(tmp_path / "r.csv", 'item_id,system,output\nq1,a,"x\ny"\nq2,a,x,y\n')
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 4: expected 3 cells as in the header, found 4; quote cells that "
        "contain commas"
    )
    path = text_file(tmp_path / "r.csv", 'item_id,system,output\nq1,a,x\n\nq2,a,"never\nclosed\n')
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 4: a quoted cell starting on this line is never closed (missing '\"')"
    )
    path = text_file(tmp_path / "r.csv", "item_id,system,output,output\nq1,a,x,y\n")
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, field 'output': column 'output' appears twice; column names must be unique"
    )
    path = text_file(tmp_path / "items.csv", "item_id,prompt,\nq1,a,x\n")
    assert str(data_error(load_items, path)) == (
        f"{path}: column 3 has no name; every column needs a header"
    )


def test_corrupt_gzip_and_parquet(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl.gz"
    path.write_bytes(b"this is not gzip")
    assert str(data_error(load_responses, path, ITEMS)).startswith(
        f"{path}: cannot read this gzip-compressed file: Not a gzipped file"
    )
    path = tmp_path / "r.parquet"
    path.write_bytes(b"PAR1 garbage")
    assert str(data_error(load_responses, path, ITEMS)).startswith(
        f"{path}: not a readable Parquet file"
    )


# --------------------------------------------------------------------------- streaming


def test_every_row_becomes_a_response_in_order(tmp_path: Path) -> None:
    items = {f"q{i}" for i in range(50)}
    rows = [
        {"item_id": f"q{i % 50}", "system": f"s{i // 50}", "output": str(i)} for i in range(1234)
    ]
    path = jsonl(tmp_path / "r.jsonl", rows)
    got = list(iter_responses(path, items, chunk_rows=100))
    assert [r.output for r in got] == [str(i) for i in range(1234)]


@pytest.mark.parametrize("where", ["memory", "index"])
def test_seen_pairs_matches_a_plain_set(where: str) -> None:
    # Random chunks with planted repeats, checked against the obvious implementation.
    rng = random.Random(5)
    for trial in range(200):
        seen: SeenKeys = (
            SeenPairs() if where == "memory" else SeenInIndex(sqlite3.connect(":memory:"), "s", 2)
        )
        reference: dict[tuple[str, str], int] = {}
        position = 0
        expected = got = None
        while got is None and position < 400:
            size = rng.randint(1, 40)
            pairs = [(f"q{rng.randint(0, 30)}", f"s{rng.randint(0, 12)}") for _ in range(size)]
            positions = list(range(position + 1, position + size + 1))
            position += size
            for index, pair in enumerate(pairs):
                if pair in reference:
                    expected = (index, reference[pair])
                    break
                reference[pair] = positions[index]
            got = seen.add([seen.key(*pair) for pair in pairs], positions)
            assert got == expected, trial
            if expected is not None:
                break


def test_streaming_memory_stays_bounded(tmp_path: Path) -> None:
    # 20,000 responses with 2 KB outputs: ~42 MB of output text, which a materialised load
    # would hold at once. Streamed in chunks of 500 rows it must stay far below that.
    items = {f"q{i}" for i in range(200)}
    path = tmp_path / "r.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(20_000):
            row = {
                "item_id": f"q{i % 200}",
                "system": f"s{i // 200}",
                "output": f"{i:06d}" + "x" * 2_000,
            }
            f.write(json.dumps(row) + "\n")
    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_responses(path, items, chunk_rows=500))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20_000
    assert peak < 12_000_000, f"peak traced memory {peak / 1e6:.1f} MB"


def test_csv_line_is_reported_only_when_both_parses_agree(tmp_path: Path) -> None:
    # A line holding `" "` is a row for pandas but looks like a blank line to the csv module,
    # so the physical line cannot be confirmed: the error falls back to the row number.
    path = text_file(tmp_path / "r.csv", 'item_id,system,output\n" "\nq1,a,x\nq1,a,y\n')
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, row 1, field 'item_id': expected an item id (text or integer), found the text ' '"
    )
    path = text_file(tmp_path / "r.csv", 'item_id,system,output\nq1,a,x\n" "\n')
    err = data_error(load_responses, path, ITEMS)
    assert err.line is None and err.row == 2 and ", row 2, " in str(err)
    # `""` is a row for both, and blank lines are skipped by both: lines stay exact.
    path = text_file(tmp_path / "r.csv", 'item_id,system,output\n\nq1,a,x\n  \n""\n')
    assert str(data_error(load_responses, path, ITEMS)).startswith(
        f"{path}, line 5, field 'item_id'"
    )


def test_csv_line_after_a_cell_larger_than_the_csv_module_default(tmp_path: Path) -> None:
    path = text_file(
        tmp_path / "r.csv", "item_id,system,output\nq1,a," + "x" * 200_000 + "\nq2,a,\n"
    )
    assert data_error(load_responses, path, ITEMS).line == 3


def test_non_utf8_gzip_names_the_decompressed_offset(tmp_path: Path) -> None:
    path = tmp_path / "r.csv.gz"
    path.write_bytes(gzip.compress(b"item_id,system,output\nq1,a,\xff\n"))
    assert str(data_error(load_responses, path, ITEMS)) == (
        f"{path}, line 2: not valid UTF-8: byte 0xff at byte 6 of the line (byte 28 of the "
        "decompressed data); save the file as UTF-8"
    )


def read_checked(data: bytes, size: int) -> bytes:
    reader = Utf8Checked(io.BytesIO(data), JsonlSource(Path("t.jsonl")))
    parts = []
    while part := reader.read(size):
        parts.append(part)
    return b"".join(parts)


def test_utf8_check_across_read_boundaries() -> None:
    # Every read size splits some 2- and 3-byte characters; only the bad byte may fail.
    good = ("ab\né€x\n" * 50).encode()
    for size in range(1, 12):
        assert read_checked(good, size) == good
        with pytest.raises(DataError) as err:
            read_checked(good + b"ok\xe2\x82", size)
        # A truncated character at the end of the file: line 101, its 3rd byte.
        assert err.value.line == 101
        assert "byte 0xe2 at byte 3 of the line" in str(err.value)


@pytest.mark.parametrize("chunk_rows", [1, 2, 3, 50_000])
def test_positions_are_exact_across_chunks(tmp_path: Path, chunk_rows: int) -> None:
    csv_path = text_file(
        tmp_path / "r.csv", 'item_id,system,output\nq1,a,"x\ny"\nq2,a,z\nq3,a,w\nq1,a,v\n'
    )
    err = data_error(iter_responses, csv_path, ITEMS, chunk_rows=chunk_rows)
    assert (err.line, "duplicate of line 2;" in str(err)) == (6, True)
    parquet_path = parquet(
        tmp_path / "r.parquet",
        {"item_id": ["q1", "q2", "q3", "q2"], "system": ["a"] * 4, "output": ["x"] * 4},
    )
    err = data_error(iter_responses, parquet_path, ITEMS, chunk_rows=chunk_rows)
    assert err.row == 4
    assert "duplicate item_id 'q2' and system 'a': duplicate of row 2;" in str(err)
