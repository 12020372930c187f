"""The page, built from the run summary's fields: Question, Decision (`decision_section`, with
the ranking's chart and table from `ranking_section`), Data, Results, Judge (`judge_section`),
Audit (`audit_section`), Canaries (`canary_section`), and Setup. The HTML collapses what few
readers need (every pair, the strata, each audited item, the setup); report.md has it all.
Every number on the page is a value of the summary, formatted (`format`); nothing is computed
here, so a reader can check any figure against `summary.json`."""

from __future__ import annotations

import json
from typing import Any

from judge.report import plots
from judge.report.audit_section import audit_section, family_cell
from judge.report.blocks import (
    Block,
    Bullets,
    Callout,
    Cell,
    Details,
    Figure,
    Heading,
    Para,
    Table,
)
from judge.report.canary_section import canary_section
from judge.report.control_section import control_section
from judge.report.decision_section import decision_section
from judge.report.format import (
    count,
    counted,
    estimate,
    interval,
    label,
    level,
    pct0,
    pvalue,
    seconds,
    share,
    short,
    usd,
)
from judge.report.judge_section import judge_section
from judge.report.ranking_section import ranking_section
from judge.summary.run_summary import (
    Analysis,
    Calibration,
    PairDiff,
    RunComparison,
    RunSummary,
)


def build(summary: RunSummary) -> list[Block]:
    analysis = summary.analysed()
    blocks: list[Block] = [Heading(f"Evaluation report: {summary.run.name}", 1)]
    notice = stand_in_callout(summary)
    if notice is not None:
        blocks.append(notice)
    # The decision follows the question: a reader with a minute reads those two.
    blocks += _question(summary)
    blocks += decision_section(summary, analysis, ranking_section(analysis))
    blocks += _data(summary, analysis)
    blocks += _results(summary, analysis)
    blocks += judge_section(summary, analysis)
    blocks += audit_section(summary, analysis)
    blocks += canary_section(summary, analysis)
    # Provenance last, and collapsed in HTML: it is for reproducing the run, not deciding.
    blocks += _setup(summary, analysis)
    return blocks


def stand_in_callout(summary: RunSummary) -> Callout | None:
    """A simulated or replayed run's notice, to go before any number: a simulated run's
    ranking is planted behaviour, not a finding. None for judges that were called."""
    notice = summary.run.notice()
    if not notice:
        return None
    simulated = any(j.stand_in == "simulated" for j in summary.run.judges)
    return Callout(notice, "bad" if simulated else "warn", id="stand-in", strong=True)


def _question(summary: RunSummary) -> list[Block]:
    question = summary.run.question or "No question was stated in the run config (question)."
    return [Heading("Question"), Para(question, id="question")]


def _setup(summary: RunSummary, analysis: Analysis) -> list[Block]:
    run = summary.run
    rubric = run.rubric
    env = run.environment
    judges = [
        [
            j.model + (" (recorded verdicts replayed)" if j.recorded else ""),
            family_cell(analysis, j.model),
            ", ".join(f"{k}={_param(v)}" for k, v in sorted(j.params.items()))
            or "provider defaults",
            "replay" if j.recorded else (j.transport or ""),
        ]
        for j in run.judges
    ]
    seeds = ", ".join(f"{k} {count(v)}" for k, v in run.seeds.items())
    if analysis.calibration is not None:
        seeds += f", calibration {count(analysis.calibration.seed)}"
    packages = ", ".join(f"{k} {label(v)}" for k, v in sorted(env.packages.items()))
    sampling = f"pairs: {run.pairs.mode}"
    if run.pairs.baseline:
        sampling += f" against {run.pairs.baseline}"
    sampling += f"; orders: {run.orders}"
    if run.orders == "both":
        sampling += " (every pair judged as A/B and as B/A; disagreeing orders count as a tie)"
    content: list[Block] = [
        Bullets(
            [
                f"Systems: {', '.join(analysis.comparison.systems)}",
                f"Rubric: {rubric.id}@{count(rubric.version)} ({rubric.hash})",
                f"Sampling: {sampling}",
                f"Seeds: {seeds}",
                f"Config: {run.config_hash}; recorded {env.recorded_at} on "
                f"Python {label(env.python)}",
                f"Packages: {packages}",
            ]
        ),
        Table(["judge", "family", "parameters", "transport"], judges),
    ]
    hint = "systems, rubric, seeds, config hash, package versions, judges' parameters"
    return [Details("Setup", hint, content, id="setup")]


