"""Human-readable terminal output for CLI commands (rich tables)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from judge.judging.cost_estimate import JudgeEstimate, RunEstimate
    from judge.run import PrepareSummary, RunOutcome
    from judge.run.execute import Progress
    from judge.summary.cost import JudgeCost
    from judge.summary.run_summary import InjectionCounts, RunSummary
    from judge.types import InjectionReport, ScrubReport

_console = Console(highlight=False, markup=False)  # names like "gpt-4[0613]" print as written
if _console.width < 120 and not _console.is_terminal:
    # Piped output (CI logs, `make demo | tee`) would otherwise wrap tables at 80 columns.
    _console = Console(highlight=False, width=120, markup=False)
_err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)


def print_scrub_report(report: ScrubReport) -> None:
    rules = sorted(report.by_rule)
    table = Table(title="Scrub report: identity markers removed (counts only, never the text)")
    table.add_column("system")
    for rule in rules:
        table.add_column(rule, justify="right")
    table.add_column("total", justify="right")
    for system in sorted(report.by_system):
        row = report.by_system_rule.get(system, {})
        table.add_row(
            system, *(str(row.get(rule, 0)) for rule in rules), str(report.by_system[system])
        )
    table.add_row("all", *(str(report.by_rule[r]) for r in rules), str(report.total), style="bold")
    _console.print(table)
    # A frame is a whole self-description ("a large language model trained by ..."): say what
    # its column counts.
    frames = report.by_rule.get("frame", 0)
    framed = f"; frames (a model describing itself and its maker): {frames}" if frames else ""
    _console.print(
        f"{report.total} markers scrubbed; {report.responses_changed} of {report.responses} "
        "responses changed" + _kinds(report.by_kind) + framed
    )


def _kinds(by_kind: dict[str, int]) -> str:
    """ "; by kind: plain 3, disguised 1, ..." (nothing for reports without kinds)."""
    if not by_kind:
        return ""
    return "; by kind: " + ", ".join(f"{kind} {n}" for kind, n in by_kind.items())


def _injection(counts: InjectionCounts | InjectionReport, *, lose: bool = False) -> str:
    """ "injection: 3 of 930 responses address the judge (flagged, judged as written): ..." """
    rules = ", ".join(f"{rule} {n}" for rule, n in counts.by_rule.items() if n)
    systems = ", ".join(f"{s} {n}" for s, n in counts.by_system.items() if n)
    detail = f": {rules}; by system: {systems}" if counts.flagged else ""
    handled = "flagged, each lost by rule" if lose else "flagged, judged as written"
    return (
        f"injection: {counts.flagged} of {counts.responses} responses address the judge "
        f"({handled}){detail}"
    )


def print_prepare_summary(summary: PrepareSummary) -> None:
    print_scrub_report(summary.scrub)
    _console.print(_injection(summary.injection))
    skipped = (
        f" ({summary.skipped_pairs} system pairs skipped: a response is missing)"
        if summary.skipped_pairs
        else ""
    )
    _console.print(
        f"{summary.items} items, {summary.responses} responses from {len(summary.systems)} "
        f"systems, {summary.pairs} pairs{skipped}"
    )
    judges = ", ".join(summary.judges) or "none configured"
    same = (
        f"; {summary.same_family_requests} same-family (flagged)"
        if summary.same_family_requests
        else ""
    )
    canaries = f" ({summary.canary_requests} for canaries)" if summary.canary_requests else ""
    _console.print(
        f"rubric {summary.rubric}; judges: {judges}; {summary.requests} requests "
        f"planned{canaries}{same}"
    )
    _console.print(f"run dir: {summary.run_dir}")


def print_dry_run(plan: RunEstimate) -> None:
    table = Table(title="Dry run: nothing sent")
    # The judge's name whole, on one line: it is what a reader (and a script) looks for.
    width = max((len(judge) for judge in plan.judges), default=5)
    table.add_column("judge", no_wrap=True, min_width=width)
    table.add_column("mode")
    for column in ("pending requests", "in cache", "sync", "batch", "prompt-cached"):
        table.add_column(column, justify="right")
    for judge, row in plan.judges.items():
        table.add_row(
            judge,
            row.mode,
            f"{row.requests:,}",
            f"{row.cached:,}",
            _usd(row.cost_sync_usd),
            _usd(row.cost_batch_usd),
            _usd(row.cost_cached_usd),
        )
    _console.print(table)
    if not plan.judges:
        _console.print("nothing pending: every request already has a stored response")
        _print_notes(plan)
        return
    _console.print(
        "sync / batch: every request sent so, nothing cached; prompt-cached: in the judge's "
        "mode, the static prefix (the system message) read from the cache by all but the "
        "first request that starts with it. In cache: answered by the response cache, free."
    )
    for judge, row in plan.judges.items():
        _console.print(
            f"{judge}: ~{row.input_tokens:,} input and ~{row.output_tokens:,} output tokens "
            f"to send (~{row.reply.tokens:,} per reply, {row.reply.basis}); "
            f"{_prefix_note(row)}"
        )
    _print_notes(plan)


def _print_notes(plan: RunEstimate) -> None:
    for note in plan.notes:
        _console.print(Text.assemble(("before a real run: ", "yellow"), note))


def _usd(value: float | None) -> str:
    return "unknown price" if value is None else f"${value:,.2f}"


def _prefix_note(row: JudgeEstimate) -> str:
    """What the cached estimate assumed about the judge's static prefixes."""
    minimum = row.min_cacheable_tokens
    if not row.prefixes:
        return "no static prefix (system message) to cache" if row.to_send else "nothing to send"
    low, high = min(p.tokens for p in row.prefixes), max(p.tokens for p in row.prefixes)
    size = f"~{low:,} tokens" if low == high else f"~{low:,} to {high:,} tokens"
    several = len(row.prefixes) > 1
    what = f"{len(row.prefixes)} distinct static prefixes" if several else "static prefix"
    cacheable = [p for p in row.prefixes if p.cacheable]
    if not cacheable:
        why = (
            f"below the {minimum:,}-token minimum, caching will not apply"
            if not several
            else f"each below the {minimum:,}-token minimum, caching will not apply"
        )
        note = f"{what} {size}: {why}"
    elif not row.prompt_cache:
        note = f"{what} {size}: prompt_cache is off, so the provider will not cache it"
    else:
        note = (
            f"{what} {size}: {row.cache_read_tokens:,} input tokens read from the cache, "
            f"{row.cache_write_tokens:,} written to it"
        )
        if len(cacheable) < len(row.prefixes):
            note += f" ({len(row.prefixes) - len(cacheable)} prefixes below {minimum:,} tokens)"
    if row.unfollowed_requests:
        note += f"; {row.unfollowed_requests:,} requests with other prefixes estimated uncached"
    return note


