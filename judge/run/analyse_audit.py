"""The audit part of a run's analysis (`summary.json` `audit`): for each neighbouring pair of
the ranking a few items to inspect, with the question, both candidates (unblinded: judging is
over) and every judge's verdicts and reasoning in both orders; the judge's largest
disagreements with the human majority; for a panel, how its judges agree; each judge's family.

The choice is deterministic and blind to the texts: within each kind the items come in the
order of a hash of (item id, the two systems' names) (`draw_order`): arbitrary, and the same
for every run on the same data, whatever its blinding secret. The judges' words come from
`judgments.jsonl` (read in full only at the lines an example names), the question and the
outputs from the store (only the examples' rows), so an example is exactly what those two
files hold."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judge.config.run_config import RunConfig
from judge.families import judge_family
from judge.store.rundir import RunDir
from judge.summary.audit import (
    Audit,
    Candidate,
    Disagreement,
    Disagreements,
    Example,
    Excerpt,
    HumanVote,
    JudgeFamily,
    JudgeVerdicts,
    NeighbourExamples,
    OrderVerdict,
    PanelAgreement,
    Why,
)
from judge.summary.base_model import Estimate
from judge.summary.run_summary import Decision, RunComparison
from judge.types import PANEL, ChatMessage, Item

EXCERPT_CHARS = 600
"""Texts on the page are cut near this many characters (at a word boundary)."""
PER_PAIR = 3
"""Examples per neighbouring pair: one of each kind (`summary_audit.Why`) where there is one."""
DISAGREEMENTS = 3
_OUTCOMES = ["a", "b", "tie"]
_CONFIDENCE = 0.95


@dataclass(frozen=True)
class _Pick:
    why: Why
    pair_id: str
    first: str
    """The system whose candidate is shown first."""


def audit_section(
    config: RunConfig,
    rundir: RunDir,
    table: pd.DataFrame,
    comparison: RunComparison,
    decision: Decision,
    labels: pd.DataFrame | None,
) -> Audit:
    """`table`: the run's judgments without their texts, in file order
    (`judge.analysis.verdict_tables.judgment_table`)."""
    families = [
        JudgeFamily(judge=j.model, family=judge_family(j, config.families), inferred=not j.family)
        for j in config.judges
    ]
    table = table.assign(line=np.arange(1, len(table) + 1))
    pairwise = "system_a" in table.columns
    panel = panel_agreement(
        table, pairwise, resamples=config.calibration.resamples, seed=config.calibration.seed
    )
    note = None
    if table.empty:
        note = "No judgments yet."
    elif not pairwise:
        note = (
            "Examples are shown for pairwise runs. Every score's reasoning (or, when the reply "
            "could not be read, the reply itself) is in judgments.jsonl."
        )
    if note is not None or comparison.judge is None:
        return Audit(
            judges=families,
            excerpt_chars=EXCERPT_CHARS,
            examples=[],
            examples_note=note,
            disagreements=None,
            panel=panel,
        )
    real = table[table["judge"] != PANEL]
    compared = table[table["judge"] == comparison.judge]
    neighbours = [_neighbour(real, n.upper, n.lower) for n in decision.neighbours]
    found = None if labels is None else _disagreements(compared, labels)
    picks = [p for _, picks in neighbours for p in picks]
    picks += [] if found is None else [p for p, _ in found[2]]
    examples = _Examples(rundir, real, compared, picks)
    disagreements = None
    if found is not None:
        keys, opposite, shown = found
        disagreements = Disagreements(
            judge=comparison.judge,
            keys=keys,
            opposite=opposite,
            shown=[
                Disagreement(
                    example=examples.build(pick),
                    judge_winner=against.judge_winner,
                    human_winner=against.human_winner,
                    votes=against.votes,
                )
                for pick, against in shown
            ],
        )
    return Audit(
        judges=families,
        excerpt_chars=EXCERPT_CHARS,
        examples=[
            counts.model_copy(update={"examples": [examples.build(p) for p in picks]})
            for counts, picks in neighbours
        ],
        examples_note=None if decision.neighbours else "The ranking has no neighbouring pair.",
        disagreements=disagreements,
        panel=panel,
    )


def draw_order(item_id: str, system: str, other: str) -> str:
    """The order examples are drawn in: a hash of the item and the pair's two systems (either
    way round), so it owes nothing to the texts, the verdicts or the run's secret."""
    text = "\x1f".join([item_id, *sorted((system, other))])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> Excerpt:
    """The start of `text`: whole up to `limit` characters, else cut at the last space or line
    break in its last quarter (mid-word only when there is none)."""
    if len(text) <= limit:
        return Excerpt(text=text, chars=len(text))
    cut = text[:limit]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= limit * 3 // 4:
        cut = cut[:space]
    return Excerpt(text=cut.rstrip(), chars=len(text))


