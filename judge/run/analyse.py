"""After the judging: calibrate the judge against humans, compare the systems, and decide —
every number the report shows, as the typed sections of the run's summary (the report only
formats what is there).

Sections: `comparison` (paired bootstrap, Holm-adjusted; Bradley-Terry ordering with ranks from
the same tests; per stratum), `win_rates` (each system against the field, item-cluster
intervals), `same_family` (what the verdicts of a judge on its own family's systems change),
`calibration` (agreement with intervals, human ceiling, gate, corrected estimates), `literature`
(the judge's published verdicts: agreement on every labelled key, and whether this run
reproduces them), `data` and `decision` (what the data supports and how many items would change
it), `audit` (verdicts to inspect: `judge.run.analyse_audit`)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from judge.analysis.verdict_tables import (
    judgment_table,
    load_labels,
    load_table,
    run_judgments,
    run_labels,
    with_pair_styles,
)
from judge.config.run_config import RunConfig
from judge.errors import DataError
from judge.run.analyse_audit import audit_section
from judge.run.analyse_canaries import canary_section
from judge.run.answer import answer, trust_reason
from judge.store.rundir import RunDir
from judge.summary.alignment import RubricAlignment
from judge.summary.canary import Canaries
from judge.summary.run_summary import (
    Analysis,
    Calibration,
    Comparison,
    DataOverview,
    Decision,
    Literature,
    Neighbour,
    PairDiff,
    RankedNeighbour,
    RunComparison,
    RunSummary,
    SameFamily,
    SelfPreferenceCheck,
    WinRate,
    WinRatesByStratum,
    mean_win_rates,
)

_CONFIDENCE = 0.95
C = TypeVar("C", bound=Comparison)
_MAX_STRATUM_VALUES = 20


def analyse_run(
    config: RunConfig, rundir: RunDir, summary: RunSummary, *, human: Path | None = None
) -> RunSummary:
    """`summary` with its analysis. The judge is calibrated against `human`, else the labels
    added to the run (`RunDir.human_labels`: `judge report --human`, the service's upload),
    else the config's `calibration.human`."""
    from calibration.compare_input import ComparisonInputError
    from calibration.gates import GateError, GateSyntaxError
    from calibration.labels import LabelError

    human_path = human or run_labels(rundir, config)
    table = judgment_table(rundir)
    rows, strata = run_judgments(rundir, table=table)
    judge = str(rows["judge"].iloc[0]) if len(rows) else None
    pairwise = "score_a" in rows.columns
    if config.compare.control and pairwise:
        rows = with_pair_styles(rundir, rows)
    by = _stratum(config.compare.strata, strata)
    try:
        comparison = _winner_first(
            RunComparison.model_validate(
                {"judge": judge, **_compare(rows, config, by, pairwise, config.compare.control)}
            )
        )
        # Read once: the calibration and the literature check use the same human labels.
        labels = None if human_path is None else load_labels(human_path)
        judge_table, kind = _judge_labels(rows, strata)
        calibration = _calibration(judge_table, kind, labels, human_path, strata, config)
        same_family = _same_family(rows, config, by) if pairwise else None
        canaries = canary_section(
            summary.canary_setup,
            rundir,
            comparison,
            threshold=config.canaries.threshold if config.canaries else 0.0,
            confidence=_CONFIDENCE,
            floor=None if pairwise else float(_score_scale(config)[0]),
            judgments=table,
        )
        decision = _decision(comparison, same_family, calibration, canaries)
        analysis = Analysis(
            comparison=comparison,
            win_rates=_win_rates(rows, config) if pairwise else None,
            win_rates_by_stratum=(
                _win_rates_by_stratum(rows, config, by) if pairwise and by else None
            ),
            same_family=same_family,
            calibration=calibration,
            literature=_literature(judge_table, labels, config),
            data=_data_overview(rundir, strata, comparison, summary),
            decision=decision,
            audit=audit_section(config, rundir, table, comparison, decision, labels),
            canaries=canaries,
            alignment=_alignment(rundir),
        )
    except (ComparisonInputError, GateSyntaxError, GateError, LabelError) as exc:
        raise DataError(str(exc), path=str(rundir.path)) from None
    return summary.model_copy(update={"analysis": analysis})


def _data_overview(
    rundir: RunDir, strata: list[str], comparison: Comparison, summary: RunSummary
) -> DataOverview:
    """Items per stratum value, and what the run holds per judge."""
    sizes: dict[str, dict[str, int]] = {column: {} for column in strata}
    for values in rundir.item_strata().values():
        for column, value in values.items():
            bucket = sizes.setdefault(column, {})
            bucket[str(value)] = bucket.get(str(value), 0) + 1
    few = {c: v for c, v in sizes.items() if len(v) <= _MAX_STRATUM_VALUES}
    return DataOverview(
        strata={c: dict(sorted(v.items(), key=lambda kv: _natural(kv[0]))) for c, v in few.items()},
        # Item-group ids (question_id) are no strata to list: their number of values only.
        many_valued={c: len(v) for c, v in sizes.items() if c not in few},
        systems=len(comparison.systems),
        judges=len(summary.judges),
    )


def _natural(value: str) -> tuple:
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


def _stratum(wanted: list[str], available: list[str]) -> str | None:
    for column in wanted:
        if column not in available:
            raise DataError(
                f"compare.strata: {column!r} is not an item column; items have: "
                f"{', '.join(available) or '(none)'}"
            )
    return wanted[0] if wanted else None


def _compare(
    rows: pd.DataFrame,
    config: RunConfig,
    by: str | None,
    pairwise: bool,
    controls: list[str] | None = None,
) -> dict:
    """The comparison section; `controls` (pairwise: the rows carry their styles) adds the
    length- and style-controlled win rates."""
    from calibration.compare import compare_table
    from judge.analysis.response_style import COLUMNS

    unused = controls if not pairwise else None
    controls = controls if pairwise else None
    if pairwise:
        table = rows[rows["score_a"].notna()]
        keep = ["item_id", "system_a", "system_b", "score_a", *(COLUMNS if controls else [])]
    else:
        table = rows[rows["score"].notna()]
        keep = ["item_id", "system", "score"]
    if by is not None:
        keep.append(by)
    if table.empty:
        raise DataError(_no_verdicts(rows))
    report = compare_table(
        table[keep].reset_index(drop=True),
        kind="pairwise" if pairwise else "scores",
        by=by,
        resamples=config.compare.resamples,
        seed=config.compare.seed,
        gates=config.compare.gates,
        ci=_CONFIDENCE,
        controls=controls or (),
        control_baseline=config.pairs.baseline,  # None unless every pair holds it
    )
    out = report.to_dict()
    if unused:
        out["notes"].append(
            f"compare.control ({', '.join(unused)}) left out: controlling for style needs "
            "pairwise judgments, and this run scored responses one at a time"
        )
    return out


def _winner_first(comparison: C) -> C:
    """Every pair with the system ahead first: the report reads positive differences, never a
    negative one to invert (the statistics computed each pair in name order)."""
    return comparison.model_copy(
        update={
            "comparisons": [c.winner_first() for c in comparison.comparisons],
            "by_stratum": [c.winner_first() for c in comparison.by_stratum],
        }
    )


def _win_rates(rows: pd.DataFrame, config: RunConfig) -> list[WinRate]:
    """Each system's win rate against all the others (ties half), resampling items."""
    from calibration.bootstrap import bootstrap_mean
    from calibration.pairs import canonical_rows

    scored = rows[rows["score_a"].notna()]
    out = []
    for system in sorted(set(scored["system_a"]) | set(scored["system_b"])):
        as_a = scored[scored["system_a"] == system]
        as_b = scored[scored["system_b"] == system]
        values = np.concatenate([as_a["score_a"].to_numpy(), 1.0 - as_b["score_a"].to_numpy()])
        items = pd.concat([as_a["item_id"], as_b["item_id"]]).to_numpy()
        # Rows in the order of (item, value): clusters are numbered by first appearance, so
        # this draws the same items whatever order the rows (or the systems' names) came in.
        order = canonical_rows(items, values)
        result = bootstrap_mean(
            values[order],
            seed=config.compare.seed,
            resamples=config.compare.resamples,
            clusters=items[order],
            ci=_CONFIDENCE,
        )
        out.append(
            WinRate(
                system=system,
                win_rate=result.mean,
                ci_low=result.ci_low,
                ci_high=result.ci_high,
                judgments=result.n,
                items=result.n_units,
            )
        )
    return sorted(out, key=lambda r: -r.win_rate)


def _win_rates_by_stratum(rows: pd.DataFrame, config: RunConfig, by: str) -> WinRatesByStratum:
    """Each system's win rate against the others within each value of `by`."""
    values = sorted(rows[by].dropna().astype(str).unique(), key=_natural)
    return WinRatesByStratum(
        by=by,
        strata={v: _win_rates(rows[rows[by].astype(str) == v], config) for v in values},
    )


def _same_family(rows: pd.DataFrame, config: RunConfig, by: str | None) -> SameFamily | None:
    """The flagged pairs (judge and a system of one family) against a comparison without
    them: if the ranking of the other systems holds, self-preference did not decide it."""
    from judge.families import family_of, judge_family

    if "same_family" not in rows.columns or not rows["same_family"].any():
        return None
    families = {judge_family(j, config.families) for j in config.judges}
    systems = sorted(set(rows["system_a"]) | set(rows["system_b"]))
    own = [s for s in systems if family_of(s, config.families) in families]
    flagged = rows["same_family"].astype(bool)
    cross = rows[~flagged]
    remaining = set(cross["system_a"]) | set(cross["system_b"])
    only = None
    if len(remaining) >= 2:
        only = _compare(cross, config, by if by in cross.columns else None, True)
    return SameFamily(
        systems=own,
        flagged_pairs=int(flagged.sum()),
        cross_family_pairs=len(cross),
        cross_family_only=None if only is None else _winner_first(Comparison.model_validate(only)),
    )


def _judge_labels(rows: pd.DataFrame, strata: list[str]) -> tuple[pd.DataFrame, str]:
    if "score_a" in rows.columns:
        table = rows[["item_id", "system_a", "system_b", "winner", *strata]].copy()
        if "same_family" in rows.columns:
            table["same_family"] = np.where(rows["same_family"].astype(bool), "yes", "no")
        return table, "pairwise"
    return rows[["item_id", "system", "score", *strata]].copy(), "absolute"


def _calibration(
    judge_table: pd.DataFrame,
    kind: str,
    human: pd.DataFrame | None,
    human_path: Path | None,
    strata: list[str],
    config: RunConfig,
) -> Calibration | None:
    """The judge against the humans, per configured stratum and split by same-family."""
    from calibration.calibrate import calibrate
    from calibration.labels import LabelError
    from calibration.trust_gate import GateThresholds
    from judge.analysis.table_analysis import label_error

    if human is None:
        return None
    # Strata the human table carries too would be joined twice: the items' copy wins.
    human = human.drop(columns=[c for c in strata if c in human.columns])
    by = list(config.calibration.strata)
    if "same_family" in judge_table and judge_table["same_family"].eq("yes").any():
        by.append("same_family")
    for column in by:
        if column not in judge_table.columns:
            raise DataError(
                f"calibration.strata: {column!r} is not an item column", path=str(human_path)
            )
    try:
        report = calibrate(
            judge_table,
            human,
            kind=kind,  # type: ignore[arg-type]
            strata=by,
            scale=_score_scale(config) if kind == "absolute" else None,
            gate=GateThresholds(**config.calibration.gate.model_dump()),
            resamples=config.calibration.resamples,
            seed=config.calibration.seed,
            confidence=_CONFIDENCE,
        )
    except LabelError as exc:
        # Naming the labels file (and its row), not the run dir: the file is what to fix.
        raise label_error(exc, judge=None, human=human_path) from None
    return Calibration.model_validate({"human_labels": str(human_path), **report.to_dict()})


def _score_scale(config: RunConfig) -> list[int]:
    """Every score the rubric allows: levels nobody used still count (a human score outside
    them is a data error), and weighted kappa weighs by these values."""
    from judge.rubric.rubrics import AbsoluteScale, load_rubric

    scale = load_rubric(config.rubric).scale
    assert isinstance(scale, AbsoluteScale)  # the run's judgments are scores
    return list(range(scale.min, scale.max + 1))


def _literature(
    judge_table: pd.DataFrame, human: pd.DataFrame | None, config: RunConfig
) -> Literature | None:
    """The judge's published verdicts: their agreement with the humans on every labelled key,
    and how many of this run's verdicts are identical to them on the keys both have."""
    from calibration.calibrate import calibrate
    from calibration.labels import normalise

    published_path = config.calibration.published
    if published_path is None or human is None:
        return None
    published = load_table(published_path)
    by = [c for c in config.calibration.strata if c in published.columns]
    report = calibrate(
        published,
        human,
        kind="pairwise",
        strata=by,
        resamples=config.calibration.resamples,
        seed=config.calibration.seed,
        confidence=_CONFIDENCE,
    ).to_dict()
    ours = normalise(judge_table[judge_table["winner"].notna()], "pairwise", "judge")
    theirs = normalise(published, "pairwise", "judge")
    keys = ["item_id", "system_a", "system_b"]
    both = ours[[*keys, "label"]].merge(
        theirs[[*keys, "label"]], on=keys, suffixes=("_run", "_published")
    )
    return Literature(
        published=str(published_path),
        keys=len(theirs),
        run_keys=len(ours),
        shared_keys=len(both),
        identical_verdicts=int((both["label_run"] == both["label_published"]).sum()),
        agreement=[_agreement_counts(part) for part in [report["overall"], *report["strata"]]],
    )


def _agreement_counts(part: dict) -> dict[str, Any]:
    return {
        "stratum": part["stratum"],
        **{
            name: {k: part["metrics"][name][k] for k in ("agree", "comparisons", "value")}
            for name in ("agreement_s1", "agreement_s2")
        },
    }


def _pair(comparison: Comparison, a: str, b: str, stratum: str | None) -> PairDiff | None:
    """The comparison of `a` and `b` (in `stratum`), whichever way round it was computed."""
    found = comparison.comparisons if stratum is None else comparison.by_stratum
    return next((c for c in found if c.stratum == stratum and {c.a, c.b} == {a, b}), None)


def _oriented(
    comparison: Comparison, upper: str, lower: str, stratum: str | None
) -> Neighbour | None:
    """The comparison of `upper` - `lower` (in `stratum`), turned round when it was computed
    the other way."""
    c = _pair(comparison, upper, lower, stratum)
    return None if c is None else _turned(c, upper, lower)


def _turned(c: PairDiff, upper: str, lower: str) -> Neighbour:
    sign = 1.0 if (c.a, c.b) == (upper, lower) else -1.0
    low = high = None
    if c.ci_low is not None and c.ci_high is not None:
        low, high = sorted((sign * c.ci_low, sign * c.ci_high))
    return Neighbour(
        upper=upper,
        lower=lower,
        diff=sign * c.mean_diff,
        ci_low=low,
        ci_high=high,
        n=c.n,
        told_apart=c.told_apart,
        p_holm=c.p_holm,
    )


def _self_preference_check(
    same_family: SameFamily | None, calibration: Calibration | None
) -> SelfPreferenceCheck | None:
    """Where the judge and the humans differ most on a pair with a system of the judge's own
    family: the judge's win rate beside the humans' alone on the same pair."""
    if same_family is None or calibration is None:
        return None
    own = set(same_family.systems)
    worst = None
    for c in calibration.corrected:
        raw, humans = c.raw.value, c.human_only.value
        if len(c.systems) != 2 or raw is None or humans is None or not own & set(c.systems):
            continue
        if worst is None or abs(raw - humans) > abs(worst.judge - worst.humans):
            worst = SelfPreferenceCheck(
                target=c.target, judge=raw, humans=humans, corrected=c.value
            )
    return worst


def _items_needed(comparison: Comparison, pair: PairDiff, c: Neighbour) -> dict[str, Any]:
    """The items that would tell a neighbouring pair apart if its difference and its spread
    per item held, sized for "told apart" itself: a p-value below (1 - ci) / pairs, which
    Holm's adjustment tells apart at any step (the adjusted p is at most pairs x p), by the
    test its p-value came from (`calibration.pairs.items_to_tell_apart`). Never fewer than
    the items judged for a pair not told apart (they did not tell it apart), never more for
    one that is."""
    from calibration.pairs import items_to_tell_apart

    level = (1 - pair.ci) / len(comparison.comparisons)
    if pair.se is None:  # one item: no spread to size from
        return {"items_needed": None, "items_needed_level": level, "items_needed_test": None}
    got = items_to_tell_apart(
        diff=pair.mean_diff,
        se=pair.se,
        n=pair.n,
        wins=pair.wins,
        losses=pair.losses,
        p_method=pair.p_method,
        level=level,
    )
    if got is None:
        return {"items_needed": None, "items_needed_level": level, "items_needed_test": None}
    needed, test = got
    needed = min(needed, c.n) if c.told_apart else max(needed, c.n + 1)
    return {"items_needed": needed, "items_needed_level": level, "items_needed_test": test}


def _by_win_rate(comparison: RunComparison) -> tuple[list[str], list[str]]:
    """The systems by their mean paired win rate against the others, when the ranking has no
    fit (a system that never lost, or never won, leaves Bradley-Terry without a finite
    estimate: a clear result, not an unsettled one), and the systems not told apart from the
    first by their paired test."""
    means = mean_win_rates(comparison)
    order = sorted(means, key=lambda s: (-means[s], s))
    if not order:
        return [], []
    tied = []
    for other in order[1:]:
        pair = _pair(comparison, order[0], other, None)
        if pair is None or not pair.told_apart:
            tied.append(other)
    return order, tied


def _decision(
    comparison: RunComparison,
    same_family: SameFamily | None,
    calibration: Calibration | None,
    canaries: Canaries | None = None,
) -> Decision:
    """What the comparison supports: the leader and the systems sharing its rank, and for each
    neighbouring pair of the ranking whether it is told apart and the items that would tell
    it apart (`_items_needed`). Ranks come from the same Holm-adjusted tests as "told apart",
    so a system sharing the leader's rank is never told apart from it."""
    ranking = comparison.ranking
    order = [r.system for r in ranking]
    tied = [r.system for r in ranking[1:] if r.rank == ranking[0].rank]
    ordered_by = "ranking"
    if len(ranking) < 2:
        order, tied = _by_win_rate(comparison)
        ordered_by = "win rate" if len(order) > 1 else "ranking"
    neighbours = []
    for upper, lower in itertools.pairwise(order):
        pair = _pair(comparison, upper, lower, None)
        if pair is None:
            continue
        c = _turned(pair, upper, lower)
        neighbours.append(RankedNeighbour(**c.model_dump(), **_items_needed(comparison, pair, c)))
    strata = list(dict.fromkeys(str(c.stratum) for c in comparison.by_stratum))
    gate = calibration.gate.verdict if calibration is not None else None
    return Decision(
        answer=answer(comparison, canaries, calibration, order, tied, neighbours, same_family),
        self_preference_check=_self_preference_check(same_family, calibration),
        leader=order[0] if order else None,
        ordered_by=ordered_by,  # type: ignore[arg-type]
        leader_tied_with=tied,
        neighbours=neighbours,
        neighbours_by_stratum={
            stratum: [_oriented(comparison, n.upper, n.lower, stratum) for n in neighbours]
            for stratum in strata
        },
        gate=gate or "not calibrated",
        trusted=gate == "trusted",
        trust_reason=trust_reason(calibration),
    )


def _no_verdicts(rows: pd.DataFrame) -> str:
    """Why a finished run has nothing to compare: every judgment lacks a verdict."""
    failures = rows["failure_ab"] if "failure_ab" in rows.columns else None
    reasons = (
        ""
        if failures is None
        else ", ".join(
            f"{count} × {reason!r}"
            for reason, count in failures.dropna().value_counts().head(3).items()
        )
    )
    return (
        f"no verdicts to compare: none of the {len(rows):,} judgments has one"
        + (f" ({reasons})" if reasons else "")
        + "; judgments.jsonl holds each reply and why it was not read"
    )


def _alignment(rundir: RunDir) -> RubricAlignment | None:
    """What the last `judge align --rejudge` of this run measured, if one ran."""
    path = rundir.alignment_file
    if not path.is_file():
        return None
    try:
        return RubricAlignment.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataError(
            f"not an alignment record ({exc.__class__.__name__}): run judge align --rejudge again",
            path=str(path),
        ) from None
