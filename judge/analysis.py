"""After the judging: calibrate the judge against humans, compare the systems, and write every
number the report shows into `summary.json` (the report only formats what is there).

Sections added to the summary: `comparison` (paired bootstrap, Bradley-Terry ranking with tied
ranks, per stratum), `win_rates` (each system against the field, item-cluster intervals),
`same_family` (what the verdicts of a judge on its own family's systems change), `calibration`
(agreement with intervals, human ceiling, gate, corrected estimates), `literature` (the judge's
published verdicts: agreement on every labelled key, and whether this run reproduces them) and
`decision` (what the data supports and how many items would change it).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from judge.errors import ConfigError, DataError
from judge.files import write_json
from judge.labels import label_kind, load_table, run_judgments

if TYPE_CHECKING:
    # Type names only: `judge calibrate` and `judge compare` import this module and need
    # neither the config nor the pipeline (~90 ms of imports here).
    from calibration.calibrate import CalibrationReport
    from calibration.compare import ComparisonReport
    from judge.config import RunConfig

_CONFIDENCE = 0.95
_MAX_STRATUM_VALUES = 20


def analyse_run(config: RunConfig, run_dir: Path) -> dict[str, Any]:
    """Add calibration, comparison and decision sections to the run's `summary.json`."""
    import json

    from calibration.compare_input import ComparisonInputError
    from calibration.gates import GateError, GateSyntaxError
    from calibration.labels import LabelError
    from judge.pipeline import SUMMARY_JSON

    path = run_dir / SUMMARY_JSON
    summary = json.loads(path.read_text(encoding="utf-8"))
    rows, strata = run_judgments(run_dir)
    judge = str(rows["judge"].iloc[0]) if len(rows) else None
    pairwise = "score_a" in rows.columns
    by = _stratum(config.compare.strata, strata)
    try:
        comparison = _compare(rows, config, by, pairwise)
        summary["comparison"] = {"judge": judge, **comparison}
        summary["win_rates"] = _win_rates(rows, config) if pairwise else None
        summary["win_rates_by_stratum"] = (
            _win_rates_by_stratum(rows, config, by) if pairwise and by else None
        )
        summary["same_family"] = _same_family(rows, config, by) if pairwise else None
        # Read once: the calibration and the literature check use the same human labels.
        human = None if config.calibration.human is None else load_table(config.calibration.human)
        judge_table, kind = _judge_labels(rows, strata)
        summary["calibration"] = _calibration(judge_table, kind, human, strata, config)
        summary["literature"] = _literature(judge_table, human, config)
    except (ComparisonInputError, GateSyntaxError, GateError, LabelError) as exc:
        raise DataError(str(exc), path=str(run_dir)) from None
    summary["data"] = _data_overview(run_dir, strata, summary)
    summary["decision"] = _decision(summary)
    write_json(path, summary)
    return summary


def calibrate_tables(
    judge_table: pd.DataFrame,
    human_table: pd.DataFrame,
    *,
    kind: str | None = None,
    strata: Sequence[str] = (),
    resamples: int = 1000,
    seed: int = 0,
    human_path: Path | None = None,
) -> CalibrationReport:
    """`judge calibrate`: judge labels against human labels (kind: from the human table's
    columns unless given). A malformed table raises `DataError` naming row and column."""
    from calibration.calibrate import calibrate
    from calibration.labels import LabelError

    try:
        return calibrate(
            judge_table,
            human_table,
            kind=kind or label_kind(human_table),  # type: ignore[arg-type]
            strata=list(strata),
            resamples=resamples,
            seed=seed,
        )
    except LabelError as exc:
        raise DataError(str(exc), path=None if human_path is None else str(human_path)) from None


def compare_source(
    source: Path,
    *,
    judge_name: str | None = None,
    baseline: str | None = None,
    by: str | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    gates: Sequence[str] = (),
) -> ComparisonReport:
    """`judge compare SOURCE`: a finished run dir (one judge's rows, items' strata joined) or
    a table, compared with the paired bootstrap. Input problems raise `ConfigError` or
    `DataError` with the fix in the message (the CLI and the service both show them)."""
    from calibration.compare import compare_table
    from calibration.compare_input import ComparisonInputError
    from calibration.gates import GateError, GateSyntaxError
    from judge.labels import load_comparison_table

    table, item_columns = load_comparison_table(source, judge_name)
    kind = "pairwise" if "system_a" in table.columns else "scores"
    if by is not None and by not in table.columns and by not in item_columns:
        raise ConfigError(f"by {by!r}: no such column; columns: {', '.join(table.columns)}")
    try:
        return compare_table(
            table,
            kind=kind,  # type: ignore[arg-type]
            baseline=baseline,
            by=by,
            resamples=resamples,
            seed=seed,
            gates=gates,
        )
    except (ComparisonInputError, GateSyntaxError, GateError) as exc:
        raise DataError(str(exc)) from None


