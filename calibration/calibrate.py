"""`calibrate`: one call from a judge table and a human label table to a typed report.

The report holds, overall and per stratum: agreement metrics with cluster-bootstrap
intervals over keys, the human ceiling, a confusion matrix and the gate verdict; overall
also the join summary (nothing dropped silently) and PPI++ corrected win rates / mean scores
beside the judge's raw ones.

Judge-human alpha: every human label paired with the judgment on the same key is one
two-coder unit (one comparison per human label, as MT-Bench counts agreement), and all of a
key's comparisons are resampled together. The human ceiling is Krippendorff's alpha among the
humans on keys with two or more labels; the judge's comparable figure is leave-one-human-out
(each label in turn is replaced by the judge and compared with the others), on the same keys
and resamples, so their difference has a paired interval.

Both orientations. Which system of a pair is `a` is an artefact of naming (`calibration.labels`
sorts the two names), yet chance correction reads the label marginals: how often `a` was said
depends on which systems happen to sort first, and renaming `alpaca-13b` to sort last moved
MT-Bench judge alpha from 0.476 to 0.435. So every chance-corrected statistic of pairwise labels
(alpha of judge, humans and LOHO, Cohen's kappa) is computed on the data in both orientations:
each comparison once as labelled and once as seen from the other side (a <-> b, ties stay), the
mirror copy in its key's bootstrap cluster. Why this is the right estimator: swapping a and b
preserves every agreement and disagreement, so the observed disagreement is the data's own;
the expected disagreement comes from mirror-symmetric marginals (as many `a` as `b`), the only
marginals that privilege neither system, so it no longer depends on the orientation and the
statistic is a function of the labels up to renaming. It is the ordinary statistic of a
concrete data set (the doubled one), so the `krippendorff` package and scikit-learn reproduce it
there (tests do), and it keeps alpha's and kappa's ranges and meaning. Alpha's small-sample
factor (n - 1) then counts both copies; weighting each copy 1/2, or averaging the expected
disagreement over every orientation of the keys, differs only by O(1/n) (under 0.001 on
MT-Bench: scripts/orientation_table.py). Raw agreement (S1, S2) does not depend on orientation
and counts each comparison once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, is_dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from pydantic import BaseModel

from calibration.agreement import (
    ConfusionMatrix,
    kappa_from_confusion,
    kendall_tau_b,
    pairwise_columns,
    ratio_block,
    ratio_estimates,
    spearman,
)
from calibration.alpha import alpha_with_resamples, package_alpha
from calibration.bootstrap_alpha import (
    AlphaUnits,
    Level,
    domain_for_level,
    resampled_block_sums,
    units_from_pairs,
    units_from_value_counts,
)
from calibration.corrected_labels import corrected_estimates
from calibration.correction import CorrectedEstimate
from calibration.estimate import Agreement, Estimate, from_resamples, undefined
from calibration.labels import (
    JoinedLabels,
    JoinSummary,
    Kind,
    LabelError,
    join_labels,
    natural_key,
    normalise,
    unknown_systems_note,
)
from calibration.trust_gate import GateThresholds, GateVerdict, evaluate_gate, stratum_gate

# Package alpha builds an (rows, K, K) array; beyond this many cells use the coincidences.
_PACKAGE_CELLS = 20_000_000
_MAX_KAPPA_CATEGORIES = 20


@dataclass(frozen=True)
class HumanCeiling:
    keys: int
    """Keys with two or more human labels: the only ones that say how humans agree."""
    human_alpha: Estimate
    judge_alpha_loho: Estimate
    alpha_gap: Estimate
    """judge_alpha_loho - human_alpha, paired bootstrap (negative: the judge falls short)."""
    human_agreement: Agreement
    """Share of agreeing human label pairs (MT-Bench S1 human vs human)."""
    judge_agreement_loho: Agreement
    agreement_gap: Estimate


@dataclass(frozen=True)
class StratumReport:
    stratum: dict[str, str]
    """{} overall; else {column: value}."""
    keys: int
    labels: int
    metrics: dict[str, Estimate]
    ceiling: HumanCeiling | None
    confusion: ConfusionMatrix
    gate: GateVerdict


@dataclass(frozen=True)
class CalibrationReport:
    kind: Kind
    level: Level
    overall: StratumReport
    strata: tuple[StratumReport, ...]
    gate: GateVerdict
    """The verdict to act on: the overall gate, capped by untrusted strata."""
    join: JoinSummary
    corrected: tuple[CorrectedEstimate, ...]
    resamples: int
    seed: int
    confidence: float

    def to_dict(self) -> dict:
        return _jsonable(self)

    def to_text(self) -> str:
        return _render(self)


def calibrate(
    judge_table: pd.DataFrame,
    human_table: pd.DataFrame,
    *,
    kind: Kind,
    strata: Sequence[str] = (),
    gate: GateThresholds | None = None,
    level: Level | None = None,
    scale: Sequence[float] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CalibrationReport:
    """Judge versus humans: agreement with intervals, human ceiling, gate, corrected estimates.

    Tables as in `calibration.labels` (pairwise: item_id, system_a, system_b, winner
    [+ annotator]; absolute: item_id, system, score [+ annotator]). `strata` are key-level
    columns of either table. `level` defaults to nominal (pairwise) / interval (absolute).
    `scale` (absolute): the rubric's score values, used or not (a human score outside is an
    error); weighted kappa weighs disagreements by score value either way.
    Raises `LabelError` (a ValueError) naming the row and column of malformed input.
    """
    level = level or ("nominal" if kind == "pairwise" else "interval")
    if kind == "pairwise" and level != "nominal":
        raise LabelError(f"pairwise labels (a, b, tie) are nominal; got level {level!r}")
    if resamples < 1 or not 0 < confidence < 1:
        raise ValueError("resamples must be >= 1 and confidence in (0, 1)")
    thresholds = gate or GateThresholds()
    joined = join_labels(judge_table, human_table, kind=kind, strata=strata, scale=scale)
    if joined.summary.matched_keys == 0:
        join = joined.summary
        raise LabelError(
            "no key has both a usable judgment and a human label: "
            f"judge keys e.g. {list(join.judge_only.examples[:2])}, human keys e.g. "
            f"{list(join.human_only.examples[:2])}; "
            + (
                unknown_systems_note(join)
                if join.unknown_systems
                else "check item_id and system names"
            )
        )
    ctx = _Ctx(joined, level, resamples, seed, confidence, thresholds)
    overall = ctx.stratum(np.ones(len(joined.keys), dtype=bool), {})
    parts = []
    for col in strata:
        for value in sorted(joined.keys[col].unique(), key=natural_key):
            mask = (joined.keys[col] == value).to_numpy()
            parts.append(ctx.stratum(mask, {col: str(value)}))
    final = evaluate_gate(
        overall.metrics["alpha"],
        n_units=overall.keys,
        ceiling_keys=overall.ceiling.keys if overall.ceiling else 0,
        alpha_gap=overall.ceiling.alpha_gap if overall.ceiling else None,
        human_alpha=overall.ceiling.human_alpha if overall.ceiling else None,
        annotators=overall.gate.stand_in.annotators,
        control=overall.gate.control,
        thresholds=thresholds,
        strata=[(_name(p.stratum), p.gate, p.keys) for p in parts],
    )
    return CalibrationReport(
        kind,
        level,
        overall,
        tuple(parts),
        final,
        joined.summary,
        corrected_estimates(joined, confidence),
        resamples,
        seed,
        confidence,
    )


def shuffled_judge(judge_table: pd.DataFrame, *, kind: Kind, seed: int) -> pd.DataFrame:
    """The judge table with its winners (scores) permuted across rows: a judge that ignores the
    responses but keeps its label distribution (pairwise: ties, and a/b up to orientation).
    Calibration must call it untrusted."""
    table = normalise(judge_table, kind, "judge")
    rng = np.random.default_rng(seed)
    value = "winner" if kind == "pairwise" else "score"
    labels = rng.permutation(table["label"].to_numpy())
    if kind == "pairwise":
        # A moved "a" names whichever system sorts first on its new row: read it in a random
        # orientation, so the control's distribution does not depend on what systems are called.
        swap = rng.random(len(labels)) < 0.5
        labels = np.where(swap, pd.Series(labels).map(_MIRROR).to_numpy(), labels)
    return table.assign(**{value: labels}).drop(columns="label")


_MIRROR = {"a": "b", "b": "a", "tie": "tie", None: None}


# --- per-stratum computation ---------------------------------------------------------------


@dataclass(frozen=True)
class _Stratum:
    """One stratum's labels as arrays, with its per-key blocks and their shared resamples."""

    h: np.ndarray
    """Per-key human label counts by category."""
    jc: np.ndarray
    """Per-key judge category."""
    m: np.ndarray
    """Human labels per key."""
    multi: np.ndarray
    """Keys with two or more human labels."""
    domain: np.ndarray
    pk: np.ndarray
    px: np.ndarray
    py: np.ndarray
    pw: np.ndarray
    """The comparisons in both orientations (key, judge category, human category, weight)."""
    both: str
    """", both orientations" in the methods' names when the labels have an orientation."""
    ratio_cols: dict[str, tuple[np.ndarray, np.ndarray]]
    confusion: np.ndarray
    mirrored: np.ndarray
    units: dict[str, AlphaUnits]
    blocks: dict[str, np.ndarray | sp.csr_matrix]
    sums: dict[str, np.ndarray]

    @property
    def n(self) -> int:
        return int(self.h.shape[0])

    @property
    def k(self) -> int:
        return int(self.h.shape[1])


