"""The corrected estimates of a calibration: PPI++ per system pair or per system, from joined
judge and human labels, each with the labelled-subset check (`calibration.subset`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from calibration.correction import CorrectedEstimate, ppi_mean
from calibration.labels import OUTCOME_SCORE, JoinedLabels
from calibration.subset import subset_check


def corrected_estimates(joined: JoinedLabels, confidence: float) -> tuple[CorrectedEstimate, ...]:
    """PPI++ per system pair (win rate of system_a, ties half) or per system (mean score),
    each with the check that its labelled keys are like its judge-only ones."""
    values = joined.values
    group = ["system_a", "system_b"] if joined.kind == "pairwise" else ["system"]
    keys = joined.keys.assign(
        _pi=joined.inclusion if joined.inclusion is not None else np.nan,
        _y=(joined.human_counts @ values) / joined.human_counts.sum(axis=1),
        _f=values[joined.judge_code],
    )
    unl = joined.judge_only.assign(
        _f=[OUTCOME_SCORE[v] for v in joined.judge_only["judge"]]
        if joined.kind == "pairwise"
        else joined.judge_only["judge"].astype(float)
    )
    # A win rate lies in [0, 1]; a mean score within the scale's observed values.
    seen = np.r_[values, unl["_f"].to_numpy(dtype=float)]
    bounds = (0.0, 1.0) if joined.kind == "pairwise" else (float(seen.min()), float(seen.max()))
    out = []
    names = pd.concat([keys[group], unl[group]]).drop_duplicates().sort_values(group)
    for row in names.itertuples(index=False):
        sel_l = (keys[group] == list(row)).all(axis=1)
        sel_u = (unl[group] == list(row)).all(axis=1)
        target = (
            f"win rate of {row[0]} over {row[1]} (ties count half)"
            if joined.kind == "pairwise"
            else f"mean score of {row[0]}"
        )
        est = ppi_mean(
            keys.loc[sel_l, "_y"],
            keys.loc[sel_l, "_f"],
            unl.loc[sel_u, "_f"],
            confidence=confidence,
            target=target,
            bounds=bounds if bounds[0] < bounds[1] else None,
            inclusion=None if joined.inclusion is None else keys.loc[sel_l, "_pi"],
        )
        if joined.inclusion is not None:
            # Chosen with known, unequal probabilities: the labelled keys differ from the rest
            # by design, and the weighting, not a test of likeness, makes the estimate valid.
            out.append(replace(est, systems=tuple(str(s) for s in row)))
            continue
        check = subset_check(keys.loc[sel_l, "_f"].tolist(), unl.loc[sel_u, "_f"].tolist())
        out.append(
            replace(
                est,
                systems=tuple(str(s) for s in row),
                subset_p=check.p_value,
                subset_warning=check.warning,
            )
        )
    return tuple(out)
