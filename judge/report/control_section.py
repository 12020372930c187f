"""Results, continued: each system's win rate with the judge's taste for long (and formatted)
answers taken out, beside the raw one (`compare.control`; `calibration.style_control`)."""

from __future__ import annotations

from judge.report.blocks import Block, Bullets, Heading, Para, Table
from judge.report.format import count, interval, label, level, num, pct, points
from judge.summary.controlled import Controlled

_NAMES = {"length": "length", "markdown": "markdown (headers, lists, bold)"}


def control_section(controlled: Controlled | None) -> list[Block]:
    if controlled is None:
        return []
    ci = level(controlled.level)
    against = (
        f"against {controlled.baseline}" if controlled.baseline else "against all the others it met"
    )
    coefficients = [c for c in ("length", "headers", "lists", "bold") if _used(controlled, c)]
    blocks: list[Block] = [
        Heading("Controlled for " + " and ".join(_NAMES[c] for c in controlled.controls), 3),
        Para(
            f"Each system's win rate {against}, and what it would be if its responses were as "
            "long"
            + (" and as formatted" if "markdown" in controlled.controls else "")
            + f" as its opponents' ({ci} intervals from {count(controlled.resamples)} "
            f"resamples of items, seed {count(controlled.seed)}, the model refitted on each). "
            "A controlled rate well below the raw one: the system won on style. The judge's "
            "length preference is the slope of the length term (logits; none at zero, positive: "
            "longer wins)."
        ),
    ]
    header = ["system", "win rate", "controlled", "shift"]
    header += [f"{c} slope" for c in coefficients]
    rows = [
        [
            label(r.system),
            interval(r.win_rate, r.win_low, r.win_high, pct),
            interval(r.controlled, r.ci_low, r.ci_high, pct),
            interval(r.shift, r.shift_low, r.shift_high, points),
            *(num(r.coefficients.get(c), 2) for c in coefficients),
        ]
        for r in controlled.systems
    ]
    blocks.append(Table(header, rows))
    few = [
        f"{label(r.system)}'s controlled rate rests on {count(r.items)} items, fewer "
        "than fifty: its interval covers less than its level there (docs: Statistics, coverage)."
        for r in controlled.systems
        if r.items < MIN_COVERED_ITEMS
    ]
    if controlled.notes or few:
        blocks.append(Bullets([f"Note: {n}" for n in (*controlled.notes, *few)]))
    blocks.append(
        Bullets(
            [f"Model: {controlled.formula}."] + [f"Assumes {a}." for a in controlled.assumptions]
        )
    )
    return blocks


MIN_COVERED_ITEMS = 50
"""Items from which the controlled rate's BCa interval covered at its level (96.5% at 50 and
96.3% at 100 for a strong system with longer answers; 90.8% at 30: scripts/coverage_lc.py)."""


def _used(controlled: Controlled, name: str) -> bool:
    return any(name in r.coefficients for r in controlled.systems)
