"""Aligning a judge with human labels, measured only where it was not fitted (issue 32).

What is fitted here is the judge's *reading rule*: how its two presentation orders become one
verdict. The runner's rule (both agree: that label; they disagree: a tie) is one choice among
the nine patterns of (AB verdict, BA verdict); humans may read some patterns otherwise (a judge
that says A in one order and tie in the other may be right about A more often than not). A
pattern's label is the one the human majority gives most often on the *training* keys, where
the pattern occurs at least `min_count` times and that label beats the runner's reading by
an exact sign test at 5%; elsewhere the runner's rule stands.

The rule respects the two orders' symmetry: naming a pair the other way round turns pattern
(x, y) into (swap y, swap x), and the fitted label turns with it, so the result cannot depend on
which system a row names first.

Scored on the *held-out* keys (a split by item, so no item is in both): agreement with the
human majority before and after, the paired difference with a cluster-bootstrap interval over
items, and the trust gate on both. A negative control refits on the training keys with their
human labels shuffled, which keeps how often humans give each label and loses which pattern
they go with: what that rule gains comes from the frequencies alone (humans seldom saying tie,
where the runner reads disagreeing orders as one), and a fitted rule worth keeping gains more.

Rubric clarifications and few-shot examples distilled from the disagreements (which change what
the judge is asked, and need it to judge again) are not here yet. Knows no LLM.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from calibration.orders import combine_orders

LABELS = ("a", "b", "tie")
_SWAP = {"a": "b", "b": "a", "tie": "tie", None: None}
Pattern = tuple[str | None, str | None]
_SHUFFLES = 40
"""Shufflings of the training labels behind the control: one shuffle is a noisy control."""


@dataclass(frozen=True)
class Alignment:
    """The fitted reading rule: a label per pattern that the training keys decided."""

    rules: dict[Pattern, str]
    """Pattern (AB verdict, BA verdict; None: no verdict) -> label, in canonical key terms."""
    counts: dict[Pattern, int]
    """Training keys behind each fitted pattern (its orbit under the symmetry)."""

    def label(self, pattern: Pattern) -> str | None:
        if pattern in self.rules:
            return self.rules[pattern]
        return combine_orders(*pattern).label


@dataclass(frozen=True)
class Scored:
    """Agreement with the human majority on the held-out keys."""

    keys: int
    agreement: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class AlignResult:
    train_keys: int
    heldout_keys: int
    alignment: Alignment
    before: Scored
    after: Scored
    gain: float
    gain_low: float
    gain_high: float
    control_gain: float
    control_low: float
    control_high: float
    """The mean gain, and the 2.5-97.5% range, of rules fitted on `_SHUFFLES` shufflings of
    the training labels (what the label frequencies alone buy)."""
    seed: int
    gate_before: str | None = None
    """The trust gate's verdict on the held-out keys as the runner reads them (None: not run)."""
    gate_after: str | None = None
    """The same with the fitted reading rule."""

    def lines(self) -> list[str]:
        changed = ", ".join(
            f"{_shown(p)} -> {label} ({self.alignment.counts[p]} keys)"
            for p, label in sorted(self.alignment.rules.items(), key=str)
            if label != combine_orders(*p).label
        )
        return [
            f"fitted on {self.train_keys} keys, scored on {self.heldout_keys} held-out keys "
            f"(split by item, seed {self.seed})",
            f"reading rule: {changed or 'the runner rule stands (no pattern read otherwise)'}",
            f"held-out agreement with the human majority: {_scored(self.before)} before, "
            f"{_scored(self.after)} after",
            f"gain {self.gain:+.1%} [{self.gain_low:+.1%}, {self.gain_high:+.1%}]; fitted on "
            f"shuffled training labels {self.control_gain:+.1%} on average (range "
            f"{self.control_low:+.1%} to {self.control_high:+.1%} over {_SHUFFLES} shuffles)",
        ] + (
            [f"trust gate on the held-out keys: {self.gate_before} before, {self.gate_after} after"]
            if self.gate_before is not None
            else []
        )


def _shown(pattern: Pattern) -> str:
    return "(" + ", ".join("none" if v is None else v for v in pattern) + ")"


def _scored(s: Scored) -> str:
    return f"{s.agreement:.1%} [{s.ci_low:.1%}, {s.ci_high:.1%}]"


