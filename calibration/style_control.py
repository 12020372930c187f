"""Length- and style-controlled win rates: how often a system would win if its responses were
as long (and as formatted) as its opponents', from pairwise judgments.

For system m, every judgment of m against an opponent o (the baseline, or any other system when
there is no baseline) on item x, with p the judge's preference for m in [0, 1]:

    logit P(m beats o) = a_m + phi_m * tanh(d / sd_m) + sum_k beta_mk * s_k [+ psi_m * gamma_x]

d is m's response length minus o's (characters) and sd_m its standard deviation over m's rows:
the length term of AlpacaEval 2's GLM (Dubois et al. 2024), one slope per system and baseline.
With `markdown`, s_k are Arena-Hard's style features (LMSYS, "Does style matter?", 2024): for
markdown headers, list items and bold spans, (count_m - count_o) / (count_m + count_o), 0 when
both are 0. Against a baseline, gamma_x is AlpacaEval's item difficulty, estimated from every
system's preferences at once (`calibration.length_control.item_difficulty`) with a normal prior
that keeps an item few systems met from running to infinity. The controlled win rate sets every
control term to zero (equal length, equal formatting) and averages over the judgments:

    controlled_m = mean over m's judgments of sigmoid(a_m + psi_m * gamma_x)

Against the field (no baseline) there is no difficulty term: an item's pull cancels between the
two sides of each pair, so controlled_m = sigmoid(a_m).

Assumptions, stated because the number depends on them: each control acts through one bounded
function, the same on every item; beyond it and the item's difficulty, the judge's preference
for a system is one constant on the logit scale; items are exchangeable. Fitted by maximum
likelihood on the soft preferences (ties are 0.5, not rounded), with a whisper of L2 so a
control that never varies stays finite. Intervals: over resamples of whole items (every row of
an item moves together: both orders, every opponent), the model refitted on each by Newton's
method with the difficulties held; the same draws for every system, so differences between
systems are paired. The controlled rate's interval is BCa, its acceleration from a jackknife
over (at most `_JACKKNIFE_GROUPS` groups of) items: for a system winning 80% with longer
answers the percentile interval covered 86% at 30 items and 90.5% at 50 (BCa: see
`scripts/coverage_lc.py`); the raw rate and the differences keep the percentile interval.
A system almost always longer (or shorter) than its opponents is controlled by
extrapolation, and said to be (`StyleControl.notes`).

Pure numpy: no LLM, no judge. phi_m is the judge's length preference (positive: longer wins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy.special import expit

from calibration.length_control import item_difficulty
from calibration.resampling import bca_levels

CONTROLS = ("length", "markdown")
MARKDOWN = ("headers", "lists", "bold")
"""The markdown features, as `<name>_a` / `<name>_b` count columns of the input."""
FORMULA = (
    "logit P(m beats o) = a_m + phi_m * tanh(d / sd_m) [+ sum_k beta_mk * (c_mk - c_ok) / "
    "(c_mk + c_ok)] [+ psi_m * gamma_x against a baseline]; controlled win rate = mean of "
    "sigmoid(a_m [+ psi_m * gamma_x]) over m's judgments"
)
ASSUMPTIONS = (
    "each control acts through one bounded function, the same on every item",
    "beyond the controls and the item's difficulty, the judge's preference for a system is one "
    "constant on the logit scale",
    "items are exchangeable: intervals resample whole items",
)
_RIDGE = 1e-4
"""On the length slope: a whisper (AlpacaEval's fit has none), so no length variation stays
finite."""
_STYLE_RIDGE = 1.0
"""On each markdown slope: a normal prior of 1 logit per unit of the feature (which spans -1 to
1). A feature few judgments show (a header in a handful of answers) would otherwise run to an
incredible slope on those few."""
_INTERCEPT_RIDGE = 1e-8
"""Keeps a system that wins (or loses) every judgment finite."""
_MAX_STEP = 5.0
"""Largest Newton step per coefficient (logits): a separated resample creeps, never jumps."""
_SHRINK = 0.5
"""The L2 penalty on item difficulties (a normal prior of standard deviation 1.4 logits): with
many systems per item it hardly matters; with two it keeps a decided item finite."""
_EXTRAPOLATES = 0.05
"""A system longer in under 5% (or over 95%) of its judgments is controlled by extrapolation."""
_JACKKNIFE_GROUPS = 200
"""Items are left out a group at a time beyond this many: the acceleration needs the
jackknife's skewness, not every item's own refit."""
_CELLS = 2_000_000
"""Resamples x rows refitted at a time (each array of a chunk is 16 MB, whatever the run's
size): memory does not grow with the judgments."""


class StyleControlError(ValueError):
    """The table cannot be controlled: the message names the missing column or system."""


@dataclass(frozen=True)
class ControlledRate:
    system: str
    judgments: int
    items: int
    win_rate: float
    """Raw: the mean preference for the system, ties half."""
    win_low: float
    win_high: float
    controlled: float
    """The win rate with every control term at zero."""
    ci_low: float
    ci_high: float
    shift: float
    """controlled - win_rate: what the controls explained (negative: style helped it win)."""
    shift_low: float
    shift_high: float
    coefficients: dict[str, float]
    """Logits: `length` is phi (the judge's length preference against this system's
    opponents), `headers` / `lists` / `bold` the markdown betas; a control that never varied
    over the system's judgments has none."""
    longer: float | None
    """Share of the judgments in which the system's response was the longer (None without
    the length control)."""
    shorter: float | None
    """... the shorter. Either near 1: equal length is outside the data, and the controlled
    rate an extrapolation (see `StyleControl.notes`)."""


@dataclass(frozen=True)
class ControlledDifference:
    a: str
    b: str
    difference: float
    """controlled_a - controlled_b, on the same resamples (paired, clustered by item)."""
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class StyleControl:
    controls: tuple[str, ...]
    baseline: str | None
    """None: each system against all the others it met."""
    systems: tuple[ControlledRate, ...]
    """Highest controlled win rate first."""
    differences: tuple[ControlledDifference, ...]
    """Every pair of systems, higher controlled rate first; intervals not adjusted for
    multiplicity."""
    resamples: int
    seed: int
    level: float
    notes: tuple[str, ...] = ()
    formula: str = FORMULA
    assumptions: tuple[str, ...] = ASSUMPTIONS

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def feature_columns(controls: Sequence[str]) -> list[str]:
    """The count columns `controls` need, per side."""
    names = (["length"] if "length" in controls else []) + (
        list(MARKDOWN) if "markdown" in controls else []
    )
    return [f"{name}_{side}" for name in names for side in ("a", "b")]


def check_controls(controls: Sequence[str]) -> tuple[str, ...]:
    unknown = [c for c in controls if c not in CONTROLS]
    if unknown or not controls:
        raise StyleControlError(
            f"control {', '.join(unknown) or '(none)'}: expected one or more of "
            f"{', '.join(CONTROLS)}"
        )
    return tuple(c for c in CONTROLS if c in controls)


def style_controlled(
    table: pd.DataFrame,
    controls: Sequence[str],
    *,
    baseline: str | None = None,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> StyleControl:
    """`table`: item_id, system_a, system_b, score_a (1: a better, 0.5 tie; NaN rows are left
    out) and the count columns of `feature_columns(controls)` (lengths in characters)."""
    controls = check_controls(controls)
    needed = ["item_id", "system_a", "system_b", "score_a", *feature_columns(controls)]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise StyleControlError(
            f"the table has no {', '.join(missing)} column: controlling for "
            f"{', '.join(controls)} needs {', '.join(needed)}"
        )
    table = table[table["score_a"].notna()]
    columns = _columns(table, controls)
    systems = sorted(set(columns["system_a"]) | set(columns["system_b"]))
    if baseline is not None and baseline not in systems:
        raise StyleControlError(f"baseline {baseline!r} is not among the systems")
    # Items in sorted order: the same draws whatever order the rows or the systems came in.
    item_ids, item_index = np.unique(table["item_id"].astype(str).to_numpy(), return_inverse=True)
    oriented = {
        system: rows
        for system in systems
        if system != baseline
        and (rows := _oriented(columns, item_index, system, baseline, controls)) is not None
    }
    if not oriented:
        raise StyleControlError("no system has a judgment against another to control")
    if baseline is not None:
        oriented = _with_difficulty(oriented)
    fitted = {system: _Fit.of(rows) for system, rows in oriented.items()}
    boot = _resampled(fitted, len(item_ids), resamples, seed)
    jack = _jackknife(fitted, len(item_ids))
    fits = {
        system: _rate(system, fit, *boot[system], level, jack[system])
        for system, fit in fitted.items()
    }
    ranked = sorted(fits, key=lambda s: (-fits[s][0].controlled, s))
    differences = []
    for a, b in combinations(ranked, 2):
        boot = fits[a][1] - fits[b][1]
        low, high = _interval(boot, level)
        differences.append(
            ControlledDifference(a, b, fits[a][0].controlled - fits[b][0].controlled, low, high)
        )
    notes = tuple(
        f"{r.system}'s response was the {side} in {share:.0%} of its judgments: its "
        "controlled rate extrapolates to equal lengths it was seldom judged at"
        for r in (fits[s][0] for s in ranked)
        for side, share in (("longer", r.longer), ("shorter", r.shorter))
        if share is not None and share > 1 - _EXTRAPOLATES
    )
    return StyleControl(
        controls=controls,
        baseline=baseline,
        systems=tuple(fits[s][0] for s in ranked),
        differences=tuple(differences),
        notes=notes,
        resamples=resamples,
        seed=seed,
        level=level,
    )


class _Oriented(NamedTuple):
    """One system's judgments seen from its side."""

    p: np.ndarray
    """The preference for the system."""
    x: np.ndarray
    """Design matrix: intercept, the controls' features, and (against a baseline) difficulty."""
    items: np.ndarray
    """Each row's item, as an index into the sorted item ids."""
    names: list[str]
    """The controls' features, in x's columns after the intercept."""
    delta: np.ndarray
    """Length difference (zeros without the length control)."""
    longer: float | None
    shorter: float | None

    @property
    def has_length(self) -> int:
        return int(bool(self.names) and self.names[0] == "length")


def _columns(table: pd.DataFrame, controls: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The judged rows' columns as arrays, read once for every system: names as text, the
    score and the controls' counts as numbers (a count that is not one raises, naming the
    column and its first row)."""
    columns = {
        "system_a": table["system_a"].astype(str).to_numpy(),
        "system_b": table["system_b"].astype(str).to_numpy(),
        "score_a": table["score_a"].to_numpy(dtype=float),
    }
    for column in feature_columns(controls):
        values = pd.to_numeric(table[column], errors="coerce")
        bad = values.isna() | (values < 0)
        if bad.any():
            raise StyleControlError(
                f"column {column}: {int(bad.sum())} judged rows without a count (a number "
                f"from 0 up), first at row {_row_number(bad[bad].index[0])}"
            )
        columns[column] = values.to_numpy(dtype=float)
    return columns


def _oriented(
    columns: dict[str, np.ndarray],
    item_index: np.ndarray,
    system: str,
    baseline: str | None,
    controls: tuple[str, ...],
) -> _Oriented | None:
    a, b = columns["system_a"], columns["system_b"]
    as_a, as_b = a == system, b == system
    if baseline is not None:
        as_a, as_b = as_a & (b == baseline), as_b & (a == baseline)
    mine = as_a | as_b
    if not mine.any():
        return None
    flip = as_b[mine]
    score = columns["score_a"][mine]
    p = np.where(flip, 1 - score, score)

    def side(name: str) -> tuple[np.ndarray, np.ndarray]:
        own, other = columns[f"{name}_a"][mine], columns[f"{name}_b"][mine]
        return np.where(flip, other, own), np.where(flip, own, other)

    design, names = [np.ones(p.size)], []
    delta, longer, shorter = np.zeros(p.size), None, None
    if "length" in controls:
        own, other = side("length")
        delta = own - other
        longer, shorter = float((delta > 0).mean()), float((delta < 0).mean())
        sd = delta.std(ddof=1) if delta.size > 1 else 0.0
        design.append(np.tanh(delta / sd) if sd > 0 else np.zeros(p.size))
        names.append("length")
    if "markdown" in controls:
        for name in MARKDOWN:
            own, other = side(name)
            total = own + other
            design.append(np.divide(own - other, total, out=np.zeros(p.size), where=total > 0))
            names.append(name)
    return _Oriented(p, np.column_stack(design), item_index[mine], names, delta, longer, shorter)


def _with_difficulty(oriented: dict[str, _Oriented]) -> dict[str, _Oriented]:
    """Against a baseline: each system's rows with AlpacaEval's item difficulty as one more
    column, gamma estimated from every system at once (shrunk towards 0 where few systems
    met the item)."""
    systems = [s for s, rows in oriented.items() for _ in range(rows.p.size)]
    items = np.concatenate([rows.items for rows in oriented.values()])
    gamma = item_difficulty(
        systems,
        items.tolist(),
        np.concatenate([rows.p for rows in oriented.values()]),
        np.concatenate([rows.delta for rows in oriented.values()]),
        shrink=_SHRINK,
        feature_ridge=_STYLE_RIDGE,
        # The markdown features (after the intercept and any length column), so the items'
        # difficulties do not soak up the judge's taste for formatting.
        features=np.concatenate([rows.x[:, 1 + rows.has_length :] for rows in oriented.values()]),
    )
    by_index = np.array([gamma.get(i, 0.0) for i in range(int(items.max()) + 1)])
    return {
        s: rows._replace(x=np.column_stack([rows.x, by_index[rows.items]]))
        for s, rows in oriented.items()
    }


class _Fit(NamedTuple):
    """One system's data, its model's penalties and columns, and its full-data fit."""

    rows: _Oriented
    ridge: np.ndarray
    kept: np.ndarray
    """Columns the controlled rate keeps: the intercept and the difficulty term."""
    w: np.ndarray

    @classmethod
    def of(cls, rows: _Oriented) -> _Fit:
        controls, x = len(rows.names), rows.x
        kept = np.ones(x.shape[1], dtype=bool)
        kept[1 : 1 + controls] = False
        ridge = np.r_[
            _INTERCEPT_RIDGE,
            [_RIDGE if name == "length" else _STYLE_RIDGE for name in rows.names],
            np.full(x.shape[1] - 1 - controls, _RIDGE),  # the difficulty's slope
        ]
        w = newton(x, rows.p, np.ones((1, rows.p.size)), ridge, np.zeros((1, x.shape[1])))[0]
        return cls(rows, ridge, kept, w)

    def refitted(self, item_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row of `item_weights` (a weight per item: a resample's counts, a jackknife's
        leave-out): the judgments' weights, and the controlled rate refitted under them."""
        weights = item_weights[:, self.rows.items]
        start = np.tile(self.w, (len(weights), 1))
        refit = newton(self.rows.x, self.rows.p, weights, self.ridge, start)
        return weights, self.controlled(weights, refit)

    def controlled(self, weights: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The controlled rate of each fit (rows of `w`) under its weights."""
        x, kept = self.rows.x, self.kept
        total = weights.sum(axis=1)
        rates = (weights * expit(w[:, kept] @ x[:, kept].T)).sum(axis=1)
        return np.divide(rates, total, out=np.full(total.size, np.nan), where=total > 0)


def _resampled(
    fits: dict[str, _Fit], n_items: int, resamples: int, seed: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each system's controlled and raw rates on every resample of the items, all systems on
    the same draws (the differences are paired). Draws come a chunk at a time from one stream
    and every system is refitted on a chunk before the next is drawn, so memory is a chunk's,
    whatever the number of items or judgments. A resample that drew none of a system's items
    is NaN for it."""
    rng = np.random.default_rng(seed)
    widest = max(n_items, *(fit.rows.p.size for fit in fits.values()))
    chunk = max(1, _CELLS // widest)
    uniform = np.full(n_items, 1 / n_items)
    out: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {s: ([], []) for s in fits}
    for start in range(0, resamples, chunk):
        counts = rng.multinomial(n_items, uniform, min(chunk, resamples - start)).astype(float)
        for system, fit in fits.items():
            weights, controlled = fit.refitted(counts)
            total = weights.sum(axis=1)
            raw = np.divide(
                weights @ fit.rows.p, total, out=np.full(total.size, np.nan), where=total > 0
            )
            out[system][0].append(controlled)
            out[system][1].append(raw)
    return {s: (np.concatenate(c), np.concatenate(r)) for s, (c, r) in out.items()}


def _jackknife(fits: dict[str, _Fit], n_items: int) -> dict[str, np.ndarray]:
    """Each system's controlled rate with one group of items left out in turn (one item per
    group up to `_JACKKNIFE_GROUPS` items), refitted as a resample is."""
    groups = min(n_items, _JACKKNIFE_GROUPS)
    group_of = np.arange(n_items) * groups // n_items
    keep = (group_of[None, :] != np.arange(groups)[:, None]).astype(float)
    out: dict[str, np.ndarray] = {}
    for system, fit in fits.items():
        chunk = max(1, _CELLS // max(1, fit.rows.p.size))
        parts = [fit.refitted(keep[start : start + chunk])[1] for start in range(0, groups, chunk)]
        out[system] = np.concatenate(parts)
    return out


def _rate(
    system: str, fit: _Fit, c: np.ndarray, r: np.ndarray, level: float, jack: np.ndarray
) -> tuple[ControlledRate, np.ndarray]:
    """The system's estimates with their intervals, and its resampled controlled rates (for
    the paired differences)."""
    rows, w = fit.rows, fit.w
    controls = len(rows.names)
    controlled = float(fit.controlled(np.ones((1, rows.p.size)), w[None, :])[0])
    raw = float(rows.p.mean())
    seen = ~np.isnan(r)
    c_low, c_high = _interval(c[seen], level, controlled, jack)
    r_low, r_high = _interval(r[seen], level)
    s_low, s_high = _interval(c[seen] - r[seen], level)
    rate = ControlledRate(
        system=system,
        judgments=int(rows.p.size),
        items=int(np.unique(rows.items).size),
        win_rate=raw,
        win_low=r_low,
        win_high=r_high,
        controlled=controlled,
        ci_low=c_low,
        ci_high=c_high,
        shift=controlled - raw,
        shift_low=s_low,
        shift_high=s_high,
        # A control that never varied for this system was not measured: no slope, not 0.
        coefficients={
            n: float(v)
            for n, v, column in zip(
                rows.names, w[1 : 1 + controls], rows.x[:, 1 : 1 + controls].T, strict=True
            )
            if np.ptp(column) > 0
        },
        longer=rows.longer,
        shorter=rows.shorter,
    )
    return rate, np.where(seen, c, np.nan)


def newton(
    x: np.ndarray, p: np.ndarray, weights: np.ndarray, ridge: np.ndarray, start: np.ndarray
) -> np.ndarray:
    """Coefficients minimising each row of `weights`' weighted cross-entropy of
    sigmoid(x @ w) against the soft targets p, plus 0.5 * ridge * w^2: one fit per row, all
    at once (Newton's method, steps clipped to `_MAX_STEP`)."""
    w = start.astype(float).copy()
    k = x.shape[1]
    eye = np.diag(ridge)
    # Each row's outer product, flattened: every fit's Hessian is then one matrix product.
    outer = (x[:, :, None] * x[:, None, :]).reshape(len(x), k * k)
    for _ in range(100):
        q = expit(w @ x.T)  # fits x rows
        grad = (weights * (q - p)) @ x + w * ridge
        hess = ((weights * q * (1 - q)) @ outer).reshape(-1, k, k) + eye
        step = np.clip(np.linalg.solve(hess, grad[:, :, None])[:, :, 0], -_MAX_STEP, _MAX_STEP)
        w -= step
        # 1e-7 logits moves a win rate by under 3e-8: far below what an interval shows.
        if np.abs(step).max() < 1e-7:
            break
    return w


def _row_number(label: Any) -> str:
    """A row's number counted from 1 as a file's data rows are, when its label is a position."""
    return str(label + 1) if isinstance(label, int | np.integer) else repr(label)


def _interval(
    values: np.ndarray,
    level: float,
    point: float | None = None,
    jackknife: np.ndarray | None = None,
) -> tuple[float, float]:
    """The percentile interval of `values`, or BCa's given the `point` estimate and its
    `jackknife`."""
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    levels = np.array([(1 - level) / 2, (1 + level) / 2])
    if point is not None and jackknife is not None:
        levels = bca_levels(point, values, jackknife[np.isfinite(jackknife)], levels)
    low, high = np.quantile(values, levels)
    return float(low), float(high)