def _param(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json.dumps(value)
    return count(value)


def _data(summary: RunSummary, analysis: Analysis) -> list[Block]:
    counts = summary.counts
    scrub = summary.scrub
    data = analysis.data
    setup = summary.canary_setup
    if scrub is None:
        blinding = "Blinding: identity markers were not scrubbed (blinding.scrub: false)"
    else:
        rules = ", ".join(f"{k} {count(v)}" for k, v in sorted(scrub.by_rule.items()) if v)
        # Formatted only when shown: every number formatted is traced as on the page.
        kinds = scrub.total and ", ".join(
            f"{k.replace('_', '-')} {count(v)}" for k, v in scrub.by_kind.items()
        )
        blinding = (
            f"Blinding: {counted(scrub.total, 'identity marker')} scrubbed in "
            f"{count(scrub.responses_changed)} of {count(scrub.responses)} responses"
            + (f" ({rules})" if rules else "")
            + (f"; by kind: {kinds}" if kinds else "")
        )
    strata = [
        [column, ", ".join(f"{label(value)} ({count(n)})" for value, n in sizes.items())]
        for column, sizes in data.strata.items()
    ]
    holdout = (
        "No holdout: every human label is used both to measure agreement and to correct the "
        "estimates, so the corrected intervals are for these items, not new ones."
        if analysis.calibration is not None
        else "No human labels were given: the judge is not calibrated."
    )
    blocks: list[Block] = [
        Heading("Data"),
        Bullets(
            [
                f"{counted(counts.items, 'item')}, {counted(counts.blinded, 'response')}, "
                f"{counted(counts.pairs, 'pair')} judged ("
                f"{counted(summary.skipped_pairs, 'pair')} skipped: a system's answer missing), "
                f"{counted(counts.requests, 'judge request')}"
                + (
                    f", the canaries' {counted(setup.responses_total, 'response')}, "
                    f"{counted(setup.pairs, 'pair')} and {counted(setup.requests, 'request')} "
                    "included"
                    if setup
                    else ""
                ),
                f"Replies: {counted(counts.verdicts, 'verdict')}, "
                f"{counted(counts.parse_failures, 'parse failure')}, "
                f"{counted(counts.errors, 'error')}, {count(counts.pending)} pending; "
                f"{count(counts.cached)} from the cache",
                blinding,
                *_injection(summary),
                holdout,
            ]
        ),
    ]
    strata += [
        [column, f"{count(n)} values (one per item group; not listed)"]
        for column, n in data.many_valued.items()
    ]
    if strata:
        blocks.append(Table(["stratum", "items per value"], strata))
    return blocks


def _injection(summary: RunSummary) -> list[str]:
    """The bullet on responses that address the judge (none for runs prepared before the
    detector existed)."""
    injection = summary.injection
    if injection is None:
        return []
    if not injection.flagged:
        return [f"Injection: none of {count(injection.responses)} responses addresses the judge"]
    by_rule = injection.by_rule.items()
    rules = ", ".join(f"{k.replace('_', '-')} {count(v)}" for k, v in by_rule if v)
    systems = ", ".join(f"{s} {count(n)}" for s, n in injection.by_system.items() if n)
    handled = (
        "each loses its pairs against unflagged responses (and scores lowest) by rule, "
        "whatever the judge said (aggregate.flagged: lose)"
        if summary.aggregate.flagged == "lose"
        else "flagged, judged as written"
    )
    return [
        f"Injection: {count(injection.flagged)} of {count(injection.responses)} responses "
        f"address the judge ({rules}; by system: {systems}); {handled}"
    ]


def _results(summary: RunSummary, analysis: Analysis) -> list[Block]:
    comparison = analysis.comparison
    blocks: list[Block] = [
        Heading("Results"),
        Para(
            f"The ranking (the Decision's chart and table) is {comparison.judge}'s. Paired "
            f"differences and win rates: {level(comparison.ci)} intervals from "
            f"{count(comparison.resamples)} paired bootstrap resamples over items (seed "
            f"{count(comparison.seed)}). Ranks come from "
            "the paired tests below: a system's rank is one more than the number of systems "
            "above it that it is told apart from (Holm-adjusted paired test at the "
            f"{level(comparison.ci)} level), raised where needed to stay below each of them, so "
            "systems sharing a rank are never told apart."
        ),
    ]
    if comparison.notes:
        blocks.append(Bullets([f"Note: {n}" for n in comparison.notes]))
    blocks += control_section(comparison.controlled)
    order = [r.system for r in comparison.ranking] or list(comparison.systems)
    if comparison.win_rates:
        matrix = plots.win_matrix(comparison.win_rates, order)
        if matrix:
            blocks.append(Figure("win_matrix", matrix, "Win-rate matrix heat map"))
    blocks.append(_pair_list(comparison))
    blocks += _per_stratum(analysis, comparison)
    blocks += _same_family(summary, analysis)
    blocks += _cost(summary)
    return blocks


def _pair_list(comparison: RunComparison) -> Details:
    """Every pair, winner first, largest difference first: collapsed in HTML (the ranking and
    its neighbouring pairs answer most readers), whole in Markdown."""
    unit = (
        "net win rate of the first over the second: (wins - losses) / items"
        if comparison.kind == "pairwise"
        else "mean score of the first minus the second"
    )
    content: list[Block] = [Para(_p_methods(comparison))]
    figure = plots.forest(comparison.comparisons, "Paired differences, winner first", unit)
    if figure:
        content.append(Figure("forest", figure, "Forest plot of paired differences"))
    content.append(pair_table(comparison))
    hint = "every pair's difference, wins/losses/ties, Holm p-value; forest plot"
    return Details("Paired differences", hint, content, id="pairs", level=3)


def pair_table(comparison: RunComparison) -> Table:
    """Every pair, winner first, largest difference first: its difference with the interval,
    wins/losses/ties, Holm p-value and whether it is told apart (the pull-request comment's
    table too)."""
    diffs: list[list[Cell]] = [
        [
            f"{c.a} vs {c.b}",
            interval(c.mean_diff, c.ci_low, c.ci_high),
            f"{count(c.wins)}/{count(c.losses)}/{count(c.ties)}",
            pvalue(c.p_holm, c.p_holm_bound),
            "yes" if c.told_apart else "no",
        ]
        for c in _by_difference(comparison.comparisons)
    ]
    return Table(["pair", "difference (net win rate)", "W/L/T", "p (Holm)", "told apart"], diffs)


def _by_difference(comparisons: list[PairDiff]) -> list[PairDiff]:
    """Largest difference first (each pair is winner-first in the summary)."""
    return sorted(comparisons, key=lambda c: -c.mean_diff)


def _p_methods(comparison: RunComparison) -> str:
    """Which p-values the table shows, and the pairs whose p-value is the bootstrap's floor."""
    text = (
        f"Told apart: the Holm-adjusted paired test at the {level(comparison.ci)} level. A "
        "pair's p-value is the bootstrap's (consistent with its interval) where the bootstrap "
        "resolves it; where no resample "
        "crosses zero it is the exact sign test (every item a win, loss or tie) or Student's t "
        "test on the items (the normal approximation in earlier releases)."
    )
    used = {c.p_method for c in comparison.comparisons}
    if used - {"bootstrap"}:
        text += f" Used here: {', '.join(sorted(used))}."
    floors = [c for c in comparison.comparisons if c.p_floor_limited]
    if floors:
        text += (
            f" {counted(len(floors), 'pair has', 'pairs have')} no such p-value: no resample of "
            f"{count(floors[0].resamples)} crosses zero, so their p-value is below "
            f"{pvalue(floors[0].p_floor)}, and their Holm-adjusted value is an upper bound, as "
            "is any raised to match it (shown with <)."
        )
    return text


def _per_stratum(analysis: Analysis, comparison: RunComparison) -> list[Block]:
    by = comparison.by
    if not by or not comparison.by_stratum:
        return []
    pairs = [(n.upper, n.lower) for n in analysis.decision.neighbours]
    oriented = analysis.decision.neighbours_by_stratum
    rows = [
        [label(stratum)]
        + ["n/a" if c is None else interval(c.diff, c.ci_low, c.ci_high, short) for c in found]
        for stratum, found in oriented.items()
    ]
    blocks: list[Block] = []
    by_stratum = analysis.win_rates_by_stratum
    if by_stratum is not None and by_stratum.strata:
        systems = [r.system for r in comparison.ranking] or list(comparison.systems)
        table = []
        for stratum, rates in by_stratum.strata.items():
            mine = {w.system: w for w in rates}
            table.append(
                [label(stratum)]
                + [
                    interval(mine[s].win_rate, mine[s].ci_low, mine[s].ci_high, pct0)
                    if s in mine
                    else "n/a"
                    for s in systems
                ]
            )
        blocks += [
            Para(f"Win rate against all others within each {by}:"),
            Table([by, *systems], table),
        ]
    blocks += [
        Para(
            "Neighbouring systems of the overall ranking, within each stratum (net win rate of "
            "the first, with its interval). Every pair and stratum is in summary.json under "
            "comparison.by_stratum."
        ),
        Table([by, *(f"{a} vs {b}" for a, b in pairs)], rows),
    ]
    figure = plots.strata_multiples(oriented, pairs, by)
    if figure:
        blocks.append(Figure("strata", figure, f"Per-{by} small multiples"))
    hint = f"win rates and neighbouring pairs within each {by}; small multiples"
    return [Details(f"Per {by}", hint, blocks, id="per-stratum", level=3)]


def _same_family(summary: RunSummary, analysis: Analysis) -> list[Block]:
    same = analysis.same_family
    if same is None:
        return []
    judges = ", ".join(j.model for j in summary.run.judges)
    full = {r.system: r for r in analysis.comparison.ranking}
    blocks: list[Block] = [
        Heading("Same-family verdicts", 3),
        Para(
            f"{judges} shares a family with {', '.join(same.systems)}: "
            f"{counted(same.flagged_pairs, 'pair judgment')} flagged (allowed by the config), "
            f"{count(same.cross_family_pairs)} cross-family. Without the flagged pairs "
            f"{', '.join(same.systems)} drop out (every pair of theirs is flagged) and the "
            "others are ranked among themselves, so their ranks renumber; what matters is "
            "whether their order holds:"
        ),
    ]
    only = same.cross_family_only
    if only is not None:
        rows = [
            [
                r.system,
                count(r.rank),
                interval(r.estimate, r.ci_low, r.ci_high),
                count(full[r.system].rank) if r.system in full else "n/a",
            ]
            for r in only.ranking
        ]
        blocks.append(Table(["system", "rank without", "strength without", "rank with"], rows))
    blocks += _same_family_agreement(analysis.calibration)
    return blocks


def _same_family_agreement(calibration: Calibration | None) -> list[Block]:
    if calibration is None:
        return []
    split = {s.stratum["same_family"]: s for s in calibration.strata if "same_family" in s.stratum}
    if "yes" not in split or "no" not in split:
        return []
    yes, no = split["yes"].metrics, split["no"].metrics
    return [
        Para(
            "Agreement with the humans (S1, ties count): "
            f"{share(yes['agreement_s1'])} on same-family pairs, "  # type: ignore[arg-type]
            f"{share(no['agreement_s1'])} on cross-family pairs; "  # type: ignore[arg-type]
            f"alpha {estimate(yes['alpha'])} vs {estimate(no['alpha'])}."
        )
    ]


def _cost(summary: RunSummary) -> list[Block]:
    replayed = {j.model for j in summary.run.judges if j.recorded}
    # The judges' spend is in the Judge section (`cost_section`), canaries' included; here
    # only for a summary written before it was counted.
    # (Formatted only when shown: every number formatted is traced as on the page.)
    spend = summary.costs is None
    rows = [
        [
            name,
            *(["replayed, not measured" if name in replayed else usd(s.cost_usd)] if spend else []),
            "replayed, not measured" if name in replayed else seconds(s.latency_median_s),
            count(s.requests),
        ]
        for name, s in summary.judges.items()
    ]
    header = ["judge", *(["cost"] if spend else []), "median latency", "requests"]
    blocks: list[Block] = [Heading("Cost and latency", 3), Table(header, rows)]
    if not spend:
        blocks.append(Para("What the judges cost: the Judge section."))
    if not summary.system_costs:
        blocks.append(Para("The responses table gives no latency or cost for the systems."))
        return blocks
    blocks.append(
        Table(
            ["system", "median latency", "cost per response", "total cost", "responses"],
            [
                [
                    name,
                    seconds(c.latency_median_s),
                    usd(c.cost_usd_mean, 4),
                    usd(c.cost_usd_total),
                    count(c.responses),
                ]
                for name, c in summary.system_costs.items()
            ],
        )
    )
    return blocks
