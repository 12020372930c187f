"""Both orders x judges -> one unblinded judgment per pair (or per response for absolute scores),
and per-judge bias diagnostics.

Pairwise: a verdict's label is in presented-slot terms; it is mapped back to a system through
the order and the blinding key. The two orders combine by `calibration.orders.combine_orders`
(the rule `judge calibrate` applies to a table with an `order` column): both agree -> that
winner; they disagree -> the pair is `inconsistent` (a tie by default, or dropped, per config);
one order failed to parse -> the other stands alone, flagged. Several judges -> majority, ties
on a split.

Every row also carries what an audit needs to go back to the store: per order the request id,
the judge's reasoning (a verdict) or why there is none and the reply as received (a parse
failure). Those strings are the ones the store results already hold, referenced, not copied.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

from calibration.orders import combine_orders
from judge.config import AggregateConfig
from judge.store import StoredResult
from judge.types import PANEL, BlindedPair, BlindingKey

Outcome = Literal["a", "b", "tie"]


@dataclass
class PairJudgment:
    item_id: str
    pair_id: str
    judge: str
    """A judge's model string, or `panel` for the combination of several."""
    system_a: str
    system_b: str
    winner: str | None
    """system_a, system_b, `tie`, or None when no usable verdict exists."""
    outcome: Outcome | None
    score_a: float | None
    """1 if system_a won, 0.5 tie, 0 lost; None when dropped or missing."""
    verdict_ab: str | None
    """The winner according to the AB-order verdict alone (system name or `tie`)."""
    verdict_ba: str | None
    consistent: bool | None
    """Both orders parsed and agree (None when fewer than two orders parsed)."""
    orders: int
    """Orders with a parsed verdict (0, 1 or 2)."""
    same_family: bool
    failures: int
    """Requests of this pair and judge without a verdict (parse failures and errors)."""
    lost_by_flag: str | None = None
    """The system whose flagged response lost this pair by rule (`aggregate.flagged: lose`),
    whatever the judge said; None when the judge's verdict stands."""
    judged_winner: str | None = None
    """When `lost_by_flag` is set: the winner the judge gave (system, `tie`, or None)."""
    split: bool | None = None
    """Panel rows: the judges' winners had no majority, so the panel's tie is a split, not a
    verdict. None on a judge's own rows."""
    request_ab: str | None = None
    """The AB-order request's id: its row in store.sqlite's `judge_requests`, and its reply's
    in `judge_responses` and `verdicts`. None on panel rows and for an order not planned."""
    request_ba: str | None = None
    reasoning_ab: str | None = None
    """The reasoning the judge gave with its AB-order verdict; None without a verdict."""
    reasoning_ba: str | None = None
    failure_ab: str | None = None
    """Why the AB order has no verdict: `parse failure: <reason>` or `error: <message>`."""
    failure_ba: str | None = None
    reply_ab: str | None = None
    """The AB-order reply as received, when it could not be parsed (else None: a verdict's
    reply is in the store)."""
    reply_ba: str | None = None


@dataclass
class ScoreJudgment:
    item_id: str
    blind_id: str
    system: str
    judge: str
    score: float | None
    scores: dict[str, float] = field(default_factory=dict)
    spread: float | None = None
    """max - min across judges (panel rows only)."""
    judges: int = 1
    same_family: bool = False
    lost_by_flag: bool = False
    """The response was flagged and scored the scale's lowest by rule (`aggregate.flagged:
    lose`), whatever the judge said."""
    judged_score: float | None = None
    """When `lost_by_flag`: the score the judge gave."""
    request_id: str | None = None
    """The request's id in store.sqlite (`judge_requests`, `judge_responses`, `verdicts`);
    None on panel rows."""
    reasoning: str | None = None
    """The reasoning the judge gave with its score; None without a verdict."""
    failure: str | None = None
    """Why there is no score: `parse failure: <reason>` or `error: <message>`."""
    reply: str | None = None
    """The reply as received, when it could not be parsed."""


