"""Scenario-weighted scorecards: one weighted total per (system, metric), each with an interval.

A scorecard is declared, not inferred: weights per scenario and a normalisation per metric come
from config, so a total means the same thing across runs. Per scenario the total takes the mean
of the normalised metric over the scenario's items; the total is the weighted mean of the
scenario means. The interval resamples items within each scenario (a stratified bootstrap), the
same resampled items for every system and metric, so totals stay paired.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from calibration.jsonable import jsonable

_BLOCK = 1 << 22  # resamples x items per count matrix


class MetricSpec(BaseModel):
    """How one metric is put on a common scale before it is weighted."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: float | None = None
    """Declared lowest possible raw value; with `max`, values map linearly to [0, 1]."""
    max: float | None = None
    """Declared highest possible raw value."""
    higher_is_better: bool = True
    """False for costs, latencies, error rates: the normalised value is flipped (1 - x, or -x)."""
    weight: float | None = Field(default=None, ge=0)
    """Weight in the overall total across metrics; metrics without a weight stay out of it."""

    @model_validator(mode="after")
    def _bounds(self) -> MetricSpec:
        if (self.min is None) != (self.max is None):
            raise ValueError("declare both min and max, or neither")
        if self.min is not None and self.max is not None and not self.max > self.min:
            raise ValueError(f"max ({self.max}) must be greater than min ({self.min})")
        return self

    def normalise(self, x: np.ndarray) -> np.ndarray:
        if self.min is not None and self.max is not None:
            x = (x - self.min) / (self.max - self.min)
            return x if self.higher_is_better else 1 - x
        return x if self.higher_is_better else -x


class ScorecardSpec(BaseModel):
    """Weights per scenario and normalisation per metric, as declared in config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenarios: dict[str, float] = Field(min_length=1)
    """Weight of each scenario; normalised to sum to 1. Every scenario in the data needs one."""
    metrics: dict[str, MetricSpec] = Field(min_length=1)
    """Normalisation of each metric; metrics in the data but not here are an error."""

    @model_validator(mode="after")
    def _weights(self) -> ScorecardSpec:
        bad = [s for s, w in self.scenarios.items() if not w >= 0]
        if bad:
            raise ValueError(f"scenario weights must be >= 0: {', '.join(bad)}")
        if sum(self.scenarios.values()) <= 0:
            raise ValueError("scenario weights sum to 0; give at least one a positive weight")
        return self


@dataclass(frozen=True)
class ScorecardRow:
    system: str
    metric: str  # or "overall": the metric-weighted total
    total: float
    ci_low: float
    ci_high: float
    per_scenario: dict[str, float]  # normalised scenario means


@dataclass(frozen=True)
class Scorecard:
    """Weighted totals per (system, metric) with percentile bootstrap intervals."""

    rows: tuple[ScorecardRow, ...]
    weights: dict[str, float]  # normalised scenario weights
    ci: float
    resamples: int
    seed: int
    n_items: int
    method: str = "scenario-weighted mean; percentile bootstrap over items within scenario"
    replicates: dict[tuple[str, str], np.ndarray] = field(
        default_factory=dict, repr=False, compare=False
    )

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "system": r.system,
                    "metric": r.metric,
                    "total": r.total,
                    "ci_low": r.ci_low,
                    "ci_high": r.ci_high,
                    **{f"scenario:{k}": v for k, v in r.per_scenario.items()},
                }
                for r in self.rows
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self)


_COLUMNS = ("item_id", "system", "scenario", "metric", "value")


def _validate(values: pd.DataFrame, spec: ScorecardSpec) -> pd.DataFrame:
    missing = [c for c in _COLUMNS if c not in values.columns]
    if missing:
        raise ValueError(f"scorecard values need columns {list(_COLUMNS)}; missing {missing}")
    df = values.loc[:, list(_COLUMNS)].copy()
    for col in ("item_id", "system", "scenario", "metric"):
        df[col] = df[col].astype(str)
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    if df["value"].isna().any():
        bad = df[df["value"].isna()].iloc[0]
        raise ValueError(
            f"{df['value'].isna().sum()} missing or non-numeric values (first: item "
            f"{bad['item_id']!r}, system {bad['system']!r}, metric {bad['metric']!r})"
        )
    unknown = sorted(set(df["scenario"]) - set(spec.scenarios))
    if unknown:
        raise ValueError(f"scenarios without a declared weight: {', '.join(unknown)}")
    unknown = sorted(set(df["metric"]) - set(spec.metrics))
    if unknown:
        raise ValueError(f"metrics without a declared normalisation: {', '.join(unknown)}")
    spans = df.groupby("item_id")["scenario"].nunique()
    if (spans > 1).any():
        raise ValueError(f"item {spans[spans > 1].index[0]!r} appears in several scenarios")
    if df.duplicated(["item_id", "system", "metric"]).any():
        raise ValueError("several values for one (item_id, system, metric); aggregate them first")
    for name, m in spec.metrics.items():
        if m.min is None:
            continue
        x = df.loc[df["metric"] == name, "value"]
        if ((x < m.min) | (x > m.max)).any():
            raise ValueError(f"metric {name!r} has values outside its declared [{m.min}, {m.max}]")
    return df


def scorecard(
    values: pd.DataFrame,
    spec: ScorecardSpec,
    *,
    seed: int,
    resamples: int = 10_000,
    ci: float = 0.95,
) -> Scorecard:
    """Weighted totals per (system, metric), and "overall" if any metric declares a weight.

    `values` is long: item_id, system, scenario, metric, value. Scenarios with weight 0 are
    reported per scenario but do not enter the total. Every (system, metric) needs at least one
    value in every positively weighted scenario.
    """
    df = _validate(values, spec)
    df["norm"] = 0.0
    for name, m in spec.metrics.items():
        sel = df["metric"] == name
        df.loc[sel, "norm"] = m.normalise(df.loc[sel, "value"].to_numpy(dtype=np.float64))
    cells = sorted(set(zip(df["system"], df["metric"], strict=True)))
    col = {c: i for i, c in enumerate(cells)}
    total_w = sum(spec.scenarios.values())
    weights = {s: w / total_w for s, w in spec.scenarios.items()}
    scenarios = sorted(set(df["scenario"]))
    for s, w in weights.items():
        if w > 0 and s not in scenarios:
            raise ValueError(f"scenario {s!r} has weight {w:g} but no items")

    point, reps, per_scenario = _totals(df, cells, col, weights, scenarios, resamples, seed)
    out_rows, keep = _rows(cells, col, point, reps, per_scenario, scenarios, spec, ci)
    return Scorecard(
        rows=tuple(out_rows),
        weights=weights,
        ci=ci,
        resamples=resamples,
        seed=seed,
        n_items=int(df["item_id"].nunique()),
        replicates=keep,
    )


def _totals(
    df: pd.DataFrame,
    cells: list[tuple[str, str]],
    col: dict[tuple[str, str], int],
    weights: dict[str, float],
    scenarios: list[str],
    resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Per cell: the weighted total, its resampled totals (resamples x cells) and the
    scenario means. One generator serves every scenario in turn, so the draws are fixed by
    `seed` and the scenarios' order."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    point = np.zeros(len(cells))
    reps = np.zeros((resamples, len(cells)))
    per_scenario: dict[str, np.ndarray] = {}
    for s in scenarios:
        v, present = _scenario_cells(df[df["scenario"] == s], cells, col)
        have = present.sum(axis=0)
        with np.errstate(invalid="ignore"):
            means = v.sum(axis=0) / have
        per_scenario[s] = means
        w = weights.get(s, 0.0)
        if w == 0:
            continue
        lacking = [cells[i] for i in np.flatnonzero(have == 0)]
        if lacking:
            sys_, met = lacking[0]
            raise ValueError(
                f"system {sys_!r} has no {met!r} value in scenario {s!r}, so its weighted total "
                "is undefined; score that scenario or give it weight 0"
            )
        point += w * means
        _add_resampled(reps, rng, v, present, w)
    return point, reps, per_scenario


def _scenario_cells(
    sub: pd.DataFrame, cells: list[tuple[str, str]], col: dict[tuple[str, str], int]
) -> tuple[np.ndarray, np.ndarray]:
    """One scenario's items x cells: the normalised value and its presence."""
    items, item_idx = np.unique(sub["item_id"].to_numpy(), return_inverse=True)
    cell_idx = np.array(
        [col[c] for c in zip(sub["system"], sub["metric"], strict=True)], dtype=np.int64
    )
    v = np.zeros((len(items), len(cells)))
    present = np.zeros((len(items), len(cells)))
    v[item_idx, cell_idx] = sub["norm"].to_numpy()
    present[item_idx, cell_idx] = 1.0
    return v, present


