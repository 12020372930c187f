"""Human-readable terminal output for CLI commands (rich tables)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from judge.prepare import PrepareSummary
    from judge.types import ScrubReport

_console = Console(highlight=False)
if _console.width < 120 and not _console.is_terminal:
    # Piped output (CI logs, `make demo | tee`) would otherwise wrap tables at 80 columns.
    _console = Console(highlight=False, width=120)


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
    _console.print(
        f"{report.total} markers scrubbed; {report.responses_changed} of {report.responses} "
        "responses changed"
    )


def print_prepare_summary(summary: PrepareSummary) -> None:
    print_scrub_report(summary.scrub)
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
    _console.print(
        f"rubric {summary.rubric}; judges: {judges}; {summary.requests} requests planned{same}"
    )
    _console.print(f"run dir: {summary.run_dir}")