def canonical_patterns(judge: pd.DataFrame) -> pd.DataFrame:
    """`judge` (item_id, system_a, system_b, ab, ba: each order's verdict as a, b or tie in the
    row's terms, None without one; pair_id kept if there) with the key sorted (system_a <
    system_b) and the pattern turned with it: naming the pair the other way round swaps the
    labels and the orders."""
    flip = (judge["system_a"].astype(str) > judge["system_b"].astype(str)).to_numpy()
    ab = judge["ab"].to_numpy(dtype=object)
    ba = judge["ba"].to_numpy(dtype=object)
    out = pd.DataFrame(
        {
            "item_id": judge["item_id"].astype(str).to_numpy(),
            "system_a": np.where(flip, judge["system_b"], judge["system_a"]).astype(str),
            "system_b": np.where(flip, judge["system_a"], judge["system_b"]).astype(str),
            "ab": [_SWAP[b] if f else a for a, b, f in zip(ab, ba, flip, strict=True)],
            "ba": [_SWAP[a] if f else b for a, b, f in zip(ab, ba, flip, strict=True)],
        }
    )
    if "pair_id" in judge.columns:
        out.insert(0, "pair_id", judge["pair_id"].astype(str).to_numpy())
    for column in ("ab", "ba"):
        bad = ~out[column].isin([*LABELS, None])
        if bad.any():
            value = out[column][bad].iloc[0]
            raise ValueError(f"column {column!r}: {value!r} is not a, b, tie or missing")
    return out


def table_patterns(judge: pd.DataFrame) -> pd.DataFrame:
    """A judge table with an `order` column (a comparison's two presentations on two rows,
    each naming its systems in the order shown: docs/inputs.md) as `align` takes it: per key,
    the verdict of the presentation showing system_a first (ab) and the other's (ba)."""
    from calibration.label_tables import normalise, shown_first

    if "order" not in judge.columns:
        raise ValueError("the judge table has no 'order' column: align reads both orders")
    table = judge.reset_index(drop=True)
    out = normalise(table, "pairwise", "judge")
    first_is_a = shown_first(out, table) == out["system_a"].to_numpy()
    out = out.assign(slot=np.where(first_is_a, "ab", "ba"))
    keys = ["item_id", "system_a", "system_b"]
    if out.duplicated([*keys, "slot"]).any():
        raise ValueError("a key is judged twice in the same presentation order")
    wide = out.pivot(index=keys, columns="slot", values="label").reindex(columns=["ab", "ba"])
    wide = wide.astype(object).where(wide.notna(), None)
    return wide.reset_index().rename_axis(columns=None)


def human_majority(human: pd.DataFrame) -> pd.DataFrame:
    """One label per key (item_id, system_a, system_b with system_a < system_b; label a, b or
    tie): the label most annotators gave; keys whose annotators split evenly are left out."""
    rows = []
    for key, group in human.groupby(["item_id", "system_a", "system_b"], sort=True):
        counts = Counter(group["label"]).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            continue
        rows.append((*key, counts[0][0]))
    return pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "human"])


def fit(
    patterns: Sequence[Pattern], human: Sequence[str], min_count: int = 10, level: float = 0.05
) -> Alignment:
    """The label the human majority gives most often for each pattern's orbit (a pattern and
    its mirror, labels turned), where it has at least `min_count` keys and beats the runner's
    reading there at `level` (module docstring)."""
    by_orbit: dict[Pattern, Counter[str]] = {}
    for pattern, label in zip(patterns, human, strict=True):
        mirror = (_SWAP[pattern[1]], _SWAP[pattern[0]])
        root = min(pattern, mirror, key=str)
        seen = label if pattern == root else _SWAP[label]
        by_orbit.setdefault(root, Counter())[str(seen)] += 1
    rules: dict[Pattern, str] = {}
    counts: dict[Pattern, int] = {}
    for root, tally in by_orbit.items():
        mirror = (_SWAP[root[1]], _SWAP[root[0]])
        total = sum(tally.values())
        if total < min_count or mirror == root:
            # A pattern that is its own mirror ((a, b): each order picked the response shown
            # first) can only be read as a tie without depending on which system is named first.
            continue
        default = combine_orders(*root).label
        best = max(LABELS, key=lambda lab: (tally[lab], lab == default))
        if best != default and not _beats(tally[best], tally[default or ""], level):
            continue  # not shown better than the runner's reading on these keys
        rules[root], rules[mirror] = best, str(_SWAP[best])
        counts[root] = counts[mirror] = total
    return Alignment(rules, counts)


def _beats(wins: int, losses: int, level: float) -> bool:
    """The exact one-sided sign test: keys where the new label is the humans' against keys
    where the runner's was. Without it, a rule fitted to noise (the shuffled-label control)
    reads half the patterns otherwise and loses half the agreement."""
    from scipy.stats import binomtest

    n = wins + losses
    return n > 0 and binomtest(wins, n, 0.5, alternative="greater").pvalue < level


