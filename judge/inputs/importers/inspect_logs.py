"""Inspect AI eval logs (`.eval` and `.json`) -> items and responses.

Each sample becomes an item (its id, and its epoch when a log ran more than one: `7#2`), its
`input` the prompt (text, or chat messages ending in the user's turn; a multiple-choice
sample's choices are appended as lettered lines), its `target` the reference. Each log's model
is a system, its sample's `output.completion` the response. Several logs of one task by
different models merge by sample id.

Read with Inspect AI's own reader (`inspect_ai.log`, the `inspect` extra): the header first
(`read_eval_log(header_only=True)`), then the samples one at a time, never the whole log: an
`.eval` log is a zip of one member per sample (`read_eval_log_samples`); a `.json` log is one
JSON document, whose `samples` array is parsed item by item with ijson (which Inspect AI
installs) and each item validated as Inspect AI's `EvalSample`. (Inspect AI's own sample
reader loads a `.json` log whole.)
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.errors import DataError
from judge.inputs.importers.optional_deps import optional
from judge.inputs.importers.written_tables import Skip, TableWriter, Where

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

_WHAT = "reading Inspect AI logs"
_SUFFIXES = (".eval", ".json")
_ROLES = ("system", "user", "assistant")


def import_inspect(paths: Sequence[Path], out: Path) -> TableWriter:
    """Read the logs at `paths` (files, or directories searched for `.eval`/`.json` logs)
    into tables in `out`."""
    optional("inspect_ai", _WHAT)
    logs = _log_files(paths)
    headers = [(log, _header(log)) for log in logs]
    _one_task(headers)
    several_epochs = any((h.eval.config.epochs or 1) > 1 for _, h in headers)
    with TableWriter(out, "inspect", logs) as writer:
        for log, header in headers:
            _read_log(log, header, writer, several_epochs)
    return writer


def _log_files(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file())
            # Inspect writes `logs.json` (a listing) beside the logs: not a log.
            inside = [p for p in inside if p.name != "logs.json"]
            if not inside:
                raise DataError(
                    "no Inspect AI logs (.eval, .json) in this directory", path=str(path)
                )
            found += inside
        elif not path.is_file():
            raise DataError("file not found", path=str(path))
        elif path.suffix not in _SUFFIXES:
            raise DataError(
                "not an Inspect AI log: expected a .eval or .json file, found "
                f"{path.suffix or 'no extension'}",
                path=str(path),
            )
        else:
            found.append(path)
    return found


def _header(log: Path) -> EvalLog:
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(str(log), header_only=True)
    except Exception as exc:  # the reader's errors are many (zip, JSON, pydantic): all the file's
        raise DataError(
            f"not a readable Inspect AI log ({type(exc).__name__}: {_first_line(exc)})",
            path=str(log),
        ) from None


def _one_task(headers: list[tuple[Path, EvalLog]]) -> None:
    first_log, first = headers[0]
    for log, header in headers[1:]:
        if header.eval.task != first.eval.task:
            raise DataError(
                f"a log of task {header.eval.task!r}, and {first_log} is of task "
                f"{first.eval.task!r}: logs merge by sample id only within one task (import "
                "each task separately)",
                path=str(log),
            )


def _read_log(log: Path, header: EvalLog, writer: TableWriter, several_epochs: bool) -> None:
    system = header.eval.model
    expected = (header.eval.dataset.samples or 0) * (header.eval.config.epochs or 1)
    read = 0
    for sample in _samples(log, header):
        read += 1
        where = Where(log, field=f"sample {sample.id!r}, epoch {sample.epoch}")
        try:
            _import_sample(sample, system, where, writer, several_epochs)
        except Skip as skip:
            writer.skip(skip.reason)
    if header.status != "success" and expected > read:
        writer.note(f"{log}: the eval ended with status {header.status!r}")
        for _ in range(expected - read):
            writer.skip(f"sample not in the log (the eval ended with status {header.status!r})")


def _samples(log: Path, header: EvalLog) -> Iterator[EvalSample]:
    from inspect_ai.log import read_eval_log_samples

    if log.suffix == ".json":
        yield from _json_samples(log)
        return
    if header.eval.dataset.sample_ids is None:
        raise DataError(
            "this log lists no sample ids (written by an old Inspect AI); rewrite it with "
            "`inspect log convert` and import the result",
            path=str(log),
        )
    try:
        yield from read_eval_log_samples(str(log), all_samples_required=False)
    except Exception as exc:  # a damaged member: name the log, not the reader's internals
        raise DataError(
            f"cannot read a sample ({type(exc).__name__}: {_first_line(exc)})", path=str(log)
        ) from None


def _json_samples(log: Path) -> Iterator[EvalSample]:
    import pydantic
    from inspect_ai.log import EvalSample

    ijson = optional("ijson", _WHAT)
    with log.open("rb") as fh:
        try:
            for index, raw in enumerate(ijson.items(fh, "samples.item", use_float=True)):
                try:
                    yield EvalSample.model_validate(raw)
                except pydantic.ValidationError as exc:
                    error = exc.errors()[0]
                    loc = ".".join(str(p) for p in error["loc"])
                    raise DataError(
                        f"not an Inspect AI sample: {error['msg']}",
                        path=str(log),
                        field=f"samples[{index}].{loc}",
                    ) from None
        except ijson.JSONError as exc:
            raise DataError(f"malformed JSON: {exc}", path=str(log)) from None


def _import_sample(
    sample: EvalSample, system: str, where: Where, writer: TableWriter, several_epochs: bool
) -> None:
    if sample.error is not None:
        raise Skip("the sample ended in an error (sample.error)")
    if sample.output is None or not sample.output.choices:
        raise Skip("no output (sample.output has no choices)")
    item_id = f"{sample.id}#{sample.epoch}" if several_epochs else str(sample.id)
    prompt = _prompt(sample.input, sample.choices)
    target = sample.target
    reference = "\n".join(target) if isinstance(target, list) else target
    strata = writer.strata(sample.metadata, "sample metadata")
    writer.item(item_id, prompt, where, reference=reference or None, strata=strata)
    usage = sample.output.usage
    cost = getattr(usage, "total_cost", None) if usage is not None else None
    writer.response(
        item_id,
        system,
        sample.output.completion,
        where,
        latency_s=sample.total_time,
        cost_usd=cost,
        tokens=usage.output_tokens if usage is not None else None,
    )


def _prompt(value: Any, choices: list[str] | None) -> str | list[dict[str, str]]:
    if isinstance(value, str):
        messages = [{"role": "user", "content": value}]
    else:
        messages = []
        for message in value:
            if message.role not in _ROLES:
                raise Skip(
                    f"the input holds a {message.role} message (only system, user, assistant)"
                )
            if not isinstance(message.content, str) and any(
                getattr(part, "type", "text") not in ("text", "reasoning")
                for part in message.content
            ):
                raise Skip("the input holds images, audio or other non-text content")
            messages.append({"role": message.role, "content": message.text})
    if not messages or messages[-1]["role"] != "user":
        raise Skip("the input does not end with the user's turn")
    if choices:
        letters = string.ascii_uppercase
        lines = "\n".join(f"{letters[i]}) {choice}" for i, choice in enumerate(choices[:26]))
        messages[-1] = {"role": "user", "content": f"{messages[-1]['content']}\n\n{lines}"}
    if len(messages) == 1:
        return messages[0]["content"]
    return messages


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else "no message"
