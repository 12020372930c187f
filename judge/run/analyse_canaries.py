"""The canaries' win rates (`judge.blinding.canaries`): per judge and for the panel, each canary
against the weakest real system it was judged against (a padded copy against its own source,
pooled over sources), a Wilson interval, and a gate per rate that fails when the judge was
fooled."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd

from calibration.correction import wilson, z_quantile
from judge.analysis.aggregate import TEXT_FIELDS
from judge.analysis.verdict_tables import load_table
from judge.blinding.canaries import PADDED, is_canary
from judge.store.rundir import RunDir
from judge.summary.canary import Canaries, CanaryKind, CanaryRate, CanarySetup
from judge.summary.gate import GateOutcome
from judge.summary.run_summary import Comparison, mean_win_rates

_FAIR: dict[CanaryKind, float] = {"null_model": 0.0, "master_key": 0.0, "length_padded": 0.5}
"""What a judge that cannot be fooled gives each kind: a non-answer never wins; a padded copy
says what its source says, so it wins as often as it loses."""
SOURCE = "its source"
"""The opponent shown for padded copies, each judged against the system it copies."""


def canary_section(
    setup: CanarySetup | None,
    rundir: RunDir,
    comparison: Comparison,
    *,
    threshold: float,
    confidence: float,
    floor: float | None = None,
    judgments: pd.DataFrame | None = None,
) -> Canaries | None:
    """Win rates and gates of the run's canaries; None for a run without them. `floor`:
    absolute rubrics, the scale's lowest score. `judgments`: the run's judgments table
    (`judge.analysis.verdict_tables.judgment_table`), when the caller has read it already."""
    if setup is None:
        return None
    rows = _table(rundir.canary_judgments_jsonl)
    if "score" in rows.columns:
        real = _table(rundir.judgments_jsonl) if judgments is None else judgments
        with rundir.open_store() as store:
            compared = {tuple(c) for c in (store.get_meta("canaries") or {}).get("compared", [])}
        outcomes = _scored_outcomes(rows, real, compared, floor)
        own = _scored_outcomes(
            _as_judged(rows, "score"), _as_judged(real, "score"), compared, floor
        )
    else:
        outcomes = _pairwise_outcomes(rows)
        own = _pairwise_outcomes(_as_judged(rows, "winner"))
    against = {opponent for (_, canary, opponent) in outcomes if canary in setup.kinds}
    weakest = _weakest(comparison, against)
    z = z_quantile(confidence)
    rates = []
    for judge in sorted({judge for judge, _, _ in outcomes}):
        for canary, kind in sorted(setup.kinds.items()):
            if kind == "length_padded":
                continue
            per = {o: c for (j, k, o), c in outcomes.items() if j == judge and k == canary}
            # The weakest this judge faced: a judge of the weakest system's family never
            # meets the canaries there, and must not escape its gate for that.
            mine = weakest if weakest in per else _weakest(comparison, set(per))
            if mine is not None:
                judged = own.get((judge, canary, mine), Counter())
                rates.append(_rate(canary, kind, judge, mine, per, judged, threshold, z))
        padded, judged = (
            {
                setup.sources[k]: c
                for (j, k, _), c in found.items()
                if j == judge and setup.kinds.get(k) == "length_padded"
            }
            for found in (outcomes, own)
        )
        if padded:
            pooled = sum(judged.values(), Counter())
            name = "canary:padded"
            rates.append(
                _rate(name, "length_padded", judge, SOURCE, padded, pooled, threshold, z, True)
            )
    gates = [_gate(rate) for rate in rates if rate.fooled is not None]
    return Canaries(
        weakest=weakest,
        threshold=threshold,
        confidence=confidence,
        rates=rates,
        gates=gates,
        passed=all(g.passed for g in gates),
    )


def _weakest(comparison: Comparison, among: set[str]) -> str | None:
    """The lowest-ranked of `among`; when the ranking has no finite fit (a system that never
    lost), the one with the lowest mean win rate against the others."""
    ranked = [r for r in comparison.ranking if r.system in among]
    if ranked:
        return max(ranked, key=lambda r: (r.rank, -r.estimate, r.system)).system
    means = {s: m for s, m in mean_win_rates(comparison).items() if s in among}
    return min(means, key=lambda s: (means[s], s)) if means else None


def _as_judged(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """`rows` with the judge's own verdicts where `aggregate.flagged: lose` overrode them."""
    if rows.empty or "lost_by_flag" not in rows.columns:
        return rows
    own = "judged_winner" if column == "winner" else "judged_score"
    ruled = rows["lost_by_flag"].fillna(False).astype(bool)
    if not ruled.any():
        return rows
    rows = rows.copy()
    rows.loc[ruled, column] = rows.loc[ruled, own]
    return rows