def print_interrupted(progress: Progress | None, command: str) -> None:
    """Where an interrupted `judge run` (or `judge prepare`) stopped, and how to go on."""
    if progress is None:
        where = "interrupted while preparing: nothing was judged yet"
    else:
        where = (
            f"interrupted: {progress.done:,} of {progress.total:,} requests answered, "
            f"{progress.total - progress.done:,} pending (answers are stored as they arrive; "
            "none is sent again)"
        )
    _err.print(where)
    _err.print(f"continue with: {command}")


def print_run_outcome(outcome: RunOutcome) -> None:
    summary = outcome.summary
    counts = summary.counts
    earlier = f"{outcome.answered_before:,} by an earlier run, " if outcome.answered_before else ""
    _console.print(
        f"{counts.responses:,} of {counts.requests:,} requests answered "
        f"({earlier}{counts.cached:,} from cache, {counts.errors:,} failed, "
        f"{counts.parse_failures:,} unparseable replies)"
    )
    table = Table(title="Judges")
    for column in (
        "judge",
        "verdicts",
        "parse fail",
        "errors",
        "position consistency",
        "first-slot wins",
        "longer wins",
        "cost",
    ):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for name, st in summary.judges.items():
        table.add_row(
            name,
            str(st.verdicts),
            str(st.parse_failures),
            str(st.errors),
            _pct(st.position_consistency),
            _pct(st.first_slot_win_rate),
            _pct(st.verbosity_preference),
            "unpriced" if st.cost_usd is None else f"${st.cost_usd:,.4f}",
        )
    _console.print(table)
    if summary.costs is not None and summary.costs.total.paid:
        _console.print(_spend_line(summary.costs.total))
    if outcome.stats.stopped_reason == "budget":
        _console.print(
            f"stopped before exceeding the budget: {outcome.stats.skipped_for_budget:,} requests "
            "not sent; rerun with a higher --max-cost to continue"
        )
    if not outcome.complete:
        _console.print(f"{counts.pending:,} requests still pending: run again to resume")
    print_findings(summary)
    rundir = outcome.rundir
    _console.print(
        f"run dir: {rundir.path} ({rundir.summary_file.name}, {rundir.judgments_jsonl.name})"
    )
    if rundir.report_html.exists():
        _console.print(f"report: {rundir.report_html} (and {rundir.report_md.name})")


