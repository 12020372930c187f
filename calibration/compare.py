"""One table in, one comparison report out: the entry point behind `judge compare`.

Two table shapes:

* ``scores``: item_id, system, score, optional stratum column (`by`), optional `cluster`.
  Several rows for one (item_id, system), e.g. one per judge, are averaged into one per-item
  score so they move together. Pairs compare per-item scores on the items both systems have.
* ``pairwise``: item_id, system_a, system_b, and score_a in [0, 1] (1 = a better, 0.5 = tie,
  or a probability) or winner ('A', 'B', 'tie', or a system's name), optional `by` and
  `cluster`; one row per judgment or per unblinded verdict. All rows of an item (both
  orders, every judge) are resampled together. Here
  diff(a, b) is the net win rate: mean over rows of score_a - score_b = 2 winrate - 1.

Everything is resampled with the same `seed`, and every interval says which it used. The
tables are checked (errors that name the fix) in `calibration.compare_input`.

"Told apart" is the Holm-adjusted paired test of the overall family (`calibration.pairs`), and
the ranking's ranks come from the same tests over the ordering by mean score or Bradley–Terry
strength (`calibration.ranks`); a gate's `p_value(diff(a, b))` is the pair's Holm-adjusted
p-value when the pair is in that family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from calibration.bootstrap import PairedBootstrapResult, bootstrap_mean
from calibration.compare_input import (
    ComparisonInputError,
    pairwise_rows,
    per_item,
    scores_rows,
)
from calibration.gates import (
    GateResult,
    GateStatistic,
    StatisticCache,
    gate_results,
    parse_gate,
)
from calibration.jsonable import jsonable
from calibration.pairs import (
    PairComparison,
    bootstrap_pair,
    holm_family,
    paired_difference,
    system_pairs,
    win_rate_matrix,
)
from calibration.ranking import BradleyTerryResult, bradley_terry, pairwise_win_rates
from calibration.ranks import family_ranks
from calibration.resampling import Method
from calibration.style_control import StyleControl, StyleControlError, style_controlled

Kind = Literal["scores", "pairwise"]
# One system before it is ranked: name, items, estimate, interval.
_Placed = tuple[str, int, float, float, float]


@dataclass(frozen=True)
class SystemSummary:
    """One system: mean score (scores) or Bradley–Terry strength (pairwise), the ordering,
    with a rank from the Holm-adjusted paired tests (`calibration.ranks.ranks_from_tests`):
    it shares a rank only with systems it is not told apart from."""

    system: str
    n_items: int
    estimate: float
    ci_low: float | None
    ci_high: float | None
    """None: a Bradley–Terry interval that is not estimable (its result says why)."""
    rank: int


@dataclass(frozen=True)
class ComparisonReport:
    kind: str
    systems: tuple[str, ...]
    baseline: str | None
    by: str | None
    resamples: int
    seed: int
    ci: float
    method: str
    n_items: int
    n_rows: int
    ranking: tuple[SystemSummary, ...]
    comparisons: tuple[PairComparison, ...]  # overall, stratified by `by` when given
    by_stratum: tuple[PairComparison, ...]  # the same pairs within each stratum
    win_rates: pd.DataFrame = field(compare=False)
    bradley_terry: BradleyTerryResult | None
    gates: tuple[GateResult, ...]
    notes: tuple[str, ...]  # everything left out or changed on the way, in words
    controlled: StyleControl | None = None
    """Pairwise with `controls`: the length- (and style-) controlled win rates."""

    @property
    def gates_passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def failed_gates(self) -> tuple[GateResult, ...]:
        return tuple(g for g in self.gates if not g.passed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "systems": list(self.systems),
            "baseline": self.baseline,
            "by": self.by,
            "resamples": self.resamples,
            "seed": self.seed,
            "ci": self.ci,
            "method": self.method,
            "n_items": self.n_items,
            "n_rows": self.n_rows,
            "ranking": [jsonable(s) for s in self.ranking],
            "comparisons": [c.to_dict() for c in self.comparisons],
            "by_stratum": [c.to_dict() for c in self.by_stratum],
            "win_rates": jsonable(self.win_rates),
            "bradley_terry": None if self.bradley_terry is None else self.bradley_terry.to_dict(),
            "gates": [g.to_dict() for g in self.gates],
            "gates_passed": self.gates_passed,
            "notes": list(self.notes),
            "controlled": None if self.controlled is None else self.controlled.to_dict(),
        }


# --------------------------------------------------------------------------- the two kinds


class _Table:
    """A table as `compare_table` reads it. Each kind says how it reads a pair (`pair`), the
    ranking, the win rates and the gates' statistics; `compare_table` does the rest."""

    systems: list[str]
    strata: pd.Series | None  # per item, when compared `by` a column
    notes: list[str]  # what reading the table left out or changed
    n_items: int
    n_rows: int
    common: dict[str, Any]  # seed, resamples, ci, method

    def pair(self, a: str, b: str, stratum: str | None = None, resamples: int | None = None) -> Any:
        raise NotImplementedError

    def unpaired(self, a: str, b: str) -> str:
        raise NotImplementedError

    def paired(self, a: str, b: str, **kwargs: Any) -> PairedBootstrapResult:
        """The overall a - b result a gate asks for; an error when no row pairs a with b."""
        got = self.pair(a, b, **kwargs)
        if got is None:
            raise ValueError(self.unpaired(a, b))
        return got[0]


