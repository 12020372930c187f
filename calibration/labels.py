"""Human labels and judge judgments joined by key (one table's checks: `label_tables`).

A pairwise key is the item and the *unordered* system pair (`label_tables.normalise` sorts
each row's systems). A judge table's two presentation orders of a key are combined by the
runner's rule (`calibration.orders.combine_orders`). That orientation is arbitrary, so
chance-corrected statistics count each key in both (`JoinedLabels.mirror`; see
`calibration.calibrate`). Nothing is silently dropped: keys present on one side only, and judge
rows without a verdict, are counted and exemplified in the `JoinSummary`.

Matched keys are ordered by item, then by their labels (up to orientation), and only then by
system names: keys that names alone would reorder are interchangeable for every statistic, so
the bootstrap draws, and with them the intervals, do not change when a system is renamed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from calibration.label_tables import (
    KEYS,
    OUTCOME_SCORE,
    OUTCOMES,
    Kind,
    LabelError,
    cell_error,
    normalise,
    row_index,
)
from calibration.orders import OrderCounts, combine_table_orders

_EXAMPLES = 5

__all__ = [
    "OUTCOMES",
    "OUTCOME_SCORE",
    "JoinSummary",
    "JoinedLabels",
    "Kind",
    "LabelError",
    "join_labels",
    "load_mt_bench",
    "natural_key",
    "normalise",
    "unknown_systems_note",
]


@dataclass(frozen=True)
class Unmatched:
    count: int
    examples: tuple[str, ...]
    """Up to five keys, formatted `item_id | system_a | system_b` (or `item_id | system`)."""


@dataclass(frozen=True)
class JoinSummary:
    judge_keys: int
    """Distinct keys in the judge table (with or without a verdict)."""
    human_keys: int
    human_labels: int
    matched_keys: int
    """Keys with a usable judgment and at least one human label: what agreement is computed on."""
    matched_labels: int
    judge_only: Unmatched
    """Judgments without human labels (the unlabelled units of corrected estimates)."""
    human_only: Unmatched
    """Human-labelled keys that the judge table lacks entirely."""
    judge_no_verdict: Unmatched
    """Human-labelled keys whose judge row has no verdict (parse failure, error): not comparable."""
    repeated_labels: int
    """Human labels repeating an (annotator, key) already labelled; each counts as one vote."""
    judge_orders: OrderCounts | None = None
    """How the judge table's two presentation orders were combined; None without an `order`
    column."""
    annotator_per_row: bool = False
    """The human table has no `annotator` column: each row counted as its own annotator."""
    unknown_systems: tuple[str, ...] = ()
    """Systems the human labels name and the judge table never does (a misspelt or renamed
    system): their labels join nothing."""
    unknown_system_labels: int = 0
    """Human labels naming at least one of `unknown_systems`."""
    judge_systems: tuple[str, ...] = ()
    """Every system the judge table names, to compare `unknown_systems` with."""
    chosen_actively: bool = False
    """The human table gives each key's inclusion probability (an actively chosen sample)."""

    def to_dict(self) -> dict:
        return asdict(self)

    def notes(self) -> list[str]:
        """What was assumed or combined while reading the tables, one sentence each."""
        notes = [] if self.judge_orders is None else [self.judge_orders.note()]
        if self.unknown_systems:
            notes.append(unknown_systems_note(self))
        if self.chosen_actively:
            notes.append(
                "labels chosen actively (pairs the judge was unsure of drawn more often, with "
                "known probabilities): the corrected estimates weight each label by 1 / its "
                "probability; agreement is measured on the labelled keys as drawn, which holds "
                "more hard keys than the run does, so it errs low"
            )
        if self.annotator_per_row:
            notes.append(
                "annotators: the human table has no 'annotator' column, so each row counts as "
                "its own annotator (labels on one key are distinct labels; add the column to "
                "follow annotators across keys)"
            )
        return notes


def unknown_systems_note(join: JoinSummary) -> str:
    """One line naming the human labels' systems the judge never judged, and the judge's."""
    return (
        f"unknown systems: {join.unknown_system_labels} human labels name "
        f"{_listed(join.unknown_systems)}, which the judge table never names, so they join "
        f"nothing; the judge's systems are {_listed(join.judge_systems)} (check the spelling)"
    )


