"""Searching near the names only (judge.blinding.triggers) finds what searching the whole text
finds; so does trying frames only at their subjects near their nouns.

The reference is the same scrubber with anchors switched off (`Triggers.anchors` returning None
makes every rule search the whole text, as before the windows): outputs and marks must agree on
the labelled corpus and on texts built to sit at the windows' edges."""

import re
from pathlib import Path

import pytest

from judge import Scrubber
from judge.blinding.scrub_quality import load_corpus
from judge.blinding.triggers import Reach, Triggers, at, near, starts_before, windows

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "scrub_corpus.jsonl"
FILLER = "The answer depends on the data. " * 12

EDGES = [
    # Leads far from the name, across blank lines and long whitespace runs.
    "I am" + " " * 400 + "Claude.",
    "I am\n\n\n\n\n\n\n\nClaude, a model." + "\n" * 300,
    "I am a large language model that was trained and fine-tuned by the team of researchers"
    " at Anthropic.",
    FILLER + "Best regards,\nClaude",
    FILLER + "\n-- Sent from GPT-3.5\n" + FILLER,
    # Names close together, so windows merge; a name right at the end and the start.
    "Claude, ChatGPT and Bard" + FILLER + "Gemini Pro vs GPT-4" + FILLER + "Llama 2",
    "GPT-4" + "\n" * 200 + "turbo",
    "Meta's Llama" + " " * 170 + "2 is out.",
    # The placeholder already in the text, and a lower-casing that moves characters ("İ").
    "[redacted] said: I am Claude. [redacted]",
    "İİİ I am Claude, made by Anthropic. İ",
    # Self-introductions in other scripts and languages.
    FILLER + "我是由谷歌开发的Gemini。" + FILLER,
    "ich bin ein Modell, das von Google entwickelt wurde. " + FILLER,
    "As an AI language model developed by OpenAI, I can't." + FILLER * 3,
    "I'm helpful, harmless, and honest." + FILLER,
    # A maker statement's end far from the name, and its other forms.
    FILLER + "I am a model trained by" + " " * 200 + "the team at\n\n\n   OpenAI.",
    FILLER + "Our parent company is Google. My creators at Meta (LLaMA) say hi.",
    FILLER + "Je suis un modèle entraîné par Mistral AI. Ich bin von Google entwickelt.",
    # Frames, with and without a name: the subject far before the noun (whitespace, four long
    # words, a German maker before its verb), the noun far before the end, frames side by side.
    FILLER + "I am" + " " * 300 + "a large language model trained by a small research lab.",
    "As an extraordinarily-helpful, conscientiously-designed, multilingually-capable,"
    " thoroughly-evaluated AI model developed by [redacted], I can help." + FILLER,
    "Ich bin ein von einem kleinen aber ausgesprochen ehrgeizigen Team"
    " entwickeltes außerordentlich leistungsfähiges Sprachmodell." + FILLER,
    FILLER + "I'm an AI assistant built by the researchers at the Acme Labs of Springfield"
    " Massachusetts Institute. I am a model. As a model trained by OpenAI, I",
    "我是一个由" + "某" * 29 + "开发的大型语言模型。" + FILLER + "作为AI助手，由[redacted]训练的。",
    FILLER
    + "\n[redacted]が開発したAIアシスタントです。"
    + "私は、ある研究チームによって開発された言語モデルです。",
    "저는 한 연구팀에 의해 개발된 인공지능입니다. " * 3 + FILLER,
    "model " * 80 + "I am " * 40 + "an AI developed by Anthropic." + " as AI" * 60,
]


@pytest.fixture(scope="module")
def scrubbers() -> list[Scrubber]:
    return [
        Scrubber(["acme-small", "acme-large"]),
        Scrubber(["gpt-4", "claude-v1", "vicuna-13b"], extra_markers=["Acme Bot"]),
        Scrubber(["acme"], scrub_ambiguous=["claude", "meta"], placeholder="<X>"),
    ]


def _whole_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Triggers, "anchors", lambda self, text, literals: None)


def test_windows_find_what_the_whole_text_search_finds(
    scrubbers: list[Scrubber], monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [row.text for row in load_corpus(CORPUS)] + EDGES
    windowed = [[s.scrub_marks(t) for t in texts] for s in scrubbers]
    _whole_text(monkeypatch)
    whole = [[s.scrub_marks(t) for t in texts] for s in scrubbers]
    assert windowed == whole
    assert sum(bool(marks) for _, marks in windowed[0]) > 300


def test_near_is_finditer_for_anchored_matches() -> None:
    pattern = re.compile(r"\b(?:I am\s+)?Claude(?=\s*(?:\n|\Z))")
    text = "x " * 500 + "I am\n\n Claude\n" + "y " * 500 + "Claude"
    names = [m.span() for m in re.finditer("Claude", text)]
    spans = windows(text, names, Reach(before=8, after=4))
    found = [m.span() for m in near(pattern, text, spans)]
    assert found == [m.span() for m in pattern.finditer(text)]
    assert len(found) == 2


def test_starts_before_and_at_are_finditer_for_subject_anchored_matches() -> None:
    # Matches start at a subject ("I am") and reach a noun ("model") at most 12 letters on.
    pattern = re.compile(r"I am(?:\s+\w+){0,2}?\s+model")
    text = "x " * 300 + "I am a   model; I am model" + " y" * 300 + "I am not a b c model"
    subjects = [m.start() for m in re.finditer("I am", text)]
    nouns = [m.start() for m in re.finditer("model", text)]
    starts = starts_before(text, subjects, nouns, 12)
    found = [m.span() for m in at(pattern, text, starts)]
    assert found == [m.span() for m in pattern.finditer(text)]
    assert len(found) == 2
