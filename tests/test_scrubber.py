"""The scrubber's rules (system names, family aliases and vendors, self-identification,
signatures, extra markers), the bundled MT-Bench answers, the lexicon and the trigger prefilter."""

import gzip
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from judge.blinding.lexicon import LEXICON, Term
from judge.blinding.scrubber import DEFAULT_PLACEHOLDER, Scrubber
from judge.errors import ConfigError

R = DEFAULT_PLACEHOLDER
MT_BENCH = Path(__file__).resolve().parents[1] / "data" / "mt_bench" / "judged_answers.jsonl.gz"
MT_SYSTEMS = ["alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b", "vicuna-13b-v1.2"]


@pytest.fixture(scope="module")
def mt() -> Scrubber:
    """Scrubber for the six MT-Bench systems (stanford, anthropic, openai, meta, lmsys)."""
    return Scrubber(MT_SYSTEMS)


def scrubbed(scrubber: Scrubber, text: str) -> tuple[str, dict[str, int]]:
    out, counts = scrubber.scrub(text)
    again, more = scrubber.scrub(out)
    assert (again, more) == (out, Counter()), "scrubbing twice changed something more"
    return out, dict(counts)


# --- rule 1: system names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Compared with GPT 3.5 Turbo, it is slower.", f"Compared with {R}, it is slower."),
        ("gpt3.5-turbo and gpt-35-turbo", f"{R} and {R}"),
        ("Vicuna-13B wrote this.", f"{R} wrote this."),
        ("vicuna-13b-v1.2 and Vicuna 13B v1.3", f"{R} and {R}"),
        ("Ask Claude v1.", f"Ask {R}."),
        ("GPT-4's answer; GPT4 too.", f"{R}'s answer; {R} too."),
        ("LLaMA-13B and alpaca-13b", f"{R} and {R}"),
    ],
)
def test_system_names_are_always_scrubbed(mt: Scrubber, text: str, expected: str) -> None:
    out, counts = scrubbed(mt, text)
    assert out == expected
    assert set(counts) == {"system_name"}


def test_system_names_do_not_match_inside_longer_names(mt: Scrubber) -> None:
    # "gpt-4" is a system, "GPT-4o" is another OpenAI model: caught by the family rule whole.
    out, counts = scrubbed(mt, "GPT-4o and gpt-4-turbo")
    assert out == f"{R} and {R}"
    assert counts == {"family_alias": 1, "system_name": 1}
    # A system without a lexicon family: its full name only, case- and separator-robust.
    acme = Scrubber(["acme-bot"])
    assert scrubbed(acme, "AcmeBot, Acme Bot, acme_bot; acmebots and acme.")[0] == (
        f"{R}, {R}, {R}; acmebots and acme."
    )


# --- rule 2: family aliases and vendors ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "counts"),
    [
        ("OpenAI's models", f"{R}'s models", {"vendor": 1}),
        ("Open AI, open-ai and OPENAI.", f"{R}, {R} and {R}.", {"vendor": 3}),
        ("ChatGPT-like apps", f"{R}-like apps", {"family_alias": 1}),
        ("GPT-4o, GPT-3, InstructGPT", f"{R}, {R}, {R}", {"family_alias": 3}),
        ("Anthropic said", f"{R} said", {"vendor": 1}),
        ("LMSYS released FastChat.", f"{R} released {R}.", {"vendor": 1, "family_alias": 1}),
        # ambiguous words in a model context
        ("Llama 2 and LLaMA-7B", f"{R} and {R}", {"family_alias": 2}),
        ("Claude-v2, Claude 2 and Claude Instant", f"{R}, {R} and {R}", {"family_alias": 3}),
        ("Vicuna-7B is small.", f"{R} is small.", {"family_alias": 1}),
        ("Meta AI built it.", f"{R} built it.", {"vendor": 1}),
        ("Meta's Llama", f"{R}'s {R}", {"vendor": 1, "family_alias": 1}),
        ("Stanford Alpaca", f"{R} {R}", {"vendor": 1, "family_alias": 1}),
        ("the chatbot Claude", f"the chatbot {R}", {"family_alias": 1}),
        ("Claude's model card", f"{R}'s model card", {"family_alias": 1}),
        ("ChatGPT, Claude and Alpaca", f"{R}, {R} and {R}", {"family_alias": 3}),
        ("meta-llama/llama-2-7b", f"{R}-{R}/{R}", {"vendor": 1, "family_alias": 2}),
        ("a GPT model", f"a {R} model", {"family_alias": 1}),
        ("GPT-4 and Claude Monet", f"{R} and Claude Monet", {"system_name": 1}),
        (
            "chat gpt, gpt 4 and gpt-4o-mini",
            f"{R}, {R} and {R}",
            {"family_alias": 2, "system_name": 1},
        ),
    ],
)
def test_family_aliases_and_vendors(
    mt: Scrubber, text: str, expected: str, counts: dict[str, int]
) -> None:
    assert scrubbed(mt, text) == (expected, counts)


