"""The scrubber's rules (system names, family aliases and vendors, self-identification,
signatures, extra markers, frames), digits for letters, names in Chinese, Japanese and Korean,
the bundled MT-Bench answers, the lexicon and the trigger prefilter."""

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
from tests.helpers import assert_marks_rebuild

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
        ("I was trained by Google.", f"I was trained by {R}."),
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
    assert scrubbed(mt, text) == (f"I am {R} to be {R}.", {"frame": 1, "self_identification": 1})
    text = "I'm helpful, harmless, and honest."
    assert scrubbed(mt, text) == (f"I'm {R}.", {"self_identification": 1})


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
    # Known real cases: the GPT-4 question (q98) and claude-v1's self-description (q100 twice,
    # q102): "I am an AI assistant created by Anthropic to be helpful, harmless, and honest.",
    # a frame and the motto each time.
    assert totals["system_name"] == 6
    assert by_system["claude-v1"]["frame"] == 3
    assert by_system["claude-v1"]["self_identification"] == 3
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
    assert text == "As [redacted], here is my answer."
    assert counts == {"frame": 1}
    # No AI noun, so no frame; its maker is still named, and replaced.
    text, counts = scrubber.scrub("As ChatGPT, built by OpenAI, here is my answer.")
    assert text == "As [redacted], built by [redacted], here is my answer."
    # A third-party fact that names no AI maker is left alone.
    assert scrubber.scrub("The telescope was developed by NASA.")[0] == (
        "The telescope was developed by NASA."
    )


# --- digits and symbols standing for letters -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("As a model trained by 0penAI, I can help.", f"As {R}, I can help."),
        ("I am C1aude.", f"I am {R}."),
        ("G-P-T-4 and G.P.T.-4 agree.", f"{R} and {R} agree."),
        ("Ask Cl@ude, or L1ama 3.", f"Ask {R}, or {R}."),
        ("Ant#ropic and Micro$oft said so.", f"{R} and {R} said so."),
        ("I'm Q w e n, and Gem1n1 Pro is not.", f"I'm {R}, and {R} is not."),
        ("Model: GP7-4o", f"Model: {R}"),
        ("Try Gemm@ 2 or M1stral-7B.", f"Try {R} or {R}."),
    ],
)
def test_digits_and_symbols_standing_for_letters(text: str, expected: str) -> None:
    scrubber = Scrubber(["acme-bot"])
    out, marks = scrubber.scrub_marks(text)
    assert out == expected
    assert scrubber.scrub(out)[1] == Counter()
    # A name written with stand-ins is disguised; a frame around one is too.
    assert {m.kind for m in marks} == {"disguised"}


@pytest.mark.parametrize(
    "text",
    [
        "Convert it to mp3, check the H2O level and the 4th, 1st and 3rd rows.",
        "The 3D data; write it in C# or F#; mail me@example.com; 10px, 4z^2 - 9x.",
        "Mark it P1 for the Y1 class; the Ph1 gene; 0PT is a typo.",
        "nums1, arr1[i], node1 and l33t sp34k; the R2D2 toy costs $5.",
        "Elevated GPT and AST levels can point to liver damage.",
    ],
)
def test_digits_that_are_digits_stay(text: str) -> None:
    assert scrubbed(Scrubber(["acme-bot"]), text) == (text, {})


# --- names in Chinese, Japanese and Korean -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "counts"),
    [
        ("我是通义千问，由阿里云开发。", f"我是{R}，由{R}开发。", {"self_identification": 2}),
        ("文心一言和智谱清言都能写诗。", f"{R}和{R}都能写诗。", {"family_alias": 2}),
        ("不懂就百度一下。", f"不懂就{R}一下。", {"vendor": 1}),
        ("豆包大模型和混元大模型", f"{R}大模型和{R}大模型", {"family_alias": 2}),
        ("深度求索、字节跳动和零一万物", f"{R}、{R}和{R}", {"vendor": 3}),
        ("我是豆包。", f"我是{R}。", {"self_identification": 1}),
        ("讯飞星火、腾讯混元、商汤日日新", f"{R}、{R}、{R}{R}", None),
        ("私はクロードです。", f"私は{R}です。", {"self_identification": 1}),
        ("オープンAIのチャットGPTとアンソロピック", f"{R}の{R}と{R}", None),
        (
            "안녕하세요, 저는 클로드입니다.",
            f"안녕하세요, 저는 {R}입니다.",
            {"self_identification": 1},
        ),
        ("오픈AI의 챗GPT와 구글의 제미나이", f"{R}의 {R}와 {R}의 {R}", None),
        ("Baidu's ERNIE Bot and ByteDance's Doubao", f"{R}'s {R} Bot and {R}'s {R}", None),
    ],
)
def test_names_in_chinese_japanese_and_korean(
    text: str, expected: str, counts: dict[str, int] | None
) -> None:
    out, found = scrubbed(Scrubber(["acme-bot"]), text)
    assert out == expected
    if counts is not None:
        assert found == counts


@pytest.mark.parametrize(
    "text",
    [
        # 百川 and 通义 and 文心 are also ordinary Chinese; so are 豆包 (a bean bun), 混元, 商汤,
        # 日日新 and 月之暗面; the characters of a name (月, 智能, 通) appear everywhere.
        "海纳百川，有容乃大。《白虎通义》和《文心雕龙》是古书。",
        "早餐我吃了两个豆包。道家讲混元一气。商汤灭夏。苟日新，日日新。",
        "平克·弗洛伊德的专辑《月之暗面》。今晚的月亮很圆，智能手机很贵，通知已发出。",
        "我是克劳德·莫奈的粉丝。我是学生。这是阿里巴巴与四十大盗的故事。",
        "クロード・モネの睡蓮。ラマはアンデスの動物。写真のメタデータ。ジェミニ計画。",
        "라마단 기간입니다. 달라이 라마는 지도자입니다. 메타버스. 저는 클로드 모네를 좋아해요.",
        "저는 클로드를 좋아해요. 구글에서 검색했어요.",
    ],
)
def test_ordinary_chinese_japanese_and_korean_stays(text: str) -> None:
    assert scrubbed(Scrubber(["acme-bot"]), text) == (text, {})