def _listed(names: Sequence[str], most: int = 10) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


@dataclass(frozen=True)
class JoinedLabels:
    """Judge and human labels on the same keys, in the arrays the statistics need."""

    kind: Kind
    categories: tuple
    """Pairwise: ('a', 'b', 'tie'); absolute: the sorted distinct scores of both sides."""
    keys: pd.DataFrame
    """One row per matched key: key columns, strata columns, `judge` (label or score)."""
    judge_code: np.ndarray
    """Per matched key: index of the judge's label in `categories`."""
    human_counts: np.ndarray
    """Per matched key and category: how many human labels gave it, shape (keys, K)."""
    comparisons: pd.DataFrame
    """One row per matched human label: `key` (row of `keys`), `annotator`, `human`, `judge`."""
    judge_only: pd.DataFrame
    """Judge rows with a verdict and no human label: key columns, strata, `judge`."""
    summary: JoinSummary
    strata: tuple[str, ...]
    inclusion: np.ndarray | None = None
    """Per matched key: the known probability it was chosen for a label (the human table's
    `inclusion` column, from an actively chosen sample); None when the table has none, i.e.
    the labelled keys are taken as a random subset."""

    @property
    def mirror(self) -> np.ndarray | None:
        """Pairwise: the category permutation that exchanges system_a and system_b (a <-> b,
        tie stays); None for absolute scores, which have no orientation."""
        if self.kind == "absolute":
            return None
        swap = {"a": "b", "b": "a", "tie": "tie"}
        return np.array([self.categories.index(swap[c]) for c in self.categories])

    @property
    def values(self) -> np.ndarray:
        """Numeric value of each category: pairwise labels as system_a's score (1, 0, 0.5)."""
        if self.kind == "pairwise":
            return np.array([OUTCOME_SCORE[c] for c in self.categories])
        return np.asarray(self.categories, dtype=float)


def natural_key(value: object) -> tuple:
    """Sort key putting numbers in numeric order (turn 2 before turn 10), then text."""
    text = str(value)
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def _fmt(keys: pd.DataFrame, key_cols: Sequence[str]) -> tuple[str, ...]:
    rows = keys[list(key_cols)].head(_EXAMPLES).astype(str).to_numpy()
    return tuple(" | ".join(r) for r in rows)


def _unmatched(keys: pd.DataFrame, key_cols: Sequence[str]) -> Unmatched:
    return Unmatched(len(keys), _fmt(keys, key_cols))


def join_labels(
    judge_table: pd.DataFrame,
    human_table: pd.DataFrame,
    *,
    kind: Kind,
    strata: Sequence[str] = (),
    scale: Sequence[float] | None = None,
) -> JoinedLabels:
    """Validate both tables and join them by key (see the module docstring).

    Strata are key-level columns (e.g. `category`, `turn`) read from the judge table, or the
    human table when the judge table lacks them; a stratum that varies within a key is an error.
    `scale` (absolute scores): every value the rubric allows, used or not, so unused levels
    are categories too; a human score outside it is an error (a judge panel's mean score may
    fall between levels). Without it the categories are the scores that occur.
    """
    judge = normalise(judge_table, kind, "judge")
    human = normalise(human_table, kind, "human")
    key_cols = list(KEYS[kind])
    _one_judge(judge)
    strata = tuple(strata)
    # Before the orders are combined: error rows are then rows of the table as given.
    key_strata = _key_strata(judge, human, judge_table, human_table, key_cols, strata)
    judge, orders = _one_judgment_per_key(judge, judge_table, key_cols)

    judge_keys = judge[[*key_cols, "label"]].rename(columns={"label": "judge"})
    labelled = human[key_cols].drop_duplicates()
    merged = labelled.merge(judge_keys, on=key_cols, how="left", indicator=True)
    human_only = merged[merged["_merge"] == "left_only"][key_cols]
    no_verdict = merged[(merged["_merge"] == "both") & merged["judge"].isna()][key_cols]
    matched = merged[(merged["_merge"] == "both") & merged["judge"].notna()][[*key_cols, "judge"]]
    matched = matched.sort_values(key_cols, kind="stable").reset_index(drop=True)

    lab_flag = judge_keys.merge(labelled.assign(_h=True), on=key_cols, how="left")
    judge_only_all = lab_flag[lab_flag["_h"].isna()].drop(columns="_h")
    judge_only = judge_only_all[judge_only_all["judge"].notna()]

    categories = _categories(kind, scale, human, human_table, matched)
    matched, comp, judge_code, counts = _coded(human, matched, key_cols, categories, kind)
    inclusion = (
        _key_inclusion(human, human_table, matched[key_cols], key_cols)
        if "inclusion" in human_table.columns
        else None
    )
    if strata:
        matched = matched.merge(key_strata, on=key_cols, how="left")
        judge_only = judge_only.merge(key_strata, on=key_cols, how="left")
    repeated = int(human.duplicated([*key_cols, "annotator"]).sum())
    judge_systems, unknown, unknown_labels = _systems(judge, human, key_cols)
    summary = JoinSummary(
        judge_keys=len(judge_keys),
        human_keys=len(labelled),
        human_labels=len(human),
        matched_keys=len(matched),
        matched_labels=len(comp),
        judge_only=_unmatched(judge_only_all, key_cols),
        human_only=_unmatched(human_only, key_cols),
        judge_no_verdict=_unmatched(no_verdict, key_cols),
        repeated_labels=repeated,
        judge_orders=orders,
        annotator_per_row="annotator" not in human_table,
        unknown_systems=tuple(unknown),
        unknown_system_labels=unknown_labels,
        judge_systems=tuple(judge_systems),
        chosen_actively=inclusion is not None,
    )
    return JoinedLabels(
        kind=kind,
        categories=categories,
        keys=matched,
        judge_code=judge_code,
        human_counts=counts,
        comparisons=comp,
        judge_only=judge_only.reset_index(drop=True),
        summary=summary,
        strata=strata,
        inclusion=inclusion,
    )