def _add_resampled(
    reps: np.ndarray, rng: np.random.Generator, v: np.ndarray, present: np.ndarray, w: float
) -> None:
    """Add `w` times one scenario's resampled means to `reps`, in blocks that bound memory."""
    resamples = len(reps)
    n = len(v)
    rows = max(1, _BLOCK // n)
    for r0 in range(0, resamples, rows):
        r = min(rows, resamples - r0)
        idx = rng.integers(0, n, size=(r, n)) + (np.arange(r) * n)[:, None]
        counts = np.bincount(idx.ravel(), minlength=r * n).reshape(r, n).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps[r0 : r0 + r] += w * (counts @ v) / (counts @ present)


def _rows(
    cells: list[tuple[str, str]],
    col: dict[tuple[str, str], int],
    point: np.ndarray,
    reps: np.ndarray,
    per_scenario: dict[str, np.ndarray],
    scenarios: list[str],
    spec: ScorecardSpec,
    ci: float,
) -> tuple[list[ScorecardRow], dict[tuple[str, str], np.ndarray]]:
    """One row per (system, metric), then each system's "overall" when metrics are weighted;
    with the replicates behind each row."""
    alpha = (1 - ci) / 2
    out_rows: list[ScorecardRow] = []
    keep: dict[tuple[str, str], np.ndarray] = {}

    def add(system: str, metric: str, est: float, rep: np.ndarray, scen: dict[str, float]) -> None:
        # A replicate can miss a sparse metric in a scenario entirely; it is left out.
        lo, hi = np.nanquantile(rep, [alpha, 1 - alpha])
        out_rows.append(ScorecardRow(system, metric, float(est), float(lo), float(hi), scen))
        keep[(system, metric)] = rep

    for i, (system, metric) in enumerate(cells):
        scen = {s: float(per_scenario[s][i]) for s in scenarios}
        add(system, metric, point[i], reps[:, i], scen)
    metric_w = {m: spec.metrics[m].weight for m in spec.metrics if spec.metrics[m].weight}
    if metric_w:
        for system in sorted({c[0] for c in cells}):
            have = [m for m in metric_w if (system, m) in col]
            if len(have) < len(metric_w):
                absent = sorted(set(metric_w) - set(have))
                raise ValueError(
                    f"system {system!r} has no values for weighted metric(s) {absent}, so its "
                    "overall total is undefined; score them or drop their weight"
                )
            wsum = sum(metric_w[m] for m in have)
            est = sum(metric_w[m] * point[col[(system, m)]] for m in have) / wsum
            rep = sum(metric_w[m] * reps[:, col[(system, m)]] for m in have) / wsum
            add(system, "overall", est, rep, {})
    return out_rows, keep
