"""Leak test over every judge-visible artifact of the demo run (issue 2).

The check is independent of the scrubber: its own plain regexes for the six MT-Bench systems'
names and their vendors' and families' aliases, and a hand-audited list of the benign contexts
in which an ambiguous alias ("Claude Monet", "palm trees", "<meta charset") may remain. Text the
*user* wrote (the item's prompt and reference, user turns of a conversation) is the same for
every system and reveals nothing about who answered: it is cut out before scanning, and
question 98 turn 2 ("What do you think about GPT-4 as a replacement of your JAVIS?") is why.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from judge import load_config
from judge.run import prepare_run
from tests.helpers import REPO

SYSTEMS = ["alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b", "vicuna-13b-v1.2"]
SEP = r"[\s\-_.]*"


def _name_pattern(name: str) -> str:
    parts = [p for p in re.split(r"[\s\-_.]+", name) if p]
    return r"(?<![a-z0-9])" + SEP.join(map(re.escape, parts)) + r"(?![a-z0-9])"


# Must never appear in response-derived text, in any context.
FORBIDDEN = re.compile(
    "|".join(
        [_name_pattern(s) for s in SYSTEMS]
        + [
            r"\bopen[\s\-]?ai\b",
            r"\bchat[\s\-]?gpt\b",
            r"\bgpt[\s\-]?\d",
            r"\blmsys\b",
            r"\bllama[\s\-]?\d",
            r"\bclaude[\s\-]?v?\d",
            r"\bvicuna[\s\-]?\d",
            r"\balpaca[\s\-]?\d",
        ]
    ),
    re.IGNORECASE,
)
# Ordinary words that are also aliases (families: stanford, anthropic, meta, lmsys, openai).
AMBIGUOUS = re.compile(
    r"\b(anthropic|claude|llama|alpaca|vicuna|meta|stanford|facebook|google)\b", re.IGNORECASE
)
# Hand-audited: every remaining ambiguous mention in the demo data, in its context.
ALLOWED_CONTEXTS = [
    "by Claude Monet",
    "<meta charset",
    "<meta name",
    "keynote at Stanford",
    "Google Pixel",
    "GOOGLE PIXEL",
    "investor in Facebook",
    "like Facebook",
]


# Every match of FORBIDDEN or AMBIGUOUS contains one of these (case-folded): a text holding none
# has no violation, and the regexes (slow: 20 MB of prompts) run only on the few that do.
_NEEDLES = (
    *("alpaca", "claude", "gpt", "llama", "vicuna", "lmsys", "open", "anthropic", "meta"),
    *("stanford", "facebook", "google"),
)


def _violations(text: str) -> list[str]:
    folded = text.casefold()
    if not any(needle in folded for needle in _NEEDLES):
        return []
    found = [m.group(0) for m in FORBIDDEN.finditer(text)]
    for m in AMBIGUOUS.finditer(text):
        window = text[max(0, m.start() - 20) : m.end() + 20]
        if not any(ok in window for ok in ALLOWED_CONTEXTS):
            found.append(window)
    return found


def _prepare(tmp_path: Path, *, scrub: bool) -> Path:
    config = load_config(REPO / "configs" / "demo.yaml")
    blinding = config.blinding.model_copy(update={"scrub": scrub})
    run_dir = tmp_path / ("scrubbed" if scrub else "raw")
    prepare_run(config.model_copy(update={"blinding": blinding}), run_dir)
    return run_dir


def _user_authored(run_dir: Path) -> dict[str, list[str]]:
    """item_id -> every piece of text the user wrote for it (identical for every system)."""
    texts: dict[str, set[str]] = {}
    for line in (REPO / "data" / "mt_bench" / "items.jsonl").open(encoding="utf-8"):
        item = json.loads(line)
        texts.setdefault(item["item_id"], set()).update([item["prompt"], item["reference"] or ""])
    for line in (run_dir / "blinded.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        texts[row["item_id"]].update(m["content"] for m in row["context"] if m["role"] == "user")
    # Longest first so a text inside a longer one is cut as part of the longer.
    return {
        item: sorted((t for t in found if t.strip()), key=len, reverse=True)
        for item, found in texts.items()
    }


def _response_derived_texts(run_dir: Path) -> dict[str, list[str]]:
    """The judge-visible artifacts, with the user's own words cut out of rendered prompts."""
    user_texts = _user_authored(run_dir)
    blinded = []
    for line in (run_dir / "blinded.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        assert set(row) == {"blind_id", "item_id", "output", "context"}
        blinded.append(row["output"])
        blinded += [m["content"] for m in row["context"] if m["role"] != "user"]
    prompts = []
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        for item_id, messages in db.execute("SELECT item_id, messages FROM judge_requests"):
            text = "\n".join(m["content"] for m in json.loads(messages))
            for user_text in user_texts[item_id]:
                text = text.replace(user_text, " ")
            prompts.append(text)
    return {
        "blinded.jsonl": blinded,
        "pairs.jsonl": [(run_dir / "pairs.jsonl").read_text(encoding="utf-8")],
        "rendered prompts": prompts,
    }


@pytest.fixture(scope="module")
def demo_runs(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The session's demo run (scrubbed, judged) and the demo prepared without scrubbing."""
    return demo, _prepare(tmp_path_factory.mktemp("demo"), scrub=False)


def test_no_identity_marker_in_any_judge_visible_artifact(demo_runs: tuple[Path, Path]) -> None:
    run_dir, _ = demo_runs
    artifacts = _response_derived_texts(run_dir)
    assert (
        len(artifacts["blinded.jsonl"]) == 930 + 465
    )  # outputs + turn-1 answers carried as context
    assert len(artifacts["rendered prompts"]) == 4508
    for name, texts in artifacts.items():
        leaks = [v for text in texts for v in _violations(text)]
        assert leaks == [], f"{name}: {leaks[:5]}"
    report = json.loads((run_dir / "scrub_report.json").read_text())
    print(f"\nscrubbed: {report['total']} markers; by rule {report['by_rule']}")
    assert report["total"] > 0
    # ...while the report, written for the owner, names them.
    page = (run_dir / "report.md").read_text(encoding="utf-8")
    assert all(system in page for system in SYSTEMS)


def test_the_prefilter_misses_no_match() -> None:
    # `_violations` skips texts holding no needle: every pattern's match must hold one.
    samples = [
        "Alpaca-13B",
        "CLAUDE v1",
        "Chat GPT",
        "gpt4",
        "LLaMA 2",
        "Vicuna-13b-v1.2",
        "open-ai",
        "OpenAI",
        "LMSYS",
        "Anthropic",
        "Meta",
        "Stanford",
        "Facebook",
        "Google",
        "llama_13b",
        "gpt-3.5-turbo",
    ]
    for text in samples:
        matches = [m.group(0) for m in FORBIDDEN.finditer(text)]
        matches += [m.group(0) for m in AMBIGUOUS.finditer(text)]
        assert matches, text
        for match in matches:
            assert any(needle in match.casefold() for needle in _NEEDLES), match
        assert _violations(text), text


def test_the_check_finds_leaks_when_scrubbing_is_off(demo_runs: tuple[Path, Path]) -> None:
    # The same check on the unscrubbed run must fail: it is not vacuous.
    _, raw_dir = demo_runs
    artifacts = _response_derived_texts(raw_dir)
    leaks = [v for text in artifacts["blinded.jsonl"] for v in _violations(text)]
    assert any(re.search("anthropic", v, re.I) for v in leaks)
    assert any(re.search("gpt", v, re.I) for v in leaks)
    prompt_leaks = [v for text in artifacts["rendered prompts"] for v in _violations(text)]
    assert prompt_leaks


def test_key_is_the_only_file_naming_systems(demo_runs: tuple[Path, Path]) -> None:
    run_dir, _ = demo_runs
    key = json.loads((run_dir / "blinding_key.json").read_text())
    assert sorted(set(key["systems"].values())) == SYSTEMS
    for name in ("blinded.jsonl", "pairs.jsonl"):
        text = (run_dir / name).read_text(encoding="utf-8")
        assert not any(s in text for s in SYSTEMS), name
        # Opaque ids do not embed a system name either.
    assert not any(s in bid for bid in key["systems"] for s in SYSTEMS)