def _spend_line(total: JudgeCost) -> str:
    """What was paid, per 1,000 judgments, and what batching and the prompt cache saved."""
    if total.cost_usd is None:
        return f"{total.paid:,} paid judgments; cost unknown (a judge has no price)"
    line = f"spent ${total.cost_usd:,.4f} on {total.paid:,} paid judgments"
    if total.cost_per_1k_usd is not None:
        line += f" (${total.cost_per_1k_usd:,.4f} per 1,000)"
    if total.batch:
        line += f"; {total.batch:,} by batch"
        if total.batch_discount_usd is not None:
            line += f", saving ${total.batch_discount_usd:,.4f}"
    if total.cached_share:
        line += f"; {total.cached_share:.1%} of prompt tokens from the prompt cache"
        if total.cache_savings_usd is not None:
            line += f", saving ${total.cache_savings_usd:,.4f}"
    return line


def print_findings(summary: RunSummary) -> None:
    """The headline of a finished run: scrubbing, ranking, gate."""
    scrub = summary.scrub
    if scrub is not None:
        _console.print(
            f"blinding: {scrub.total} identity markers scrubbed in "
            f"{scrub.responses_changed} of {scrub.responses} responses{_kinds(scrub.by_kind)}"
        )
    if summary.injection is not None:
        _console.print(_injection(summary.injection, lose=summary.aggregate.flagged == "lose"))
    analysis = summary.analysis
    if analysis is None:
        return
    ranking = analysis.comparison.ranking
    if ranking:
        order = ", ".join(f"{r.rank}. {r.system}" for r in ranking)
        _console.print(f"ranking (a shared number: not told apart): {order}")
    bt = analysis.comparison.bradley_terry
    if bt is not None and bt.not_estimable is not None:
        _console.print(f"Bradley-Terry intervals not estimable: {bt.not_estimable}")
    calibration = analysis.calibration
    if calibration is not None:
        alpha = calibration.overall.metrics["alpha"]
        trust = calibration.gate
        _console.print(
            f"judge vs humans: alpha {_num(alpha.value)} [{_num(alpha.ci_low)}, "
            f"{_num(alpha.ci_high)}], gate {trust.verdict.upper()} (stands in for a human: "
            f"{trust.stand_in.outcome}; labels reliable: {trust.labels.outcome})"
        )
        join = calibration.join
        if join.unknown_systems:
            _console.print(
                f"warning: {join.unknown_system_labels:,} human labels name systems the run "
                f"never judged ({', '.join(join.unknown_systems)}); the run's systems: "
                f"{', '.join(join.judge_systems)}"
            )
        for c in calibration.corrected:
            if c.subset_warning:
                _console.print(f"warning, corrected {c.target}: {c.subset_warning}")
    canaries = analysis.canaries
    if canaries is not None:
        fooled = [g for g in canaries.gates if not g.passed]
        _console.print(
            f"canaries: {len(canaries.gates) - len(fooled)} of {len(canaries.gates)} gates "
            f"passed (weakest real system: {canaries.weakest or 'none ranked'})"
        )
    for _, gate in analysis.gates():
        if not gate.passed:
            _console.print(f"gate failed: {gate.reason}")
    decision = analysis.decision
    if calibration is None:
        _console.print(f"judge: {decision.gate.upper()}: {decision.trust_reason}", markup=False)
    _console.print(f"answer: {decision.answer.text}", markup=False)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def print_comparison(report: dict) -> None:
    from judge.report.format import pvalue

    ranking = Table(
        title=f"Ranking ({report['kind']}; ranks from the Holm-adjusted paired tests: "
        "systems sharing a rank are not told apart)"
    )
    for column in ("rank", "system", "items", "estimate", "95% interval"):
        ranking.add_column(column, justify="left" if column == "system" else "right")
    bt = report.get("bradley_terry")
    not_estimable = None if bt is None else bt["not_estimable"]
    for row in report["ranking"]:
        ranking.add_row(
            str(row["rank"]),
            row["system"],
            str(row["n_items"]),
            f"{row['estimate']:.3f}",
            "not estimable" if not_estimable else _interval(row["ci_low"], row["ci_high"], ".3f"),
        )
    _console.print(ranking)
    if not_estimable:
        _console.print(f"Bradley-Terry intervals not estimable: {not_estimable}")
    pairs = Table(title="Paired differences (a - b), percentile bootstrap over items")
    for column in ("a", "b", "diff", "95% interval", "wins/losses/ties", "p (Holm)", ""):
        pairs.add_column(column, justify="left" if column in ("a", "b") else "right")
    for row in report["comparisons"]:
        if row.get("stratum") is not None:
            continue
        pairs.add_row(
            row["a"],
            row["b"],
            f"{row['mean_diff']:+.3f}",
            _interval(row["ci_low"], row["ci_high"], "+.3f"),
            f"{row['wins']}/{row['losses']}/{row['ties']}",
            pvalue(row["p_holm"], row["p_holm_bound"]),
            "told apart" if row["told_apart"] else "not told apart",
        )
    _console.print(pairs)
    floors = [r for r in report["comparisons"] if r["p_floor_limited"]]
    if floors:
        _console.print(
            f"< : no resample of {floors[0]['resamples']:,} crosses 0, so the p-value is below "
            f"{pvalue(floors[0]['p_floor'])}; Holm's adjustment of it (and any raised to match "
            "it) is an upper bound"
        )
    if report.get("controlled"):
        _print_controlled(report["controlled"])
    for note in report.get("notes", []):
        _console.print(f"note: {note}")
    for gate in report["gates"]:
        _console.print(f"gate {'passed' if gate['passed'] else 'FAILED'}: {gate['reason']}")