# --------------------------------------------------------------------------- choosing


def _neighbour(real: pd.DataFrame, upper: str, lower: str) -> tuple[NeighbourExamples, list[_Pick]]:
    """Counts of the kinds of items of one neighbouring pair, and the items to show: one of
    each kind in turn (upper, lower, disputed, other), then a second of each, up to
    `PER_PAIR`."""
    a, b = real["system_a"], real["system_b"]
    mine = real[((a == upper) & (b == lower)) | ((a == lower) & (b == upper))]
    named = _verdicts_named(mine)
    kinds: dict[Why, list[str]] = {"upper": [], "lower": [], "disputed": [], "other": []}
    items = dict(zip(mine["pair_id"], mine["item_id"], strict=True))
    for pair_id in sorted(items, key=lambda p: draw_order(items[p], upper, lower)):
        said = named.get(pair_id, frozenset())
        kind: Why = (
            "upper"
            if said == {upper}
            else "lower"
            if said == {lower}
            else "disputed"
            if len(said) > 1
            else "other"
        )
        kinds[kind].append(pair_id)
    chosen = [_Pick(why, pair_id, upper) for why, pair_id in _round_robin(kinds, PER_PAIR)]
    counts = NeighbourExamples(
        upper=upper,
        lower=lower,
        pairs=sum(len(ids) for ids in kinds.values()),
        agreed_upper=len(kinds["upper"]),
        agreed_lower=len(kinds["lower"]),
        disputed=len(kinds["disputed"]),
        examples=[],
    )
    return counts, chosen


def _verdicts_named(rows: pd.DataFrame) -> dict[str, frozenset[str]]:
    """pair id -> every winner its verdicts named (both orders, every judge)."""
    said = pd.concat(
        [rows[["pair_id", c]].set_axis(["pair_id", "said"], axis=1) for c in _VERDICTS]
    ).dropna(subset=["said"])
    return {k: frozenset(v) for k, v in said.groupby("pair_id")["said"]}


_VERDICTS = ("verdict_ab", "verdict_ba")


def _round_robin(kinds: dict[Why, list[str]], n: int) -> Iterator[tuple[Why, str]]:
    queues = {why: iter(ids) for why, ids in kinds.items()}
    given = 0
    while queues and given < n:
        for why in list(queues):
            pair_id = next(queues[why], None)
            if pair_id is None:
                del queues[why]
                continue
            yield why, pair_id
            given += 1
            if given == n:
                return


@dataclass(frozen=True)
class _Against:
    judge_winner: str
    human_winner: str
    votes: list[HumanVote]