TEXT_FIELDS = frozenset(
    {
        "reasoning",
        "reasoning_ab",
        "reasoning_ba",
        "failure",
        "failure_ab",
        "failure_ba",
        "reply",
        "reply_ab",
        "reply_ba",
    }
)
"""Columns of the judgments files that hold judge text: the analysis never needs them, so
readers that load a whole table leave them out (`judge.labels.load_table(drop=...)`)."""


class _Said(NamedTuple):
    """What one request left for its judgment row (see the module docstring)."""

    request_id: str | None
    reasoning: str | None = None
    failure: str | None = None
    reply: str | None = None


_UNPLANNED = _Said(None)
"""An order with no request (a run with `orders: AB`)."""


def _said(result: StoredResult) -> _Said:
    request_id = result.request.request_id
    if result.verdict is not None:
        return _Said(request_id, reasoning=result.verdict.reasoning)
    response = result.response
    if response is None:  # pending: nothing said yet
        return _Said(request_id)
    if response.error is not None:
        return _Said(request_id, failure=f"error: {response.error}")
    reason = result.failure.reason if result.failure is not None else "no verdict stored"
    return _Said(request_id, failure=f"parse failure: {reason}", reply=response.text)


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


def aggregate_pairwise(
    results: Iterable[StoredResult],
    pairs: Iterable[BlindedPair],
    key: BlindingKey,
    lengths: dict[str, int],
    config: AggregateConfig,
) -> tuple[list[PairJudgment], dict[str, JudgeStats]]:
    """`lengths`: blind_id -> output length in characters (for the verbosity diagnostic)."""
    pair_by_id = {p.pair_id: p for p in pairs}
    per: dict[tuple[str, str], dict[str, str | None]] = defaultdict(dict)
    failures: Counter[tuple[str, str]] = Counter()
    same_family: dict[tuple[str, str], bool] = {}
    stats: dict[str, JudgeStats] = {}
    latencies: dict[str, list[float]] = defaultdict(list)
    first_slot: Counter[tuple[str, str]] = Counter()
    said: dict[tuple[str, str], dict[str, _Said]] = defaultdict(dict)
    for result in results:
        request = result.request
        judge = request.judge
        st = stats.setdefault(judge, JudgeStats(judge=judge))
        _count(st, result, latencies[judge])
        if request.pair_id is None or request.order is None:
            continue
        k = (request.pair_id, judge)
        same_family[k] = request.same_family
        said[k][request.order] = _said(result)
        if result.verdict is None or result.verdict.label is None:
            failures[k] += 1
            continue
        label = result.verdict.label
        first_slot[(judge, label)] += 1
        system_a, system_b = key.pairs[request.pair_id]
        if label == "tie":
            winner = "tie"
        elif (label == "A") == (request.order == "AB"):
            winner = system_a
        else:
            winner = system_b
        per[k][request.order] = winner
    judgments = []
    for (pair_id, judge), orders in sorted(per.items()) + [
        (k, {}) for k in sorted(set(failures) - set(per))
    ]:
        pair = pair_by_id[pair_id]
        system_a, system_b = key.pairs[pair_id]
        judgment = _combine(
            pair,
            judge,
            system_a,
            system_b,
            orders.get("AB"),
            orders.get("BA"),
            config,
            same_family.get((pair_id, judge), False),
            failures[(pair_id, judge)],
        )
        judgments.append(_with_said(judgment, said[(pair_id, judge)]))
    for judge, st in stats.items():
        mine = [j for j in judgments if j.judge == judge]
        both = [j for j in mine if j.consistent is not None]
        if both:
            st.position_consistency = sum(bool(j.consistent) for j in both) / len(both)
        decisive = first_slot[(judge, "A")] + first_slot[(judge, "B")]
        labelled = decisive + first_slot[(judge, "tie")]
        if decisive:
            st.first_slot_win_rate = first_slot[(judge, "A")] / decisive
        if labelled:
            st.tie_rate = first_slot[(judge, "tie")] / labelled
        st.verbosity_preference = _verbosity(mine, pair_by_id, key, lengths)
        if latencies[judge]:
            st.latency_median_s = statistics.median(latencies[judge])
    if len(stats) > 1:
        judgments += panel_judgments(judgments, config)
    return judgments, stats


