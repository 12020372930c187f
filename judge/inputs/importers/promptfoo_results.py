"""promptfoo results (`promptfoo eval -o results.json`, or `-o results.jsonl`) -> items and
responses.

Each test case under each prompt template is an item: `testIdx` is its id (`3`; `3/prompt2`
under the second template met, told apart by `promptId`: promptfoo's `promptIdx` numbers
prompt and provider together), the rendered prompt of its results (`prompt.raw`, where the test's
vars are already filled in) its prompt, its `metadata` its strata. Each provider is a system
(its label, else its id), `response.output` the response. A result whose provider call failed
(`failureReason` 2, `response.error`) is skipped and counted; a failed assertion is not a
failure to import: the output is still there to judge.

`.json` is one JSON document: its `results.results` array is parsed one result at a time with
ijson (the `promptfoo` extra), never whole; `.jsonl` is read line by line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from judge.errors import DataError
from judge.inputs.importers.optional_deps import optional
from judge.inputs.importers.source_records import json_chat, jsonl_records
from judge.inputs.importers.written_tables import Skip, TableWriter, Where

_PROVIDER_ERROR = 2
"""promptfoo's `ResultFailureReason.ERROR` (1 is a failed assertion, 0 none)."""


def import_promptfoo(paths: Sequence[Path], out: Path) -> TableWriter:
    """Read the results files at `paths` into tables in `out`."""
    for path in paths:
        if not path.is_file():
            raise DataError("file not found", path=str(path))
    templates: dict[str, int] = {}
    with TableWriter(out, "promptfoo", paths) as writer:
        for path in paths:
            for where, result in _results(path):
                try:
                    _import_result(result, where, writer, templates)
                except Skip as skip:
                    writer.skip(skip.reason)
    return writer


def _results(path: Path) -> Iterator[tuple[Where, Mapping[str, Any]]]:
    if path.suffix == ".jsonl":
        yield from jsonl_records(path, "result")
    elif path.suffix == ".json":
        yield from _json_results(path)
    else:
        raise DataError(
            "not promptfoo results: expected the .json or .jsonl file of `promptfoo eval -o`",
            path=str(path),
        )


def _json_results(path: Path) -> Iterator[tuple[Where, Mapping[str, Any]]]:
    ijson = optional("ijson", "reading promptfoo results (.json)")
    count = 0
    with path.open("rb") as fh:
        try:
            for count, result in enumerate(
                ijson.items(fh, "results.results.item", use_float=True), 1
            ):
                where = Where(path, field=f"results.results[{count - 1}]")
                if not isinstance(result, dict):
                    raise where.error("expected a result object")
                yield where, result
        except ijson.JSONError as exc:
            raise DataError(f"malformed JSON: {exc}", path=str(path)) from None
    if not count:
        raise DataError(
            "no results at results.results: expected the file `promptfoo eval -o results.json` "
            "writes",
            path=str(path),
        )


def _import_result(
    result: Mapping[str, Any], where: Where, writer: TableWriter, templates: dict[str, int]
) -> None:
    """One result; `templates` numbers the prompt templates in the order they are met."""
    response = result.get("response")
    if result.get("failureReason") == _PROVIDER_ERROR or (
        isinstance(response, Mapping) and response.get("error")
    ):
        raise Skip("the provider call failed (promptfoo failureReason ERROR)")
    if not isinstance(response, Mapping) or response.get("output") is None:
        raise Skip("no response output")
    test = _index(result, "testIdx", where)
    prompt = result.get("prompt")
    template = result.get("promptId") or (
        prompt.get("label") if isinstance(prompt, Mapping) else None
    )
    if not isinstance(template, str):
        template = str(_index(result, "promptIdx", where))
    number = templates.setdefault(template, len(templates))
    item_id = str(test) if number == 0 else f"{test}/prompt{number + 1}"
    raw = prompt.get("raw") if isinstance(prompt, Mapping) else None
    if not isinstance(raw, str):
        raise where.error("expected the rendered prompt as text", "prompt.raw")
    case = result.get("testCase")
    metadata = case.get("metadata") if isinstance(case, Mapping) else None
    if not isinstance(metadata, Mapping):
        metadata = None
    writer.item(item_id, _prompt(raw), where, strata=writer.strata(metadata, "test metadata"))
    writer.response(
        item_id,
        _system(result.get("provider"), where),
        _output(response["output"], writer),
        where,
        latency_s=_number(result.get("latencyMs"), 1000),
        cost_usd=_number(result.get("cost"), 1),
        tokens=_tokens(response.get("tokenUsage")),
    )


def _index(result: Mapping[str, Any], name: str, where: Where) -> int:
    value = result.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise where.error(f"expected a test or prompt index, found {value!r}", name)
    return value


def _prompt(raw: str) -> str | list[dict[str, str]]:
    chat = json_chat(raw)
    if chat is None:
        return raw
    if chat[-1]["role"] != "user":
        raise Skip("the chat prompt does not end with the user's turn")
    return chat


def _system(provider: Any, where: Where) -> str:
    if isinstance(provider, str):
        return provider
    if isinstance(provider, Mapping):
        for key in ("label", "id"):
            if isinstance(provider.get(key), str) and provider[key].strip():
                return provider[key]
    raise where.error("expected the provider's label or id", "provider")


def _output(value: Any, writer: TableWriter) -> str:
    if isinstance(value, str):
        return value
    writer.note("outputs that are JSON values (structured output) are written as JSON text")
    return json.dumps(value, ensure_ascii=False)


def _number(value: Any, per_unit: float) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return value / per_unit
    return None


def _tokens(usage: Any) -> int | None:
    value = usage.get("completion") if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