def _disagreements(
    compared: pd.DataFrame, labels: pd.DataFrame
) -> tuple[int, int, list[tuple[_Pick, _Against]]]:
    """(labelled pairs where the judge and a human majority each named a system, those where
    they named different ones, the largest of those): the human votes against the judge's
    pick, net of the votes for it, then the votes in all, decide "largest"."""
    from calibration.label_tables import normalise

    keys = ["item_id", "system_a", "system_b"]
    judged = compared[compared["winner"].notna()]
    judge = normalise(judged[[*keys, "winner", "pair_id"]], "pairwise", "judge")
    human = normalise(labels, "pairwise", "human")
    votes = (
        human.groupby([*keys, "label"])
        .size()
        .unstack("label", fill_value=0)
        # Every outcome a column, even one nobody chose.
        .reindex(columns=_OUTCOMES, fill_value=0)
        .reset_index()
    )
    both = judge.merge(votes, on=keys)
    counts = both[_OUTCOMES].to_numpy()
    best = counts.max(axis=1, initial=0)
    majority = np.array(_OUTCOMES, dtype=object)[counts.argmax(axis=1)] if len(both) else []
    strict = (counts == best[:, None]).sum(axis=1) == 1
    decisive = both["label"].isin(["a", "b"]).to_numpy() & np.isin(majority, ["a", "b"])
    eligible = strict & decisive
    opposite = eligible & (both["label"].to_numpy() != majority)
    rows = []
    for i in np.flatnonzero(opposite):
        row = both.iloc[i]
        name = {"a": row["system_a"], "b": row["system_b"], "tie": "tie"}
        against = int(counts[i, _OUTCOMES.index(majority[i])])
        net = against - int(counts[i, _OUTCOMES.index(row["label"])])
        drawn = draw_order(row["item_id"], row["system_a"], row["system_b"])
        rows.append((-net, -int(counts[i].sum()), drawn, row, name, majority[i]))
    rows.sort(key=lambda r: r[:3])
    shown = []
    for _, _, _, row, name, most in rows[:DISAGREEMENTS]:
        tally = sorted(
            ((name[o], int(row[o])) for o in _OUTCOMES if row[o]), key=lambda cv: (-cv[1], cv[0])
        )
        pick = _Pick("disagreement", row["pair_id"], name[row["label"]])
        shown.append(
            (
                pick,
                _Against(
                    judge_winner=name[row["label"]],
                    human_winner=name[most],
                    votes=[HumanVote(choice=c, votes=v) for c, v in tally],
                ),
            )
        )
    return int(eligible.sum()), int(opposite.sum()), shown


def panel_agreement(
    table: pd.DataFrame, pairwise: bool, *, resamples: int, seed: int
) -> PanelAgreement | None:
    """Krippendorff's alpha among the judges (nominal a/b/tie per pair, or interval scores per
    response, as the calibration against humans measures them), and how often the panel's
    majority was split."""
    from calibration.alpha import krippendorff_alpha

    judges = sorted(set(table["judge"]) - {PANEL}) if "judge" in table else []
    if len(judges) < 2:
        return None
    unit, value = ("pair_id", "outcome") if pairwise else ("blind_id", "score")
    real = table[table["judge"] != PANEL]
    grid = real.pivot(index=unit, columns="judge", values=value).reindex(columns=judges)
    graded = grid[grid.notna().sum(axis=1) >= 2]
    alpha = krippendorff_alpha(
        grid.to_numpy(dtype=object).T,
        "nominal" if pairwise else "interval",
        value_domain=_OUTCOMES if pairwise else None,
        resamples=resamples,
        seed=seed,
        confidence=_CONFIDENCE,
    )
    panel = table[table["judge"] == PANEL]
    decided = panel[panel["winner" if pairwise else "score"].notna()]
    return PanelAgreement(
        judges=judges,
        alpha=Estimate.model_validate(alpha.to_dict()),
        level="nominal" if pairwise else "interval",
        units=len(graded),
        unanimous=_unanimous(graded),
        split=int(decided["split"].eq(True).sum()) if pairwise else None,
        panel_judgments=len(decided),
    )


def _unanimous(graded: pd.DataFrame) -> int:
    """Rows whose non-missing values are all equal: `nunique(axis=1) == 1`, without pandas'
    row-by-row Python loop (2 s per 12,500 pairs)."""
    if graded.empty:
        return 0
    first = graded.bfill(axis=1).iloc[:, 0]  # each row's first value
    same = graded.isna() | graded.eq(first, axis=0)
    return int(same.all(axis=1).sum())


# --------------------------------------------------------------------------- the texts