def align(
    judge: pd.DataFrame,
    human: pd.DataFrame,
    *,
    share: float = 0.5,
    seed: int = 1,
    min_count: int = 10,
    resamples: int = 2000,
    gate: bool = True,
) -> AlignResult:
    """Fit the reading rule on `share` of the items, score it on the rest (module docstring).
    `judge` as `canonical_patterns` takes it; `human`: a normalised human table (item_id,
    system_a, system_b sorted, label). `gate`: also run the trust gate on the held-out keys,
    before and after."""
    if not 0 < share < 1:
        raise ValueError(f"share must lie between 0 and 1, got {share}")
    keys = canonical_patterns(judge).merge(
        human_majority(human), on=["item_id", "system_a", "system_b"]
    )
    if keys.empty:
        raise ValueError("no key has both the judge's verdicts and a human majority label")
    rng = np.random.default_rng(seed)
    in_train = keys["item_id"].isin(split_items(keys["item_id"], share, rng)).to_numpy()
    train, held = keys[in_train], keys[~in_train].reset_index(drop=True)
    if held.empty:
        raise ValueError(
            "every item fell in the training split: give more items or a smaller share"
        )
    patterns = list(zip(train["ab"], train["ba"], strict=True))
    fitted = fit(patterns, list(train["human"]), min_count)
    labels = train["human"].to_numpy()
    shuffles = [fit(patterns, list(rng.permutation(labels)), min_count) for _ in range(_SHUFFLES)]
    held_patterns = list(zip(held["ab"], held["ba"], strict=True))
    truth = held["human"].to_numpy()
    controls = np.array([_right(f.label, held_patterns, truth).mean() for f in shuffles])
    scored = score_heldout(
        held,
        [_runner_rule(p) for p in held_patterns],
        [fitted.label(p) for p in held_patterns],
        human,
        seed=seed,
        resamples=resamples,
        gate=gate,
    )
    before = scored.before.agreement
    return AlignResult(
        train_keys=len(train),
        heldout_keys=len(held),
        alignment=fitted,
        before=scored.before,
        after=scored.after,
        gain=scored.gain,
        gain_low=scored.gain_low,
        gain_high=scored.gain_high,
        control_gain=float(controls.mean() - before),
        control_low=float(np.quantile(controls, 0.025) - before),
        control_high=float(np.quantile(controls, 0.975) - before),
        seed=seed,
        gate_before=scored.gate_before,
        gate_after=scored.gate_after,
    )


def split_items(items: pd.Series, share: float, rng: np.random.Generator) -> set[str]:
    """The training items: `share` of the distinct `items`, drawn by `rng` (the rest are held
    out, so no item is in both)."""
    distinct = np.array(sorted(items.astype(str).unique()))
    return set(rng.permutation(distinct)[: max(1, round(share * len(distinct)))])


@dataclass(frozen=True)
class HeldOut:
    """Two readings of the same held-out keys scored against the people's majority."""

    before: Scored
    after: Scored
    gain: float
    gain_low: float
    gain_high: float
    gate_before: str | None
    gate_after: str | None


def score_heldout(
    held: pd.DataFrame,
    before: Sequence[str | None],
    after: Sequence[str | None],
    human: pd.DataFrame,
    *,
    seed: int,
    resamples: int = 2000,
    gate: bool = True,
) -> HeldOut:
    """Agreement of `before` and `after` (a verdict per row of `held`: a, b, tie or None)
    with `held["human"]`, each with a cluster-bootstrap interval over items, their paired
    difference, and the trust gate on each against every label in `human` of those keys."""
    from calibration.bootstrap import bootstrap_mean, paired_bootstrap

    truth = held["human"].to_numpy(dtype=object)
    right = [np.asarray(v, dtype=object) == truth for v in (before, after)]
    # Every key of an item moves together: the clusters are the items.
    common = {"seed": seed, "resamples": resamples, "clusters": held["item_id"].to_numpy()}
    scored = [bootstrap_mean(r.astype(float), **common) for r in right]
    diff = paired_bootstrap(right[1].astype(float), right[0].astype(float), **common)
    gates: tuple[str | None, str | None] = (None, None)
    if gate:
        gates = (_gate(held, before, human, seed), _gate(held, after, human, seed))
    return HeldOut(
        before=Scored(len(truth), scored[0].mean, scored[0].ci_low, scored[0].ci_high),
        after=Scored(len(truth), scored[1].mean, scored[1].ci_low, scored[1].ci_high),
        gain=float(right[1].mean() - right[0].mean()),
        gain_low=float(diff.ci_low),
        gain_high=float(diff.ci_high),
        gate_before=gates[0],
        gate_after=gates[1],
    )


def _runner_rule(pattern: Pattern) -> str | None:
    return combine_orders(*pattern).label


def _right(rule: object, patterns: list[Pattern], truth: np.ndarray) -> np.ndarray:
    """Per key: does `rule`'s reading of its pattern give the human majority's label?"""
    return np.array([rule(p) == t for p, t in zip(patterns, truth, strict=True)])  # type: ignore[operator]


def _gate(
    held: pd.DataFrame, verdicts: Sequence[str | None], human: pd.DataFrame, seed: int
) -> str:
    """The trust gate's verdict on the held-out keys judged `verdicts`, against every human
    label of those keys."""
    from calibration.calibrate import calibrate

    judged = held[["item_id", "system_a", "system_b"]].assign(winner=list(verdicts))
    judged = judged[judged["winner"].notna()]
    labels = human.merge(held[["item_id", "system_a", "system_b"]], how="inner")
    labels = labels.rename(columns={"label": "winner"})
    report = calibrate(judged, labels, kind="pairwise", resamples=500, seed=seed)
    return report.gate.verdict