class _Scores(_Table):
    """A scores table read as one per-item score per system (a wide item x system table)."""

    def __init__(self, table: pd.DataFrame, by: str | None, common: dict[str, Any]) -> None:
        df = scores_rows(table)
        self.notes: list[str] = []
        strata = per_item(df, by, "stratum")
        clusters = per_item(df, "cluster" if "cluster" in df.columns else None, "cluster")
        dup = int(df.duplicated(["item_id", "system"]).sum())
        if dup:
            self.notes.append(
                f"{dup} extra rows for an already scored (item_id, system) were averaged into "
                "one per-item score (e.g. several judges), so they move together"
            )
        self.wide = df.pivot_table(
            index="item_id", columns="system", values="score", aggfunc="mean"
        )
        self.systems = [str(c) for c in self.wide.columns]
        self.strata = None if strata is None else strata.loc[self.wide.index]
        self.clusters = None if clusters is None else clusters.loc[self.wide.index]
        self.by = by
        self.common = common
        self.n_items = len(self.wide)
        self.n_rows = len(df)

    def pair(
        self,
        a: str,
        b: str,
        stratum: str | None = None,
        resamples: int | None = None,
        *,
        wins: bool = False,
    ) -> tuple[PairedBootstrapResult, int] | None:
        """a - b on the items both have (resampled within strata; with `stratum`, on that
        stratum's items only) and the items only one has; None when they share none."""
        if stratum is None:
            wide, strata = self.wide, self.strata
        else:
            wide, strata = self.wide.loc[self.strata == stratum], None
        common = {**self.common, "resamples": resamples or self.common["resamples"]}
        clusters = self.clusters
        return bootstrap_pair(wide, a, b, strata=strata, clusters=clusters, wins=wins, **common)

    def unpaired(self, a: str, b: str) -> str:
        return f"{a} and {b} share no scored item"

    def skip_note(self, a: str, b: str, stratum: str | None, baseline: str | None) -> str:
        if stratum is None:
            return f"{self.unpaired(a, b)}: not compared"
        return f"{self.by}={stratum}: {a} and {b} share no item"

    def ranking(self, notes: list[str]) -> tuple[list[_Placed], None]:
        """Each system's mean score with its interval: the ordering."""
        placed = []
        for s in self.systems:
            col = self.wide[s].dropna()
            r = bootstrap_mean(
                col.to_numpy(),
                strata=None if self.strata is None else self.strata.loc[col.index].to_numpy(),
                clusters=None if self.clusters is None else self.clusters.loc[col.index].to_numpy(),
                **self.common,
            )
            placed.append((s, len(col), r.mean, r.ci_low, r.ci_high))
        return placed, None

    def win_rates(self) -> pd.DataFrame:
        return win_rate_matrix(self.wide)

    def gate_statistic(
        self, name: str, a: str, b: str, known: PairedBootstrapResult | None
    ) -> GateStatistic:
        """diff: `known` (same data and seed) or a fresh bootstrap; winrate: its own bootstrap
        of a's wins, shifted back by the 1/2 it is tested against."""
        ci = self.common["ci"]
        if name == "winrate":
            r = self.paired(a, b, wins=True)
            return GateStatistic(r.mean_diff + 0.5, r.ci_low + 0.5, r.ci_high + 0.5, r.p_value, ci)
        r = known or self.paired(a, b)
        return GateStatistic(r.mean_diff, r.ci_low, r.ci_high, r.p_value, ci)