@pytest.mark.parametrize(
    "text",
    [
        "Water Lilies by Claude Monet.",
        "swaying palm trees",
        '<meta charset="utf-8"><meta name="viewport">',
        "a llama grazing next to an alpaca and a vicuna",
        "Llama, Alpaca, and Vicuna are South American camelids.",
        "said in a keynote at Stanford: hello",
        "the Google Pixel",
        "metadata, metaphor, metal, gptq, palmtop, Stanfordian",
        "The Anthropic principle; anthropic reasoning.",
        "As an AI language model, I cannot feel.",
        "open AI research",
        "Meta 2023 earnings",
        "GPT partition tables",
    ],
)
def test_ordinary_words_are_left_alone(mt: Scrubber, text: str) -> None:
    assert scrubbed(mt, text) == (text, {})


def test_every_family_is_scrubbed_whatever_the_systems_are_called() -> None:
    # In-house names: a fine-tune says what its base model said.
    acme = Scrubber(["acme-small", "acme-large"])
    text = "Google Bard, Gemini Pro, Mixtral-8x7B and Qwen2.5 are other families."
    assert scrubbed(acme, text) == (
        f"{R} {R}, {R}, {R} and {R} are other families.",
        {"vendor": 1, "family_alias": 4},
    )
    assert scrubbed(acme, "the Google Pixel")[0] == "the Google Pixel"


def test_rockets_and_letters_are_not_models() -> None:
    scrubber = Scrubber(["falcon-40b", "phi-2"])
    text = "Falcon 9 and Falcon Heavy; the golden ratio Phi; Falcon-180B and Phi-3 are models."
    assert scrubbed(scrubber, text) == (
        f"Falcon 9 and Falcon Heavy; the golden ratio Phi; {R} and {R} are models.",
        {"family_alias": 2},
    )


def test_scrub_ambiguous_scrubs_a_word_everywhere(mt: Scrubber) -> None:
    assert scrubbed(mt, "a llama grazing") == ("a llama grazing", {})
    listed = Scrubber(MT_SYSTEMS, scrub_ambiguous=["Llama", "claude"])
    assert scrubbed(listed, "a llama grazing; Claude Monet") == (
        f"a {R} grazing; {R} Monet",
        {"family_alias": 2},
    )


def test_scrub_ambiguous_rejects_unknown_words() -> None:
    with pytest.raises(ConfigError, match=r"'llamas' not in the built-in lexicon.*extra_markers"):
        Scrubber(MT_SYSTEMS, scrub_ambiguous=["llamas"])


# --- rule 3: self-identification -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I am Claude, an AI.", f"I am {R}, an AI."),
        ("Hi! I'm ChatGPT.", f"Hi! I'm {R}."),
        ("My name is Vicuna.", f"My name is {R}."),
        (
            "As an AI language model developed by OpenAI, I can't.",
            f"As an AI language model developed by {R}, I can't.",
        ),
        ("I am an AI assistant created by Anthropic.", f"I am an AI assistant created by {R}."),
        ("I was trained by Google.", f"I was trained by {R}."),
        (
            "I am a large language model trained by OpenAI.",
            f"I am a large language model trained by {R}.",
        ),
        ("I'm an AI model called Gemini.", f"I'm an AI model called {R}."),
        ("my creators at DeepMind", f"my creators at {R}"),
        (
            "I am trained by researchers from Large Model Systems Organization (LMSYS).",
            f"I am trained by researchers from {R}.",
        ),
        ("As Bard, I think so.", f"As {R}, I think so."),
    ],
)
def test_self_identification_of_any_family(text: str, expected: str) -> None:
    # A scrubber for an unrelated system: self-identification covers the whole lexicon
    # (Vicuna often claims to be ChatGPT).
    out, counts = scrubbed(Scrubber(["acme-bot"]), text)
    assert out == expected
    assert set(counts) == {"self_identification"}


def test_helpful_harmless_and_honest_is_a_marker(mt: Scrubber) -> None:
    text = "I am an AI assistant created by Anthropic to be helpful, harmless, and honest."
    assert scrubbed(mt, text) == (
        f"I am an AI assistant created by {R} to be {R}.",
        {"self_identification": 2},
    )


@pytest.mark.parametrize(
    "text",
    [
        "I am Claude Monet, the painter.",
        "I'm a Gemini, born in June.",
        "As Claude Monet said, light matters.",
        "It was developed by the German mathematician Bernhard Riemann.",
        "Quality of the skits created by each group.",
        "My name is [Name] and I will be your trainer.",
    ],
)
def test_self_identification_negatives(text: str) -> None:
    assert scrubbed(Scrubber(["acme-bot"]), text) == (text, {})


