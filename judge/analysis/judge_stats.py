"""Each judge's behaviour over a run (counts, position consistency, first-slot wins, verbosity,
latency, cost), counted as its results and judgments stream by (`judge.analysis.aggregate`)."""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass

from judge.store.result_rows import ResultRow


@dataclass
class JudgeStats:
    judge: str
    requests: int = 0
    verdicts: int = 0
    parse_failures: int = 0
    errors: int = 0
    pending: int = 0
    cached: int = 0
    cost_usd: float | None = None
    """Sum of known costs; None when no reply of this judge could be priced."""
    latency_median_s: float | None = None
    parse_failure_rate: float | None = None
    position_consistency: float | None = None
    """Share of pairs with both orders parsed whose two verdicts agree."""
    first_slot_win_rate: float | None = None
    """Share of decisive verdicts (A or B) that chose the first-shown response."""
    tie_rate: float | None = None
    verbosity_preference: float | None = None
    """Share of decisive judgments (between responses of different length) won by the
    longer response."""
    same_family_requests: int = 0


class JudgeTally:
    """One judge's `JudgeStats`, counted a result (`count`, `label`) and a judgment (`judged`)
    at a time.

    Memory: sums and counts, except the latencies, one float (8 bytes) per answered request
    that was sent (8 MB per million): an exact median needs them all."""

    def __init__(self, judge: str) -> None:
        self.stats = JudgeStats(judge=judge)
        self._latencies = array("d")
        self._labels: Counter[str] = Counter()
        self._both = self._consistent = 0
        self._decisive = self._longer_wins = 0

    def count(self, result: ResultRow) -> None:
        st = self.stats
        st.requests += 1
        st.same_family_requests += result.same_family
        status = result.status
        if status == "pending":
            st.pending += 1
            return
        st.cached += result.cached
        if result.cost_usd is not None:
            st.cost_usd = (st.cost_usd or 0.0) + result.cost_usd
        if result.latency_s is not None and not result.cached:
            self._latencies.append(result.latency_s)
        if status == "verdict":
            st.verdicts += 1
        elif status == "parse_failure":
            st.parse_failures += 1
        else:
            st.errors += 1
        answered = st.verdicts + st.parse_failures
        st.parse_failure_rate = st.parse_failures / answered if answered else None

    def label(self, label: str) -> None:
        """A pairwise verdict's label, in presented-slot terms (`A`, `B`, `tie`)."""
        self._labels[label] += 1

    def judged(
        self,
        winner: str | None,
        consistent: bool | None,
        longer: str | None,
    ) -> None:
        """A pairwise judgment of this judge (before any rule overrides it): its winner,
        whether its two orders agreed, and the system whose response is longer (None: equal
        lengths)."""
        if consistent is not None:
            self._both += 1
            self._consistent += consistent
        if winner in (None, "tie") or longer is None:
            return
        self._decisive += 1
        self._longer_wins += winner == longer

    def result(self) -> JudgeStats:
        st = self.stats
        if self._both:
            st.position_consistency = self._consistent / self._both
        labels = self._labels
        decisive = labels["A"] + labels["B"]
        if decisive:
            st.first_slot_win_rate = labels["A"] / decisive
        if decisive + labels["tie"]:
            st.tie_rate = labels["tie"] / (decisive + labels["tie"])
        st.verbosity_preference = self._longer_wins / self._decisive if self._decisive else None
        if self._latencies:
            st.latency_median_s = _median(self._latencies)
        return st


def _median(values: array) -> float:
    """`statistics.median`, without a list of a million floats: numpy partitions a view of the
    array's buffer (the mean of the middle two for an even count, as statistics computes it)."""
    import numpy as np

    return float(np.median(np.frombuffer(values, dtype=np.float64)))