# --------------------------------------------------------------------------- pairwise


def _ranking(
    judgments: pd.DataFrame, *, seed: int, resamples: int, ci: float, notes: list[str]
) -> BradleyTerryResult | None:
    """Bradley–Terry if it exists; the notes say what was done instead when it does not."""
    # Each replicate is a Newton fit; 2,000 replicates put the 2.5% quantiles within about
    # 0.04 standard errors, enough for ranks, at a fifth of the cost of 10,000.
    n = min(resamples, 2_000)
    if n < resamples:
        notes.append(f"Bradley–Terry intervals use {n} resamples")
    try:
        return bradley_terry(judgments, seed=seed, resamples=n, ci=ci)
    except ValueError as exc:
        first = str(exc)
    if "never compared" in first:
        notes.append(f"no ranking: {first}")
        return None
    notes.append(f"Bradley–Terry: {first}; refitted with prior=1")
    return bradley_terry(judgments, seed=seed, resamples=n, ci=ci, prior=1.0)


class _Pairwise(_Table):
    """A pairwise table read as judgments: in every row a's score, oriented per pair."""

    def __init__(self, table: pd.DataFrame, by: str | None, common: dict[str, Any]) -> None:
        df = pairwise_rows(table)
        self.notes: list[str] = []
        self.strata = per_item(df, by, "stratum")
        cluster_col = "cluster" if "cluster" in df.columns else "item_id"
        if cluster_col == "cluster":
            per_item(df, "cluster", "cluster")
        self.systems = sorted(set(df["system_a"]) | set(df["system_b"]))
        self.df = df
        self.row_strata = None if self.strata is None else df["item_id"].map(self.strata).to_numpy()
        self.row_clusters = df[cluster_col].to_numpy()
        self.judgments = df[["item_id", "system_a", "system_b", "score_a"]].copy()
        if cluster_col == "cluster":  # the Bradley–Terry bootstrap resamples these units
            self.judgments["item_id"] = df["cluster"]
        self.common = common
        self.n_items = int(df["item_id"].nunique())
        self.n_rows = len(df)

    def pair(
        self, a: str, b: str, stratum: str | None = None, resamples: int | None = None
    ) -> tuple[PairedBootstrapResult, int] | None:
        """a's net win rate over b (score_a - score_b over the rows comparing them, in both
        orders), resampled within strata, or on `stratum`'s rows only; None when no row
        compares them. No item is left unpaired: every row holds both systems."""
        df = self.df
        fwd = (df["system_a"] == a) & (df["system_b"] == b)
        rev = (df["system_a"] == b) & (df["system_b"] == a)
        mask = (fwd | rev).to_numpy()
        if stratum is not None:
            mask = mask & (self.row_strata == stratum)
        if not mask.any():
            return None
        s = np.where(fwd.to_numpy(), df["score_a"].to_numpy(), 1 - df["score_a"].to_numpy())
        sa = s[mask]
        stratified = self.row_strata is not None and stratum is None
        res = paired_difference(
            sa,
            1 - sa,
            items=df["item_id"].to_numpy()[mask],
            strata=self.row_strata[mask] if stratified else None,
            clusters=self.row_clusters[mask],
            **{**self.common, "resamples": resamples or self.common["resamples"]},
        )
        return res, 0

    def unpaired(self, a: str, b: str) -> str:
        return f"{a} was never judged against {b}"

    def skip_note(self, a: str, b: str, stratum: str | None, baseline: str | None) -> str | None:
        # Without a baseline only the pairs the table holds are compared: a missing pair is
        # news only against the baseline, and a pair absent from a stratum is never news.
        if stratum is None and baseline is not None:
            return f"{self.unpaired(a, b)}: not compared"
        return None

    def ranking(self, notes: list[str]) -> tuple[list[_Placed], BradleyTerryResult | None]:
        """Bradley–Terry strengths with their intervals, the ordering, when the fit exists
        (`notes` say)."""
        c = self.common
        bt = _ranking(
            self.judgments, seed=c["seed"], resamples=c["resamples"], ci=c["ci"], notes=notes
        )
        if bt is None:
            return [], None
        # Distinct items over both slots: an item where a system is system_a in one pair and
        # system_b in another is still one item.
        df = self.df
        n_items = (
            pd.concat(
                [
                    df[["system_a", "item_id"]].set_axis(["system", "item_id"], axis=1),
                    df[["system_b", "item_id"]].set_axis(["system", "item_id"], axis=1),
                ]
            )
            .groupby("system")["item_id"]
            .nunique()
        )
        placed = [
            (s, int(n_items.get(s, 0)), est, lo, hi)
            for s, est, lo, hi in zip(bt.systems, bt.strength, bt.ci_low, bt.ci_high, strict=True)
        ]
        return placed, bt

    def win_rates(self) -> pd.DataFrame:
        return pairwise_win_rates(self.judgments)

    def gate_statistic(
        self, name: str, a: str, b: str, known: PairedBootstrapResult | None
    ) -> GateStatistic:
        """diff: the net win rate, `known` (same data and seed) or a fresh bootstrap;
        winrate = (1 + net win rate) / 2, interval included."""
        ci = self.common["ci"]
        r = known or self.paired(a, b)
        if name == "winrate":
            return GateStatistic(
                (1 + r.mean_diff) / 2, (1 + r.ci_low) / 2, (1 + r.ci_high) / 2, r.p_value, ci
            )
        return GateStatistic(r.mean_diff, r.ci_low, r.ci_high, r.p_value, ci)


