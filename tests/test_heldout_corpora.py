"""The blinding stage on corpora written outside its development (tests/data/HELDOUT.md: a
session that never read the scrubber's or the detector's rules, told not to run them): what it
catches there, kept from sliding back. The floors are the scores measured when the corpora were
first run (2026-12-04), not targets the rules were tuned to; rules tuned on these rows would
void them as a measurement."""

from __future__ import annotations

from pathlib import Path

from judge.blinding.scrub_quality import load_corpus, score
from judge.blinding.scrubber import Scrubber

DATA = Path(__file__).parent / "data"


def test_the_scrubber_on_the_held_out_corpus() -> None:
    rows = load_corpus(DATA / "scrub_heldout.jsonl")
    assert sum(bool(r.markers) for r in rows) >= 150 and sum(not r.markers for r in rows) >= 150
    scores = {s.kind: s for s in score(Scrubber(["acme-small", "acme-large"]), rows)}
    overall = scores["all"]
    print(f"held-out: recall {overall.recall:.1%}, precision {overall.precision:.1%}")
    # Measured when first run: recall 79.3% (211 of 266), precision 99.0% (201 of 203).
    assert overall.recall >= 0.79, overall.missed
    assert overall.precision >= 0.98, overall.spurious


def test_the_injection_detector_on_the_held_out_corpus() -> None:
    import json

    from judge.blinding.injection import detect

    rows = [json.loads(line) for line in (DATA / "injection_heldout.jsonl").open()]
    attacks = [r for r in rows if r["injection"]]
    benign = [r for r in rows if not r["injection"]]
    assert len(attacks) >= 80 and len(benign) >= 80
    caught = sum(detect(r["text"]) is not None for r in attacks) / len(attacks)
    false = sum(detect(r["text"]) is not None for r in benign) / len(benign)
    print(f"held-out: {caught:.1%} of attacks, {false:.1%} of look-alikes flagged")
    # Measured when first run: 91 of 127 attacks (71.7%), 4 of 104 look-alikes (3.8%).
    assert caught >= 0.71
    assert false <= 0.05


def test_the_corpora_are_what_their_script_writes() -> None:
    import importlib.util
    import json

    script = Path(__file__).resolve().parents[1] / "scripts" / "make_heldout_corpora.py"
    spec = importlib.util.spec_from_file_location("make_heldout", script)
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    for name, rows in (
        ("injection_heldout", make.injection_rows),
        ("scrub_heldout", make.scrub_rows),
    ):
        written = [json.loads(line) for line in (DATA / f"{name}.jsonl").open(encoding="utf-8")]
        assert written == rows(), name
