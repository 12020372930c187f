"""The Judge section: how the judge behaved (position, length, ties, parse failures), how it
agrees with the humans, the trust gate, corrected estimates, the published verdicts, and
what it cost (`cost_section`)."""

from __future__ import annotations

from judge.report import plots
from judge.report.alignment_section import alignment_section
from judge.report.blocks import Block, Bullets, Details, Figure, Heading, Para, Table
from judge.report.cost_section import cost_blocks
from judge.report.format import count, counted, estimate, interval, level, pct, share, stratum_name
from judge.summary.run_summary import (
    Analysis,
    Calibration,
    JudgeBehaviour,
    Literature,
    RunSummary,
    TrustGate,
)


def judge_section(summary: RunSummary, analysis: Analysis) -> list[Block]:
    blocks: list[Block] = [Heading("Judge")]
    blocks.append(
        Table(
            [
                "judge",
                "position consistency",
                "first slot wins",
                "longer answer wins",
                "ties (single order)",
                "parse failures",
            ],
            [_behaviour_row(name, s) for name, s in summary.judges.items()],
        )
    )
    figure = plots.judge_bias(summary.judges)
    if figure:
        blocks.append(Figure("judge_bias", figure, "Position consistency and first-slot wins"))
    return (
        blocks + _agreement(analysis) + alignment_section(analysis.alignment) + cost_blocks(summary)
    )


def _agreement(analysis: Analysis) -> list[Block]:
    """How the judge agrees with the humans: the trust gate, corrected estimates, and the
    published verdicts."""
    calibration = analysis.calibration
    if calibration is None:
        return [Para("Not calibrated: no human labels (calibration.human) were given.")]
    blocks: list[Block] = []
    overall = calibration.overall
    m = overall.metrics
    ceiling = overall.ceiling
    join = calibration.join
    blocks.append(
        Para(
            f"{count(join.matched_labels)} of {count(join.human_labels)} human labels fall on "
            "judged pairs ("
            + counted(join.human_only.count, "labelled key was", "labelled keys were")
            + f" not judged); agreement on those {counted(overall.keys, 'key')}, "
            f"{level(calibration.confidence)} "
            f"intervals from {count(calibration.resamples)} resamples over keys"
            + (
                " (the human labels name no annotator: each label counts as its own)"
                if join.annotator_per_row
                else ""
            )
            + ":"
        )
    )
    if join.chosen_actively:
        blocks.append(
            Para(
                "These labels come from an active labelling task: pairs the judge was unsure "
                "of were drawn more often, with known probabilities. The corrected estimates "
                "weight each label by 1 / its probability; agreement is measured on the "
                "labelled pairs as drawn, harder than the run's average, so it errs low."
            )
        )
    if join.unknown_systems:
        blocks.append(
            Para(
                f"{count(join.unknown_system_labels)} human labels name systems this run never "
                f"judged ({', '.join(join.unknown_systems)}): they join nothing. The run's "
                f"systems: {', '.join(join.judge_systems)}."
            )
        )
    agreement = [
        [
            stratum_name(part.stratum),
            estimate(part.metrics["alpha"]),
            share(part.metrics["agreement_s1"]),  # type: ignore[arg-type]
            share(part.metrics["agreement_s2"]),  # type: ignore[arg-type]
            part.gate.verdict,
        ]
        for part in [overall, *calibration.strata]
        if "category" not in part.stratum
    ]
    blocks.append(
        Table(["stratum", "alpha", "agreement S1 (ties count)", "S2 (no ties)", "gate"], agreement)
    )
    items = [
        f"Cohen's kappa {estimate(m['kappa'])}",
        "Human ceiling: humans among themselves alpha "
        f"{estimate(ceiling.human_alpha if ceiling else None)}; the judge in a human's place "
        f"{estimate(ceiling.judge_alpha_loho if ceiling else None)}; gap "
        f"{estimate(ceiling.alpha_gap if ceiling else None)}",
    ]
    blocks.append(Bullets(items))
    blocks += _gate(calibration.gate)
    figure = plots.confusion(overall.confusion)
    if figure:
        blocks.append(Figure("confusion", figure, "Calibration confusion matrix"))
    blocks += _corrected(calibration)
    blocks += _literature(analysis.literature)
    return blocks


