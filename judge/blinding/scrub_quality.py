"""Recall and precision of a scrubber on a labelled corpus (rows of text and marker spans).

A labelled marker is *found* when the scrubber's replaced spans cover every letter and digit of
it (a marker half replaced, "[redacted]-4", still names its family). A replaced span is
*correct* when it overlaps a labelled marker. Recall is found / labelled markers, precision is
correct / replaced spans, per row kind and overall. `tests/data/scrub_corpus.jsonl` is the
corpus written for this project (`scripts/make_scrub_corpus.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from judge.blinding.scrubber import Scrubber


@dataclass(frozen=True)
class CorpusRow:
    id: str
    kind: str
    text: str
    markers: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class KindScore:
    """Counts and rates for one row kind (or "all")."""

    kind: str
    rows: int
    markers: int
    found: int
    replaced: int
    correct: int
    missed: tuple[str, ...]
    """Ids of rows with a labelled marker not found."""
    spurious: tuple[str, ...]
    """Ids of rows with a replaced span that overlaps no labelled marker."""

    @property
    def recall(self) -> float:
        return self.found / self.markers if self.markers else 1.0

    @property
    def precision(self) -> float:
        return self.correct / self.replaced if self.replaced else 1.0


def load_corpus(path: Path) -> list[CorpusRow]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            raw = json.loads(line)
            spans = tuple((int(a), int(b)) for a, b in raw["markers"])
            rows.append(CorpusRow(raw["id"], raw["kind"], raw["text"], spans))
    return rows


def score(scrubber: Scrubber, rows: Iterable[CorpusRow]) -> list[KindScore]:
    """One score per kind, in first-seen order, then "all"."""
    tallies: dict[str, list[int]] = {}
    missed: dict[str, list[str]] = {}
    spurious: dict[str, list[str]] = {}
    for row in rows:
        _, marks = scrubber.scrub_marks(row.text)
        covered = set()
        for mark in marks:
            covered.update(range(mark.start, mark.end))
        found = sum(
            all(i in covered for i in range(a, b) if row.text[i].isalnum()) for a, b in row.markers
        )
        correct = sum(any(m.start < b and a < m.end for a, b in row.markers) for m in marks)
        for kind in (row.kind, "all"):
            t = tallies.setdefault(kind, [0, 0, 0, 0, 0])
            t[0] += 1
            t[1] += len(row.markers)
            t[2] += found
            t[3] += len(marks)
            t[4] += correct
            if found < len(row.markers):
                missed.setdefault(kind, []).append(row.id)
            if correct < len(marks):
                spurious.setdefault(kind, []).append(row.id)
    all_last = sorted(tallies, key=lambda k: k == "all")
    return [
        KindScore(
            k,
            *tallies[k],
            missed=tuple(missed.get(k, ())),
            spurious=tuple(spurious.get(k, ())),
        )
        for k in all_last
    ]
