"""The scrubber on the labelled corpus (tests/data/scrub_corpus.jsonl, written for this project
by scripts/make_scrub_corpus.py): recall >= 99% and precision >= 98%, and >= 90% for each kind of
disguise, language, script and frame, with systems named in-house (`acme-*`) so nothing about the
systems' names helps."""

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from judge import blind_responses, new_secret
from judge.blinding.scrub_quality import KindScore, load_corpus, score
from judge.blinding.scrubber import KINDS, RULES, Scrubber
from judge.types import Response

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "scrub_corpus.jsonl"


@pytest.fixture(scope="module")
def scores() -> dict[str, KindScore]:
    result = score(Scrubber(["acme-small", "acme-large"]), load_corpus(CORPUS))
    for s in result:
        print(
            f"{s.kind:<26} recall {s.recall:6.1%} ({s.found}/{s.markers})  "
            f"precision {s.precision:6.1%} ({s.correct}/{s.replaced})"
        )
    return {s.kind: s for s in result}


def test_the_corpus_is_what_the_script_writes_and_big_enough() -> None:
    spec = importlib.util.spec_from_file_location("make", ROOT / "scripts" / "make_scrub_corpus.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    written = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert written == make._rows()
    with_markers = [r for r in written if r["markers"]]
    assert len(with_markers) >= 300
    assert len(written) - len(with_markers) >= 300
    kinds = Counter(r["kind"] for r in with_markers)
    for family in ("plain", "signature", "self_introduction", "multilingual_", "disguised_"):
        assert any(k.startswith(family) for k in kinds), family
    for kind in ("disguised_digits", "disguised_dotted", "cjk_zh", "cjk_ja", "cjk_ko"):
        assert kinds[kind] >= 15, kind
    for language in ("en", "fr", "de", "es", "pt", "it", "zh", "ja", "ko"):
        assert kinds[f"frame_{language}"] >= 9, language
    negatives = Counter(r["kind"] for r in written if not r["markers"])
    for kind in ("lookalike_digits", "lookalike_cjk", "lookalike_frames"):
        assert negatives[kind] >= 45, kind
    for row in written:
        for start, end in row["markers"]:
            assert 0 <= start < end <= len(row["text"])


def test_recall_and_precision_on_the_corpus(scores: dict[str, KindScore]) -> None:
    overall = scores["all"]
    assert overall.recall >= 0.99, overall.missed
    assert overall.precision >= 0.98, overall.spurious
    # No kind of disguise, language, script or frame is left behind.
    for kind, s in scores.items():
        if kind.startswith(("disguised_", "multilingual_", "cjk_", "frame_")):
            assert s.recall >= 0.9, (kind, s.missed)
            assert s.precision >= 0.9, (kind, s.spurious)
    # Ordinary text that looks like a name is left alone (the known hard cases apart).
    for kind, s in scores.items():
        if kind.startswith("lookalike") and kind != "lookalike_hard":
            assert len(s.spurious) <= 0.02 * s.rows, (kind, s.spurious)


def test_the_report_counts_markers_by_kind() -> None:
    rows = [r for r in load_corpus(CORPUS) if r.markers][:200]
    responses = [Response(item_id=r.id, system="acme-small", output=r.text) for r in rows]
    scrubber = Scrubber(["acme-small"])
    _, _, report = blind_responses(responses, secret=new_secret(), seed=0, scrubber=scrubber)
    assert list(report.by_kind) == list(KINDS)
    assert sum(report.by_kind.values()) == report.total
    expected: Counter[str] = Counter()
    for r in rows:
        expected.update(m.kind for m in scrubber.scrub_marks(r.text)[1])
    assert report.by_kind == {k: expected[k] for k in KINDS}
    disguised_rows = [r for r in rows if r.kind.startswith("disguised_")]
    assert report.by_kind["disguised"] >= len(disguised_rows) * 0.9
    assert report.by_kind["signature"] > 0 and report.by_kind["self_introduction"] > 0


def test_the_report_counts_frames() -> None:
    rows = [r for r in load_corpus(CORPUS) if r.kind.startswith("frame_")]
    responses = [Response(item_id=r.id, system="acme-small", output=r.text) for r in rows]
    scrubber = Scrubber(["acme-small"])
    _, _, report = blind_responses(responses, secret=new_secret(), seed=0, scrubber=scrubber)
    assert list(report.by_rule) == list(RULES)
    frames = sum(scrubber.scrub(r.text)[1]["frame"] for r in rows)
    assert report.by_rule["frame"] == report.by_system_rule["acme-small"]["frame"] == frames
    # Nearly every frame row holds one frame, and a frame counts once whatever names it holds.
    assert len(rows) * 0.9 <= frames <= len(rows)
    assert report.by_kind["self_introduction"] >= frames
