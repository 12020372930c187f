"""`judge cascade --run RUN_DIR`: the run's judges as a cascade with a guarantee
(`calibration.cascade`), calibrated on part of the run's human labels and checked on the rest:
which judge would decide how much of the run, how well the decided pairs agree with humans,
what it would cost against the strongest judge alone, and which pairs are left to humans.

The run has already paid every judge on every pair; the cascade says what the next run of the
same kind needs to pay, and which of this run's pairs the judges cannot settle at the target.
Its guarantee holds for pairs exchangeable with the labelled ones: labels chosen at random
(`judge label create --mode uniform`), not the active mode's most uncertain pairs first.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.special import ndtri

from calibration.cascade import Level, apply, calibrate
from calibration.correction import wilson
from calibration.panels import majority, panel_cost
from judge.analysis.run_verdicts import UNIT, RunVerdicts, read_run_verdicts
from judge.errors import ConfigError


@dataclass(frozen=True)
class CascadeLevel:
    judge: str
    threshold: float | None
    """Decides pairs whose confidence (agreement of its two orders) is at least this; None:
    decides none."""
    calibration_pairs: int
    """Labelled calibration pairs that reached this judge."""
    coverage: float
    """Share of the run's pairs this judge decides."""
    cost: float | None
    """Per pair asked (every order), as measured; None when unknown."""
    holdout_agreement: float | None
    """Agreement with humans on the held-out labelled pairs it decided."""
    holdout_decided: int
    reason: str | None = None
    """Why it decides nothing: too few labels to certify any threshold (with the count the
    first test needs), or a judge that disagrees too often even where it is surest."""


@dataclass(frozen=True)
class RunCascade:
    levels: tuple[CascadeLevel, ...]
    """Cheapest judge first."""
    target: float
    delta: float
    pairs: int
    """The run's pairs (units)."""
    humans: float
    """Share of the run's pairs left to humans."""
    agreement: float | None
    """Agreement with humans on the held-out labelled pairs the judges decided."""
    ci_low: float | None
    ci_high: float | None
    """95% Wilson interval of `agreement`."""
    holdout_decided: int
    holdout: int
    """Held-out labelled pairs (calibration used the others)."""
    cost: float | None
    """Per pair: the cascade (every judge a pair reaches is paid)."""
    strongest_cost: float | None
    """Per pair: the last (most expensive) judge alone, on every pair."""
    queue: tuple[dict[str, str], ...]
    """Pairs no judge decided and no human has labelled: item_id, system_a, system_b."""
    seed: int
    notes: tuple[str, ...]

    def to_dict(self) -> dict:
        return asdict(self)


def cascade_from_run(
    run_dir: Path,
    human: Path | None = None,
    *,
    target: float = 0.8,
    delta: float = 0.1,
    holdout: float = 0.5,
    order: list[str] | None = None,
    same_family: bool = False,
    seed: int = 0,
) -> RunCascade:
    """The cascade of the run's judges (`order`, else by measured cost, cheapest first; the
    judges of a judged system's family left out unless `same_family`), calibrated on
    1 - `holdout` of the labelled pairs (a seeded random split) and checked on the rest."""
    if not 0 < target < 1 or not 0 < delta < 1:
        raise ConfigError(f"--target and --delta must be in (0, 1), got {target} and {delta}")
    if not 0 < holdout < 1:
        raise ConfigError(f"--holdout must be in (0, 1), got {holdout}")
    run = read_run_verdicts(run_dir, human)
    notes = list(run.notes)
    judges = _ordered(run, order, same_family, notes)
    units = sorted(run.verdicts["unit"].unique())
    index = {u: i for i, u in enumerate(units)}
    levels = [_level(run, judge, index) for judge in judges]
    labelled = np.array([index[u] for u in sorted(run.reference) if u in index], dtype=int)
    if labelled.size < 10:
        raise ConfigError(
            f"only {labelled.size} of the run's pairs are labelled: a cascade is calibrated "
            "on at least 10 (a few hundred for a useful guarantee)"
        )
    human_labels = np.array([run.reference[units[i]] for i in labelled], dtype=object)
    shuffled = np.random.default_rng(seed).permutation(labelled.size)
    cut = round(labelled.size * (1 - holdout))
    if cut < 10 or cut == labelled.size:
        raise ConfigError(
            f"--holdout {holdout} of {labelled.size} labelled pairs leaves {cut} to calibrate "
            f"on and {labelled.size - cut} to check: each needs some (calibration at least 10)"
        )
    fit, check = shuffled[:cut], shuffled[cut:]
    cascade = calibrate(
        [lv.rows(labelled[fit]) for lv in levels], human_labels[fit], target=target, delta=delta
    )
    everywhere = apply(cascade, levels)
    held = apply(cascade, [lv.rows(labelled[check]) for lv in levels])
    decided = held.decided_by < len(levels)
    right = held.label[decided] == human_labels[check][decided]
    agreement = float(right.mean()) if right.size else None
    low, high = (None, None)
    if agreement is not None:
        low, high = wilson(agreement, right.size, float(ndtri(0.975)))
    out_levels = tuple(
        CascadeLevel(
            judge=lv.judge,
            threshold=cut_.threshold,
            calibration_pairs=cut_.calibration_items,
            coverage=everywhere.coverage[i],
            cost=lv.cost,
            holdout_agreement=(
                float((held.label[mine] == human_labels[check][mine]).mean())
                if (mine := held.decided_by == i).any()
                else None
            ),
            holdout_decided=int((held.decided_by == i).sum()),
            reason=cut_.reason,
        )
        for i, (lv, cut_) in enumerate(zip(levels, cascade.levels, strict=True))
    )
    for lv, cut_ in zip(levels[:-1], cascade.levels[:-1], strict=True):
        if cut_.threshold is None:
            notes.append(
                f"{lv.judge} decides nothing at this target, yet every pair reaches it and is "
                "paid for: leave it out (--order) unless more labels may change that"
            )
    left = set(np.flatnonzero(everywhere.decided_by == len(levels))) - set(labelled)
    rows = run.verdicts.drop_duplicates("unit").set_index("unit")
    queue = tuple({column: str(rows.at[units[i], column]) for column in UNIT} for i in sorted(left))
    return RunCascade(
        levels=out_levels,
        target=target,
        delta=delta,
        pairs=len(units),
        humans=float((everywhere.decided_by == len(levels)).mean()),
        agreement=agreement,
        ci_low=low,
        ci_high=high,
        holdout_decided=int(decided.sum()),
        holdout=int(check.size),
        cost=everywhere.cost,
        strongest_cost=levels[-1].cost,
        queue=queue,
        seed=seed,
        notes=tuple(notes),
    )