def _table(path: Path) -> pd.DataFrame:
    return load_table(path, drop=TEXT_FIELDS) if path.is_file() else pd.DataFrame()


Outcomes = dict[tuple[str, str, str], Counter[str]]
"""(judge, canary, real system) -> counts of "win", "loss", "tie" (the canary's)."""


def _pairwise_outcomes(rows: pd.DataFrame) -> Outcomes:
    out: Outcomes = defaultdict(Counter)
    if rows.empty:
        return out
    for judge, a, b, winner in rows[["judge", "system_a", "system_b", "winner"]].itertuples(
        index=False
    ):
        if winner is None or pd.isna(winner):
            continue
        canary, opponent = (a, b) if is_canary(a) else (b, a)
        result = "tie" if winner == "tie" else "win" if winner == canary else "loss"
        out[(judge, canary, opponent)][result] += 1
    return out


def _scored_outcomes(
    rows: pd.DataFrame,
    real: pd.DataFrame,
    compared: set[tuple[str, ...]],
    floor: float | None,
) -> Outcomes:
    """Absolute rubrics: on each item, the canary's score against the score of each real
    system it is `compared` with ((item_id, canary, system), as prepare planned them: a padded
    copy with its source), by the same judge; the canary wins when it scored higher. A
    null-model or master-key canary given the scale's lowest score loses, even to an answer
    scored as low: it could not have been scored lower."""
    out: Outcomes = defaultdict(Counter)
    if rows.empty or real.empty:
        return out
    # The real scores of the items canaries were judged on only (a sample of the run's).
    scored = real[real["score"].notna() & real["item_id"].isin(set(rows["item_id"]))]
    theirs: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for judge, item, system, score in scored[["judge", "item_id", "system", "score"]].itertuples(
        index=False
    ):
        theirs[(judge, item)].append((system, float(score)))
    mine = rows[rows["score"].notna()]
    for judge, item, canary, score in mine[["judge", "item_id", "system", "score"]].itertuples(
        index=False
    ):
        source = canary.removeprefix(PADDED) if canary.startswith(PADDED) else None
        for system, other in theirs[(judge, item)]:
            if (item, canary, system) not in compared:
                continue
            lowest = source is None and floor is not None and score <= floor
            result = "loss" if lowest or score < other else "win" if score > other else "tie"
            out[(judge, canary, system)][result] += 1
    return out


def _rate(
    canary: str,
    kind: CanaryKind,
    judge: str,
    opponent: str,
    per_opponent: dict[str, Counter[str]],
    judged: Counter[str],
    threshold: float,
    z: float,
    pooled: bool = False,
) -> CanaryRate:
    """`opponent`'s counts (every opponent's, `pooled`, for padded copies against their
    sources); `judged`: the same counts from the judge's own verdicts (before
    `aggregate.flagged: lose`)."""
    counts = sum(per_opponent.values(), Counter()) if pooled else per_opponent[opponent]
    wins, losses, ties = counts["win"], counts["loss"], counts["tie"]
    n = wins + losses + ties
    fair = _FAIR[kind]
    rate = low = high = None
    fooled = None
    if n:
        rate = (wins + ties / 2) / n
        low, high = wilson(rate, n, z)
        fooled = rate > fair + threshold and low > fair
    best = max(per_opponent, key=lambda o: (_win_rate(per_opponent[o]), o))
    return CanaryRate(
        canary=canary,
        kind=kind,
        judge=judge,
        opponent=opponent,
        wins=wins,
        losses=losses,
        ties=ties,
        n=n,
        win_rate=rate,
        ci_low=low,
        ci_high=high,
        fair=fair,
        limit=fair + threshold,
        fooled=fooled,
        best_opponent=best,
        best_win_rate=_win_rate(per_opponent[best]),
        judged_win_rate=_win_rate(judged),
    )


def _win_rate(counts: Counter[str]) -> float | None:
    n = counts["win"] + counts["loss"] + counts["tie"]
    return (counts["win"] + counts["tie"] / 2) / n if n else None


def _gate(rate: CanaryRate) -> GateOutcome:
    assert rate.win_rate is not None and rate.ci_low is not None and rate.ci_high is not None
    shown = (
        f"{rate.win_rate:.1%} [{rate.ci_low:.1%}, {rate.ci_high:.1%}] over {rate.n} "
        f"judgments, limit {rate.limit:.0%}"
    )
    verdict = "fooled" if rate.fooled else "not fooled"
    return GateOutcome(
        expression=f"canary {rate.canary} vs {rate.opponent} ({rate.judge}) <= {rate.limit:g}",
        passed=not rate.fooled,
        value=rate.win_rate,
        ci_low=rate.ci_low,
        ci_high=rate.ci_high,
        reason=f"{rate.judge} {verdict} by {rate.canary} against {rate.opponent}: {shown}",
    )