_NOTE = "percentile cluster bootstrap over keys"


@dataclass(frozen=True)
class _Ctx:
    joined: JoinedLabels
    level: Level
    resamples: int
    seed: int
    confidence: float
    thresholds: GateThresholds

    def stratum(self, mask: np.ndarray, stratum: dict[str, str]) -> StratumReport:
        """Every statistic of one stratum, from ONE set of key resamples (so all of them,
        and the ceiling gaps in particular, are paired)."""
        j, lv = self.joined, self.level
        s = self._prepare(mask)
        judge_alpha, _ = self._alpha(
            s,
            "judge",
            _package_pairs(s.px, s.py, s.pw, s.k, s.domain, lv),
            f"krippendorff alpha ({lv}), judge vs each human label{s.both}; {_NOTE}",
        )
        ratio = ratio_estimates(
            s.ratio_cols,
            resamples=self.resamples,
            seed=self.seed,
            confidence=self.confidence,
            method=lambda name: f"{_RATIO_NAMES[name]}; {_NOTE}",
            differences={"agreement_gap": ("judge_loho", "human_loho")},
            sums=s.sums["ratio"],
        )
        metrics = self._metrics(s, judge_alpha, ratio)
        ceiling = self._ceiling(s, ratio) if s.multi.any() else None
        counts = s.confusion.sum(axis=0).reshape(s.k, s.k).astype(np.int64)
        matrix = ConfusionMatrix(
            tuple(str(c) for c in j.categories), tuple(tuple(int(v) for v in r) for r in counts)
        )
        verdict = stratum_gate(
            j,
            mask,
            judge_alpha,
            ceiling_keys=ceiling.keys if ceiling else 0,
            alpha_gap=ceiling.alpha_gap if ceiling else None,
            human_alpha=ceiling.human_alpha if ceiling else None,
            scoring="accuracy" if lv == "nominal" else "negative RMSE",
            thresholds=self.thresholds,
            seed=self.seed,
        )
        return StratumReport(stratum, s.n, int(s.m.sum()), metrics, ceiling, matrix, verdict)

    def _prepare(self, mask: np.ndarray) -> _Stratum:
        """The stratum's comparisons and per-key blocks, resampled together in one draw."""
        j, lv = self.joined, self.level
        h, jc = j.human_counts[mask], j.judge_code[mask]
        n, k = h.shape
        m = h.sum(axis=1)
        multi = m >= 2
        # One comparison per human label: (key, judge category, human category), by count.
        key, cat = np.nonzero(h)
        weight = h[key, cat]
        domain = domain_for_level(np.asarray(j.values if j.kind == "absolute" else range(k)), lv)
        # Chance-corrected statistics see both orientations (module docstring).
        pk, px, py, pw = _both_orientations(j.mirror, key, jc[key], cat, weight)
        both = "" if j.mirror is None else ", both orientations"

        ratio_cols = pairwise_columns(j, mask)
        confusion = np.zeros((n, k * k))
        confusion[key, jc[key] * k + cat] = weight
        mirrored = np.zeros((n, k * k))
        np.add.at(mirrored, (pk, px * k + py), pw)
        units = {"judge": units_from_pairs(pk, px, py, pw, n, domain, lv)}
        if multi.any():
            units["human"] = units_from_value_counts(h, domain, lv, mirror=j.mirror)
            units["loho"] = units_from_pairs(pk, px, py, pw * multi[pk], n, domain, lv)
        values = j.values
        blocks = {"ratio": ratio_block(ratio_cols), "confusion": mirrored}
        blocks |= {f"alpha_{name}": u.columns for name, u in units.items()}
        if j.kind == "absolute":
            diff = np.bincount(key, weights=weight * (values[jc[key]] - values[cat]), minlength=n)
            blocks["bias"] = np.column_stack([diff, m])
        sums = resampled_block_sums(blocks, self.resamples, np.random.default_rng(self.seed))
        return _Stratum(
            h=h,
            jc=jc,
            m=m,
            multi=multi,
            domain=domain,
            pk=pk,
            px=px,
            py=py,
            pw=pw,
            both=both,
            ratio_cols=ratio_cols,
            confusion=confusion,
            mirrored=mirrored,
            units=units,
            blocks=blocks,
            sums=sums,
        )

    def _alpha(
        self, s: _Stratum, name: str, point: float | None, method: str
    ) -> tuple[Estimate, np.ndarray | None]:
        """Alpha of one set of the stratum's units, on the stratum's shared resamples."""
        return alpha_with_resamples(
            s.units[name],
            point,
            method=method,
            seed=self.seed,
            resamples=self.resamples,
            confidence=self.confidence,
            sums=s.sums[f"alpha_{name}"],
        )

    def _metrics(
        self, s: _Stratum, judge_alpha: Estimate, ratio: dict[str, Estimate]
    ) -> dict[str, Estimate]:
        """Judge-vs-human agreement metrics: alpha first, then those of the label kind."""
        values = self.joined.values
        metrics: dict[str, Estimate] = {"alpha": judge_alpha}
        if self.joined.kind == "pairwise":
            metrics |= {dst: ratio[src] for src, dst in _PAIRWISE_RATIOS.items()}
            metrics["kappa"] = self._kappa(s.mirrored, s.sums["confusion"], None, _NOTE, values)
            return metrics
        human_mean = (s.h @ values) / s.m
        kw = {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence}
        metrics["exact_agreement"] = ratio["judge_s1"]
        metrics["human_exact_agreement"] = ratio["human_s1"]
        metrics["spearman"] = spearman(values[s.jc], human_mean, **kw)
        metrics["kendall_tau_b"] = kendall_tau_b(values[s.jc], human_mean, **kw)
        metrics["mean_bias"] = from_resamples(
            s.blocks["bias"][:, 0].sum() / s.m.sum(),
            s.sums["bias"][:, 0] / s.sums["bias"][:, 1],
            s.n,
            f"mean signed bias (judge - human), per human label; {_NOTE}",
            self.seed,
            self.confidence,
        )
        if s.k <= _MAX_KAPPA_CATEGORIES:
            metrics["kappa_quadratic"] = self._kappa(
                s.mirrored, s.sums["confusion"], "quadratic", _NOTE, values
            )
        return metrics

    def _ceiling(self, s: _Stratum, ratio: dict[str, Estimate]) -> HumanCeiling:
        """Human alpha and the judge's leave-one-human-out alpha on keys with >= 2 labels,
        with their paired gap (the stratum must have such keys)."""
        j, lv, seed, conf = self.joined, self.level, self.seed, self.confidence
        h, k, multi, both = s.h, s.k, s.multi, s.both
        doubled = h if j.mirror is None else np.vstack([h, h[:, j.mirror]])
        human_alpha, human_boot = self._alpha(
            s,
            "human",
            package_alpha(doubled, s.domain, lv) if doubled.size * k <= _PACKAGE_CELLS else None,
            f"krippendorff alpha ({lv}) among humans{both}; {_NOTE}",
        )
        loho_alpha, loho_boot = self._alpha(
            s,
            "loho",
            _package_pairs(s.px, s.py, s.pw * multi[s.pk], k, s.domain, lv),
            f"krippendorff alpha ({lv}), judge vs each human label on keys with >= 2 "
            f"labels (leave-one-human-out){both}; {_NOTE}",
        )
        method = f"judge LOHO alpha - human alpha; paired {_NOTE}"
        if human_boot is None or loho_boot is None:
            gap = undefined(int(multi.sum()), method, seed, conf, "alpha undefined")
        else:
            gap = from_resamples(
                loho_alpha.value - human_alpha.value,  # type: ignore[operator]
                loho_boot - human_boot,
                int(multi.sum()),
                method,
                seed,
                conf,
            )
        return HumanCeiling(
            int(multi.sum()),
            human_alpha,
            loho_alpha,
            gap,
            ratio["human_loho"],  # type: ignore[arg-type]
            ratio["judge_loho"],
            ratio["agreement_gap"],  # type: ignore[arg-type]
        )

    def _kappa(
        self, confusion: np.ndarray, sums: np.ndarray, weights, note: str, values: np.ndarray
    ) -> Estimate:
        """Cohen's kappa of judge vs each human label (their confusion matrix), resampled;
        weighted by the distance of the labels' values."""
        k = int(np.sqrt(confusion.shape[1]))
        both = "" if self.joined.mirror is None else ", both orientations"
        method = f"cohen kappa ({weights or 'unweighted'}), judge vs each human label{both}; {note}"
        point = kappa_from_confusion(confusion.sum(axis=0).reshape(k, k), weights, values)[0]
        if not np.isfinite(point):
            reason = "expected disagreement is zero (one label throughout)"
            return undefined(len(confusion), method, self.seed, self.confidence, reason)
        boot = kappa_from_confusion(sums.reshape(-1, k, k), weights, values)
        return from_resamples(point, boot, len(confusion), method, self.seed, self.confidence)