def _data_overview(run_dir: Path, strata: list[str], summary: dict) -> dict[str, Any]:
    """Items per stratum value, and what the run holds per judge."""
    import contextlib
    import json
    import sqlite3

    sizes: dict[str, dict[str, int]] = {column: {} for column in strata}
    with contextlib.closing(sqlite3.connect(run_dir / "store.sqlite")) as db:
        for (raw,) in db.execute("SELECT strata FROM items"):
            for column, value in json.loads(raw).items():
                bucket = sizes.setdefault(column, {})
                bucket[str(value)] = bucket.get(str(value), 0) + 1
    systems = (summary.get("comparison") or {}).get("systems") or []
    few = {c: v for c, v in sizes.items() if len(v) <= _MAX_STRATUM_VALUES}
    return {
        "strata": {
            c: dict(sorted(v.items(), key=lambda kv: _natural(kv[0]))) for c, v in few.items()
        },
        # Item-group ids (question_id) are no strata to list: their number of values only.
        "many_valued": {c: len(v) for c, v in sizes.items() if c not in few},
        "systems": len(systems),
        "judges": len(summary.get("judges") or {}),
    }


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


def _compare(rows: pd.DataFrame, config: RunConfig, by: str | None, pairwise: bool) -> dict:
    from calibration.compare import compare_table

    if pairwise:
        table = rows[rows["score_a"].notna()]
        keep = ["item_id", "system_a", "system_b", "score_a"]
    else:
        table = rows[rows["score"].notna()]
        keep = ["item_id", "system", "score"]
    if by is not None:
        keep.append(by)
    report = compare_table(
        table[keep].reset_index(drop=True),
        kind="pairwise" if pairwise else "scores",
        by=by,
        resamples=config.compare.resamples,
        seed=config.compare.seed,
        gates=config.compare.gates,
        ci=_CONFIDENCE,
    )
    result = report.to_dict()
    # The smallest p-value this many resamples can give (one pseudo-count): pairs at it are
    # "at most", not "equal to", their p.
    floor = 1.0 / (config.compare.resamples + 1)
    result["p_floor"] = floor
    for c in [*result["comparisons"], *result["by_stratum"]]:
        p = c.get("p_value")
        c["p_at_floor"] = p is not None and p <= floor * (1 + 1e-9)
    return result


def _win_rates(rows: pd.DataFrame, config: RunConfig) -> list[dict[str, Any]]:
    """Each system's win rate against all the others (ties half), resampling items."""
    from calibration.bootstrap import bootstrap_mean

    scored = rows[rows["score_a"].notna()]
    out = []
    for system in sorted(set(scored["system_a"]) | set(scored["system_b"])):
        as_a = scored[scored["system_a"] == system]
        as_b = scored[scored["system_b"] == system]
        values = np.concatenate([as_a["score_a"].to_numpy(), 1.0 - as_b["score_a"].to_numpy()])
        items = pd.concat([as_a["item_id"], as_b["item_id"]]).to_numpy()
        result = bootstrap_mean(
            values,
            seed=config.compare.seed,
            resamples=config.compare.resamples,
            clusters=pd.factorize(items)[0],
            ci=_CONFIDENCE,
        )
        out.append(
            {
                "system": system,
                "win_rate": result.mean,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "judgments": result.n,
                "items": result.n_units,
            }
        )
    return sorted(out, key=lambda r: -r["win_rate"])


def _win_rates_by_stratum(rows: pd.DataFrame, config: RunConfig, by: str) -> dict[str, Any]:
    """Each system's win rate against the others within each value of `by`."""
    values = sorted(rows[by].dropna().astype(str).unique(), key=_natural)
    return {
        "by": by,
        "strata": {v: _win_rates(rows[rows[by].astype(str) == v], config) for v in values},
    }


def _same_family(rows: pd.DataFrame, config: RunConfig, by: str | None) -> dict | None:
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
    return {
        "systems": own,
        "flagged_pairs": int(flagged.sum()),
        "cross_family_pairs": len(cross),
        "cross_family_only": only,
    }


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
    strata: list[str],
    config: RunConfig,
) -> dict | None:
    """The judge against the humans, per configured stratum and split by same-family."""
    from calibration.calibrate import calibrate
    from calibration.trust_gate import GateThresholds

    human_path = config.calibration.human
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
    report = calibrate(
        judge_table,
        human,
        kind=kind,  # type: ignore[arg-type]
        strata=by,
        gate=GateThresholds(**config.calibration.gate.model_dump()),
        resamples=config.calibration.resamples,
        seed=config.calibration.seed,
        confidence=_CONFIDENCE,
    )
    return {"human_labels": str(human_path), **report.to_dict()}