# --- rule 4: signatures --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dear Sam,\nThanks.\n\nBest regards,\nChatGPT",
            f"Dear Sam,\nThanks.\n\nBest regards,\n{R}",
        ),
        ("Thanks.\nBest regards,\nClaude\n", f"Thanks.\nBest regards,\n{R}\n"),
        ("Cheers, Vicuna", f"Cheers, {R}"),
        ("See you.\n— Bard", f"See you.\n— {R}"),
        ("Sincerely,\nYour AI assistant, Gemini", f"Sincerely,\nYour AI assistant, {R}"),
        ("Regards,\nThe OpenAI Team", f"Regards,\nThe {R} Team"),
    ],
)
def test_signatures(text: str, expected: str) -> None:
    out, counts = scrubbed(Scrubber(["acme-bot"]), text)
    assert (out, counts) == (expected, {"signature": 1})


@pytest.mark.parametrize(
    "text",
    [
        "Best regards,\n[Your Name]",
        "Which painter? The answer:\nClaude",  # a bare ambiguous name is no sign-off
        "Best regards,\nClaude Monet",
    ],
)
def test_signature_negatives(text: str) -> None:
    assert scrubbed(Scrubber(["acme-bot"]), text) == (text, {})


# --- rule 5: extra markers, placeholder ----------------------------------------------------------


def test_extra_markers_everywhere_case_insensitive_word_boundary() -> None:
    scrubber = Scrubber(["model-x"], extra_markers=["AcmeBot", "Project Falcon"])
    assert scrubbed(scrubber, "ACMEBOT here, from Project  falcon; acmebots stay.") == (
        f"{R} here, from {R}; acmebots stay.",
        {"extra_marker": 2},
    )


def test_one_placeholder_for_every_rule_and_it_is_never_matched(mt: Scrubber) -> None:
    text = "I'm ChatGPT (gpt-4), by OpenAI. AcmeBot.\nBest,\nClaude"
    scrubber = Scrubber(MT_SYSTEMS, extra_markers=["AcmeBot", "redacted"])
    out, counts = scrubbed(scrubber, text)
    assert out == f"I'm {R} ({R}), by {R}. {R}.\nBest,\n{R}"
    assert counts == {
        "self_identification": 1,
        "system_name": 1,
        "vendor": 1,
        "extra_marker": 1,
        "signature": 1,
    }
    custom = Scrubber(MT_SYSTEMS, placeholder="<model>")
    assert scrubbed(custom, "GPT-4 and Claude-v2")[0] == "<model> and <model>"
    with pytest.raises(ConfigError, match="placeholder must be visible text"):
        Scrubber(MT_SYSTEMS, placeholder=" ")


def test_text_without_markers_is_returned_unchanged(mt: Scrubber) -> None:
    text = "A plain answer about hash maps, open addressing and chat etiquette."
    out, counts = mt.scrub(text)
    assert out is text
    assert counts == Counter()


# --- real data: the bundled MT-Bench answers -----------------------------------------------------

# Independent of the scrubber's patterns: system names and unambiguous aliases of the families
# of the six systems (openai, anthropic, meta, lmsys, stanford), case-insensitive, word-bounded.
_LEAK = re.compile(
    r"\b(?:gpt[\s-]?(?:3\.5|35|4)(?:[\s-]?turbo)?|(?:vicuna|alpaca|llama)[\s-]?13b"
    r"|claude[\s-]?v1|chat[\s-]?gpt|open[\s-]?ai|anthropic|instructgpt|text-davinci"
    r"|lmsys|fastchat|large model systems|helpful, harmless,? and honest)\b",
    re.IGNORECASE,
)
_DISTINCTIVE = re.compile(r"\b(?:LLaMA|GPT-\d)")
_AMBIGUOUS = re.compile(
    r"\b(?:claude|llama|alpaca|vicuna|meta|stanford|google|palm|gemini|bard|facebook|gpt"
    r"|davinci|codex|galactica|opt)\b",
    re.IGNORECASE,
)
# Hand-audited: every remaining ambiguous word in the scrubbed MT-Bench answers is one of these.
_ALLOWED = [
    ("claude", re.compile(r"by Claude Monet")),  # gpt-4, q155: "Water Lilies" by Claude Monet
    ("palm", re.compile(r"swaying palm trees")),  # claude-v1, q81: Hawaii travel blog
    ("meta", re.compile(r"<meta (?:charset|name)=")),  # q123: HTML heads
    ("stanford", re.compile(r"a keynote at Stanford")),  # llama-13b, q84: Peter Thiel quote
    ("google", re.compile(r"Google Pixel", re.IGNORECASE)),  # q138: phone ratings (not a system)
    ("facebook", re.compile(r"an investor in Facebook and Airbnb")),  # llama-13b, q84
    ("facebook", re.compile(r"Platforms like Facebook and Twitter")),  # vicuna-13b-v1.2, q156
]