def _gate(gate: TrustGate) -> list[Block]:
    """The two questions apart, then what failed and what passed (never mixed)."""
    blocks: list[Block] = [
        Heading("Trust gate", 3),
        Para(
            f"Gate: {gate.verdict.upper()}. Can the judge stand in for a human? "
            f"{gate.stand_in.outcome}. Are the labels themselves reliable? "
            f"{gate.labels.outcome}."
        ),
    ]
    if gate.reasons:
        blocks += [Para("Why not better:"), Bullets(gate.reasons)]
    if gate.passed:
        blocks += [Para("Passed:"), Bullets(gate.passed)]
    if gate.notes:
        blocks.append(Bullets([f"Note: {n}" for n in gate.notes]))
    blocks.append(
        Para(
            "A judge that copies one annotator, or was tuned on these labels, looks better "
            "than the humans here: the comparison cannot tell."
        )
    )
    return blocks


def _behaviour_row(name: str, s: JudgeBehaviour) -> list[str]:
    return [
        name,
        pct(s.position_consistency),
        pct(s.first_slot_win_rate),
        pct(s.verbosity_preference),
        pct(s.tie_rate),
        pct(s.parse_failure_rate),
    ]


def _corrected(calibration: Calibration) -> list[Block]:
    if not calibration.corrected:
        return []
    rows = [
        [
            c.target,
            estimate(c.raw),
            estimate(c.human_only),
            interval(c.value, c.ci_low, c.ci_high),
            count(c.n),
        ]
        for c in calibration.corrected
    ]
    content: list[Block] = [
        Para(
            "The judge's raw estimate beside the humans' alone and the PPI++ estimate that "
            "corrects the judge with the human labels."
        ),
        Table(["estimate", "judge (raw)", "humans only", "corrected", "human-labelled"], rows),
    ]
    warned = [f"{c.target}: {c.subset_warning}" for c in calibration.corrected if c.subset_warning]
    warned += [
        f"{c.target}: {count(c.n)} human labels, fewer than thirty: with an accurate judge "
        "and a rate near either end of its range its interval covers less than its level (docs: "
        "Statistics, coverage)"
        for c in calibration.corrected
        if c.value is not None and 0 < c.n < MIN_COVERED_LABELS
    ]
    hint = "every estimate: the judge's, the humans' alone, PPI++ corrected"
    # A warning that the labelled items differ from the rest stays in sight.
    return [Details("Corrected estimates", hint, content, id="corrected", level=3)] + (
        [Bullets(warned)] if warned else []
    )


MIN_COVERED_LABELS = 30
"""Labels from which the PPI++ interval's coverage was measured at its level (95.4-98.0% at
30 labels, 93.9-97.2% at 50 and 100, for accurate and biased judges at rates 0.05-0.95:
scripts/coverage_intervals.py's designs); fewer were not measured."""


def _literature(lit: Literature | None) -> list[Block]:
    if lit is None:
        return []
    rows = [
        [stratum_name(part.stratum), share(part.agreement_s1), share(part.agreement_s2)]
        for part in lit.agreement
        if "category" not in part.stratum
    ]
    return [
        Heading("Against the published verdicts", 3),
        Para(
            f"This run's verdicts equal the published ones on {count(lit.identical_verdicts)}"
            f" of {count(lit.shared_keys)} shared keys ({count(lit.run_keys)} judged here, "
            f"{count(lit.keys)} published; the rest lack an answer text). The published "
            "verdicts' agreement with the same human labels on every key:"
        ),
        Table(["stratum", "agreement S1", "S2"], rows),
    ]
