"""What `judge migrate` gives the run lifecycle: the chosen items' rows of the old run's input
tables (streamed, one pass over each) and the new run's config, the old one with its judges
replaced (`judge.run.migrate_run`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.config.new_judge import NewJudgeConfig
from judge.config.run_config import RunConfig, format_validation_error
from judge.errors import ConfigError, DataError
from judge.families import check_pairs_judgeable, judge_family

_MAX_NAME = 120


class _AnyItem:
    """Every item id is known (the old run checked its responses against its items); the
    responses are kept or left out by the chosen items afterwards."""

    def among(self, ids: set[str]) -> set[str]:
        return ids


def write_subset(
    config: RunConfig, chosen: frozenset[str], items_file: Path, responses_file: Path
) -> tuple[int, int]:
    """The chosen items' rows of the run's items and responses tables, as JSONL with the
    pipeline's column names (the same rows, read by the same readers, written in file
    order, so the same choice writes the same bytes and a second migrate finds the run
    prepared). Streamed: a row is read, kept or dropped, and written; only the ids of the
    rows seen stay in memory (the readers' duplicate check). Returns (items, responses)."""
    from judge.files import write_jsonl
    from judge.inputs.tables import iter_items, iter_responses

    items_path, responses_path = config.data.items, config.data.responses
    if items_path is None or responses_path is None:
        raise DataError(
            "this run's data came from data.source: judge migrate needs the items and "
            "responses tables (run `judge import` and give them as data.items, data.responses)"
        )
    columns = config.data.columns or None
    counts = {"items": 0, "responses": 0}

    def items() -> Iterator[dict[str, Any]]:
        for item in iter_items(items_path, columns=columns):
            if item.item_id in chosen:
                counts["items"] += 1
                record = item.model_dump(mode="json", exclude={"strata"}, exclude_none=True)
                yield {**item.strata, **record}

    def responses() -> Iterator[dict[str, Any]]:
        rows = iter_responses(
            responses_path,
            _AnyItem(),
            allow_empty_outputs=config.data.allow_empty_outputs,
            columns=columns,
        )
        for response in rows:
            if response.item_id in chosen:
                counts["responses"] += 1
                record = response.model_dump(mode="json", exclude_none=True)
                if not record.get("context"):
                    record.pop("context", None)
                yield record

    items_file.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(items_file, items())
    if counts["items"] < len(chosen):
        raise DataError(
            f"{len(chosen) - counts['items']} of the {len(chosen)} chosen items are no longer "
            "in the run's items table: it changed since the run; restore it",
            path=str(items_path),
        )
    write_jsonl(responses_file, responses())
    return counts["items"], counts["responses"]


def check_families(
    config: RunConfig, new: NewJudgeConfig, pairs: list[tuple[str, str]], source: Path
) -> None:
    """The old run's family rules for the new judge: without `allow_same_family`, a judge of
    a compared system's family cannot judge that pair (self-preference)."""
    try:
        check_pairs_judgeable(
            pairs,
            [new.judge],
            allow_same_family=config.allow_same_family,
            overrides=config.families,
        )
    except ConfigError as exc:
        family = judge_family(new.judge, config.families)
        raise ConfigError(
            f"{source}: judges.0 ({new.judge.model}, family {family}): {exc}; the old run "
            "does not allow same-family judges, so choose a judge of another family (or set "
            "judges.0.family if it is inferred wrongly)"
        ) from None


def migrate_config(
    config: RunConfig,
    new: NewJudgeConfig,
    *,
    items_file: Path,
    responses_file: Path,
    labels: Path | None,
    source: Path,
) -> RunConfig:
    """The old run's config for the new judge on the chosen items: its judges replaced, its
    data the subset files, its calibration against `labels`; what concerns only the old judge
    (the published verdicts it reproduced), the old decision (its gates, the style control)
    or other requests (canaries) left out. Validated as any run config, errors naming
    `source` (NEW.yaml: what it adds is what can be wrong)."""
    raw = config.model_dump(mode="python")
    raw["name"] = f"{config.name[:_MAX_NAME]}-migrate"
    raw["data"].update(items=items_file, responses=responses_file, columns={})
    if "source" in raw["data"]:
        raw["data"]["source"] = None
    raw["judges"] = [new.judge.model_dump(mode="python")]
    raw["simulator"] = None if new.simulator is None else new.simulator.model_dump()
    raw["calibration"].update(human=labels, published=None)
    raw["compare"].update(gates=[], control=[])
    raw["canaries"] = None
    try:
        return RunConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {format_validation_error(exc)}") from None