# --------------------------------------------------------------------------- ranks


def _ranked(
    placed: list[_Placed], comparisons: Sequence[PairComparison], notes: list[str]
) -> tuple[SystemSummary, ...]:
    """The systems, best first, with ranks from the overall family's tests."""
    ranks, said = family_ranks({s: est for s, _, est, _, _ in placed}, comparisons)
    notes += said
    ranking = [SystemSummary(s, n, est, lo, hi, ranks[s]) for s, n, est, lo, hi in placed]
    return tuple(sorted(ranking, key=lambda s: (s.rank, -s.estimate)))


# --------------------------------------------------------------------------- entry point

_KINDS: dict[str, type[_Scores | _Pairwise]] = {"scores": _Scores, "pairwise": _Pairwise}


def compare_table(
    table: pd.DataFrame,
    *,
    kind: Kind,
    baseline: str | None = None,
    by: str | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    gates: Sequence[str] = (),
    ci: float = 0.95,
    method: Method = "percentile",
    controls: Sequence[str] = (),
    control_baseline: str | None = None,
) -> ComparisonReport:
    """Compare systems from a per-item scores table or a pairwise judgments table.

    Pairs: every system against `baseline` when given, else every pair, Holm-adjusted. With
    `by`, the overall intervals resample within strata and each stratum is also reported on
    its own. Gate syntax errors raise GateSyntaxError, gates naming unknown systems GateError,
    tables that do not fit ComparisonInputError (all ValueError); a failing gate is a result.
    `controls` (pairwise only): `length` and/or `markdown`, the win rates controlled for them
    (`calibration.style_control`, against `baseline` or the field; the table carries the
    style columns it names), on the same resamples and seed; against `control_baseline`
    when given (a run whose pairs all hold one system), else `baseline`.
    Both kinds go through the same steps; `_Scores` and `_Pairwise` say how each reads a pair,
    the ranking and the win rates from its table.
    """
    _check_request(table, kind, gates, controls)
    rows = _KINDS[kind](
        table, by, {"seed": seed, "resamples": resamples, "ci": ci, "method": method}
    )
    systems = rows.systems
    if len(systems) < 2:
        raise ComparisonInputError(f"need at least 2 systems to compare, got {systems}")
    if baseline is not None and baseline not in systems:
        raise ComparisonInputError(
            f"baseline {baseline!r} is not among the systems: {', '.join(systems)}"
        )
    notes = list(rows.notes)
    pairs = list(system_pairs(systems, baseline))
    comparisons = _family(rows, pairs, None, baseline, notes)
    strata = [] if rows.strata is None else sorted(rows.strata.unique())
    by_stratum = [c for value in strata for c in _family(rows, pairs, value, baseline, notes)]
    placed, bt = rows.ranking(notes)
    ranking = _ranked(placed, comparisons, notes)
    context = _gate_context(rows, kind, comparisons, ranking, ci)
    controlled = None
    if controls:
        controlled = _controlled(
            rows, controls, control_baseline or baseline, resamples=resamples, seed=seed, ci=ci
        )
    return ComparisonReport(
        kind=kind,
        systems=tuple(systems),
        baseline=baseline,
        by=by,
        resamples=resamples,
        seed=seed,
        ci=ci,
        method=method,
        n_items=rows.n_items,
        n_rows=rows.n_rows,
        ranking=ranking,
        comparisons=tuple(comparisons),
        by_stratum=tuple(by_stratum),
        win_rates=rows.win_rates(),
        bradley_terry=bt,
        gates=gate_results(gates, context),
        notes=tuple(notes),
        controlled=controlled,
    )


