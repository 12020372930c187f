"""Creating a labelling task from a judged run: which pairs humans label, in what order.

The pool is every judged pair of the run (optionally only items in some strata). Its order is
a sequential Poisson sampling order (`calibration.active`): with `mode: active` each pair's
weight comes from the judge's uncertainty on it (its votes over presentation orders and panel
judges disagreeing, or saying tie), mixed with a uniform share; with `mode: uniform` every
weight is 1, a simple random sample in random order. `size` cuts the order: the task then
labels at most that many pairs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from judge.errors import ConfigError, DataError
from judge.labelling.label_store import LabelStore, QueueRow, open_labelling
from judge.store.rundir import RunDir
from judge.types import PANEL

MAX_REASON = 300
"""Characters kept of an annotator's one-line reason."""


class TaskSpec(BaseModel):
    """What to label. Strict: an unknown key is an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["active", "uniform"] = "active"
    """active: pairs the judge is unsure of come first, with known probabilities (the
    corrected estimates weight by them); uniform: a simple random sample."""
    size: int | None = Field(default=None, ge=1, le=10_000_000)
    """Pairs to label at most (None: the whole pool, labelling stops when the owner does)."""
    overlap: int = Field(default=1, ge=1, le=10)
    """Annotators per pair. 2 or more gives the human ceiling and the trust gate's test."""
    where: dict[str, list[str]] = Field(default_factory=dict)
    """Only items whose stratum is one of these values, e.g. {"category": ["writing"]}."""
    uniform_share: float = Field(default=0.2, gt=0.0, le=1.0)
    """active: share of the sampling weight spread evenly, so every pair can be drawn."""
    floor: float = Field(default=0.05, ge=0.0, le=1.0)
    """active: expected squared error assumed where the judge's votes all agree."""
    max_skips: int = Field(default=2, ge=1, le=10)
    """A pair skipped by this many annotators is given to nobody else."""
    seed: int = Field(default=0, ge=0, le=2**32 - 1)
    instructions: str | None = Field(default=None, max_length=20_000)
    """What annotators read above each pair (default: the rubric's question and criteria)."""


@dataclass(frozen=True)
class Candidate:
    output: str
    context: list[dict[str, Any]]
    """Earlier turns of the conversation this response continues (chat messages)."""


@dataclass(frozen=True)
class PairContent:
    """What an annotator sees of one pair: no system name, no judge verdict."""

    item_id: str
    prompt: str | list[dict[str, Any]]
    reference: str | None
    slot_a: Candidate
    slot_b: Candidate


def human_instructions(rundir: RunDir, spec: TaskSpec) -> str:
    """The task's instructions: the owner's, else the rubric's question and criteria (the
    judge's rubric without its reply format)."""
    if spec.instructions:
        return spec.instructions
    from judge.rubric.rubrics import load_rubric

    config = rundir.stored_config()
    rubric = load_rubric(config.rubric)
    lines = [rubric.description, ""]
    lines += [f"- {c.text}" for c in rubric.criteria]
    lines += [
        "",
        "The order of the two responses is random. Judge what they say, not their length.",
    ]
    return "\n".join(lines).strip()


def build_queue(rundir: RunDir, spec: TaskSpec) -> tuple[list[QueueRow], float | None]:
    """The task's queue: the run's judged pairs (in `where`), in sampling order, cut at
    `size`; and the key of the first pair the cut left out (None: no cut), which the inclusion
    probabilities need once every queued pair is labelled. Raises `DataError` for a run
    without pairwise judgments or an empty pool."""
    from calibration.active import sampling_keys, sampling_weights, vote_uncertainty

    if not rundir.has_judgments():
        raise DataError(
            "the run has no judgments yet: label it once it has finished", path=str(rundir.path)
        )
    strata = rundir.item_strata()
    _check_where(spec.where, strata)
    key = rundir.read_key()
    pair_ids, items, votes = [], [], []
    for pair_id, item_id, unit in _pair_votes(rundir, key.pairs):
        if spec.where and not _matches(strata.get(item_id, {}), spec.where):
            continue
        pair_ids.append(pair_id)
        items.append(item_id)
        votes.append(unit)
    if not pair_ids:
        where = f" in {json.dumps(spec.where)}" if spec.where else ""
        raise DataError(f"no judged pair{where} to label", path=str(rundir.path))
    if spec.mode == "active":
        weights = sampling_weights(
            vote_uncertainty(votes, floor=spec.floor), uniform=spec.uniform_share
        )
    else:
        weights = np.ones(len(pair_ids))
    keys = sampling_keys(weights, _uniforms(spec.seed, pair_ids, "key"))
    flips = (_uniforms(spec.seed, pair_ids, "flip") < 0.5).astype(int)
    order = np.argsort(keys, kind="stable")
    cut = None
    if spec.size is not None and spec.size < len(order):
        cut = float(keys[order[spec.size]])
        order = order[: spec.size]
    rows = [
        QueueRow(pair_ids[i], items[i], rank, float(weights[i]), float(keys[i]), int(flips[i]))
        for rank, i in enumerate(order)
    ]
    return rows, cut


