"""A finished run's judges, one by one, on its pairs, beside the human labels: what `judge
panels --run` and `judge cascade` choose judges from.

A unit is a pair of systems on an item, its systems in name order; a label is the pair's winner
as `judge calibrate` codes it (`a`: the first system, `b`, `tie`), so neither the presentation
order nor the judgments files' orientation matters. Each judge's confidence in its label is the
agreement of its two orders: 1 when both orders gave it, 0.5 when only one order has a verdict,
0 when the orders disagreed (the label is then the run's `aggregate.inconsistent` rule's).
Costs are measured: each judge's cost per paid reply (`summary.json` costs) times the replies a
unit takes (one per order); unknown (None) when its price is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from judge.errors import DataError

UNIT = ["item_id", "system_a", "system_b"]


@dataclass(frozen=True)
class RunVerdicts:
    verdicts: pd.DataFrame
    """One row per judge and unit: unit, judge, label (None: no verdict), confidence,
    item_id, system_a, system_b."""
    reference: dict[str, str]
    """unit -> the humans' label (their majority)."""
    costs: dict[str, float | None]
    """judge -> cost per unit (every order), None when unknown."""
    own_family: frozenset[str]
    """Judges of the same family as a judged system (the cross-family rule keeps them out)."""
    ceiling: dict[str, float | int | None] | None = None
    """The human ceiling the run's calibration measured (annotators' alpha with each other on
    the pairs labelled twice or more: alpha, ci_low, ci_high, pairs); None without one."""
    notes: list[str] = field(default_factory=list)


def read_run_verdicts(run_dir: Path, human: Path | None = None) -> RunVerdicts:
    """The run's judges (not its panel) and `human` labels, else the labels the run is
    calibrated against. Several annotators on a unit: their majority; a unit they split evenly
    is left out and counted in `notes`."""
    from calibration.label_tables import normalise
    from calibration.labels import LabelError
    from judge.analysis.table_analysis import label_error
    from judge.analysis.verdict_tables import judgment_table, load_labels, required_labels
    from judge.families import family_of, judge_family
    from judge.store.rundir import RunDir
    from judge.summary.run_summary import RunSummary
    from judge.types import PANEL

    rundir = RunDir(run_dir)
    config = rundir.stored_config()
    human = required_labels(rundir, config, human, "--reference")
    if not rundir.summary_file.exists():
        raise DataError("the run has no summary.json yet: finish it first", path=str(run_dir))
    table = judgment_table(rundir)
    if "winner" not in table.columns or "system_a" not in table.columns:
        raise DataError(
            "choosing judges needs pairwise judgments (winners); this run scored responses",
            path=str(run_dir),
        )
    table = table[table["judge"] != PANEL].reset_index(drop=True)
    try:
        judged = normalise(table[[*UNIT, "winner", "judge"]], "pairwise", "judge")
        labels = normalise(load_labels(human), "pairwise", "human")
    except LabelError as exc:
        raise label_error(exc, judge=run_dir, human=human) from None
    judged["unit"] = judged[UNIT].agg("|".join, axis=1)
    labels["unit"] = labels[UNIT].agg("|".join, axis=1)
    # numpy bools without a null in the column, Python ones (and None) with: read as booleans.
    consistent = table["consistent"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    orders = table["orders"].to_numpy()
    judged["confidence"] = [
        0.0 if label is None else 1.0 if c else 0.5 if o == 1 else 0.0
        for label, c, o in zip(judged["label"], consistent, orders, strict=True)
    ]
    votes = labels.groupby(["unit", "label"]).size().unstack(fill_value=0)
    clear = votes.eq(votes.max(axis=1), axis=0).sum(axis=1) == 1
    notes = []
    if (~clear).any():
        notes.append(
            f"{int((~clear).sum())} labelled units left out: their annotators split evenly"
        )
    summary = RunSummary.from_dict(json.loads(rundir.summary_file.read_text()))
    per_unit = 2 if config.orders == "both" else 1
    measured = {} if summary.costs is None else summary.costs.judges
    costs = {
        judge: None
        if judge not in measured or measured[judge].cost_per_1k_usd is None
        else measured[judge].cost_per_1k_usd / 1000 * per_unit
        for judge in judged["judge"].unique()
    }
    families = {
        family_of(s, config.families) for s in set(judged["system_a"]) | set(judged["system_b"])
    }
    own = frozenset(
        spec.model for spec in config.judges if judge_family(spec, config.families) in families
    )
    calibration = None if summary.analysis is None else summary.analysis.calibration
    ceiling = None if calibration is None else calibration.overall.ceiling
    return RunVerdicts(
        verdicts=judged[["unit", "judge", "label", "confidence", *UNIT]],
        reference=votes[clear].idxmax(axis=1).to_dict(),
        costs=costs,
        own_family=own,
        ceiling=None
        if ceiling is None
        else {
            "alpha": ceiling.human_alpha.value,
            "ci_low": ceiling.human_alpha.ci_low,
            "ci_high": ceiling.human_alpha.ci_high,
            "pairs": ceiling.keys,
        },
        notes=notes,
    )