class _Examples:
    """The texts of every picked pair, read once: the judgments' lines of its judges, its
    item and its two blinded responses."""

    def __init__(
        self, rundir: RunDir, real: pd.DataFrame, compared: pd.DataFrame, picks: list[_Pick]
    ) -> None:
        from judge.store import lookup as store_lookup

        wanted = sorted({p.pair_id for p in picks})
        rows = real[real["pair_id"].isin(wanted)].sort_values(["pair_id", "judge"])
        self._judges: dict[str, list[int]] = {}
        for pair_id, line in zip(rows["pair_id"], rows["line"], strict=True):
            self._judges.setdefault(pair_id, []).append(int(line))
        mine = compared[compared["pair_id"].isin(wanted)]
        columns = (mine["pair_id"], mine["judge"], mine["line"])
        self._compared = {
            pair_id: (str(judge), int(line)) for pair_id, judge, line in zip(*columns, strict=True)
        }
        lines = {int(n) for n in (*rows["line"], *mine["line"])}
        self._lines = _read_lines(rundir.judgments_jsonl, lines)
        with rundir.open_store() as store:
            self._pairs = store_lookup.pairs(store, wanted)
            self._items = store_lookup.items(store, {p.item_id for p in self._pairs.values()})
            self._outputs = store_lookup.blinded(
                store, [b for p in self._pairs.values() for b in (p.slot_a, p.slot_b)]
            )

    def build(self, pick: _Pick) -> Example:
        pair = self._pairs[pick.pair_id]
        item = self._items[pair.item_id]
        judge, line = self._compared[pick.pair_id]
        row = self._lines[line]
        # A judgment's system_a is the system in the pair's slot A (`BlindingKey.pairs`).
        sides = [(row["system_a"], pair.slot_a), (row["system_b"], pair.slot_b)]
        sides.sort(key=lambda side: side[0] != pick.first)
        return Example(
            why=pick.why,
            item_id=item.item_id,
            pair_id=pair.pair_id,
            strata=item.strata,
            question=excerpt(_last_user_turn(item)),
            candidates=[self._candidate(system, blind_id) for system, blind_id in sides],
            judge=judge,
            winner=row["winner"],
            line=line,
            judges=[self._verdicts(n) for n in self._judges.get(pick.pair_id, [])],
        )

    def _candidate(self, system: str, blind_id: str) -> Candidate:
        response = self._outputs[blind_id]
        return Candidate(
            system=system,
            blind_id=blind_id,
            output=excerpt(response.output),
            earlier_turns=len(response.context),
        )

    def _verdicts(self, line: int) -> JudgeVerdicts:
        row = self._lines[line]
        orders = []
        for order, first, side in (("AB", row["system_a"], "ab"), ("BA", row["system_b"], "ba")):
            request_id = row.get(f"request_{side}")
            if request_id is None:
                continue  # an order the run did not plan
            orders.append(
                OrderVerdict(
                    order=order,  # type: ignore[arg-type]
                    first=first,
                    request_id=request_id,
                    winner=row.get(f"verdict_{side}"),
                    reasoning=_maybe(row.get(f"reasoning_{side}")),
                    failure=row.get(f"failure_{side}"),
                    reply=_maybe(row.get(f"reply_{side}")),
                )
            )
        return JudgeVerdicts(judge=row["judge"], line=line, winner=row["winner"], orders=orders)


def _maybe(text: str | None) -> Excerpt | None:
    return None if text is None else excerpt(text)


def _last_user_turn(item: Item) -> str:
    prompt = item.prompt
    if isinstance(prompt, str):
        return prompt
    turns: Iterable[ChatMessage] = reversed(prompt)
    return next((m.content for m in turns if m.role == "user"), prompt[-1].content)


def _read_lines(path: Path, wanted: set[int]) -> dict[int, dict[str, Any]]:
    """The rows at the given lines of a JSONL file (from 1), reading it once and stopping after
    the last one."""
    found: dict[int, dict[str, Any]] = {}
    last = max(wanted, default=0)
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if number in wanted:
                found[number] = json.loads(line)
            if number >= last:
                break
    return found