def _print_controlled(controlled: dict) -> None:
    against = controlled["baseline"] or "the field"
    table = Table(
        title=f"Win rates against {against} controlled for {' and '.join(controlled['controls'])}"
        f" ({controlled['level']:.0%} intervals, resampling items)"
    )
    slopes = [c for c in ("length", "headers", "lists", "bold") if any(
        c in r["coefficients"] for r in controlled["systems"])]  # fmt: skip
    for column in ("system", "win rate", "controlled", "shift", *(f"{c} slope" for c in slopes)):
        table.add_column(column, justify="left" if column == "system" else "right")
    for r in controlled["systems"]:
        table.add_row(
            r["system"],
            f"{r['win_rate']:.3f} {_interval(r['win_low'], r['win_high'], '.3f')}",
            f"{r['controlled']:.3f} {_interval(r['ci_low'], r['ci_high'], '.3f')}",
            f"{r['shift']:+.3f} {_interval(r['shift_low'], r['shift_high'], '+.3f')}",
            *(f"{r['coefficients'][c]:+.2f}" if c in r["coefficients"] else "n/a" for c in slopes),
        )
    _console.print(table)
    _console.print(f"model: {controlled['formula']}")


def _interval(low: float | None, high: float | None, spec: str) -> str:
    """An interval, or "n/a" where the bootstrap has none (a pair compared on one item)."""
    if low is None or high is None:
        return "n/a"
    return f"[{low:{spec}}, {high:{spec}}]"
