"""A run's outputs from what its store holds: the unblinded judgments (`judgments.jsonl`,
`judgments.parquet`) and the first part of its summary (counts, judges' behaviour, plain win
rates). Re-runnable at any time, on a finished or a partial run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from judge.analysis.aggregate import Aggregation, Judgment, PairJudgment, ScoreJudgment, as_row
from judge.config.run_config import RunConfig
from judge.run.spend import realised_costs
from judge.store import result_rows
from judge.store.judgment_files import ROW_GROUP_ROWS
from judge.store.run_store import RunStore
from judge.store.rundir import RunDir
from judge.summary.run_summary import CanarySetup, InjectionCounts, RunSummary
from judge.types import PANEL, InjectionReport


def write_outputs(
    config: RunConfig,
    rundir: RunDir,
    *,
    summary_file: bool = True,
    row_group_rows: int = ROW_GROUP_ROWS,
) -> RunSummary:
    """Aggregate what the store holds; write the judgments and (unless `summary_file` is
    false: the caller writes it once analysed) the unanalysed summary.

    One pass over the store's results, an item at a time (`judge.store.result_rows`): each item's
    judgments are written as they are made (`RunDir.judgments_writers`), and only the judges'
    statistics and the win (or score) counts per judge and system are kept."""
    key = rundir.read_key()
    with rundir.open_store() as store:
        meta = store.all_meta()
        counts = store.counts()
        absolute = result_rows.kind(store) == "absolute"
        canaries = meta.get("canaries")
        flagged, lowest = _flagged_losers(config, meta)
        costs = realised_costs(store, config.judges)
        aggregation = Aggregation(
            key,
            config.aggregate,
            # Canaries are judged as any system is, and set apart here: nothing downstream of
            # the judgments file (judge behaviour, comparison, calibration) ever meets them.
            canaries=set(canaries["kinds"]) if canaries else set(),
            flagged=flagged,
            lowest=lowest,
            panel=len(result_rows.judges(store)) > 1,
        )
        overview = _Overview(absolute)
        _write_judgments(
            store,
            rundir,
            aggregation,
            overview,
            absolute=absolute,
            canaries=bool(canaries),
            row_group_rows=row_group_rows,
        )
    stats = aggregation.stats()
    canary_setup = _canary_setup(aggregation, canaries) if canaries else None
    summary = RunSummary.model_validate(
        {
            "run": {
                "name": config.name,
                "question": config.question,
                "rubric": meta["rubric"],
                "judges": config.judges,
                "orders": config.orders,
                "pairs": config.pairs,
                "allow_same_family": config.allow_same_family,
                "seeds": meta["seeds"],
                "environment": _installed(meta["environment"]),
                "config_hash": meta["config_hash"],
                "simulated": any(j.stand_in for j in config.judges),
            },
            "counts": counts,
            "scrub": meta.get("scrub_report"),
            "injection": _injection(meta),
            "canary_setup": canary_setup,
            "skipped_pairs": len(meta.get("skipped_pairs") or []),
            "system_costs": meta.get("system_costs") or {},
            "judges": {name: asdict(s) for name, s in stats.items()},
            "costs": costs,
            "systems": overview.table(),
            "aggregate": config.aggregate,
        }
    )
    if summary_file:
        rundir.write_summary(summary)
    return summary


def _write_judgments(
    store: RunStore,
    rundir: RunDir,
    aggregation: Aggregation,
    overview: _Overview,
    *,
    absolute: bool,
    canaries: bool,
    row_group_rows: int,
) -> None:
    """Aggregate the store's results an item at a time into the judgments files (the real
    systems' and the canaries'), counting the real ones in `overview`."""
    record = ScoreJudgment if absolute else PairJudgment
    with rundir.judgments_writers(record, row_group_rows=row_group_rows) as (real, canary):
        for results in result_rows.by_item(store):
            for is_canary, judgment in aggregation.item(results):
                if is_canary:
                    canary.add(as_row(judgment))
                else:
                    real.add(as_row(judgment))
                    overview.add(judgment)
        # A panel is several judges: with one among the real systems' results (or the
        # canaries'), its rows go.
        if aggregation.judges() <= 1:
            real.drop(PANEL)
            overview.drop(PANEL)
        if aggregation.judges(canary=True) <= 1:
            canary.drop(PANEL)
        real.finish()
        if canaries:
            canary.finish()


def _canary_setup(aggregation: Aggregation, canaries: dict[str, Any]) -> CanarySetup:
    """The canaries as prepared, with what judging them took."""
    canary_stats = aggregation.stats(canary=True).values()
    return CanarySetup.model_validate(
        {
            # By opaque id and by item: the store keeps them.
            **{k: v for k, v in canaries.items() if k not in ("flags", "compared")},
            "responses_total": sum(canaries["responses"].values()),
            "flagged_total": sum(canaries["flagged"].values()),
            "requests": sum(s.requests for s in canary_stats),
            "pending": sum(s.pending for s in canary_stats),
            "cost_usd": _known_sum(s.cost_usd for s in canary_stats),
        }
    )


def _flagged_losers(config: RunConfig, meta: dict[str, Any]) -> tuple[set[str], float]:
    """`aggregate.flagged`: with `lose`, the flagged responses (blind ids) whose judgments are
    decided by rule, and the scale's lowest score; with `judge`, none."""
    if config.aggregate.flagged == "judge":
        return set(), 0.0
    from judge.rubric.rubrics import AbsoluteScale, load_rubric

    scale = load_rubric(config.rubric).scale
    flagged = set((meta.get("injection_report") or {}).get("flags") or {})
    flagged |= set((meta.get("canaries") or {}).get("flags") or {})
    return flagged, float(scale.min) if isinstance(scale, AbsoluteScale) else 0.0


