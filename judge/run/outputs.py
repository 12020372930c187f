"""A run's outputs from what its store holds: the unblinded judgments (`judgments.jsonl`,
`judgments.parquet`) and the first part of its summary (counts, judges' behaviour, plain win
rates). Re-runnable at any time, on a finished or a partial run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from judge.aggregate import (
    PairJudgment,
    ScoreJudgment,
    aggregate_absolute,
    aggregate_pairwise,
    as_rows,
    flagged_lose_pairs,
    flagged_lose_scores,
)
from judge.config import RunConfig
from judge.rundir import RunDir
from judge.store import StoredResult
from judge.summary import CanarySetup, InjectionCounts, RunSummary
from judge.types import BlindedPair, BlindingKey, InjectionReport


def write_outputs(config: RunConfig, rundir: RunDir, *, summary_file: bool = True) -> RunSummary:
    """Aggregate what the store holds; write the judgments and (unless `summary_file` is
    false: the caller writes it once analysed) the unanalysed summary."""
    key = rundir.read_key()
    with rundir.open_store() as store:
        meta = store.all_meta()
        counts = store.counts()
        lengths = {b.blind_id: len(b.output) for b in store.iter_blinded()}
        pairs = list(store.iter_pairs())
        results = list(store.iter_results())
    # Memory: every result (rendered prompts, replies) is held here, as it always was. The
    # judgment rows quote the reasoning and unparseable replies these results already hold
    # (references, not copies: `as_rows` deep-copies, and str is immutable); only the Parquet
    # writer copies those texts once more, into Arrow buffers, while it writes.
    absolute = bool(results) and results[0].request.kind == "absolute"
    canaries = meta.get("canaries")
    # Canaries are judged as any system is, and set apart here: nothing downstream of the
    # judgments file (judge behaviour, comparison, calibration) ever meets them.
    results, canary_results = _split(results, key, set(canaries["kinds"]) if canaries else set())
    lose = _flagged_losers(config, meta)
    if absolute:
        score_rows, stats = aggregate_absolute(results, key)
        score_rows = lose.scores(score_rows)
        rows = as_rows(score_rows)
        overview: dict[str, dict[str, Any]] = _score_overview(score_rows)
    else:
        pair_rows, stats = aggregate_pairwise(results, pairs, key, lengths, config.aggregate)
        pair_rows = lose.pairs(pair_rows, pairs)
        rows = as_rows(pair_rows)
        overview = _win_overview(pair_rows)
    # Responses arrive in completion order; a fixed row order keeps the files, and the
    # bootstrap draws that index them, identical from run to run.
    rows.sort(key=_row_order)
    rundir.write_judgments(rows)
    canary_setup = None
    if canaries:
        canary_rows: list[Any]
        if absolute:
            canary_rows, canary_stats = aggregate_absolute(canary_results, key)
            canary_rows = lose.scores(canary_rows)
        else:
            canary_rows, canary_stats = aggregate_pairwise(
                canary_results, pairs, key, lengths, config.aggregate
            )
            canary_rows = lose.pairs(canary_rows, pairs)
        rundir.write_canary_judgments(sorted(as_rows(canary_rows), key=_row_order))
        canary_setup = CanarySetup.model_validate(
            {
                # By opaque id and by item: the store keeps them.
                **{k: v for k, v in canaries.items() if k not in ("flags", "compared")},
                "responses_total": sum(canaries["responses"].values()),
                "flagged_total": sum(canaries["flagged"].values()),
                "requests": len(canary_results),
                "pending": sum(r.status == "pending" for r in canary_results),
                "cost_usd": _known_sum(s.cost_usd for s in canary_stats.values()),
            }
        )
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
            },
            "counts": counts,
            "scrub": meta.get("scrub_report"),
            "injection": _injection(meta),
            "canary_setup": canary_setup,
            "skipped_pairs": len(meta.get("skipped_pairs") or []),
            "system_costs": meta.get("system_costs") or {},
            "judges": {name: asdict(s) for name, s in sorted(stats.items())},
            "systems": overview,
            "aggregate": config.aggregate,
        }
    )
    if summary_file:
        rundir.write_summary(summary)
    return summary


@dataclass(frozen=True)
class _Losers:
    """`aggregate.flagged`: with `lose`, the flagged responses' judgments are decided by rule;
    with `judge` (`flagged` empty), nothing changes."""

    flagged: set[str]
    lowest: float

    def pairs(self, rows: list[PairJudgment], pairs: list[BlindedPair]) -> list[PairJudgment]:
        return flagged_lose_pairs(rows, pairs, self.flagged) if self.flagged else rows

    def scores(self, rows: list[ScoreJudgment]) -> list[ScoreJudgment]:
        return flagged_lose_scores(rows, self.flagged, self.lowest) if self.flagged else rows


def _flagged_losers(config: RunConfig, meta: dict[str, Any]) -> _Losers:
    if config.aggregate.flagged == "judge":
        return _Losers(set(), 0.0)
    from judge.rubrics import AbsoluteScale, load_rubric

    scale = load_rubric(config.rubric).scale
    flagged = set((meta.get("injection_report") or {}).get("flags") or {})
    flagged |= set((meta.get("canaries") or {}).get("flags") or {})
    return _Losers(flagged, float(scale.min) if isinstance(scale, AbsoluteScale) else 0.0)


def _split(
    results: list[StoredResult], key: BlindingKey, canaries: set[str]
) -> tuple[list[StoredResult], list[StoredResult]]:
    """(the real systems' results, the canaries')."""
    if not canaries:
        return results, []
    real, canary = [], []
    for result in results:
        request = result.request
        if request.pair_id is not None:
            systems: tuple[str, ...] = key.pairs[request.pair_id]
        else:
            systems = (key.systems[request.blind_id],) if request.blind_id else ()
        (canary if canaries.intersection(systems) else real).append(result)
    return real, canary


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


def _row_order(row: dict[str, Any]) -> tuple:
    return (
        str(row.get("judge")),
        str(row.get("item_id")),
        str(row.get("pair_id") or row.get("system") or ""),
    )


def _win_overview(rows: list) -> dict[str, dict[str, Any]]:
    """Per judge (and panel), per system: wins, losses, ties and the plain win rate (ties as
    half). Intervals and paired comparisons come from `calibration.compare`."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        if row.winner is None:
            continue
        for system in (row.system_a, row.system_b):
            cell = table.setdefault(row.judge, {}).setdefault(
                system, {"wins": 0, "losses": 0, "ties": 0}
            )
            if row.winner == "tie":
                cell["ties"] += 1
            elif row.winner == system:
                cell["wins"] += 1
            else:
                cell["losses"] += 1
    for per_system in table.values():
        for cell in per_system.values():
            n = cell["wins"] + cell["losses"] + cell["ties"]
            cell["n"] = n
            cell["win_rate"] = (cell["wins"] + 0.5 * cell["ties"]) / n if n else None
    return table


def _score_overview(rows: list) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        if row.score is not None:
            table.setdefault(row.judge, {}).setdefault(row.system, []).append(row.score)
    return {
        judge: {
            system: {"n": len(v), "mean_score": sum(v) / len(v)} for system, v in systems.items()
        }
        for judge, systems in table.items()
    }