def _ordered(
    run: RunVerdicts, order: list[str] | None, same_family: bool, notes: list[str]
) -> list[str]:
    """The levels, cheapest first: judge names, or panels written `a+b+c`."""
    judges = sorted(set(run.verdicts["judge"]))
    if order:
        unknown = [j for level in order for j in level.split("+") if j not in judges]
        if unknown:
            raise ConfigError(
                f"--order names {', '.join(unknown)}, not a judge of this run "
                f"(judges: {', '.join(judges)})"
            )
        levels = list(dict.fromkeys(order))
    else:
        # Cheapest first; an unknown price after every known one (it may be the dearest).
        levels = sorted(
            judges, key=lambda j: (run.costs.get(j) is None, run.costs.get(j) or 0.0, j)
        )
    if not same_family:
        kept = [lv for lv in levels if run.own_family.isdisjoint(lv.split("+"))]
        if not kept:
            raise ConfigError(
                "every judge shares a family with a judged system (--same-family to use them)"
            )
        if len(kept) < len(levels):
            dropped = ", ".join(lv for lv in levels if lv not in kept)
            notes.append(f"cross-family rule: {dropped} left out (--same-family keeps it)")
        levels = kept
    return levels


def _level(run: RunVerdicts, level: str, index: dict[str, int]) -> Level:
    """One judge (its confidence the agreement of its two orders), or a panel (`a+b`): its
    label the members' majority (none without one), its confidence the share of members that
    gave that label with both orders agreeing (1: unanimous and consistent), its cost the
    members' added. No verdict: confidence -1, never enough to decide."""
    members = level.split("+")
    labels = np.full((len(members), len(index)), None, dtype=object)
    confidence = np.full((len(members), len(index)), -1.0)
    for m, judge in enumerate(members):
        rows = run.verdicts[run.verdicts["judge"] == judge]
        at = rows["unit"].map(index).to_numpy()
        labels[m, at] = rows["label"].to_numpy()
        confidence[m, at] = np.where(rows["label"].isna(), -1.0, rows["confidence"].to_numpy())
    cost = panel_cost(tuple(members), run.costs)
    if len(members) == 1:
        return Level(level, confidence[0], labels[0], cost)
    domain = sorted({lab for lab in labels.ravel() if lab is not None})
    code = {lab: i for i, lab in enumerate(domain)}
    codes = np.array([[code.get(lab, -1) for lab in member] for member in labels])
    chosen = majority(codes, tie=None)  # -1: no label, or no majority
    agreeing = (codes == chosen) & (confidence == 1.0)
    share = np.where(chosen >= 0, agreeing.mean(axis=0), -1.0)
    label = np.array([domain[c] if c >= 0 else None for c in chosen], dtype=object)
    return Level(level, share, label, cost)


def write_queue(cascade: RunCascade, path: Path) -> None:
    """The pairs left to humans, one JSON object per line."""
    with path.open("w", encoding="utf-8") as fh:
        for row in cascade.queue:
            fh.write(json.dumps(row) + "\n")
