"""Panels of judges (`judge panels`): judges' verdicts and reference labels read from JSONL,
CSV or Parquet tables (`panels_from_tables`) or from a finished run with several judges and
human labels (`panels_from_run`), checked, and handed to `calibration.panels`. The CLI is a
thin edge over the two."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import pandas as pd

from calibration.panels import PanelFrontier, panel_frontier
from judge.analysis.verdict_tables import load_table
from judge.errors import ConfigError, DataError

VERDICT_COLUMNS = ("unit", "judge", "label")
REFERENCE_COLUMNS = ("unit", "label")


def _checked(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    table = load_table(path)
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise DataError(
            f"missing column {missing[0]!r} (needed: {', '.join(columns)}; found: "
            f"{', '.join(map(str, table.columns)) or 'none'})",
            path=str(path),
            field=missing[0],
        )
    return table


def panels_from_tables(
    verdicts: Path,
    reference: Path,
    costs: Mapping[str, float],
    *,
    max_size: int = 3,
    aggregate: Literal["majority", "mean"] = "majority",
    resamples: int = 2000,
    seed: int = 0,
) -> PanelFrontier:
    """`verdicts`: one row per judge and unit (unit, judge, label; an empty label is an
    abstention); `reference`: one row per unit (unit, label). `costs`: per judge, per unit
    judged (a judge not named has an unknown cost, never 0). `aggregate`: `mean` for scores
    (every label a number)."""
    table = _checked(verdicts, VERDICT_COLUMNS)
    ref = _checked(reference, REFERENCE_COLUMNS)
    twice = ref["unit"].duplicated()
    if twice.any():
        row = int(twice.to_numpy().argmax())
        raise DataError(
            f"unit {ref['unit'].iloc[row]!r} has two reference labels; give one per unit",
            path=str(reference),
            row=row + 1,
            field="unit",
        )
    pairs = table[["unit", "judge"]].astype(str).duplicated()
    if pairs.any():
        row = int(pairs.to_numpy().argmax())
        raise DataError(
            f"judge {table['judge'].iloc[row]!r} has two verdicts on unit "
            f"{table['unit'].iloc[row]!r}",
            path=str(verdicts),
            row=row + 1,
            field="judge",
        )
    if aggregate == "mean":
        for path, frame in ((verdicts, table), (reference, ref)):
            numbers = pd.to_numeric(frame["label"], errors="coerce")
            bad = numbers.isna() & frame["label"].notna()
            if bad.any():
                row = int(bad.to_numpy().argmax())
                raise DataError(
                    f"{frame['label'].iloc[row]!r} is not a score (--aggregate mean averages "
                    "numbers)",
                    path=str(path),
                    row=row + 1,
                    field="label",
                )
            frame["label"] = numbers
    labelled = ref.dropna(subset=["label"])
    values = labelled["label"] if aggregate == "mean" else labelled["label"].astype(str)
    gold = dict(zip(labelled["unit"].astype(str), values, strict=True))
    known = {str(j) for j in table["judge"].unique()}
    unknown = sorted(set(costs) - known)
    if unknown:
        raise DataError(
            f"--cost names {', '.join(unknown)}, which has no verdict (judges: "
            f"{', '.join(sorted(known))})",
            path=str(verdicts),
            field="judge",
        )
    rows = table.assign(unit=table["unit"].astype(str), judge=table["judge"].astype(str))
    return panel_frontier(
        rows,
        gold,
        {j: costs.get(j) for j in known},
        max_size=max_size,
        aggregate=aggregate,
        resamples=resamples,
        seed=seed,
    )


def panels_from_run(
    run_dir: Path,
    human: Path | None = None,
    *,
    max_size: int = 3,
    resamples: int = 2000,
    seed: int = 0,
    same_family: bool = False,
) -> tuple[PanelFrontier, list[str], dict[str, float | int | None] | None]:
    """`judge panels --run RUN_DIR`: the run's judges (each on its own, not the run's panel)
    on the pairs humans labelled (`judge.analysis.run_verdicts`), costs as measured. Unless
    `same_family`, a panel may not hold a judge of the same family as any of the run's
    systems (the cross-family rule). Returns the frontier, notes on what was left out, and
    the human ceiling the run measured (None without one)."""
    from judge.analysis.run_verdicts import read_run_verdicts

    run = read_run_verdicts(run_dir, human)
    notes = list(run.notes)
    own = set() if same_family else set(run.own_family)
    judges = set(run.verdicts["judge"])
    if own >= judges:
        raise ConfigError(
            "every judge of this run shares a family with a judged system: no panel is allowed "
            "(--same-family to compare them anyway)"
        )
    if own & judges:
        notes.append(
            f"cross-family rule: no panel holds {', '.join(sorted(own & judges))} (the family "
            "of a judged system); --same-family allows it"
        )
    frontier = panel_frontier(
        run.verdicts[["unit", "judge", "label"]],
        run.reference,
        run.costs,
        max_size=max_size,
        allowed=lambda combo: own.isdisjoint(combo),
        resamples=resamples,
        seed=seed,
    )
    return frontier, notes, run.ceiling
