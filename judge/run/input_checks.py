"""Every input a run reads after judging, checked before the first request is sent: the human
labels and the published verdicts (`calibration.human`, `calibration.published`), the gates,
and the strata the comparison and the calibration split by. A misspelt column found after the
judges were paid costs the whole run; found here it costs a second (issue 31).

What can only be known from the verdicts (a gate's outcome, a stratum too small) is left to
the analysis."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import pandas as pd

from judge.config.run_config import RunConfig
from judge.errors import ConfigError, DataError


def check_run_inputs(
    config: RunConfig, kind: str, systems: Sequence[str], item_columns: Collection[str]
) -> None:
    """Raise `ConfigError` or `DataError` (naming the key, file, row and column) for the first
    input of `config` the analysis would refuse. `kind`: the rubric's; `systems`: those
    evaluated; `item_columns`: the items' strata columns."""
    _check_gates(config.compare.gates, systems, scores=kind == "absolute")
    for column in config.compare.strata:
        if column not in item_columns:
            raise ConfigError(
                f"compare.strata: {column!r} is not an item column; the items have: "
                f"{_listed(item_columns)}"
            )
    labels = _labels(config.calibration.human, kind, systems)
    label_columns = set() if labels is None else set(labels.columns)
    for column in config.calibration.strata:
        if column not in item_columns and column not in label_columns:
            where = f"the items have: {_listed(item_columns)}"
            if labels is not None:
                where += f"; {config.calibration.human} has: {_listed(label_columns)}"
            raise ConfigError(
                f"calibration.strata: {column!r} is a column of neither the items nor the "
                f"labels; {where}"
            )
    if config.calibration.published is not None:
        _published(config.calibration.published)


def _check_gates(gates: Sequence[str], systems: Sequence[str], *, scores: bool) -> None:
    from calibration.gates import GateError, GateSyntaxError, check_gates

    try:
        check_gates(gates, systems, scores=scores)
    except GateSyntaxError as exc:
        raise ConfigError(f"compare.gates: {exc}\n{exc.pointer}") from None
    except GateError as exc:
        raise ConfigError(f"compare.gates: {exc}") from None


def _labels(path: Path | None, kind: str, systems: Sequence[str]) -> pd.DataFrame | None:
    """The human labels, checked as the calibration reads them, of the rubric's kind, and
    naming the run's systems (a table of other systems joins nothing)."""
    if path is None:
        return None
    from calibration.kinds import table_kind
    from judge.analysis.table_analysis import checked_labels

    table = checked_labels(path)
    told, column = table_kind(table)
    wanted = "pairwise" if kind == "pairwise" else "absolute"
    if told is not None and told != wanted:
        raise DataError(
            f"the labels are {told} (column {column!r}) but the rubric is {kind}: give "
            + (
                "item_id, system_a, system_b, winner"
                if kind == "pairwise"
                else "item_id, system, score"
            ),
            path=str(path),
        )
    named = _label_systems(table)
    if named and not named & set(systems):
        raise DataError(
            f"the labels name systems {_listed(named, 6)}, none of which this run evaluates "
            f"({_listed(systems, 6)}): check the system names (data.columns maps the "
            "responses' own column, not the labels')",
            path=str(path),
        )
    return table


def _label_systems(table: pd.DataFrame) -> set[str]:
    columns = [c for c in ("system", "system_a", "system_b") if c in table.columns]
    return {str(v) for c in columns for v in table[c].dropna().unique()}


def _published(path: Path) -> None:
    """The published verdicts, read as the literature check reads them (a judge table)."""
    from calibration.labels import LabelError, normalise
    from judge.analysis.table_analysis import label_error
    from judge.analysis.verdict_tables import load_table

    try:
        normalise(load_table(path), "pairwise", "judge")
    except LabelError as exc:
        error = label_error(exc, judge=path, human=None)
        raise DataError(
            f"calibration.published: {error.detail}",
            path=error.path,
            row=error.row,
            field=error.field,
        ) from None


def _listed(names: Collection[str], most: int = 20) -> str:
    shown = sorted(names)
    if not shown:
        return "(none)"
    more = f" and {len(shown) - most} more" if len(shown) > most else ""
    return ", ".join(shown[:most]) + more