def _installed(environment: dict[str, Any]) -> dict[str, Any]:
    """The recorded environment with the packages that were installed: the store records an
    optional one that was not (LiteLLM in a core install) as None."""
    packages = environment.get("packages") or {}
    return {**environment, "packages": {k: v for k, v in packages.items() if v is not None}}


def _known_sum(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _injection(meta: dict[str, Any]) -> InjectionCounts | None:
    if "injection_report" not in meta:
        return None  # prepared before the detector existed
    report = InjectionReport.model_validate(meta["injection_report"])
    return InjectionCounts.model_validate(report.model_dump(exclude={"flags"}))


class _Overview:
    """Per judge (and panel), per system: wins, losses, ties and the plain win rate (ties as
    half); or, for absolute scores, the number of scores and their mean. Intervals and paired
    comparisons come from `calibration.compare`. Judges and systems by name."""

    def __init__(self, absolute: bool) -> None:
        self._absolute = absolute
        self._cells: dict[str, dict[str, dict[str, Any]]] = {}

    def add(self, row: Judgment) -> None:
        if isinstance(row, ScoreJudgment):
            if row.score is not None:
                cell = self._cell(row.judge, row.system, {"n": 0, "sum": 0.0})
                cell["n"] += 1
                cell["sum"] += row.score
            return
        if row.winner is None:
            return
        for system in (row.system_a, row.system_b):
            cell = self._cell(row.judge, system, {"wins": 0, "losses": 0, "ties": 0})
            if row.winner == "tie":
                cell["ties"] += 1
            elif row.winner == system:
                cell["wins"] += 1
            else:
                cell["losses"] += 1

    def drop(self, judge: str) -> None:
        self._cells.pop(judge, None)

    def table(self) -> dict[str, dict[str, dict[str, Any]]]:
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for judge, systems in sorted(self._cells.items()):
            for system, cell in sorted(systems.items()):
                if self._absolute:
                    entry = {"n": cell["n"], "mean_score": cell["sum"] / cell["n"]}
                else:
                    n = cell["wins"] + cell["losses"] + cell["ties"]
                    rate = (cell["wins"] + 0.5 * cell["ties"]) / n if n else None
                    entry = {**cell, "n": n, "win_rate": rate}
                out.setdefault(judge, {})[system] = entry
        return out

    def _cell(self, judge: str, system: str, empty: dict[str, Any]) -> dict[str, Any]:
        return self._cells.setdefault(judge, {}).setdefault(system, empty)
