"""The one-page evaluation report: `report.md` and a self-contained `report.html` (figures
embedded, no network), rendered from the run's summary alone.

Every number on the page is a field of the summary, formatted; nothing is computed here, so a
reader can check any figure against the machine-readable file (a test holds us to it).
"""

from __future__ import annotations

from typing import Any

from judge.report.blocks import Block, figures, to_html, to_markdown
from judge.report.format import traced
from judge.report.sections import build
from judge.store.rundir import RunDir
from judge.summary.run_summary import RunSummary

__all__ = ["build", "build_traced", "to_html", "to_markdown", "write_report"]


def write_report(rundir: RunDir, summary: RunSummary | None = None) -> RunDir:
    """Render `report.md`, `report.html` and the figures from `summary` (default: the run's
    `summary.json`)."""
    summary = summary or rundir.read_summary()
    blocks = build(summary)
    rundir.write_report(
        to_markdown(blocks),
        to_html(blocks, title=f"Evaluation report: {summary.run.name}"),
        figures(blocks),
    )
    return rundir


def build_traced(summary: RunSummary) -> tuple[list[Block], list[tuple[Any, str]]]:
    """The page's blocks and the ledger of (value, text) of every number formatted on it."""
    with traced() as ledger:
        return build(summary), ledger
