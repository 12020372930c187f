"""Prepare's scratch index of its input (`judge.run.staging`): it stores checked rows as
columns and finds repeats and unknown item ids with its own tables and batched lookups, so it
must give back exactly what the in-memory loaders (`judge.inputs.tables`) read, and refuse exactly
what
they refuse, with the same words, file and line."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge import iter_responses, load_items
from judge.errors import DataError
from judge.inputs import iter_items
from judge.run.staging import Staging
from judge.untrusted import MAX_NESTING, Problem, _check_value, parse_json

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12).filter(
    str.strip
)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant"]), "content": st.text(max_size=8)}
)
_amounts = st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False), st.integers(0, 10**6))


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An items table with every kind of prompt and column, and responses to some of its
    items (in any order) with every optional field."""
    ids = draw(st.lists(_text, min_size=1, max_size=6, unique=True))
    items = []
    for item_id in ids:
        chat = draw(st.booleans())
        prompt: Any = (
            [*draw(st.lists(_message, max_size=2)), {"role": "user", "content": draw(_text)}]
            if chat
            else draw(_text)
        )
        item = {"item_id": item_id, "prompt": prompt}
        if draw(st.booleans()):
            item["reference"] = draw(_text)
        if draw(st.booleans()):
            item[draw(st.sampled_from(["category", "lang"]))] = draw(_text)
        items.append(item)
    systems = draw(st.lists(_text, min_size=1, max_size=3, unique=True))
    pairs = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(systems)), unique=True))
    responses = []
    for item_id, system in pairs:
        row: dict[str, Any] = {"item_id": item_id, "system": system, "output": draw(_text)}
        if draw(st.booleans()):
            row["context"] = draw(st.lists(_message, max_size=2))
        for name in ("latency_s", "cost_usd"):
            row[name] = draw(_amounts)
        row["tokens"] = draw(st.one_of(st.none(), st.integers(0, 10**6)))
        responses.append(row)
    return items, responses


def _write(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    lines = (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tables=_tables())
def test_the_index_gives_back_what_the_loaders_read(
    tables: tuple[list[dict[str, Any]], list[dict[str, Any]]], tmp_path: Path
) -> None:
    items, responses = tables
    items_path = _write(tmp_path / "items.jsonl", items)  # type: ignore[arg-type]
    responses_path = _write(tmp_path / "responses.jsonl", responses)  # type: ignore[arg-type]
    loaded = load_items(items_path)
    if not responses:
        return  # an empty responses table is refused; test_data covers that
    expected = sorted(iter_responses(responses_path, loaded), key=lambda r: (r.item_id, r.system))
    with Staging(tmp_path / "stage.sqlite") as stage:
        stage.load_responses(
            responses_path,
            stage.load_items(items_path),
            allow_empty_outputs=False,
            keep=None,
        )
        groups = list(stage.groups())
        unanswered = list(stage.unanswered_items())
    assert [r for g in groups for r in g.responses] == expected
    answered = {r.item_id for r in expected}
    assert [g.item for g in groups] == [loaded[i] for i in sorted(answered)]
    assert unanswered == [loaded[i] for i in sorted(set(loaded) - answered)]
    for group in groups:  # each group is one item's responses, by system
        assert [r.item_id for r in group.responses] == [group.item.item_id] * len(group.responses)
    assert [k for k, _ in groupby(r.item_id for r in expected)] == sorted(answered)


_ITEMS = [{"item_id": f"q{i}", "prompt": f"question {i}"} for i in range(1, 5)]
_OK = [
    {"item_id": "q1", "system": "a", "output": "x"},
    {"item_id": "q1", "system": "other", "output": "x"},
    {"item_id": "q2", "system": "a", "output": "x"},
]
_BAD_RESPONSES: dict[str, list[dict[str, Any] | str]] = {
    "a kept system's repeat": [*_OK, {"item_id": "q1", "system": "a", "output": "again"}],
    "a set-aside system's repeat": [*_OK, {"item_id": "q1", "system": "other", "output": "y"}],
    "an unknown item": [*_OK, {"item_id": "q9", "system": "a", "output": "x"}],
    "an unknown item before a repeat": [
        *_OK,
        {"item_id": "q9", "system": "a", "output": "x"},
        {"item_id": "q2", "system": "a", "output": "again"},
    ],
    "a repeat before a bad line": [*_OK, {"item_id": "q2", "system": "a", "output": "y"}, "{"],
    "a repeat before an unknown item": [
        *_OK,
        {"item_id": "q1", "system": "other", "output": "again"},
        {"item_id": "q9", "system": "a", "output": "x"},
    ],
    "an integer id of no item": [*_OK, {"item_id": 7, "system": "a", "output": "x"}],
    "a blank id": [*_OK, {"item_id": " ", "system": "a", "output": "x"}],
}


def _message_of(call: Callable[[], object]) -> str:
    with pytest.raises(DataError) as err:
        call()
    return str(err.value)


@pytest.mark.parametrize("case", sorted(_BAD_RESPONSES))
@pytest.mark.parametrize("keep", [None, {"a"}])
def test_the_index_refuses_what_the_loaders_refuse(
    case: str, keep: set[str] | None, tmp_path: Path
) -> None:
    items_path = _write(tmp_path / "items.jsonl", _ITEMS)  # type: ignore[arg-type]
    path = _write(tmp_path / "responses.jsonl", _BAD_RESPONSES[case])
    ids = {row["item_id"] for row in _ITEMS}
    expected = _message_of(lambda: list(iter_responses(path, ids)))
    with Staging(tmp_path / "stage.sqlite") as stage:
        known = stage.load_items(items_path)
        got = _message_of(
            lambda: stage.load_responses(path, known, allow_empty_outputs=False, keep=keep)
        )
    assert got == expected
    assert re.search(r", line \d+", got)


def test_a_repeated_item_id_is_refused_as_the_loader_does(tmp_path: Path) -> None:
    path = _write(tmp_path / "items.jsonl", [*_ITEMS, {"item_id": "q2", "prompt": "again"}])
    expected = _message_of(lambda: list(iter_items(path)))
    with Staging(tmp_path / "stage.sqlite") as stage:
        assert _message_of(lambda: stage.load_items(path)) == expected
    assert "line 5" in expected and "line 2" in expected


# The input pass walks a parsed document for nesting and lone surrogates only when a scan of
# its text says it could hold either: the scan must never miss one.
_leaf = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["\ud800", "\udfff", "a\udc00b", "é", "\u2028"]),
    st.integers(),
    st.none(),
)
_document = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


def _deep(depth: int, kind: str) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


@settings(max_examples=300, deadline=None)
@given(
    document=st.one_of(
        _document,
        st.builds(
            _deep, st.integers(MAX_NESTING - 2, MAX_NESTING + 2), st.sampled_from(["list", "dict"])
        ),
    ),
    ascii_only=st.booleans(),
    upper=st.booleans(),
)
def test_the_quick_scan_misses_no_document_the_walk_refuses(
    document: Any, ascii_only: bool, upper: bool
) -> None:
    try:
        _check_value(document, None, 0)
        refused = None
    except Problem as problem:
        refused = problem.message
    # As a file may spell it: escaped (in either case) or as UTF-8 text with raw characters.
    text = json.dumps(document, ensure_ascii=ascii_only)
    if upper:
        text = re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), text)
    try:
        parse_json(text)
        got = None
    except Problem as problem:
        got = problem.message
    assert got == refused
