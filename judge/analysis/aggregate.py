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
failure).

Streaming: `Aggregation` takes a run's results one item at a time
(`judge.store.result_rows.by_item`)
and returns that item's judgments; it keeps the judges' statistics (`judge.analysis.judge_stats`),
never
the judgments, so its memory does not grow with the run.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable, Set
from dataclasses import dataclass, field, replace
from itertools import groupby
from operator import attrgetter
from typing import Any, Literal, NamedTuple

from calibration.orders import combine_orders
from judge.analysis.judge_stats import JudgeStats, JudgeTally
from judge.config.run_config import AggregateConfig
from judge.store.result_rows import ResultRow
from judge.types import PANEL, BlindingKey

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
readers that load a whole table leave them out
(`judge.analysis.verdict_tables.load_table(drop=...)`)."""


class _Said(NamedTuple):
    """What one request left for its judgment row (see the module docstring)."""

    request_id: str | None
    reasoning: str | None = None
    failure: str | None = None
    reply: str | None = None


_UNPLANNED = _Said(None)
"""An order with no request (a run with `orders: AB`)."""


def _said(result: ResultRow) -> _Said:
    request_id = result.request_id
    if result.verdict:
        return _Said(request_id, reasoning=result.reasoning)
    if not result.answered:  # pending: nothing said yet
        return _Said(request_id)
    if result.error is not None:
        return _Said(request_id, failure=f"error: {result.error}")
    reason = result.failure_reason if result.failure_reason is not None else "no verdict stored"
    return _Said(request_id, failure=f"parse failure: {reason}", reply=result.reply)


Judgment = PairJudgment | ScoreJudgment


class Aggregation:
    """A run's judgments, one item's results at a time (`item`), and each judge's behaviour
    over all of them (`stats`). Holds the statistics, never the judgments.

    `canaries`: the canaries' system names: their judgments and statistics are kept apart
    (`canary_stats`). `flagged`: blind ids that lose by rule (`aggregate.flagged: lose`; the
    scale's `lowest` score for absolute runs), after the statistics and the panel have seen
    the judges' own verdicts. `panel`: combine the judges of each pair (or response) into
    `panel` rows; a caller that finds only one judge among the real (or canary) results at the
    end drops them, as no panel exists for one judge."""

    def __init__(
        self,
        key: BlindingKey,
        config: AggregateConfig,
        *,
        canaries: Set[str] = frozenset(),
        flagged: Set[str] = frozenset(),
        lowest: float = 0.0,
        panel: bool = False,
    ) -> None:
        self._key = key
        self._config = config
        self._canaries = canaries
        self._flagged = flagged
        self._lowest = lowest
        self._panel = panel
        self._tallies: tuple[dict[str, JudgeTally], dict[str, JudgeTally]] = ({}, {})

    def item(self, results: Iterable[ResultRow]) -> list[tuple[bool, Judgment]]:
        """One item's judgments (each with whether it is a canary's), given all its results
        in `judge.store.result_rows.by_item` order; sorted by judge, then pair (or system)."""
        out: list[tuple[bool, Judgment]] = []
        for pair_id, group in groupby(results, key=attrgetter("pair_id")):
            if pair_id is not None:
                out += self._pair(pair_id, list(group))
            else:
                for blind_id, same in groupby(group, key=attrgetter("blind_id")):
                    out += self._response(blind_id, list(same))
        out.sort(key=lambda row: row_order(row[1]))
        return out

    def stats(self, canary: bool = False) -> dict[str, JudgeStats]:
        """Per judge (by name), over the real systems' results (or the canaries')."""
        tallies = self._tallies[canary]
        return {judge: tallies[judge].result() for judge in sorted(tallies)}

    def judges(self, canary: bool = False) -> int:
        """How many judges the real systems' results (or the canaries') had so far."""
        return len(self._tallies[canary])

    def _tally(self, canary: bool, judge: str) -> JudgeTally:
        tallies = self._tallies[canary]
        if judge not in tallies:
            tallies[judge] = JudgeTally(judge)
        return tallies[judge]

    def _pair(self, pair_id: str, results: list[ResultRow]) -> list[tuple[bool, Judgment]]:
        system_a, system_b = self._key.pairs[pair_id]
        canary = not self._canaries.isdisjoint((system_a, system_b))
        first = results[0]
        # key.pairs[pair_id] = (system in slot A, system in slot B) = (slot_a's, slot_b's)
        if first.length_a == first.length_b:
            longer = None
        else:
            longer = system_a if (first.length_a or 0) > (first.length_b or 0) else system_b
        judgments: list[PairJudgment] = []
        for judge, mine in groupby(results, key=attrgetter("judge")):
            tally = self._tally(canary, judge)
            winners: dict[str, str] = {}
            said: dict[str, _Said] = {}
            failures = 0
            same_family = False
            for result in mine:
                tally.count(result)
                if result.order is None:
                    continue
                same_family = result.same_family
                said[result.order] = _said(result)
                if not result.verdict or result.label is None:
                    failures += 1
                    continue
                label = result.label
                tally.label(label)
                if label == "tie":
                    winners[result.order] = "tie"
                elif (label == "A") == (result.order == "AB"):
                    winners[result.order] = system_a
                else:
                    winners[result.order] = system_b
            if not said:
                continue
            combined = combine_orders(
                winners.get("AB"), winners.get("BA"), inconsistent=self._config.inconsistent
            )
            winner = combined.label
            ab, ba = said.get("AB", _UNPLANNED), said.get("BA", _UNPLANNED)
            judgment = PairJudgment(
                item_id=first.item_id,
                pair_id=pair_id,
                judge=judge,
                system_a=system_a,
                system_b=system_b,
                winner=winner,
                outcome=_outcome(winner, system_a),
                score_a=_score(winner, system_a),
                verdict_ab=winners.get("AB"),
                verdict_ba=winners.get("BA"),
                consistent=combined.consistent,
                orders=combined.orders,
                same_family=same_family,
                failures=failures,
                request_ab=ab.request_id,
                request_ba=ba.request_id,
                reasoning_ab=ab.reasoning,
                reasoning_ba=ba.reasoning,
                failure_ab=ab.failure,
                failure_ba=ba.failure,
                reply_ab=ab.reply,
                reply_ba=ba.reply,
            )
            tally.judged(judgment.winner, judgment.consistent, longer)
            judgments.append(judgment)
        if self._panel and judgments:
            judgments.append(panel_pair(judgments))
        flagged_a, flagged_b = first.slot_a in self._flagged, first.slot_b in self._flagged
        return [(canary, flagged_lose_pair(j, flagged_a, flagged_b)) for j in judgments]

    def _response(
        self, blind_id: str | None, results: list[ResultRow]
    ) -> list[tuple[bool, Judgment]]:
        if blind_id is None:  # neither a pair nor a response: counted, nothing to judge
            for result in results:
                self._tally(False, result.judge).count(result)
            return []
        system = self._key.systems[blind_id]
        canary = system in self._canaries
        rows: list[ScoreJudgment] = []
        for result in results:
            self._tally(canary, result.judge).count(result)
            said = _said(result)
            scores = json.loads(result.scores) if result.verdict and result.scores else {}
            rows.append(
                ScoreJudgment(
                    item_id=result.item_id,
                    blind_id=blind_id,
                    system=system,
                    judge=result.judge,
                    score=result.score if result.verdict else None,
                    scores={name: float(value) for name, value in scores.items()},
                    same_family=result.same_family,
                    request_id=said.request_id,
                    reasoning=said.reasoning,
                    failure=said.failure,
                    reply=said.reply,
                )
            )
        if self._panel and rows:
            rows.append(panel_response(rows))
        flagged = blind_id in self._flagged
        return [(canary, flagged_lose_score(r, flagged, self._lowest)) for r in rows]


def majority(winners: Iterable[str]) -> tuple[str | None, bool]:
    """The panel's rule: (the winner most judges gave, or `tie` when the top is shared; None
    without a winner) and whether the top was shared (a split)."""
    votes = Counter(winners)
    if not votes:
        return None, False
    (top, n), *rest = votes.most_common()
    split = bool(rest) and rest[0][1] == n
    return ("tie" if split else top), split


def panel_pair(members: list[PairJudgment]) -> PairJudgment:
    """The judges' judgments of one pair combined: the majority of their winners; a split is a
    tie."""
    winner, split = majority(j.winner for j in members if j.winner is not None)
    first = members[0]
    return PairJudgment(
        item_id=first.item_id,
        pair_id=first.pair_id,
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


def panel_response(members: list[ScoreJudgment]) -> ScoreJudgment:
    """The judges' scores of one response combined: their mean, and their spread."""
    scored = [m.score for m in members if m.score is not None]
    return ScoreJudgment(
        item_id=members[0].item_id,
        blind_id=members[0].blind_id,
        system=members[0].system,
        judge=PANEL,
        score=statistics.fmean(scored) if scored else None,
        spread=(max(scored) - min(scored)) if scored else None,
        judges=len(scored),
        same_family=any(m.same_family for m in members),
    )


