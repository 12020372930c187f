"""Bias-corrected estimates: what the humans would have said, from a judge plus a few labels.

* Prediction-powered inference (Angelopoulos et al., Science 2023) with power tuning
  (PPI++, Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453), for a mean score or a win
  rate (a pairwise label as system_a's score: win 1, tie 0.5, loss 0). With n human-labelled
  units (human Y, judge f) and N judge-only units (f~):

      theta = lam * mean(f~) + mean(Y - lam * f)
      Var   = Var(Y - lam * f) / n + lam^2 * Var(f~) / N
      lam   = Cov(Y, f) / ((1 + n / N) * Var(f)), clipped to [0, 1]   (the variance minimiser)

  lam = 1 is plain PPI, lam = 0 the human-only mean. Valid when the labelled units are a
  random subset of the judged population (`subset_check` tests what it can of that), or when
  each unit's probability of being labelled is known: then the labelled residuals are
  weighted by 1 / probability, the inverse-probability-weighted form of Zrnic & Candes (2024,
  "Active Statistical Inference", ICML), which stays unbiased for actively chosen labels.
* Intervals inside the parameter's range. With `bounds` (a win rate: (0, 1)), the interval is
  the normal one computed after adding Agresti & Min's (2005) pseudo-observations to the
  labelled units (weight 1/2 at each corner of the human x judge range: for binary labels,
  one half-count in each cell of the 2 x 2 table), then truncated to the bounds. Truncation
  cannot lose coverage because the parameter lies in its range; the pseudo-observations give
  the variance a floor, so a handful of labels that all agree never yields a zero-width
  interval (9 labels that all say 1 give [0.73, 1]), and they remove the Wald interval's
  under-coverage near 0 and 1 (measured by scripts/coverage_intervals.py). The human-only
  and judge-only proportions get Wilson (1927) score intervals.
* Rogan & Gladen (1978) for a binary verdict: the judge's positive rate p corrected by its
  sensitivity and specificity measured on the labelled units,
  pi = (p + Sp - 1) / (Se + Sp - 1), with a delta-method interval that carries the
  uncertainty of p, Se and Sp (Greenland 1996). As Lang & Reiczigel (2014) do with Agresti &
  Coull's device, the interval (not the point estimate) is computed from proportions with
  pseudo-counts added: a quarter success and a quarter failure each. Their z^2/2 over-covers
  (~99% at 50 labels) with this variance; a quarter keeps coverage at 95-98% from 50 to 300
  labels and true rates 0.05-0.95 (scripts/coverage_intervals.py), where the plain interval
  fell to 84% at the edges. When one class is missing among the labels, or a handful of them
  make the judge look no better than chance, the pseudo-counted rates give the estimate too
  (its reason says so); truncated to [0, 1].

Each result carries the raw judge estimate beside the corrected one, and the effective human
sample size: how many human labels alone would give the same variance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from calibration.estimate import Estimate
from calibration.labels import OUTCOME_SCORE


@dataclass(frozen=True)
class CorrectedEstimate:
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    """Human-labelled units (what bounds the correction's validity)."""
    method: str
    seed: int | None
    """None: the interval is analytic (normal), no resampling."""
    confidence: float
    raw: Estimate
    """The judge alone on every judged unit: biased by the judge's errors."""
    human_only: Estimate
    """The human labels alone (the classical estimate the correction improves on)."""
    effective_human_n: float | None
    """Human labels alone needed for the corrected estimate's variance."""
    n_judged: int
    """Units with a usable judgment (labelled + unlabelled)."""
    target: str = ""
    systems: tuple[str, ...] = ()
    """What `target` is about: (system_a, system_b) for a win rate, (system,) for a mean score."""
    lam: float | None = None
    """PPI++ power-tuning weight (1 = plain PPI, 0 = human-only)."""
    sensitivity: Estimate | None = None
    specificity: Estimate | None = None
    reason: str | None = None
    subset_p: float | None = None
    """p-value of the labelled-vs-unlabelled check (`calibration.subset`); None: not made."""
    subset_warning: str | None = None
    """Set when the labelled units are unlike the unlabelled beyond chance."""

    def to_dict(self) -> dict:
        return asdict(self)


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(stats.norm.ppf(0.5 + confidence / 2.0))


def _normal(value: float, var: float, z: float, n: int, method: str, conf: float) -> Estimate:
    se = float(np.sqrt(max(var, 0.0)))
    return Estimate(float(value), value - z * se, value + z * se, n, method, None, 0, conf)


Bounds = tuple[float, float]


def wilson(mean: float, n: int, z: float, bounds: Bounds = (0.0, 1.0)) -> tuple[float, float]:
    """Wilson's (1927) score interval for a mean of n values in `bounds`, on the rescaled mean.

    For 0/1 values it is the textbook Wilson interval; for values strictly inside the bounds
    (ties worth 1/2) it uses the largest variance a mean can have there (Bhatia & Davis 2000:
    (mean - lo)(hi - mean)), so it errs on the wide side.
    """
    lo, hi = bounds
    span = hi - lo
    p = (mean - lo) / span
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * np.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n))
    return lo + span * max(0.0, centre - half), lo + span * min(1.0, centre + half)


