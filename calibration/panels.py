"""Panels of judges chosen by evidence: every panel of up to k judges, aggregated by majority,
scored by its agreement with reference labels (human or gold) and by its cost, the Pareto
frontier of the two, and a recommendation: the cheapest panel not told apart from the best.

Knows no LLM: judges are names, their verdicts are labels per unit, costs are numbers per
judgment (None: unknown, never 0). "Told apart" has the project's one meaning: the
Holm-adjusted paired test, here a paired cluster bootstrap of the difference in
Krippendorff's alpha (nominal) between the best panel and each other, all panels on the same
resamples of the units.

Majority: each unit's label is the one most of the panel's judges gave (a judge without a
label for the unit abstains); a tie between the top labels is the `tie` label (or, with no
`tie` label, no label: the unit counts as missing for that panel).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from calibration.bootstrap_alpha import AlphaUnits, resampled_block_sums, units_from_pairs
from calibration.pairs import holm
from calibration.resampling import percentile_p


@dataclass(frozen=True)
class Panel:
    judges: tuple[str, ...]
    alpha: float | None
    """Krippendorff's alpha (nominal) of the panel's labels with the reference labels."""
    ci_low: float | None
    ci_high: float | None
    accuracy: float
    """Share of units whose panel label equals the reference (a missing label counts as wrong)."""
    labelled: int
    """Units the panel gave a label."""
    cost: float | None
    """Per unit judged: the members' costs added; None when one is unknown."""
    on_frontier: bool = False
    """No other panel of known cost is at least as cheap and agrees better (by alpha)."""
    p_vs_best: float | None = None
    """Holm-adjusted p-value of its alpha against the best panel's (None for the best)."""

    @property
    def size(self) -> int:
        return len(self.judges)


@dataclass(frozen=True)
class PanelFrontier:
    panels: tuple[Panel, ...]
    """Every panel considered, best alpha first."""
    best: tuple[str, ...]
    recommended: tuple[str, ...] | None
    """The cheapest panel of known cost whose alpha is not told apart from the best's (the
    best itself when every cheaper one is)."""
    units: int
    resamples: int
    seed: int
    level: float
    method: str = (
        "majority panels; Krippendorff alpha (nominal) with the reference; paired cluster "
        "bootstrap over units, Holm-adjusted against the best panel"
    )

    def panel(self, judges: Sequence[str]) -> Panel:
        key = tuple(sorted(judges))
        return next(p for p in self.panels if p.judges == key)


def majority(labels: np.ndarray, tie: int | None) -> np.ndarray:
    """Per unit (columns of `labels`, judges x units, label codes, -1 = none): the code most
    judges gave, `tie` where the top codes tie (-1 when `tie` is None), -1 with no label."""
    k = int(labels.max()) + 1 if labels.size and labels.max() >= 0 else 1
    counts = np.zeros((labels.shape[1], k), dtype=np.int64)
    for row in labels:
        given = row >= 0
        np.add.at(counts, (np.flatnonzero(given), row[given]), 1)
    top = counts.max(axis=1)
    winners = (counts == top[:, None]).sum(axis=1)
    out = counts.argmax(axis=1)
    out[winners > 1] = -1 if tie is None else tie
    out[top == 0] = -1
    return out