def _literature(
    judge_table: pd.DataFrame, human: pd.DataFrame | None, config: RunConfig
) -> dict | None:
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
    return {
        "published": str(published_path),
        "keys": len(theirs),
        "run_keys": len(ours),
        "shared_keys": len(both),
        "identical_verdicts": int((both["label_run"] == both["label_published"]).sum()),
        "agreement": [_agreement_counts(part) for part in [report["overall"], *report["strata"]]],
    }


def _agreement_counts(part: dict) -> dict[str, Any]:
    return {
        "stratum": part["stratum"],
        **{
            name: {k: part["metrics"][name][k] for k in ("agree", "comparisons", "value")}
            for name in ("agreement_s1", "agreement_s2")
        },
    }


def _oriented(pairs: dict[tuple[str, str], dict], upper: str, lower: str) -> dict | None:
    """The comparison of `upper` - `lower`, turned round when it was computed the other way."""
    c, sign = pairs.get((upper, lower)), 1.0
    if c is None:
        c, sign = pairs.get((lower, upper)), -1.0
    if c is None:
        return None
    low, high = sorted((sign * c["ci_low"], sign * c["ci_high"]))
    return {
        "upper": upper,
        "lower": lower,
        "diff": sign * c["mean_diff"],
        "ci_low": low,
        "ci_high": high,
        "n": c["n"],
        "distinguishable": bool(low > 0 or high < 0),
        "p_holm": c.get("p_holm"),
    }


_TARGET = re.compile(r"^win rate of (?P<a>.+) over (?P<b>.+) \(ties count half\)$")


def _self_preference_check(summary: dict) -> dict[str, Any] | None:
    """Where the judge and the humans differ most on a pair with a system of the judge's own
    family: the judge's win rate beside the humans' alone on the same pair."""
    same = summary.get("same_family") or {}
    own = set(same.get("systems") or [])
    corrected = (summary.get("calibration") or {}).get("corrected") or []
    worst = None
    for c in corrected:
        match = _TARGET.match(c.get("target") or "")
        raw, human = (c.get("raw") or {}).get("value"), (c.get("human_only") or {}).get("value")
        if not match or raw is None or human is None or not own & set(match.groups()):
            continue
        if worst is None or abs(raw - human) > abs(worst["judge"] - worst["humans"]):
            worst = {"target": c["target"], "judge": raw, "humans": human, "corrected": c["value"]}
    return worst


def _decision(summary: dict) -> dict[str, Any]:
    """What the comparison supports: the leader, whether the runner-up is told apart, and
    for each neighbouring pair of the ranking the items that would make it distinguishable
    (the interval's half-width shrinks as 1/sqrt(n); assumes the same difference holds)."""
    comparison = summary.get("comparison") or {}
    ranking = comparison.get("ranking") or []
    pairs = {(c["a"], c["b"]): c for c in comparison.get("comparisons", [])}
    neighbours = []
    for upper, lower in itertools.pairwise(ranking):
        c = _oriented(pairs, upper["system"], lower["system"])
        if c is None:
            continue
        half = (c["ci_high"] - c["ci_low"]) / 2
        needed = None
        if c["diff"] != 0 and half > 0:
            needed = math.ceil(c["n"] * (half / abs(c["diff"])) ** 2)
        neighbours.append({**c, "items_needed": needed})
    by_stratum: dict[str, list[dict[str, Any]]] = {}
    for c in comparison.get("by_stratum", []):
        by_stratum.setdefault(c["stratum"], []).append(c)
    neighbours_by_stratum = {
        stratum: [
            _oriented({(c["a"], c["b"]): c for c in found}, n["upper"], n["lower"])
            for n in neighbours
        ]
        for stratum, found in by_stratum.items()
    }
    calibration = summary.get("calibration") or {}
    gate = (calibration.get("gate") or {}).get("verdict") if calibration else None
    return {
        "self_preference_check": _self_preference_check(summary),
        "leader": ranking[0]["system"] if ranking else None,
        "leader_tied_with": [r["system"] for r in ranking[1:] if r["rank"] == ranking[0]["rank"]]
        if ranking
        else [],
        "neighbours": neighbours,
        "neighbours_by_stratum": neighbours_by_stratum,
        "gate": gate or "not calibrated",
        "trusted": gate == "trusted",
    }