def _uniforms(seed: int, pair_ids: list[str], purpose: str) -> np.ndarray:
    """Uniform draws in [0, 1) fixed per pair (a hash of the seed and the pair id), so that the
    sampling order does not depend on the order the run's files list the pairs in."""
    import hashlib

    values = np.empty(len(pair_ids))
    for i, pair_id in enumerate(pair_ids):
        digest = hashlib.blake2b(f"{seed}:{purpose}:{pair_id}".encode(), digest_size=8).digest()
        values[i] = (int.from_bytes(digest, "big") >> 11) / float(1 << 53)
    return values


def _pair_votes(
    rundir: RunDir, slots: dict[str, tuple[str, str]]
) -> Iterator[tuple[str, str, list[float]]]:
    """Per judged pair (in `judgments.jsonl` order): every judge's verdict in each order, as
    slot A's score (win 1, tie 1/2, loss 0). The panel row is not a vote of its own."""
    from calibration.label_tables import OUTCOME_SCORE

    found: dict[str, tuple[str, list[float]]] = {}
    with rundir.judgments_jsonl.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            row = json.loads(line)
            pair_id = row.get("pair_id")
            if pair_id is None:  # an absolute run: one response per row
                raise DataError(
                    "labelling tasks are for pairwise runs; this run scores single responses",
                    path=str(rundir.judgments_jsonl),
                    line=number,
                )
            entry = found.setdefault(pair_id, (row["item_id"], []))
            if row.get("judge") == PANEL:
                continue
            a, b = slots.get(pair_id, (row["system_a"], row["system_b"]))
            for order in ("ab", "ba"):
                verdict = row.get(f"verdict_{order}")
                if verdict is None:
                    continue
                slot = "a" if verdict == a else "b" if verdict == b else "tie"
                entry[1].append(OUTCOME_SCORE[slot])
    for pair_id, (item_id, unit) in found.items():
        yield pair_id, item_id, unit


def _check_where(where: dict[str, list[str]], strata: dict[str, dict[str, Any]]) -> None:
    columns = {c for values in strata.values() for c in values}
    for column, wanted in where.items():
        if column not in columns:
            raise ConfigError(
                f"where: {column!r} is not an item stratum; items have: "
                f"{', '.join(sorted(columns)) or '(none)'}"
            )
        if not wanted:
            raise ConfigError(f"where: {column!r} lists no value")


def _matches(values: dict[str, Any], where: dict[str, list[str]]) -> bool:
    return all(str(values.get(c)) in set(map(str, wanted)) for c, wanted in where.items())


def pair_content(rundir: RunDir, pair_id: str) -> PairContent:
    """The blinded texts of one pair, read from the run store (opaque ids only)."""
    from judge.sqlite import connect

    conn = connect(rundir.store_file)
    try:
        row = conn.execute(
            "SELECT p.item_id, i.prompt, i.reference, a.output, a.context, b.output, b.context "
            "FROM pairs p JOIN items i USING (item_id) "
            "JOIN blinded_responses a ON a.blind_id = p.slot_a "
            "JOIN blinded_responses b ON b.blind_id = p.slot_b WHERE p.pair_id = ?",
            (pair_id,),
        ).fetchone()
    finally:
        conn.close()
    if row is None:
        raise DataError(f"pair {pair_id} is not in the run store", path=str(rundir.store_file))
    item_id, prompt, reference, out_a, ctx_a, out_b, ctx_b = row
    return PairContent(
        item_id=item_id,
        prompt=json.loads(prompt),
        reference=reference,
        slot_a=Candidate(out_a, json.loads(ctx_a)),
        slot_b=Candidate(out_b, json.loads(ctx_b)),
    )


def create_task(rundir: RunDir, spec: TaskSpec) -> str:
    """Create the run's labelling task (one per run); returns its id."""
    queue, cut = build_queue(rundir, spec)
    with open_labelling(rundir) as store:
        try:
            return store.create_task(spec.model_dump(mode="json"), queue, cut)
        except FileExistsError:
            raise ConfigError(
                "this run has a labelling task already (one per run: its labels are the "
                "run's human labels)"
            ) from None


def task_spec(store: LabelStore) -> TaskSpec:
    """The spec of the store's task; `LookupError` when the run has none."""
    task = store.task()
    if task is None:
        raise LookupError("the run has no labelling task")
    return TaskSpec.model_validate(task[1])
