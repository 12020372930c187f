"""From the labels given so far to the human labels a run is calibrated against.

The labelled sample is the longest run of the queue, in sampling order, whose pairs are all
settled: labelled at least once, skipped by `max_skips` annotators or by every annotator so far
(a pair nobody would label), or shown to an annotator and not answered yet (it joins the sample
when answered). Skipped and waiting pairs are non-response, counted, never silently dropped; a
waiting pair is missing because of who is looking at it, not because of what it holds. The
sample's threshold is the key of the first pair not yet settled, so each labelled pair's
inclusion probability is min(1, t w) (`calibration.active`). Labels on pairs past that point
(another annotator labelled ahead) are kept and join the sample as soon as the pairs before
them are settled.

`publish` writes the sample as the run's human labels (`RunDir.keep_labels`, through
`relabel_run`, which analyses the run with them): item, the pair's systems (from the blinding
key), winner, annotator and, for an active task, each label's inclusion probability.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from judge.labelling.label_store import LabelRow, LabelStore, open_labelling
from judge.labelling.task import task_spec
from judge.store.rundir import RunDir


@dataclass(frozen=True)
class SampleState:
    pool: int
    """Pairs in the task's queue."""
    settled: int
    """Pairs of the sample: the settled run of the queue, in sampling order."""
    labelled: int
    """Pairs of the sample with at least one label."""
    labels: int
    """Standing labels (not undone, not skips) on the sample's pairs."""
    skipped: int
    """Pairs of the sample that every annotator asked skipped (no label: non-response)."""
    waiting: int
    """Pairs of the sample on an annotator's screen, unanswered: left out until answered."""
    ahead: int
    """Labelled pairs past the sample (they join it when the pairs before them are settled)."""
    threshold: float | None
    """The first unsettled pair's key; once every queued pair is settled, the key of the first
    pair the task's size left out; None when the queue holds every pair and all are settled
    (each inclusion probability is then 1)."""
    annotators: int


@dataclass(frozen=True)
class SampleLabel:
    item_id: str
    pair_id: str
    annotator: str
    winner: str
    """Slot of the pair: a, b or tie."""
    inclusion: float


def sample(store: LabelStore, max_skips: int) -> tuple[SampleState, list[SampleLabel]]:
    """The sample as it stands, and its labels with their inclusion probabilities."""
    standing: dict[str, list[LabelRow]] = defaultdict(list)
    skips: dict[str, int] = defaultdict(int)
    for label in store.labels(standing=True):
        if label.choice == "skip":
            skips[label.pair_id] += 1
        else:
            standing[label.pair_id].append(label)
    # Skipped by every annotator so far counts as settled too (with one annotator, one skip):
    # a later annotator is offered such a pair first, and the sample waits for its answer.
    enough = max(1, min(max_skips, len(store.annotators())))
    showing = store.in_progress()
    threshold: float | None = None
    settled = labelled = skipped = waiting = 0
    inside: list[tuple[str, str, float]] = []  # pair, item, weight
    for row in store.queue():
        if row.pair_id in standing:
            labelled += 1
        elif skips[row.pair_id] >= enough:
            skipped += 1
        elif row.pair_id in showing:
            waiting += 1
        else:
            threshold = row.priority
            break
        settled += 1
        inside.append((row.pair_id, row.item_id, row.weight))
    if threshold is None:  # every queued pair settled: the sample is the whole queue
        threshold = store.cut()
    out = []
    for pair_id, item_id, weight in inside:
        probability = 1.0 if threshold is None else min(1.0, threshold * weight)
        out.extend(
            SampleLabel(item_id, pair_id, label.annotator, label.winner or "", probability)
            for label in standing.get(pair_id, [])
        )
    task = store.task()
    state = SampleState(
        pool=task[2] if task else 0,
        settled=settled,
        labelled=labelled,
        labels=len(out),
        skipped=skipped,
        waiting=waiting,
        ahead=len(standing) - labelled,
        threshold=threshold,
        annotators=len(store.annotators()),
    )
    return state, out


def labels_table(rundir: RunDir, labels: list[SampleLabel], *, with_inclusion: bool) -> Path:
    """The sample as a labels CSV in the run dir (a temporary name: `publish` keeps it)."""
    slots = rundir.read_key().pairs
    fd, name = tempfile.mkstemp(prefix="labelling-", suffix=".csv", dir=rundir.path)
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        head = ["item_id", "system_a", "system_b", "winner", "annotator"]
        writer.writerow([*head, "inclusion"] if with_inclusion else head)
        for label in labels:
            a, b = slots[label.pair_id]
            row = [label.item_id, a, b, label.winner, label.annotator]
            writer.writerow([*row, repr(label.inclusion)] if with_inclusion else row)
    return Path(name)


def publish(rundir: RunDir) -> SampleState:
    """Make the task's sample the run's human labels and analyse the run with them (summary,
    report). With no label yet, the run has no human labels. Raises `RunDirBusy` when another
    process holds the run."""
    from judge.run import finish_run, relabel_run

    config = rundir.stored_config()
    with open_labelling(rundir) as store:
        spec = task_spec(store)
        state, labels = sample(store, spec.max_skips)
    if not labels:
        kept = rundir.human_labels()
        if kept is not None:
            kept.unlink()
            finish_run(config, rundir)
        return state
    table = labels_table(rundir, labels, with_inclusion=spec.mode == "active")
    try:
        relabel_run(config, rundir, table, move=True)
    finally:
        table.unlink(missing_ok=True)
    return state