def panel_frontier(
    verdicts: pd.DataFrame,
    reference: Mapping[object, object],
    costs: Mapping[str, float | None],
    *,
    max_size: int = 3,
    tie: object | None = "tie",
    aggregate: Literal["majority", "mean"] = "majority",
    allowed: Callable[[tuple[str, ...]], bool] | None = None,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> PanelFrontier:
    """`verdicts`: columns unit, judge, label (one row per judge and unit; a missing label is
    an abstention). `reference`: unit -> the label it should get. `costs`: judge -> cost per
    unit judged. `aggregate`: `majority` (labels; nominal alpha) or `mean` (scores: the
    members' mean score, interval alpha; accuracy is then the share within half a point of
    the reference). `allowed`: which panels may be formed (e.g. a cross-family rule)."""
    units = sorted(reference, key=str)
    unit_index = {u: i for i, u in enumerate(units)}
    rows = verdicts[verdicts["unit"].isin(unit_index) & verdicts["label"].notna()]
    judges = sorted(str(j) for j in verdicts["judge"].unique())
    j_idx = rows["judge"].map({j: i for i, j in enumerate(judges)}).to_numpy()
    u_idx = rows["unit"].map(unit_index).to_numpy()
    panels = [
        combo
        for size in range(1, max_size + 1)
        for combo in itertools.combinations(judges, size)
        if allowed is None or allowed(combo)
    ]
    if aggregate == "mean":
        blocks, correct, labelled = _mean_panels(
            rows, j_idx, u_idx, judges, units, reference, panels
        )
    else:
        blocks, correct, labelled = _majority_panels(
            rows, j_idx, u_idx, judges, units, reference, panels, tie
        )
    point = {c: float(u.alpha(u.totals())[0]) for c, u in blocks.items()}
    sums = resampled_block_sums(
        {"|".join(c): u.columns for c, u in blocks.items()}, resamples, np.random.default_rng(seed)
    )
    boot = {c: u.alpha(sums["|".join(c)]) for c, u in blocks.items()}
    best = max(panels, key=lambda c: (np.nan_to_num(point[c], nan=-np.inf), -len(c)))
    others = [c for c in panels if c != best]
    raw_p = [percentile_p(boot[best] - boot[c]) for c in others]
    adjusted = dict(zip(others, holm(raw_p), strict=True))
    cost = {c: panel_cost(c, costs) for c in panels}
    tail = (1 - level) / 2
    built = []
    for c in panels:
        low, high = (
            np.nanquantile(boot[c], [tail, 1 - tail])
            if np.isfinite(boot[c]).any()
            else (None, None)
        )
        built.append(
            Panel(
                judges=c,
                alpha=point[c] if np.isfinite(point[c]) else None,
                ci_low=None if low is None else float(low),
                ci_high=None if high is None else float(high),
                accuracy=correct[c],
                labelled=labelled[c],
                cost=cost[c],
                on_frontier=_on_frontier(c, point, cost),
                p_vs_best=None if c == best else float(adjusted[c]),
            )
        )
    built.sort(key=lambda p: (-(p.alpha if p.alpha is not None else -np.inf), p.size, p.judges))
    candidates = [
        p for p in built
        if p.cost is not None and (p.judges == best or (p.p_vs_best or 0.0) >= 1 - level)
    ]  # fmt: skip
    recommended = min(candidates, key=lambda p: (p.cost, p.size), default=None)
    return PanelFrontier(
        panels=tuple(built),
        best=best,
        recommended=None if recommended is None else recommended.judges,
        units=len(units),
        resamples=resamples,
        seed=seed,
        level=level,
        method=(
            "mean scores; Krippendorff alpha (interval)"
            if aggregate == "mean"
            else "majority panels; Krippendorff alpha (nominal)"
        )
        + " with the reference; paired cluster bootstrap over units, Holm-adjusted against the "
        "best panel",
    )


Blocks = tuple[
    dict[tuple[str, ...], AlphaUnits], dict[tuple[str, ...], float], dict[tuple[str, ...], int]
]
"""Per panel: its alpha units against the reference, its accuracy, the units it labelled."""


def _majority_panels(
    rows: pd.DataFrame,
    j_idx: np.ndarray,
    u_idx: np.ndarray,
    judges: list[str],
    units: list[object],
    reference: Mapping[object, object],
    panels: list[tuple[str, ...]],
    tie: object | None,
) -> Blocks:
    domain = sorted(
        {*map(str, reference.values()), *map(str, rows["label"])}
        | ({str(tie)} if tie is not None else set())
    )
    code = {v: i for i, v in enumerate(domain)}
    tie_code = None if tie is None else code[str(tie)]
    table = np.full((len(judges), len(units)), -1, dtype=np.int64)
    table[j_idx, u_idx] = rows["label"].astype(str).map(code).to_numpy()
    gold = np.array([code[str(reference[u])] for u in units])
    blocks, correct, labelled = {}, {}, {}
    for combo in panels:
        lab = majority(table[[judges.index(j) for j in combo]], tie_code)
        given = lab >= 0
        blocks[combo] = units_from_pairs(
            np.arange(len(units)), np.where(given, lab, 0), gold, given.astype(float),
            len(units), np.arange(len(domain)), "nominal",
        )  # fmt: skip
        correct[combo] = float((lab == gold).mean())
        labelled[combo] = int(given.sum())
    return blocks, correct, labelled


def _mean_panels(
    rows: pd.DataFrame,
    j_idx: np.ndarray,
    u_idx: np.ndarray,
    judges: list[str],
    units: list[object],
    reference: Mapping[object, object],
    panels: list[tuple[str, ...]],
) -> Blocks:
    table = np.full((len(judges), len(units)), np.nan)
    table[j_idx, u_idx] = pd.to_numeric(rows["label"]).to_numpy(dtype=float)
    gold = np.array([float(reference[u]) for u in units])  # type: ignore[arg-type]
    blocks, correct, labelled = {}, {}, {}
    for combo in panels:
        members = table[[judges.index(j) for j in combo]]
        given = ~np.isnan(members).all(axis=0)
        score = np.full(len(units), np.nan)
        score[given] = np.nanmean(members[:, given], axis=0)
        domain, codes = np.unique(np.r_[gold, score[given]], return_inverse=True)
        blocks[combo] = units_from_pairs(
            np.flatnonzero(given), codes[len(units):], codes[: len(units)][given],
            np.ones(int(given.sum())), len(units), domain, "interval",
        )  # fmt: skip
        correct[combo] = float((np.abs(score - gold) <= 0.5).mean())
        labelled[combo] = int(given.sum())
    return blocks, correct, labelled


def panel_cost(panel: tuple[str, ...], costs: Mapping[str, float | None]) -> float | None:
    """The members' costs added; None when one is unknown (never counted as free)."""
    parts = [costs.get(j) for j in panel]
    return None if any(c is None for c in parts) else float(sum(parts))  # type: ignore[arg-type]


def _on_frontier(
    panel: tuple[str, ...],
    point: Mapping[tuple[str, ...], float],
    cost: Mapping[tuple[str, ...], float | None],
) -> bool:
    mine = cost[panel]
    if mine is None or not np.isfinite(point[panel]):
        return False
    return not any(
        other != panel
        and cost[other] is not None
        and cost[other] <= mine  # type: ignore[operator]
        and point[other] > point[panel]
        for other in point
    )