_RATIO_NAMES = {
    "judge_s1": "agreement S1 (ties count), judge vs each human label",
    "judge_s2": "agreement S2 (ties dropped), judge vs each human label",
    "human_s1": "agreement S1, every pair of human labels on a key",
    "human_s2": "agreement S2, every pair of human labels on a key",
    "judge_loho": "agreement S1, judge vs the other labels (leave-one-human-out)",
    "human_loho": "agreement S1, each human label vs the other labels",
    "agreement_gap": "judge LOHO agreement - human agreement, paired",
}
_PAIRWISE_RATIOS = {
    "judge_s1": "agreement_s1",
    "judge_s2": "agreement_s2",
    "human_s1": "human_agreement_s1",
    "human_s2": "human_agreement_s2",
}


def _both_orientations(
    mirror: np.ndarray | None, key: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Comparisons (key, judge category x, human category y, weight), followed by their
    mirror images (a <-> b) in the same keys; unchanged when there is no orientation."""
    if mirror is None:
        return key, x, y, w
    return np.r_[key, key], np.r_[x, mirror[x]], np.r_[y, mirror[y]], np.r_[w, w]


def _package_pairs(x, y, weight, k: int, domain: np.ndarray, level: Level) -> float | None:
    """The package's alpha over comparisons as two-coder units (a weight repeats a unit)."""
    xs, ys = np.repeat(x, weight), np.repeat(y, weight)
    if len(xs) == 0 or len(xs) * k * k > _PACKAGE_CELLS:
        return None  # the package builds (rows, K, K): let the coincidences answer
    counts = np.zeros((len(xs), k), dtype=np.int64)
    np.add.at(counts, (np.arange(len(xs)), xs), 1)
    np.add.at(counts, (np.arange(len(ys)), ys), 1)
    return package_alpha(counts, domain, level)


# --- output --------------------------------------------------------------------------------


def _jsonable(obj: object) -> object:
    if isinstance(obj, BaseModel):
        return obj.model_dump()
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _jsonable(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def _name(stratum: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in stratum.items()) or "overall"


def _est(e: Estimate) -> str:
    if e.value is None:
        return f"undefined ({e.reason})"
    ci = "" if e.ci_low is None else f" [{e.ci_low:.3f}, {e.ci_high:.3f}]"
    counts = f"  {e.agree}/{e.comparisons}" if isinstance(e, Agreement) else ""
    return f"{e.value:.3f}{ci}{counts}"


def _render(r: CalibrationReport) -> str:
    j = r.join
    lines = [
        f"Calibration ({r.kind}, alpha level {r.level}): {j.matched_keys} keys with a usable "
        f"judgment and human labels, {j.matched_labels} human labels",
        f"  judge-only keys {j.judge_only.count}; human keys the judge lacks "
        f"{j.human_only.count}; judgments without a verdict {j.judge_no_verdict.count}",
        *(f"  {note}" for note in j.notes()),
        f"  intervals: {r.confidence:.0%} percentile cluster bootstrap over keys, "
        f"{r.resamples} resamples, seed {r.seed}",
        "",
        "Agreement (judge vs each human label)",
    ]
    lines += [f"  {name:<22} {_est(e)}" for name, e in r.overall.metrics.items()]
    c = r.overall.ceiling
    if c:
        lines += [
            "",
            f"Human ceiling ({c.keys} keys with >= 2 human labels)",
            f"  {'human alpha':<22} {_est(c.human_alpha)}",
            f"  {'judge alpha (LOHO)':<22} {_est(c.judge_alpha_loho)}",
            f"  {'alpha gap':<22} {_est(c.alpha_gap)}",
            f"  {'human agreement':<22} {_est(c.human_agreement)}",
            f"  {'judge agreement (LOHO)':<22} {_est(c.judge_agreement_loho)}",
        ]
    if r.strata:
        lines += ["", "By stratum"]
        for s in r.strata:
            main = "agreement_s1" if r.kind == "pairwise" else "spearman"
            lines.append(
                f"  {_name(s.stratum):<24} keys {s.keys:>5}  alpha {_est(s.metrics['alpha'])}  "
                f"{main} {_est(s.metrics[main])}  -> {s.gate.verdict}"
            )
    lines += ["", *r.gate.lines()]
    if r.corrected:
        lines += ["", "Corrected estimates (PPI++; raw = judge alone)"]
        for e in r.corrected:
            val = (
                "undefined"
                if e.value is None
                else f"{e.value:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]"
            )
            raw = "-" if e.raw.value is None else f"{e.raw.value:.3f}"
            eff = "-" if e.effective_human_n is None else f"{e.effective_human_n:.0f}"
            lines.append(f"  {e.target}: {val}  raw {raw}  human n {e.n}, effective {eff}")
            if e.subset_warning:
                lines.append(f"    warning: {e.subset_warning}")
    return "\n".join(lines)