def _combine(
    pair: BlindedPair,
    judge: str,
    system_a: str,
    system_b: str,
    ab: str | None,
    ba: str | None,
    config: AggregateConfig,
    same_family: bool,
    failures: int,
) -> PairJudgment:
    combined = combine_orders(ab, ba, inconsistent=config.inconsistent)
    winner = combined.label
    return PairJudgment(
        item_id=pair.item_id,
        pair_id=pair.pair_id,
        judge=judge,
        system_a=system_a,
        system_b=system_b,
        winner=winner,
        outcome=_outcome(winner, system_a),
        score_a=_score(winner, system_a),
        verdict_ab=ab,
        verdict_ba=ba,
        consistent=combined.consistent,
        orders=combined.orders,
        same_family=same_family,
        failures=failures,
    )


def _with_said(judgment: PairJudgment, said: dict[str, _Said]) -> PairJudgment:
    ab, ba = said.get("AB", _UNPLANNED), said.get("BA", _UNPLANNED)
    return replace(
        judgment,
        request_ab=ab.request_id,
        request_ba=ba.request_id,
        reasoning_ab=ab.reasoning,
        reasoning_ba=ba.reasoning,
        failure_ab=ab.failure,
        failure_ba=ba.failure,
        reply_ab=ab.reply,
        reply_ba=ba.reply,
    )


def majority(winners: Iterable[str]) -> tuple[str | None, bool]:
    """The panel's rule: (the winner most judges gave, or `tie` when the top is shared; None
    without a winner) and whether the top was shared (a split)."""
    votes = Counter(winners)
    if not votes:
        return None, False
    (top, n), *rest = votes.most_common()
    split = bool(rest) and rest[0][1] == n
    return ("tie" if split else top), split


def panel_judgments(judgments: list[PairJudgment], config: AggregateConfig) -> list[PairJudgment]:
    """Majority of the judges' winners per pair; a split is a tie."""
    by_pair: dict[str, list[PairJudgment]] = defaultdict(list)
    for j in judgments:
        by_pair[j.pair_id].append(j)
    panel = []
    for pair_id, members in sorted(by_pair.items()):
        winner, split = majority(j.winner for j in members if j.winner is not None)
        first = members[0]
        panel.append(
            PairJudgment(
                item_id=first.item_id,
                pair_id=pair_id,
                judge=PANEL,
                system_a=first.system_a,
                system_b=first.system_b,
                winner=winner,
                outcome=_outcome(winner, first.system_a),
                score_a=_score(winner, first.system_a),
                verdict_ab=None,
                verdict_ba=None,
                consistent=None,
                orders=sum(j.orders for j in members),
                same_family=any(j.same_family for j in members),
                failures=sum(j.failures for j in members),
                split=split,
            )
        )
    return panel


def aggregate_absolute(
    results: Iterable[StoredResult], key: BlindingKey
) -> tuple[list[ScoreJudgment], dict[str, JudgeStats]]:
    stats: dict[str, JudgeStats] = {}
    latencies: dict[str, list[float]] = defaultdict(list)
    rows: list[ScoreJudgment] = []
    for result in results:
        request = result.request
        st = stats.setdefault(request.judge, JudgeStats(judge=request.judge))
        _count(st, result, latencies[request.judge])
        if request.blind_id is None:
            continue
        verdict = result.verdict
        said = _said(result)
        rows.append(
            ScoreJudgment(
                item_id=request.item_id,
                blind_id=request.blind_id,
                system=key.systems[request.blind_id],
                judge=request.judge,
                score=verdict.score if verdict is not None else None,
                scores=dict(verdict.scores) if verdict is not None else {},
                same_family=request.same_family,
                request_id=said.request_id,
                reasoning=said.reasoning,
                failure=said.failure,
                reply=said.reply,
            )
        )
    for judge, st in stats.items():
        if latencies[judge]:
            st.latency_median_s = statistics.median(latencies[judge])
    if len(stats) > 1:
        by_response: dict[str, list[ScoreJudgment]] = defaultdict(list)
        for row in rows:
            by_response[row.blind_id].append(row)
        for blind_id, members in sorted(by_response.items()):
            scored = [m.score for m in members if m.score is not None]
            rows.append(
                ScoreJudgment(
                    item_id=members[0].item_id,
                    blind_id=blind_id,
                    system=members[0].system,
                    judge=PANEL,
                    score=statistics.fmean(scored) if scored else None,
                    spread=(max(scored) - min(scored)) if scored else None,
                    judges=len(scored),
                    same_family=any(m.same_family for m in members),
                )
            )
    return rows, stats


