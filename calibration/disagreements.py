"""What a judge gets wrong against people, measured on training keys, as notes and examples
a rubric can carry (issue 32, `judge align`).

Three patterns are tested, each against what people did on the same keys, so that a judge is
not told to unlearn a preference people share:

- **position**: over every verdict given in one presentation order, how often the response
  shown first won. The first slot is assigned at random, so any departure from one half is
  the judge's, whatever people think of the responses.
- **length**: on keys where the judge and the people each named a different winner, how often
  the judge's was the longer response, against how often the people's was (an exact sign
  test over those keys).
- **ties**: keys the judge called a tie where people named a winner, against keys people
  called a tie where the judge named one.

A pattern becomes a note only when its test rejects at `level`; the note states the measured
counts. Examples are training keys the judge got wrong, with the people's verdict: balanced
over the verdicts, one per item, short ones first, their presentation order drawn at random.
Knows no LLM: the caller supplies lengths and, for examples, the texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from calibration.orders import combine_orders


@dataclass(frozen=True)
class Finding:
    """One measured pattern of disagreement, and the note a rubric can carry about it."""

    topic: str
    """`position`, `length` or `tie`."""
    note: str
    """What to tell the judge (it states the counts behind it)."""
    evidence: str
    """The test behind it, for the rubric's provenance."""
    p_value: float


def runner_reading(keys: pd.DataFrame) -> np.ndarray:
    """Each key's verdict as the runner reads its two orders (`combine_orders`)."""
    return np.array(
        [combine_orders(a, b).label for a, b in zip(keys["ab"], keys["ba"], strict=True)],
        dtype=object,
    )


def findings(keys: pd.DataFrame, level: float = 0.05) -> list[Finding]:
    """The patterns of module docstring that reject at `level` on `keys` (item_id, system_a,
    system_b, ab, ba: each order's verdict as a, b, tie or None; human: the people's label;
    length_a, length_b: the two responses' lengths)."""
    judged = runner_reading(keys)
    found = [_position(keys), _length(keys, judged), _ties(keys, judged)]
    return [f for f in found if f is not None and f.p_value < level]


def _sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test of `wins` against `losses` (1.0 with neither)."""
    from scipy.stats import binomtest

    n = wins + losses
    return float(binomtest(wins, n, 0.5).pvalue) if n else 1.0


def _position(keys: pd.DataFrame) -> Finding | None:
    # The AB presentation shows system_a first, the BA one system_b.
    first = int((keys["ab"] == "a").sum() + (keys["ba"] == "b").sum())
    second = int((keys["ab"] == "b").sum() + (keys["ba"] == "a").sum())
    if first + second == 0:
        return None
    p = _sign_test(first, second)
    share = first / (first + second)
    shown = "first" if first >= second else "second"
    note = (
        f"In {first + second} earlier verdicts given in one presentation order, this judge "
        f"picked the response shown first {share:.0%} of the time, though which response is "
        f"shown first is decided at random. The order must not matter: before deciding, "
        f"consider the two responses in the other order, and name a winner only if you would "
        f"name it either way."
    )
    evidence = (
        f"position: response shown {shown} won {max(first, second)} of {first + second} "
        f"one-order verdicts (exact sign test p = {p:.2g})"
    )
    return Finding("position", note, evidence, p)


def _length(keys: pd.DataFrame, judged: np.ndarray) -> Finding | None:
    human = keys["human"].to_numpy(dtype=object)
    longer = np.where(
        keys["length_a"].to_numpy() > keys["length_b"].to_numpy(),
        "a",
        np.where(keys["length_a"].to_numpy() < keys["length_b"].to_numpy(), "b", ""),
    )
    differ = (
        np.isin(judged, ["a", "b"])
        & np.isin(human, ["a", "b"])
        & (judged != human)
        & (longer != "")
    )
    judge_longer = int((differ & (judged == longer)).sum())
    human_longer = int((differ & (human == longer)).sum())
    if judge_longer + human_longer == 0:
        return None
    p = _sign_test(judge_longer, human_longer)
    more = "longer" if judge_longer >= human_longer else "shorter"
    note = (
        f"Where this judge and people picked different responses, the judge's pick was the "
        f"longer one {judge_longer} times and the people's {human_longer} times: this judge "
        f"favours {more} responses more than people do. Do not let length decide; a longer "
        f"response is better only for what its extra text adds, a shorter one only for what "
        f"it spares the reader."
    )
    evidence = (
        f"length: of {judge_longer + human_longer} keys where judge and people named different "
        f"winners, the judge's was the longer in {judge_longer} (exact sign test p = {p:.2g})"
    )
    return Finding("length", note, evidence, p)


def _ties(keys: pd.DataFrame, judged: np.ndarray) -> Finding | None:
    human = keys["human"].to_numpy(dtype=object)
    judge_tie = int(((judged == "tie") & np.isin(human, ["a", "b"])).sum())
    human_tie = int(((human == "tie") & np.isin(judged, ["a", "b"])).sum())
    if judge_tie + human_tie == 0:
        return None
    p = _sign_test(judge_tie, human_tie)
    if judge_tie >= human_tie:
        note = (
            f"People named a winner in {judge_tie} comparisons this judge called a tie, and "
            f"called a tie only {human_tie} times where it named a winner: say tie only when "
            f"neither response is better on any criterion."
        )
    else:
        note = (
            f"People called {human_tie} comparisons a tie where this judge named a winner, and "
            f"named a winner only {judge_tie} times where it called a tie: when neither "
            f"response is better, say tie."
        )
    evidence = (
        f"tie: judge tie where people named a winner {judge_tie}, people tie where the judge "
        f"named one {human_tie} (exact sign test p = {p:.2g})"
    )
    return Finding("tie", note, evidence, p)


def pick_examples(keys: pd.DataFrame, count: int, seed: int, max_chars: int = 1500) -> pd.DataFrame:
    """Up to `count` keys the judge got wrong, as module docstring says: rows of `keys` (which
    needs length_a, length_b and a boolean `context`: the responses continue an earlier
    conversation) plus `flip`: show system_b's response first."""
    if count <= 0:
        return keys.iloc[:0].assign(flip=pd.Series(dtype=bool))
    judged = runner_reading(keys)
    wrong = keys[
        (judged != keys["human"].to_numpy(dtype=object))
        & ~keys["context"].astype(bool).to_numpy()
        & (keys[["length_a", "length_b"]].max(axis=1) <= max_chars).to_numpy()
    ]
    rng = np.random.default_rng(seed)
    # Shortest first within each label, the rest of the order drawn: a short example costs
    # less on every request that carries it.
    wrong = wrong.assign(
        _size=wrong["length_a"] + wrong["length_b"], _draw=rng.random(len(wrong))
    ).sort_values(["_size", "_draw"], kind="stable")
    queues = {label: list(group.index) for label, group in wrong.groupby("human", sort=True)}
    chosen: list[int] = []
    items: set[str] = set()
    while len(chosen) < count and any(queues.values()):
        for label in sorted(queues):
            queue = queues[label]
            while queue and str(keys.at[queue[0], "item_id"]) in items:
                queue.pop(0)
            if queue and len(chosen) < count:
                row = queue.pop(0)
                chosen.append(row)
                items.add(str(keys.at[row, "item_id"]))
    picked = keys.loc[chosen]
    return picked.assign(flip=rng.random(len(picked)) < 0.5)
