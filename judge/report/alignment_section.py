"""The judge section, continued: what `judge align --rejudge` distilled from the judge's
disagreements with people, and the chosen rubric against the run's own verdicts on the
held-out items only (`judge.summary.alignment`)."""

from __future__ import annotations

from judge.report.blocks import Block, Bullets, Heading, Para, Table
from judge.report.format import count, counted, interval, label, level, pct, points, usd
from judge.summary.alignment import Gain, RubricAlignment


def alignment_section(alignment: RubricAlignment | None) -> list[Block]:
    if alignment is None:
        return []
    a = alignment
    blocks: list[Block] = [
        Heading("Aligning the judge", 3),
        Para(
            f"`judge align --rejudge` split the labelled items at random (seed {count(a.seed)}): "
            f"{count(a.train_items)} items ({count(a.train_keys)} comparisons) to fit on, "
            f"{count(a.heldout_items)} ({count(a.heldout_keys)}) held out. What {label(a.judge)} "
            "got wrong against people on the first became notes and examples in candidate "
            f"rubrics derived from {label(a.rubric_from)}; each judged the training items "
            "again, and only the chosen one judged the held-out items. Agreement is with the "
            f"people's majority label, {level(a.level)} intervals from {count(a.resamples)} "
            "resamples of items."
            + (
                " The judge is the simulator: how far it follows notes is planted (`heed`), so "
                "this shows the procedure, not a judge's improvement."
                if a.simulated
                else ""
            )
        ),
    ]
    if a.findings:
        blocks.append(Bullets([f"Found: {f.evidence}." for f in a.findings]))
    else:
        blocks.append(Para("No pattern of disagreement was significant on the training items."))
    rows = [
        [label(c.name), count(c.notes), count(c.examples), *_cells(c.train)] for c in a.candidates
    ]
    if rows:
        blocks.append(Table(["candidate (training items)", "notes", "examples", *_HEAD], rows))
    if a.heldout is not None and a.chosen is not None:
        blocks.append(
            Table(
                ["held-out items", *_HEAD, "trust gate before", "after"],
                [
                    [
                        label(a.chosen),
                        *_cells(a.heldout),
                        label(a.heldout.gate_before or "n/a"),
                        label(a.heldout.gate_after or "n/a"),
                    ]
                ],
            )
        )
        blocks.append(
            Para(f"The chosen rubric, a new version with its provenance: `{a.rubric_file}`.")
        )
    else:
        blocks.append(
            Para(
                "No candidate's gain on the training items had a lower bound above zero, so "
                "none was chosen and the held-out items were not judged again."
            )
        )
    if a.control is not None:
        held = a.control.heldout
        blocks.append(
            Para(
                "Control, the same on shuffled training labels: "
                f"{counted(len(a.control.findings), 'finding')}, chosen "
                f"{label(a.control.chosen or 'none')}"
                + (
                    f", held-out gain {interval(held.gain, held.gain_low, held.gain_high, points)}."
                    if held is not None
                    else "."
                )
            )
        )
    blocks.append(
        Para(
            f"The alignment's runs held {count(a.requests)} requests; cost "
            f"{usd(a.cost_usd, 4, 'unknown')}."
        )
    )
    return blocks


_HEAD = ["before", "after", "gain"]


def _cells(g: Gain | None) -> list[str]:
    if g is None:
        return ["not judged"] * 3
    return [
        interval(g.before.agreement, g.before.ci_low, g.before.ci_high, pct),
        interval(g.after.agreement, g.after.ci_low, g.after.ci_high, pct),
        interval(g.gain, g.gain_low, g.gain_high, points),
    ]