def _mean_estimate(
    x: np.ndarray, z: float, method: str, conf: float, bounds: Bounds | None
) -> Estimate:
    if len(x) < 2:
        return Estimate(None, None, None, len(x), method, None, 0, conf, "fewer than 2 units")
    if bounds is None:
        return _normal(x.mean(), x.var(ddof=1) / len(x), z, len(x), method, conf)
    low, high = wilson(float(x.mean()), len(x), z, bounds)
    return Estimate(
        float(x.mean()), low, high, len(x), f"{method}, Wilson score interval", None, 0, conf
    )


def _as_float(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: position {int(np.flatnonzero(~np.isfinite(arr))[0])} is missing")
    return arr


def _check_bounds(bounds: Bounds | None, *arrays: np.ndarray) -> None:
    if bounds is None:
        return
    lo, hi = bounds
    if not lo < hi:
        raise ValueError(f"bounds {bounds}: the lower bound must be below the upper one")
    for arr in arrays:
        if len(arr) and (arr.min() < lo or arr.max() > hi):
            raise ValueError(f"a value lies outside bounds {bounds}")


def _weighted_var(x: np.ndarray, w: np.ndarray) -> float:
    """Frequency-weighted variance (pseudo-observations carry fractional weights)."""
    mean = float(np.average(x, weights=w))
    return float((w * (x - mean) ** 2).sum() / (w.sum() - 1.0))


# Agresti & Min (2005): half a pseudo-observation in each cell of the paired 2 x 2 table.
_PSEUDO = 0.5


def _adjusted_interval(
    y: np.ndarray, f: np.ndarray, fu: np.ndarray, lam: float, z: float, bounds: Bounds
) -> tuple[float, float]:
    """The PPI++ normal interval after adding pseudo-observations at the corners of the range
    (see the module docstring), truncated to `bounds`."""
    lo, hi = bounds
    corners_y = np.array([lo, lo, hi, hi])
    corners_f = np.array([lo, hi, lo, hi])
    w = np.r_[np.ones(len(y)), np.full(4, _PSEUDO)]
    rect = np.r_[y, corners_y] - lam * np.r_[f, corners_f]
    centre = float(np.average(rect, weights=w))
    var = _weighted_var(rect, w) / w.sum()
    if len(fu):
        wu = np.r_[np.ones(len(fu)), [_PSEUDO, _PSEUDO]]
        fu_adj = np.r_[fu, [lo, hi]]
        centre += lam * float(np.average(fu_adj, weights=wu))
        var += lam**2 * _weighted_var(fu_adj, wu) / wu.sum()
    half = z * float(np.sqrt(var))
    return max(lo, centre - half), min(hi, centre + half)


def ppi_mean(
    y_labeled: Sequence[float] | np.ndarray,
    f_labeled: Sequence[float] | np.ndarray,
    f_unlabeled: Sequence[float] | np.ndarray,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    target: str = "",
    bounds: Bounds | None = None,
    inclusion: Sequence[float] | np.ndarray | None = None,
) -> CorrectedEstimate:
    """PPI++ estimate of the human mean (module docstring). `lam=None` tunes lam.

    `bounds`: the range the values (and so the mean) lie in, e.g. (0, 1) for a win rate; the
    estimate and its interval then stay inside it. `inclusion`: each labelled unit's known
    probability of having been chosen for a label (all units were candidates; the unlabelled
    ones need none): the estimate is then weighted by their inverses (Zrnic & Candes 2024).
    """
    y = _as_float("y_labeled", y_labeled)
    f = _as_float("f_labeled", f_labeled)
    fu = _as_float("f_unlabeled", f_unlabeled)
    if len(y) != len(f):
        raise ValueError(f"y_labeled and f_labeled differ in length ({len(y)} vs {len(f)})")
    _check_bounds(bounds, y, f, fu)
    z = _z(confidence)
    n, big_n = len(y), len(fu)
    f_all = np.concatenate([f, fu])
    raw = _mean_estimate(
        f_all, z, "judge-only mean (ignores the judge's errors)", confidence, bounds
    )
    human = _mean_estimate(y, z, "human-only mean", confidence, bounds)
    method = "PPI++ (power-tuned prediction-powered inference)"
    if lam is not None:
        method = f"PPI with fixed lambda={lam:g}"
    if inclusion is not None:
        method += ", inverse-probability weighted (known inclusion probabilities)"
    method += (
        ", normal interval"
        if bounds is None
        else ", normal interval with Agresti-Min pseudo-observations, truncated to the range"
    )

    def result(value, low, high, eff, lam_hat, reason) -> CorrectedEstimate:  # type: ignore[no-untyped-def]
        return CorrectedEstimate(
            value,
            low,
            high,
            n,
            method,
            None,
            confidence,
            raw,
            human,
            eff,
            len(f_all),
            target,
            lam=lam_hat,
            reason=reason,
        )

    if n < 2:
        return result(
            None,
            None,
            None,
            None,
            None,
            f"{n} human-labelled units: the correction needs at least 2",
        )
    reason = None
    if big_n == 0:
        # Nothing to transfer: the human labels are all there is.
        lam_hat, reason = 0.0, "no judge-only units: the estimate is the human-only mean"
    elif lam is not None:
        lam_hat = float(lam)
    else:
        var_f = f_all.var(ddof=1)
        cov = np.cov(y, f, ddof=1)[0, 1]
        lam_hat = 0.0 if var_f <= 0 else float(np.clip(cov / ((1 + n / big_n) * var_f), 0, 1))
    if inclusion is not None:
        value, var = _ipw(y, f, fu, lam_hat, _inclusion(inclusion, n))
    else:
        rect = y - lam_hat * f
        value = float(lam_hat * (fu.mean() if big_n else 0.0) + rect.mean())
        var = rect.var(ddof=1) / n + (lam_hat**2 * fu.var(ddof=1) / big_n if big_n > 1 else 0.0)
    se = float(np.sqrt(var))
    var_y = y.var(ddof=1)
    eff = float(var_y / var) if var > 0 else None
    low, high = value - z * se, value + z * se
    if bounds is not None:
        clipped = float(np.clip(value, *bounds))
        if clipped != value:
            reason = f"the raw correction {value:.4f} fell outside {bounds}; clipped"
        value = clipped
        if inclusion is None:
            low, high = _adjusted_interval(y, f, fu, lam_hat, z, bounds)
        low, high = max(bounds[0], min(low, value)), min(bounds[1], max(high, value))
    return result(value, low, high, eff, lam_hat, reason)


def _inclusion(values: Sequence[float] | np.ndarray, n: int) -> np.ndarray:
    prob = _as_float("inclusion", values)
    if len(prob) != n:
        raise ValueError(f"inclusion has {len(prob)} probabilities for {n} labelled units")
    if (prob <= 0).any() or (prob > 1).any():
        raise ValueError("inclusion probabilities must lie in (0, 1]")
    return prob


def _ipw(
    y: np.ndarray, f: np.ndarray, fu: np.ndarray, lam: float, prob: np.ndarray
) -> tuple[float, float]:
    """Zrnic & Candes (2024): over all N judged units, phi_i = lam f_i + xi_i / pi_i
    (y_i - lam f_i) with xi_i = 1 for a labelled unit; theta = mean(phi), Var = var(phi) / N.
    Unbiased whatever the probabilities, as long as they are the ones labels were drawn with."""
    phi = np.concatenate([lam * f + (y - lam * f) / prob, lam * fu])
    return float(phi.mean()), float(phi.var(ddof=1) / len(phi))


def ppi_win_rate(
    human_labeled: Sequence[str],
    judge_labeled: Sequence[str],
    judge_unlabeled: Sequence[str],
    *,
    confidence: float = 0.95,
    target: str = "",
    inclusion: Sequence[float] | np.ndarray | None = None,
) -> CorrectedEstimate:
    """PPI++ win rate of system_a from pairwise labels a / b / tie (a tie counts half), with
    an interval inside [0, 1]; `inclusion` as in `ppi_mean`."""

    def score(name: str, labels: Sequence[str]) -> np.ndarray:
        try:
            return np.array([OUTCOME_SCORE[str(v)] for v in labels], dtype=float)
        except KeyError as exc:
            raise ValueError(f"{name}: {exc.args[0]!r} is not a, b or tie") from None

    return ppi_mean(
        score("human_labeled", human_labeled),
        score("judge_labeled", judge_labeled),
        score("judge_unlabeled", judge_unlabeled),
        confidence=confidence,
        target=target,
        bounds=(0.0, 1.0),
        inclusion=inclusion,
    )


def _binary(name: str, values: Sequence[bool] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype != bool:
        ok = np.isin(arr, (0, 1))
        if not ok.all():
            raise ValueError(f"{name}: position {int(np.flatnonzero(~ok)[0])} is not 0/1/bool")
        arr = arr.astype(bool)
    return arr.ravel()


def _proportion(k: int, n: int, z: float, method: str, conf: float) -> Estimate:
    if n == 0:
        return Estimate(None, None, None, 0, method, None, 0, conf, "no units")
    low, high = wilson(k / n, n, z)
    return Estimate(k / n, low, high, n, f"{method}, Wilson score interval", None, 0, conf)


def rogan_gladen(
    judge_unlabeled: Sequence[bool] | np.ndarray,
    judge_labeled: Sequence[bool] | np.ndarray,
    human_labeled: Sequence[bool] | np.ndarray,
    *,
    confidence: float = 0.95,
    target: str = "",
) -> CorrectedEstimate:
    """Rogan-Gladen prevalence of the human-positive class from a binary judge.

    `judge_labeled` / `human_labeled`: the judge and the human on the labelled units, which
    give sensitivity (judge positive among human positives) and specificity;
    `judge_unlabeled`: the judge on the units without a human label, whose positive rate is
    corrected. Keeping the two sets apart makes the three estimates independent, so the
    delta-method variance needs no covariance terms (with p taken over all units instead,
    the shared units made the interval over-cover: 97% measured for a nominal 95%).
    """
    z = _z(confidence)
    ju = _binary("judge_unlabeled", judge_unlabeled)
    jl = _binary("judge_labeled", judge_labeled)
    hl = _binary("human_labeled", human_labeled)
    if len(jl) != len(hl):
        raise ValueError(f"judge_labeled and human_labeled differ ({len(jl)} vs {len(hl)})")
    n, big_n = len(hl), len(ju)
    judged = np.concatenate([jl, ju])
    raw = _proportion(int(judged.sum()), len(judged), z, "judge-only positive rate", confidence)
    human = _proportion(int(hl.sum()), n, z, "human-only positive rate", confidence)
    n1, n0 = int(hl.sum()), int((~hl).sum())
    se_est = _proportion(int((jl & hl).sum()), n1, z, "sensitivity (judge+ | human+)", confidence)
    sp_est = _proportion(int((~jl & ~hl).sum()), n0, z, "specificity (judge- | human-)", confidence)
    method = (
        "Rogan-Gladen correction, delta-method normal interval with pseudo-counts (Lang & "
        "Reiczigel 2014), truncated to [0, 1]"
    )
    common = {"sensitivity": se_est, "specificity": sp_est}

    def undefined(reason: str) -> CorrectedEstimate:
        return CorrectedEstimate(
            None,
            None,
            None,
            n,
            method,
            None,
            confidence,
            raw,
            human,
            None,
            len(judged),
            target,
            reason=reason,
            **common,
        )

    if big_n == 0:
        return undefined("no judge-only units to correct: the human-only rate is the estimate")
    tp, tn, pos = int((jl & hl).sum()), int((~jl & ~hl).sum()), int(ju.sum())
    reason = None
    pi, plain_var = (
        (None, 0.0) if n1 == 0 or n0 == 0 else _rg_adjusted(tp, n1, tn, n0, pos, big_n, 0.0)
    )
    if pi is None:
        # A class missing among the labels, or a handful of them that make the judge look no
        # better than chance: the pseudo-counted rates stand in, and the width shows it.
        pi, plain_var = _rg_adjusted(tp, n1, tn, n0, pos, big_n, _RG_PSEUDO)
        reason = (
            f"{n1} human-positive and {n0} human-negative labelled units: the judge's rates "
            "need pseudo-counts to be usable, so the estimate leans on them"
        )
    if pi is None:
        return undefined(
            "sensitivity + specificity - 1 <= 0: the judge is no better than chance on the "
            "labelled units, so its verdicts carry no information to correct"
        )
    centre, var = _rg_adjusted(tp, n1, tn, n0, pos, big_n, _RG_PSEUDO)
    if centre is None:  # shrinking two unequal classes flipped the sign: nothing is excluded
        centre, var = pi, float("inf")
    half = z * float(np.sqrt(var))
    clipped = float(np.clip(pi, 0.0, 1.0))
    eff = float(clipped * (1 - clipped) / plain_var) if plain_var > 0 else None
    if clipped != pi:
        reason = (
            reason + "; " if reason else ""
        ) + f"the raw correction {pi:.4f} fell outside [0, 1]; clipped"
    low = max(0.0, min(clipped, centre - half))
    high = min(1.0, max(clipped, centre + half))
    return CorrectedEstimate(
        clipped,
        low,
        high,
        n,
        method,
        None,
        confidence,
        raw,
        human,
        eff,
        len(judged),
        target,
        reason=reason,
        **common,
    )


# Pseudo-counts (successes and failures each) added to p, Se and Sp for the interval.
_RG_PSEUDO = 0.25


def _rg_adjusted(
    tp: int, n1: int, tn: int, n0: int, pos: int, big_n: int, k: float
) -> tuple[float | None, float]:
    """Rogan-Gladen estimate and delta-method variance from counts with `k` pseudo-successes
    and failures added to each proportion; (None, nan) when Se + Sp - 1 <= 0."""
    sens, spec = (tp + k) / (n1 + 2 * k), (tn + k) / (n0 + 2 * k)
    p = (pos + k) / (big_n + 2 * k)
    youden = sens + spec - 1.0
    if youden <= 0:
        return None, float("nan")
    pi = (p + spec - 1.0) / youden
    # d pi/dp = 1/J, d pi/dSe = -pi/J, d pi/dSp = (1 - pi)/J, J = Se + Sp - 1.
    var = (
        p * (1 - p) / (big_n + 2 * k)
        + pi**2 * sens * (1 - sens) / (n1 + 2 * k)
        + (1 - pi) ** 2 * spec * (1 - spec) / (n0 + 2 * k)
    ) / youden**2
    return float(pi), float(var)
