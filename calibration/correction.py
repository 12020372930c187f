"""Bias-corrected estimates: what the humans would have said, from a judge plus a few labels.

* Prediction-powered inference (Angelopoulos et al., Science 2023) with power tuning
  (PPI++, Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453), for a mean score or a win
  rate (a pairwise label as system_a's score: win 1, tie 0.5, loss 0). With n human-labelled
  units (human Y, judge f) and N judge-only units (f~):

      theta = lam * mean(f~) + mean(Y - lam * f)
      Var   = Var(Y - lam * f) / n + lam^2 * Var(f~) / N
      lam   = Cov(Y, f) / ((1 + n / N) * Var(f)), clipped to [0, 1]   (the variance minimiser)

  lam = 1 is plain PPI, lam = 0 the human-only mean; the interval is the normal one. Valid
  when the labelled units are a random subset of the judged population.
* Rogan & Gladen (1978) for a binary verdict: the judge's positive rate p corrected by its
  sensitivity and specificity measured on the labelled units,
  pi = (p + Sp - 1) / (Se + Sp - 1), with a delta-method interval that carries the
  uncertainty of p, Se and Sp (Greenland 1996; Lang & Reiczigel 2014 discuss small samples).

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

    def to_dict(self) -> dict:
        return asdict(self)


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(stats.norm.ppf(0.5 + confidence / 2.0))


def _normal(value: float, var: float, z: float, n: int, method: str, conf: float) -> Estimate:
    se = float(np.sqrt(max(var, 0.0)))
    return Estimate(float(value), value - z * se, value + z * se, n, method, None, 0, conf)


def _mean_estimate(x: np.ndarray, z: float, method: str, conf: float) -> Estimate:
    if len(x) < 2:
        return Estimate(None, None, None, len(x), method, None, 0, conf, "fewer than 2 units")
    return _normal(x.mean(), x.var(ddof=1) / len(x), z, len(x), method, conf)


def _as_float(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: position {int(np.flatnonzero(~np.isfinite(arr))[0])} is missing")
    return arr


def ppi_mean(
    y_labeled: Sequence[float] | np.ndarray,
    f_labeled: Sequence[float] | np.ndarray,
    f_unlabeled: Sequence[float] | np.ndarray,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    target: str = "",
) -> CorrectedEstimate:
    """PPI++ estimate of the human mean (module docstring). `lam=None` tunes lam."""
    y = _as_float("y_labeled", y_labeled)
    f = _as_float("f_labeled", f_labeled)
    fu = _as_float("f_unlabeled", f_unlabeled)
    if len(y) != len(f):
        raise ValueError(f"y_labeled and f_labeled differ in length ({len(y)} vs {len(f)})")
    z = _z(confidence)
    n, big_n = len(y), len(fu)
    f_all = np.concatenate([f, fu])
    raw = _mean_estimate(f_all, z, "judge-only mean (ignores the judge's errors)", confidence)
    human = _mean_estimate(y, z, "human-only mean", confidence)
    method = "PPI++ (power-tuned prediction-powered inference), normal interval"
    if lam is not None:
        method = f"PPI with fixed lambda={lam:g}, normal interval"

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
            len(f_all),
            target,
            reason=reason,
        )

    if n < 2:
        return undefined(f"{n} human-labelled units: the correction needs at least 2")
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
    rect = y - lam_hat * f
    value = float(lam_hat * (fu.mean() if big_n else 0.0) + rect.mean())
    var = rect.var(ddof=1) / n + (lam_hat**2 * fu.var(ddof=1) / big_n if big_n > 1 else 0.0)
    se = float(np.sqrt(var))
    var_y = y.var(ddof=1)
    eff = float(var_y / var) if var > 0 else None
    return CorrectedEstimate(
        value,
        value - z * se,
        value + z * se,
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


def ppi_win_rate(
    human_labeled: Sequence[str],
    judge_labeled: Sequence[str],
    judge_unlabeled: Sequence[str],
    *,
    confidence: float = 0.95,
    target: str = "",
) -> CorrectedEstimate:
    """PPI++ win rate of system_a from pairwise labels a / b / tie (a tie counts half)."""

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
    p = k / n
    return _normal(p, p * (1 - p) / n, z, n, method, conf)


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
    method = "Rogan-Gladen correction, delta-method normal interval"
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

    if n1 == 0 or n0 == 0:
        return undefined("the labelled units need both human-positive and human-negative cases")
    if big_n == 0:
        return undefined("no judge-only units to correct: the human-only rate is the estimate")
    p, sens, spec = float(ju.mean()), float(se_est.value), float(sp_est.value)  # type: ignore[arg-type]
    youden = sens + spec - 1.0
    if youden <= 0:
        return undefined(
            f"sensitivity + specificity - 1 = {youden:.3f} <= 0: the judge is no better than "
            "chance on the labelled units, so its verdicts carry no information to correct"
        )
    pi = (p + spec - 1.0) / youden
    # d pi/dp = 1/J, d pi/dSe = -pi/J, d pi/dSp = (1 - pi)/J, J = Se + Sp - 1.
    var = (
        p * (1 - p) / big_n
        + pi**2 * sens * (1 - sens) / n1
        + (1 - pi) ** 2 * spec * (1 - spec) / n0
    ) / youden**2
    se = float(np.sqrt(var))
    clipped = float(np.clip(pi, 0.0, 1.0))
    eff = float(clipped * (1 - clipped) / var) if var > 0 else None
    reason = None if clipped == pi else f"the raw correction {pi:.4f} fell outside [0, 1]; clipped"
    return CorrectedEstimate(
        clipped,
        max(0.0, pi - z * se),
        min(1.0, pi + z * se),
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