def _outcome(winner: str | None, system_a: str) -> Outcome | None:
    if winner is None:
        return None
    if winner == "tie":
        return "tie"
    return "a" if winner == system_a else "b"


def _score(winner: str | None, system_a: str) -> float | None:
    outcome = _outcome(winner, system_a)
    return None if outcome is None else {"a": 1.0, "tie": 0.5, "b": 0.0}[outcome]


def flagged_lose_pair(judgment: PairJudgment, flagged_a: bool, flagged_b: bool) -> PairJudgment:
    """`aggregate.flagged: lose`: a pair in which exactly one response is flagged (its slot A's
    or its slot B's) goes to the other system, whatever the judge said; both flagged, or
    neither: the judge's verdict stands. No verdict stays none: a failure is a record."""
    if flagged_a == flagged_b or judgment.winner is None:
        return judgment
    # system_a / system_b are key.pairs[pair_id]: slot A's system, then slot B's.
    lost, winner = (
        (judgment.system_a, judgment.system_b)
        if flagged_a
        else (judgment.system_b, judgment.system_a)
    )
    return replace(
        judgment,
        winner=winner,
        outcome=_outcome(winner, judgment.system_a),
        score_a=_score(winner, judgment.system_a),
        lost_by_flag=lost,
        judged_winner=judgment.winner,
    )


def flagged_lose_score(row: ScoreJudgment, flagged: bool, lowest: float) -> ScoreJudgment:
    """`aggregate.flagged: lose` for absolute scores: a flagged response scores `lowest`; one
    without a score keeps none."""
    if not flagged or row.score is None:
        return row
    return replace(row, score=lowest, scores={}, lost_by_flag=True, judged_score=row.score)


def row_order(judgment: Judgment) -> tuple[str, str, str]:
    """The order of the judgments files' rows: judge, item, then pair (or system). Fixed, so
    the files, and the bootstrap draws that index them, are identical from run to run."""
    second = judgment.pair_id if isinstance(judgment, PairJudgment) else judgment.system
    return (judgment.judge, judgment.item_id, second)


def as_row(judgment: Judgment) -> dict[str, Any]:
    # A shallow copy of the record's fields, in field order: `asdict` would deep-copy every
    # value (the texts included) for a row that is written and dropped.
    return dict(vars(judgment))