# --- frames: a model describing itself and its maker ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I am a large language model developed by [redacted].", f"I am {R}."),
        ("I am a large language model trained by OpenAI.", f"I am {R}."),
        ("As an AI language model developed by OpenAI, I can't.", f"As {R}, I can't."),
        ("I'm an AI assistant created by Anthropic.", f"I'm {R}."),
        ("I am Gemini, a large language model from Google.", f"I am {R}."),
        ("I'm a model trained by a team of researchers at a tech company.", f"I'm {R}."),
        ("I am ChatGPT, a large language model trained by OpenAI (GPT-4).", f"I am {R} ({R})."),
        ("Je suis un modèle de [redacted].", f"Je suis {R}."),
        ("Je suis Mistral, un modèle de Mistral AI.", f"Je suis {R}."),
        ("Ich bin ein großes Sprachmodell, das von Google trainiert wurde.", f"Ich bin {R}."),
        ("Ich bin ein von Acme Labs entwickeltes Sprachmodell.", f"Ich bin {R}."),
        ("Soy un modelo de lenguaje entrenado por un equipo de investigadores.", f"Soy {R}."),
        ("Sou o ChatGPT, um modelo de linguagem desenvolvido pela OpenAI.", f"Sou {R}."),
        ("Sono un assistente virtuale sviluppato da Google.", f"Sono {R}."),
        ("我是一个由[redacted]开发的大型语言模型。", f"我是{R}。"),
        ("我是一个大型语言模型，由阿里云开发。", f"我是{R}。"),
        ("私は[redacted]によって訓練された大規模言語モデルです。", f"私は{R}です。"),
        ("私はClaudeです。Anthropicが開発したAIアシスタントです。", f"私は{R}です。{R}です。"),
        ("저는 OpenAI에서 개발한 대규모 언어 모델입니다.", f"저는 {R}입니다."),
    ],
)
def test_frames_are_reduced_to_the_placeholder(text: str, expected: str) -> None:
    out, counts = scrubbed(Scrubber(["acme-bot"]), text)
    assert out == expected
    assert counts["frame"] == 1


@pytest.mark.parametrize(
    "text",
    [
        # No maker: says only what every candidate is.
        "As an AI language model, I cannot browse the internet.",
        "I am a large language model, so I may make mistakes.",
        # A person, a third party, or no frame at all.
        "I am a research assistant trained by Professor Lee in statistics.",
        "I am a big fan of the model trained by my colleague.",
        "I am writing about a model trained by researchers in 2019.",
        "The model was developed by a team of researchers at the university.",
        "As a teacher trained by the state, I follow the curriculum.",
        "Such a model trained by students can still be useful.",
        "Je suis un étudiant formé par mes professeurs.",
        "Como modelo de negocio, esto funciona bien.",
        "这个模型是由研究人员开发的。我是一个学生，由父母抚养长大。",
        "私はモデルです。この言語モデルは研究チームが開発しました。",
        "이 모델은 연구팀이 개발했습니다.",
    ],
)
def test_frame_negatives(text: str) -> None:
    assert scrubbed(Scrubber(["acme-bot"]), text) == (text, {})


def test_a_frame_absorbs_the_names_in_it() -> None:
    scrubber = Scrubber(["acme-bot"])
    text = "Hi. I am Claude, an AI assistant created by 0penAI. Bye."
    out, marks = scrubber.scrub_marks(text)
    assert out == f"Hi. I am {R}. Bye."
    # One mark, over the writer's own span from the first name to the maker, disguised since
    # the maker was; the names' own marks are gone, not counted twice.
    (mark,) = marks
    assert text[mark.start : mark.end] == "Claude, an AI assistant created by 0penAI"
    assert (mark.rule, mark.kind) == ("frame", "disguised")
    assert scrubber.scrub(text)[1] == {"frame": 1}


def test_frames_keep_the_text_around_them_and_never_overlap() -> None:
    # Property: stitching the input back from the marks gives the output, marks are ordered and
    # disjoint, and scrubbing the output changes nothing.
    rng = random.Random(11)
    pieces = [
        *(
            "I am ",
            "I'm ",
            "As ",
            "Je suis ",
            "我是",
            "私は",
            "저는 ",
            "a large language model ",
            "an AI ",
        ),
        *("un modèle de langage ", "一个由", "開発した", "AIアシスタント", "대규모 언어 모델"),
        *(
            "trained by ",
            "developed by ",
            "Anthropic",
            "OpenAI",
            "0penAI",
            "Claude",
            "阿里云",
            "开发的",
        ),
        *(
            "大型语言模型",
            "によって",
            "에서 개발한 ",
            R,
            ", ",
            ". ",
            "\n",
            "です。",
            "입니다.",
            "the team at ",
        ),
    ]
    scrubber = Scrubber(["acme-bot"])
    for _ in range(1000):
        text = "".join(rng.choices(pieces, k=rng.randint(1, 9)))
        out, marks = scrubber.scrub_marks(text)
        assert_marks_rebuild(text, out, marks, R)
        assert scrubber.scrub(out)[1] == Counter(), (text, out)