def _check_request(
    table: pd.DataFrame, kind: Kind, gates: Sequence[str], controls: Sequence[str]
) -> None:
    """Refuse what cannot be compared before any table is read or resampled."""
    if len(table) == 0:
        raise ComparisonInputError("the table is empty: nothing to compare")
    if "item_id" not in table.columns:
        raise ComparisonInputError("the table needs an item_id column")
    for g in gates:
        parse_gate(g)  # fail on syntax before the (possibly long) bootstrap
    if kind not in _KINDS:
        raise ComparisonInputError(f"kind must be 'scores' or 'pairwise', got {kind!r}")
    if controls and kind != "pairwise":
        raise ComparisonInputError(
            "length and style control needs pairwise judgments (a score has no opponent's "
            "length to control for)"
        )


def _family(
    rows: _Scores | _Pairwise,
    pairs: Sequence[tuple[str, str]],
    stratum: str | None,
    baseline: str | None,
    notes: list[str],
) -> list[PairComparison]:
    """The pairs the table can compare (overall, or within one stratum), Holm-adjusted as
    one family; a pair it cannot compare adds its reason to `notes`."""
    done = []
    for a, b in pairs:
        got = rows.pair(a, b, stratum)
        if got is not None:
            done.append((a, b, *got))
        elif note := rows.skip_note(a, b, stratum, baseline):
            notes.append(note)

    def rerun(a: str, b: str, n: int) -> tuple[PairedBootstrapResult, int] | None:
        return rows.pair(a, b, stratum, n)

    return holm_family(done, stratum, rerun)


def _gate_context(
    rows: _Scores | _Pairwise,
    kind: Kind,
    comparisons: Sequence[PairComparison],
    ranking: Sequence[SystemSummary],
    ci: float,
) -> StatisticCache:
    """The statistics gates read: pair differences carry the overall family's Holm p-value."""
    overall = {(c.a, c.b): c for c in comparisons}
    by_system = {s.system: s for s in ranking}

    def compute(name: str, a: str, b: str) -> GateStatistic:
        # The family holds each pair in one orientation; b - a is the same test turned round
        # (same p-value), so either spelling gets the Holm-adjusted value.
        known = overall.get((a, b))
        result = None if known is None else known.result
        if known is None and (known := overall.get((b, a))) is not None:
            result = known.result.negated()
        stat = rows.gate_statistic(name, a, b, result)
        if known is None or (kind == "scores" and name == "winrate"):
            return stat  # a test of its own: a family of one
        return replace(stat, p_value=known.p_holm)

    def score(s: str) -> GateStatistic:
        m = by_system[s]
        return GateStatistic(m.estimate, m.ci_low, m.ci_high, None, ci)

    return StatisticCache(rows.systems, compute, score if kind == "scores" else None)


def _controlled(
    rows: _Scores | _Pairwise,
    controls: Sequence[str],
    baseline: str | None,
    *,
    resamples: int,
    seed: int,
    ci: float,
) -> StyleControl:
    """The pairwise win rates controlled for `controls`, on the comparison's seed."""
    try:
        judged = rows.df  # type: ignore[union-attr]  # pairwise: score_a from winner
        if "cluster" in judged.columns:  # resampled in the units the differences use
            judged = judged.assign(item_id=judged["cluster"])
        return style_controlled(
            judged,
            controls,
            baseline=baseline,
            resamples=resamples,
            seed=seed,
            level=ci,
        )
    except StyleControlError as exc:
        raise ComparisonInputError(str(exc)) from None
