"""A run as a pull-request comment (`judge pr-comment RUN_DIR`, what the GitHub Action posts):
the simulated notice first, then the decision and the judge's trust verdict, every gate with
PASS or FAIL, and the paired differences with their intervals. The report's own blocks
(`decision_callouts`, `gates_table`, `canary_line`, `pair_table`), rendered by `to_markdown`,
so a number reads as on report.md and a system's name is escaped as there.

The first line is a hidden marker naming the run, by which the Action finds its own comment
and edits it instead of adding another at every push.
"""

from __future__ import annotations

from judge.report.blocks import Block, Callout, Heading, Mark, Para, to_markdown
from judge.report.canary_section import canary_line
from judge.report.decision_section import decision_callouts, gates_table
from judge.report.format import count, counted, level, usd
from judge.report.sections import pair_table, stand_in_callout
from judge.summary.run_summary import Analysis, RunSummary

MARKER = "<!-- judge-pipeline pr-comment: {name} -->"
"""The comment's first line (run names are plain: letters, digits, `._-`)."""


def comment_marker(name: str) -> str:
    return MARKER.format(name=name)


def pr_comment(summary: RunSummary, *, details_url: str | None = None) -> str:
    """The comment's Markdown. `details_url`: where the whole report is (a CI run's page,
    whose artifacts hold it), linked at the end."""
    return (
        comment_marker(summary.run.name)
        + "\n\n"
        + to_markdown(comment_blocks(summary, details_url))
    )


def comment_blocks(summary: RunSummary, details_url: str | None = None) -> list[Block]:
    run = summary.run
    blocks: list[Block] = []
    notice = stand_in_callout(summary)
    if notice is not None:
        blocks.append(notice)
    blocks.append(Heading(f"judge: {run.name}", 3))
    if run.question:
        blocks.append(Para(f"_{run.question}_"))
    if summary.analysis is None:
        blocks.append(
            Callout(
                f"Stopped with {counted(summary.counts.pending, 'request')} pending (its "
                "budget, or an interrupt): no decision yet. Run it again to continue where it "
                "stopped.",
                "warn",
                id="stopped",
                mark=Mark("STOPPED", "warn"),
            )
        )
    else:
        blocks += _analysed(summary.analysis)
    blocks.append(Para(_footer(summary, details_url)))
    return blocks


def _analysed(analysis: Analysis) -> list[Block]:
    comparison = analysis.comparison
    blocks: list[Block] = [_gates_line(analysis), *decision_callouts(analysis)]
    blocks += gates_table(analysis)
    canaries = canary_line(analysis)
    if canaries is not None:
        blocks.append(canaries)
    unit = (
        "net win rate of the first over the second, (wins - losses) / items"
        if comparison.kind == "pairwise"
        else "mean score of the first minus the second"
    )
    blocks += [
        Heading("Paired differences", 4),
        Para(
            f"Winner first. Difference: {unit}; {level(comparison.ci)} intervals from "
            f"{count(comparison.resamples)} paired bootstrap resamples over items; told apart: "
            "the Holm-adjusted paired test."
        ),
        pair_table(comparison),
    ]
    return blocks


def _gates_line(analysis: Analysis) -> Block:
    """The verdict a reviewer looks for first: whether every gate of the run passed."""
    gates = [g for _, g in analysis.gates()]
    failed = [g for g in gates if not g.passed]
    if not gates:
        return Para("No gate is configured: the run cannot fail a check.")
    if failed:
        text = f"{count(len(failed))} of {counted(len(gates), 'gate')} failed."
        return Callout(text, "bad", id="gates-line", mark=Mark("FAIL", "bad"))
    text = f"All {counted(len(gates), 'gate')} passed."
    return Callout(text, "good", id="gates-line", mark=Mark("PASS", "good"))


def _footer(summary: RunSummary, details_url: str | None) -> str:
    counts, run = summary.counts, summary.run
    judges = ", ".join(j.model for j in run.judges)
    cost = summary.costs.total.cost_usd if summary.costs is not None else None
    text = (
        f"{counted(counts.items, 'item')}, {counted(counts.pairs, 'pair')}, "
        f"{counted(counts.requests, 'request')} ({count(counts.cached)} from the cache, "
        f"{count(counts.parse_failures)} unparsed); judges: {judges}; rubric "
        f"{run.rubric.id} v{count(run.rubric.version)}"
    )
    if cost is not None:
        text += f"; judge cost {usd(cost)}"
    where = (
        f"The whole report: [{details_url}]({details_url})"
        if details_url
        else "The whole report is in the run dir"
    )
    return f"{text}. {where}."