def _categories(
    kind: Kind,
    scale: Sequence[float] | None,
    human: pd.DataFrame,
    human_table: pd.DataFrame,
    matched: pd.DataFrame,
) -> tuple:
    """The label categories: pairwise outcomes, the rubric's scale, or the scores that occur."""
    if kind == "pairwise":
        return OUTCOMES
    if scale is not None:
        return _on_scale(scale, human, human_table, matched["judge"].to_numpy(float))
    scores = np.concatenate([matched["judge"].to_numpy(float), human["label"].to_numpy(float)])
    return tuple(float(v) for v in np.unique(scores))


def _coded(
    human: pd.DataFrame,
    matched: pd.DataFrame,
    key_cols: list[str],
    categories: tuple,
    kind: Kind,
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Matched keys in canonical order with their comparisons (one per human label), the
    judge's category code and the human label counts per key."""
    code = {c: i for i, c in enumerate(categories)}
    matched["key"] = np.arange(len(matched))
    comp = human.merge(matched, on=key_cols, how="inner")
    comp = comp.sort_values(["key"], kind="stable").reset_index(drop=True)
    comp = comp.rename(columns={"label": "human"})[["key", "annotator", "human", "judge"]]
    human_codes = comp["human"].map(code).to_numpy(np.int64)
    counts = np.zeros((len(matched), len(categories)), dtype=np.int64)
    np.add.at(counts, (comp["key"].to_numpy(), human_codes), 1)
    judge_code = matched["judge"].map(code).to_numpy(np.int64)

    order = _canonical_order(matched["item_id"], judge_code, counts, kind)
    matched = matched.iloc[order].reset_index(drop=True)
    judge_code, counts = judge_code[order], counts[order]
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    comp["key"] = position[comp["key"].to_numpy()]
    comp = comp.sort_values(["key"], kind="stable").reset_index(drop=True)
    matched["key"] = np.arange(len(matched))
    return matched, comp, judge_code, counts


def _systems(
    judge: pd.DataFrame, human: pd.DataFrame, key_cols: list[str]
) -> tuple[list[str], list[str], int]:
    """The judge's systems, the human labels' systems the judge never names, and how many
    human labels name one of those."""
    system_cols = [c for c in key_cols if c.startswith("system")]
    judge_systems = sorted({str(v) for c in system_cols for v in judge[c]}, key=natural_key)
    unknown = sorted(
        {str(v) for c in system_cols for v in human[c]} - set(judge_systems), key=natural_key
    )
    naming_unknown = human[system_cols].astype(str).isin(unknown).any(axis=1)
    return judge_systems, unknown, int(naming_unknown.sum())


def _key_inclusion(
    human: pd.DataFrame, table: pd.DataFrame, matched: pd.DataFrame, key_cols: list[str]
) -> np.ndarray:
    """Each matched key's inclusion probability: a number in (0, 1], one per key."""
    values = pd.to_numeric(human["inclusion"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values <= 0) | (values > 1)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise cell_error(
            "human",
            table,
            pos,
            "inclusion",
            f"{table['inclusion'].iat[pos]!r} is not a probability in (0, 1] (the chance the "
            "key was chosen for a label)",
        )
    per_key = human[key_cols].assign(inclusion=values)
    varies = per_key.groupby(key_cols)["inclusion"].transform("nunique") > 1
    if varies.any():
        pos = int(np.flatnonzero(varies.to_numpy())[0])
        raise cell_error("human", table, pos, "inclusion", "differs between labels of the same key")
    found = matched.merge(per_key.drop_duplicates(key_cols), on=key_cols, how="left")
    return found["inclusion"].to_numpy(dtype=float)


def _on_scale(
    scale: Sequence[float], human: pd.DataFrame, src: pd.DataFrame, judge: np.ndarray
) -> tuple:
    """The rubric's values, with any other score of the judge (a panel's mean falls between
    levels), as categories; a human score off the scale is an error."""
    allowed = np.unique(np.asarray(scale, dtype=float))
    score = human["label"].to_numpy(float)
    outside = ~np.isin(score, allowed)
    if outside.any():
        pos = int(np.flatnonzero(outside)[0])
        raise cell_error(
            "human",
            src,
            pos,
            "score",
            f"{score[pos]:g} is not on the rubric's scale ({', '.join(f'{v:g}' for v in allowed)})",
        )
    return tuple(float(v) for v in np.union1d(allowed, judge))


def _canonical_order(
    item_id: pd.Series, judge_code: np.ndarray, counts: np.ndarray, kind: Kind
) -> np.ndarray:
    """Keys by item, then by (judge label, human label counts) taken in the orientation that
    sorts first, then as they came (by system names): see the module docstring."""
    sig = np.column_stack([judge_code, counts])
    if kind == "pairwise":
        swap = np.array([OUTCOMES.index(o) for o in ("b", "a", "tie")])
        flip = content_flipped(judge_code, counts, swap)
        sig = np.where(flip[:, None], np.column_stack([swap[judge_code], counts[:, swap]]), sig)
    item = pd.factorize(item_id.astype(str), sort=True)[0]
    return np.lexsort([np.arange(len(sig)), *sig.T[::-1], item])


def content_flipped(judge_code: np.ndarray, counts: np.ndarray, mirror: np.ndarray) -> np.ndarray:
    """Per key: whether its mirror image (`JoinedLabels.mirror` applied to the judge label and
    the human counts) sorts before it, i.e. the orientation chosen by the labels alone, not by
    the names (a key equal to its mirror image is the same either way)."""
    sig = np.column_stack([judge_code, counts])
    diff = np.column_stack([mirror[judge_code], counts[:, mirror]]) - sig
    return diff[np.arange(len(diff)), np.argmax(diff != 0, axis=1)] < 0


def _one_judge(judge: pd.DataFrame) -> None:
    if "judge" in judge.columns:
        names = judge["judge"].dropna().astype(str).unique()
        if len(names) > 1:
            raise LabelError(
                f"judge table, column 'judge': judgments of {len(names)} judges "
                f"({', '.join(sorted(names)[:5])}); calibrate one judge (or the panel) "
                "at a time: filter the table first"
            )


def _one_judgment_per_key(
    judge: pd.DataFrame, src: pd.DataFrame, key_cols: list[str]
) -> tuple[pd.DataFrame, OrderCounts | None]:
    """The judge table with one row per key: the two presentation orders of a key combined
    when an `order` column tells them apart; any other repeated key is an error."""
    by_order = "order" in judge.columns and key_cols[-1] == "system_b"
    unique = [*key_cols, "order"] if by_order else key_cols
    dup = judge.duplicated(unique, keep=False).to_numpy()
    if dup.any():
        first = judge[dup].iloc[0]
        same = judge[(judge[unique] == first[unique]).all(axis=1)].index[:2]
        key = " | ".join(str(first[c]) for c in key_cols)
        key += f" in order {first['order']}" if by_order else ""
        fix = "keep one judgment per key" + (" and order" if by_order else "")
        if not by_order and key_cols[-1] == "system_b":
            fix += (
                ", or, if the rows are a comparison's two presentation orders, add an 'order' "
                "column (AB or BA): they are then combined as the runner combines them"
            )
        problem = f"{key} is judged by an earlier row too; {fix}"
        raise LabelError(
            f"judge table, rows {same[0]} and {same[1]} (index {row_index(src, same[0])!r}, "
            f"{row_index(src, same[1])!r}), columns {', '.join(unique)}: both judge {key}; {fix}",
            role="judge",
            row=int(same[1]),
            column=unique[-1],
            problem=problem,
        )
    if not by_order:
        return judge, None
    return combine_table_orders(judge, key_cols)


def _key_strata(
    judge: pd.DataFrame,
    human: pd.DataFrame,
    judge_src: pd.DataFrame,
    human_src: pd.DataFrame,
    key_cols: list[str],
    strata: tuple[str, ...],
) -> pd.DataFrame:
    frames = []
    for col in strata:
        if col in key_cols:
            continue
        if col in judge.columns:
            table, src, role = judge, judge_src, "judge"
        elif col in human.columns:
            table, src, role = human, human_src, "human"
        else:
            raise LabelError(
                f"stratum column {col!r} is in neither table; judge columns: "
                f"{', '.join(judge_src.columns)}; human columns: {', '.join(human_src.columns)}"
            )
        sub = table[[*key_cols, col]].copy()
        sub[col] = sub[col].astype(str).where(sub[col].notna(), "(missing)")
        # Point at the first row that contradicts its key's first value.
        varying = sub[col] != sub.groupby(key_cols, sort=False)[col].transform("first")
        if varying.any():
            pos = int(np.flatnonzero(varying.to_numpy())[0])
            raise cell_error(
                role,
                src,
                pos,
                col,
                "the stratum takes several values within one key; a stratum must describe the "
                "item (or pair), not the label",
            )
        frames.append(sub.drop_duplicates(key_cols).set_index(key_cols))
    if not frames:
        return pd.DataFrame(columns=key_cols)
    return pd.concat(frames, axis=1).reset_index()


# --- MT-Bench (Zheng et al. 2023): the bundled human votes and GPT-4 pair judgments --------


def load_mt_bench(
    human_path: str | Path,
    judge_path: str | Path,
    *,
    questions_path: str | Path | None = None,
    annotators: Literal["experts", "all"] = "experts",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The MT-Bench `human` and `gpt4_pair` splits as (judge table, human table).

    Items are `<question_id>-t<turn>` (the ids of the bundled items table); `winner` is mapped
    from model_a/model_b/tie, and GPT-4's `tie (inconsistent)` (its two orders disagreed)
    counts as a tie, as in the paper. The paper's Table 2 uses experts only; `author_*`
    votes are excluded unless `annotators="all"`. `turn` and `question_id` (and `category`
    when `questions_path` is given) are columns, usable as strata.
    """
    human = _mt_bench_table(pd.read_json(human_path, lines=True))
    if annotators == "experts":
        human = human[human["annotator"].str.startswith("expert_")].reset_index(drop=True)
    judge = _mt_bench_table(pd.read_json(judge_path, lines=True)).drop(columns="annotator")
    if questions_path is not None:
        questions = pd.read_json(questions_path, lines=True)[["question_id", "category"]]
        human = human.merge(questions, on="question_id", how="left")
        judge = judge.merge(questions, on="question_id", how="left")
    return judge, human


def _mt_bench_table(raw: pd.DataFrame) -> pd.DataFrame:
    winner = raw["winner"].astype(str)
    mapped = np.where(
        winner.str.contains("tie"), "tie", winner.map({"model_a": "a", "model_b": "b"})
    )
    return pd.DataFrame(
        {
            "item_id": raw["question_id"].astype(str) + "-t" + raw["turn"].astype(str),
            "system_a": raw["model_a"],
            "system_b": raw["model_b"],
            "winner": mapped,
            "annotator": raw["judge"].astype(str),
            "turn": raw["turn"].astype(int),
            "question_id": raw["question_id"].astype(int),
        }
    )