def _mt_bench_rows() -> list[dict]:
    with gzip.open(MT_BENCH, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_mt_bench_answers_leak_no_system_or_family_name(mt: Scrubber) -> None:
    rows = _mt_bench_rows()
    assert sorted({r["model"] for r in rows}) == MT_SYSTEMS
    totals: Counter[str] = Counter()
    by_system: dict[str, Counter[str]] = {s: Counter() for s in MT_SYSTEMS}
    turns = 0
    leaks, unexplained = [], []
    for row in rows:
        for turn in row["turns"]:
            if turn["role"] != "assistant":
                continue
            turns += 1
            text, counts = mt.scrub(turn["content"])
            assert mt.scrub(text) == (text, Counter())
            totals.update(counts)
            by_system[row["model"]].update(counts)
            leaks += [(row["model"], m.group(0)) for m in _LEAK.finditer(text)]
            leaks += [(row["model"], m.group(0)) for m in _DISTINCTIVE.finditer(text)]
            for m in _AMBIGUOUS.finditer(text):
                around = text[max(0, m.start() - 30) : m.end() + 30]
                word = m.group(0).lower()
                if not any(w == word and p.search(around) for w, p in _ALLOWED):
                    unexplained.append((row["model"], row["question_id"], around))
    print(f"\nMT-Bench: {turns} assistant turns; scrubbed per rule: {dict(totals)}")
    for system, counts in by_system.items():
        print(f"  {system}: {dict(counts)}")
    assert leaks == []
    assert unexplained == []
    # Known real cases: the GPT-4 question (q98) and claude-v1's self-description (q100, q102).
    assert totals["system_name"] == 6
    assert by_system["claude-v1"]["self_identification"] == 6
    assert sum(totals.values()) == 12


# --- the lexicon and the trigger prefilter -----------------------------------------------------


@pytest.mark.parametrize("term", LEXICON, ids=lambda t: f"{t.family}:{t.label}")
def test_every_lexicon_name_is_scrubbed_whatever_the_systems(term: Term) -> None:
    sample = {"GPT-n": "GPT-4", "text-davinci": "text-davinci-003", "Falcon": "Falcon-40B"}.get(
        term.label, term.label
    )
    scrubber = Scrubber(["sys-1"], scrub_ambiguous=[term.label] if term.ambiguous else [])
    out, counts = scrubbed(scrubber, f"Note: {sample} is here.")
    assert out == f"Note: {R} is here."
    assert counts == {"vendor" if term.kind == "vendor" else "family_alias": 1}


def test_the_trigger_prefilter_never_skips_a_text_a_rule_would_change(
    mt: Scrubber, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(0)
    fragments = [
        *("I am ", "I'm ", "As ", "my name is ", "Best regards,\n", "— ", " and ", ", "),
        *(" model", " AI", "'s ", "-", " 2", "-13B", " Pro", "\n", ". ", "the chatbot "),
        *("trained by ", "I was created by ", "to be helpful, harmless, and honest", R),
        *(" Monet", " trees", "llama", "Claude", "Meta", "GPT-4", "gpt", "Open AI", "Google"),
        *("Bard", "Stanford", "Alpaca", "vicuna-13b-v1.2", "Vicuna", "palm", "PaLM", "LLaMA"),
        *("chat gpt", "01.AI", "AI21 Labs", "Large Model Systems Organization", "hello"),
    ]
    texts = ["".join(rng.choices(fragments, k=rng.randint(1, 10))) for _ in range(3000)]
    texts += [t["content"] for row in _mt_bench_rows()[:100] for t in row["turns"]]
    filtered = [mt.scrub(t) for t in texts]
    monkeypatch.setattr(type(mt._triggers), "present", lambda self, text: True)
    assert [mt.scrub(t) for t in texts] == filtered


def test_an_ai_described_by_its_maker_is_scrubbed_for_any_family() -> None:
    # A ChatGPT-distilled system (neither family under test) describing itself.
    scrubber = Scrubber(["vicuna-7b", "mpt-7b"])
    text, counts = scrubber.scrub("As ChatGPT, an AI developed by OpenAI, here is my answer.")
    assert text == "As [redacted], an AI developed by [redacted], here is my answer."
    assert counts["self_identification"] == 2
    # A third-party fact that names no AI maker is left alone.
    assert scrubber.scrub("The telescope was developed by NASA.")[0] == (
        "The telescope was developed by NASA."
    )