def _count(st: JudgeStats, result: StoredResult, latencies: list[float]) -> None:
    st.requests += 1
    st.same_family_requests += result.request.same_family
    status = result.status
    if status == "pending":
        st.pending += 1
        return
    response = result.response
    assert response is not None
    st.cached += response.cached
    if response.cost_usd is not None:
        st.cost_usd = (st.cost_usd or 0.0) + response.cost_usd
    if response.latency_s is not None and not response.cached:
        latencies.append(response.latency_s)
    if status == "verdict":
        st.verdicts += 1
    elif status == "parse_failure":
        st.parse_failures += 1
    else:
        st.errors += 1
    answered = st.verdicts + st.parse_failures
    st.parse_failure_rate = st.parse_failures / answered if answered else None


def _verbosity(
    judgments: list[PairJudgment],
    pairs: dict[str, BlindedPair],
    key: BlindingKey,
    lengths: dict[str, int],
) -> float | None:
    longer_wins = decisive = 0
    for j in judgments:
        if j.winner in (None, "tie"):
            continue
        pair = pairs[j.pair_id]
        # key.pairs[pair_id] = (system in slot A, system in slot B) = (pair.slot_a, pair.slot_b)
        len_a, len_b = lengths.get(pair.slot_a, 0), lengths.get(pair.slot_b, 0)
        if len_a == len_b:
            continue
        decisive += 1
        longer = j.system_a if len_a > len_b else j.system_b
        longer_wins += j.winner == longer
    return longer_wins / decisive if decisive else None


def _outcome(winner: str | None, system_a: str) -> Outcome | None:
    if winner is None:
        return None
    if winner == "tie":
        return "tie"
    return "a" if winner == system_a else "b"


def _score(winner: str | None, system_a: str) -> float | None:
    outcome = _outcome(winner, system_a)
    return None if outcome is None else {"a": 1.0, "tie": 0.5, "b": 0.0}[outcome]


def flagged_lose_pairs(
    judgments: Iterable[PairJudgment], pairs: Iterable[BlindedPair], flagged: set[str]
) -> list[PairJudgment]:
    """`aggregate.flagged: lose`: a pair in which exactly one response is flagged (`flagged`:
    blind ids) goes to the other system, whatever the judge said; both flagged, or neither:
    the judge's verdict stands."""
    loser: dict[str, int] = {}
    for p in pairs:
        a, b = p.slot_a in flagged, p.slot_b in flagged
        if a != b:
            loser[p.pair_id] = 0 if a else 1  # the slot (key.pairs order) that loses
    out = []
    for j in judgments:
        side = loser.get(j.pair_id)
        if side is None or j.winner is None:  # no verdict stays none: a failure is a record
            out.append(j)
            continue
        # system_a / system_b are key.pairs[pair_id]: slot A's system, then slot B's.
        slots = (j.system_a, j.system_b)
        lost, winner = slots[side], slots[1 - side]
        out.append(
            replace(
                j,
                winner=winner,
                outcome=_outcome(winner, j.system_a),
                score_a=_score(winner, j.system_a),
                lost_by_flag=lost,
                judged_winner=j.winner,
            )
        )
    return out


def flagged_lose_scores(
    rows: Iterable[ScoreJudgment], flagged: set[str], lowest: float
) -> list[ScoreJudgment]:
    """`aggregate.flagged: lose` for absolute scores: a flagged response scores `lowest`."""
    return [
        replace(r, score=lowest, scores={}, lost_by_flag=True, judged_score=r.score)
        if r.blind_id in flagged and r.score is not None
        else r
        for r in rows
    ]


def as_rows(judgments: Iterable[PairJudgment | ScoreJudgment]) -> list[dict]:
    # A shallow copy of each record's fields, in field order: `asdict` would deep-copy every
    # value (the texts included) for rows that are written and dropped.
    return [dict(vars(j)) for j in judgments]
