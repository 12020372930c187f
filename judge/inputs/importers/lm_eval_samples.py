"""lm-evaluation-harness `--log_samples` files (`samples_<task>_<date>.jsonl`) -> items and
responses.

`lm_eval --output_path OUT --log_samples` writes, per model, `OUT/<model>/results_<date>.json`
and one `samples_<task>_<date>.jsonl` per task: a line per document (`doc_id`, `doc`, `target`,
`arguments`, `resps`, `filtered_resps`, `filter`, ...). Each document is an item `<task>/<doc_id>`
(its prompt the request's first argument, as the harness sent it, few-shot examples included;
its `target` the reference; its task a stratum). Each results directory's model is a system
(`model_name` of the `results_<date>.json` beside the samples, else the directory's name), and
the generated text (`resps`, before the task's filters extract an answer from it) the
response.

Only generation tasks (`generate_until`) have text to judge: a loglikelihood request (multiple
choice, perplexity) is skipped and counted. A task with several filters repeats each document
once per filter with the same generation: the repeats are counted, not imported twice.
Files are read line by line.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judge.errors import DataError
from judge.inputs.importers.source_records import json_chat, jsonl_records
from judge.inputs.importers.written_tables import Skip, TableWriter, Where

_SAMPLES = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl")


def import_lm_eval(paths: Sequence[Path], out: Path) -> TableWriter:
    """Read the samples files at `paths` (files, or results directories searched for
    `samples_*.jsonl`) into tables in `out`."""
    files = _sample_files(paths)
    systems = {path: _system(path) for path in files}
    _one_file_per_task(files, systems)
    with TableWriter(out, "lm-eval", files) as writer:
        for path in files:
            _read_file(path, systems[path], writer)
    return writer


def _sample_files(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("samples_*.jsonl") if _SAMPLES.fullmatch(p.name))
            if not inside:
                raise DataError(
                    "no samples_<task>_<date>.jsonl files in this directory: run lm_eval with "
                    "--log_samples",
                    path=str(path),
                )
            found += inside
        elif not path.is_file():
            raise DataError("file not found", path=str(path))
        elif not _SAMPLES.fullmatch(path.name):
            raise DataError(
                "not an lm-evaluation-harness samples file: expected samples_<task>_<date>.jsonl "
                "(lm_eval --log_samples)",
                path=str(path),
            )
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def _system(samples: Path) -> str:
    """The model of a samples file: `model_name` in the results file of the same run (same
    date), else in the directory's only results file, else the directory's name (the
    harness names it after the model)."""
    date = _SAMPLES.fullmatch(samples.name)["date"]  # type: ignore[index]
    same_run = samples.parent / f"results_{date}.json"
    candidates = [same_run] if same_run.is_file() else sorted(samples.parent.glob("results_*.json"))
    if len(candidates) == 1:
        try:
            name = json.loads(candidates[0].read_text(encoding="utf-8")).get("model_name")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            name = None
        if isinstance(name, str) and name.strip():
            return name
    return samples.parent.name


def _one_file_per_task(files: list[Path], systems: dict[Path, str]) -> None:
    seen: dict[tuple[str, str], Path] = {}
    for path in files:
        key = (systems[path], _SAMPLES.fullmatch(path.name)["task"])  # type: ignore[index]
        if key in seen:
            raise DataError(
                f"a second samples file of task {key[1]!r} for model {key[0]!r} (also "
                f"{seen[key]}): import one run of each task",
                path=str(path),
            )
        seen[key] = path


def _read_file(path: Path, system: str, writer: TableWriter) -> None:
    task = _SAMPLES.fullmatch(path.name)["task"]  # type: ignore[index]
    generations: dict[int, bytes] = {}
    for where, record in jsonl_records(path, "sample"):
        try:
            _import_doc(record, task, system, where, writer, generations)
        except Skip as skip:
            writer.skip(skip.reason)


def _import_doc(
    record: Mapping[str, Any],
    task: str,
    system: str,
    where: Where,
    writer: TableWriter,
    generations: dict[int, bytes],
) -> None:
    doc_id = record.get("doc_id")
    if not isinstance(doc_id, int) or isinstance(doc_id, bool):
        raise where.error(f"expected the document's number, found {doc_id!r}", "doc_id")
    prompt, output = _generation(record, where)
    digest = hashlib.blake2b(output.encode(), digest_size=16).digest()
    if doc_id in generations:
        if generations[doc_id] != digest:
            raise where.error(
                f"document {doc_id} appears twice with different generations: one samples "
                "file holds one generation per document",
                "resps",
            )
        raise Skip("the same generation repeated for another filter")
    generations[doc_id] = digest
    item_id = f"{task}/{doc_id}"
    target = record.get("target")
    reference = target if isinstance(target, str) else None
    if target is not None and reference is None and not isinstance(target, int | list):
        writer.note(f"task {task}: a target that is not text is not used as a reference")
    writer.item(item_id, prompt, where, reference=reference, strata={"task": task})
    writer.response(item_id, system, output, where)


def _generation(record: Mapping[str, Any], where: Where) -> tuple[str | list[dict[str, str]], str]:
    """(prompt, generated text) of a generation request; `Skip` for a loglikelihood one."""
    arguments = record.get("arguments")
    # The harness writes {"gen_args_0": {"arg_0": context, "arg_1": ...}}; versions before
    # 0.4.3 a list of [context, ...] lists.
    if isinstance(arguments, Mapping):
        first = next(iter(arguments.values()), None)
        args = list(first.values()) if isinstance(first, Mapping) else None
        requests = len(arguments)
    elif isinstance(arguments, list) and arguments and isinstance(arguments[0], list):
        args, requests = arguments[0], len(arguments)
    else:
        args, requests = None, 0
    if not args or not isinstance(args[0], str):
        raise where.error("expected the request's arguments (context first)", "arguments")
    if requests > 1 or len(args) < 2 or not isinstance(args[1], Mapping):
        raise Skip("a loglikelihood request (multiple choice or perplexity): no text generated")
    resps = record.get("resps")
    generated = (
        resps[0][0]
        if isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0]
        else None
    )
    if not isinstance(generated, str):
        raise where.error("expected the generated text in resps[0][0]", "resps")
    chat = json_chat(args[0])
    return (chat if chat is not None and chat[-1]["role"] == "user" else args[0]), generated
