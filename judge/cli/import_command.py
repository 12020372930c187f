"""`judge import KIND SOURCE --out DIR`: another tool's output files read into the project's
items and responses tables (or, for OpenAI Evals testing criteria, into rubric YAML files),
registered on the main CLI in `judge/cli/main.py`; the library loads inside the command."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer


class ImportKind(StrEnum):
    inspect = "inspect"
    promptfoo = "promptfoo"
    lm_eval = "lm-eval"
    hf = "hf"
    openai_evals = "openai-evals"


def import_command(
    kind: Annotated[
        ImportKind,
        typer.Argument(
            help="inspect (Inspect AI logs), promptfoo (results .json/.jsonl), lm-eval "
            "(--log_samples files or results dirs), hf (a Hugging Face dataset), openai-evals "
            "(testing_criteria JSON, written as rubrics)."
        ),
    ],
    source: Annotated[
        list[str],
        typer.Argument(help="Files or directories; for hf one hf://org/name@revision:split."),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", help="Directory to write the tables (openai-evals: rubrics) into."),
    ],
    column: Annotated[
        list[str] | None,
        typer.Option(
            help="hf: KEY=COLUMN, KEY one of item_id, prompt, reference, system, output "
            "(repeatable; prompt and output required)."
        ),
    ] = None,
    system: Annotated[
        str | None, typer.Option(help="hf: the system's name when no column names it.")
    ] = None,
    stratum: Annotated[
        list[str] | None, typer.Option(help="hf: a column kept as a stratum (repeatable).")
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option(help="hf: the Hugging Face cache (default: HF_HOME's).")
    ] = None,
    prompt_field: Annotated[
        list[str] | None,
        typer.Option(help="openai-evals: an item field that is the prompt (repeatable)."),
    ] = None,
    reference_field: Annotated[
        list[str] | None,
        typer.Option(help="openai-evals: an item field that is the reference (repeatable)."),
    ] = None,
) -> None:
    """Read another tool's output into items and responses tables (OUT/items.jsonl,
    OUT/responses.jsonl, OUT/import_report.json) that a run config names as data.items and
    data.responses; print what was written and what was skipped, and why. openai-evals writes
    one rubric YAML per testing criterion that maps to a judge rubric and lists those that do
    not."""
    if kind is ImportKind.openai_evals:
        _import_rubrics(source, out, prompt_field, reference_field)
        return
    if prompt_field or reference_field:
        raise typer.BadParameter("only for openai-evals", param_hint="--prompt-field")
    from judge.inputs.importers import import_tables

    report = import_tables(_source(kind, source, column, system, stratum, cache_dir), out)
    for line in report.lines():
        typer.echo(line)


def _source(
    kind: ImportKind,
    source: list[str],
    column: list[str] | None,
    system: str | None,
    stratum: list[str] | None,
    cache_dir: Path | None,
) -> Any:
    """The `data.source` these arguments stand for, checked as a config's would be."""
    from pydantic import ValidationError

    from judge.config.import_source import ImportSource
    from judge.config.run_config import format_validation_error
    from judge.errors import ConfigError

    raw: dict[str, Any] = {"kind": kind.value}
    if kind is ImportKind.hf:
        if len(source) != 1:
            raise typer.BadParameter("hf reads one dataset: hf://org/name@revision:split")
        raw["dataset"] = source[0]
    else:
        raw["path"] = [str(Path(p).absolute()) for p in source]
    if column:
        raw["columns"] = dict(_pair(text) for text in column)
    for key, value in (("system", system), ("strata", stratum), ("cache_dir", cache_dir)):
        if value:
            raw[key] = value
    try:
        return ImportSource.model_validate(raw)
    except ValidationError as exc:
        problem = format_validation_error(exc, ImportSource)
        # The config's keys, as these options spell them.
        for key, option in (("columns", "--column"), ("strata", "--stratum"), ("path", "SOURCE")):
            problem = problem.replace(key, option)
        raise ConfigError(f"judge import {kind.value}: {problem}") from None


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise typer.BadParameter(f"{text!r}: expected KEY=COLUMN", param_hint="--column")
    return key.strip(), value.strip()


def _import_rubrics(
    source: list[str], out: Path, prompt: list[str] | None, reference: list[str] | None
) -> None:
    from judge.errors import ConfigError
    from judge.inputs.importers.openai_criteria import (
        PROMPT_FIELDS,
        REFERENCE_FIELDS,
        import_rubrics,
    )
    from judge.rubric import load_rubric

    if len(source) != 1:
        raise typer.BadParameter("openai-evals reads one testing_criteria JSON file")
    report = import_rubrics(
        Path(source[0]),
        out,
        prompt_fields=prompt or PROMPT_FIELDS,
        reference_fields=reference or REFERENCE_FIELDS,
    )
    for written in report.written:
        try:
            load_rubric(written.path)
        except ConfigError as exc:  # a mapping this importer got wrong: say which file
            raise ConfigError(f"{written.path}: the imported rubric does not load: {exc}") from None
    for line in report.lines():
        typer.echo(line)
