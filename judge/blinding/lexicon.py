"""Built-in lexicon of identity markers: vendor and model family names, and how they are spelled.

Every name is a regex fragment that carries its own case handling (scoped `(?i:...)` or exact
case), so one alternation can mix case-insensitive names ("openai") with distinctive casings
("LLaMA", "PaLM", "xAI").

A name is *ambiguous* when it is also an ordinary word or a common name (llama, claude, palm,
meta, google, ...): the scrubber removes it only in a model context. A *weak* ambiguous name
(phi, yi, glm, opt, ...) is so common that only a version or size suffix ("Phi-3", "Yi-34B") or
an adjacent lexicon name ("Microsoft Phi") makes it a model name.

The phrases that make a name a self-identification or a signature ("I am ...", "developed by
...", "Best regards,") and the nouns that make an ambiguous word a model name ("... model",
"the chatbot ...") are in `judge.blinding.phrases`.

Each term also lists its *triggers*: lower-case letter runs, one of which every match must
contain as a whole token. The scrubber tokenises a text once and skips all regex work when no
trigger is present, which is the common case.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from judge.normalise import UNSPACED

Kind = Literal["vendor", "alias"]

_UNSPACED = UNSPACED
# Letter runs of lower-cased text: the tokens that triggers are compared with.
LETTER_RUN = re.compile(f"[^\\W\\d_{_UNSPACED}]+")


@dataclass(frozen=True)
class Term:
    """One spelling family of a vendor or model name."""

    family: str
    kind: Kind
    label: str
    """Canonical spelling; `scrub_ambiguous` entries are matched against it, case-insensitively."""
    pattern: str
    """Regex fragment without word boundaries, with its own case handling."""
    ambiguous: bool = False
    """Also an ordinary word or a common name: scrubbed only in a model context."""
    weak: bool = False
    """Ambiguous, and a model name only with a version suffix or next to another name."""
    triggers: frozenset[str] = frozenset()
    """Lower-case tokens, one of which every match starts with (the scrubber looks for names
    only where one occurs, `judge.blinding.triggers`)."""
    pairs: frozenset[tuple[str, str]] = frozenset()
    """Or two consecutive tokens it starts with (for "Open AI", where "open" alone is too common
    a trigger)."""
    needles: frozenset[str] = frozenset()
    """Or a lower-case substring it starts with, for names without a letter run of their own
    ("01.AI")."""


# --- version / size / tier suffixes ------------------------------------------------------------

_TIERS = [
    *("turbo", "instant", "pro", "ultra", "nano", "flash", "lite", "mini", "max", "plus"),
    *("opus", "sonnet", "haiku", "chat", "instruct", "base", "hf", "code", "coder", "vision"),
    *("large", "medium", "small", "tiny", "preview", "latest", "online", "advanced", "exp"),
    "guard",
]
_TIER_ANY = "(?i:" + "|".join(_TIERS) + ")"
_TIER_CAP = "(?:" + "|".join(t.capitalize() for t in _TIERS) + ")"
# 2, 3.5, 13b, 4o, v1.2, r1, 8x7b, 16k, 0613
_VERSION = r"(?i:[a-z]?\d+(?:[.x]\d+)*[a-z]{0,2})"
# Glued on without a separator, a version starts with a digit ("llama2", "gpt4o"), so it never
# hides the name's own letters from the trigger tokens.
_GLUED = r"(?i:\d+(?:[.x]\d+)*[a-z]{0,2})"
_SIZE = r"(?i:\d+(?:\.\d+)?(?:x\d+)?[bmk])"
_V_TOKEN = r"(?i:v\d+(?:\.\d+)*)"
# Letters and digits, less the scripts written without spaces (CJK ideographs, kana, hangul):
# "我是Claude" and "Claudeです" hold a name between two boundaries.
_WORDISH = f"[^\\W_{_UNSPACED}]"
_END = f"(?!{_WORDISH})"
NAME_START = f"(?:(?<!{_WORDISH})|(?=[{_UNSPACED}]))"
NAME_END = f"(?:{_END}|(?<=[{_UNSPACED}]))"
"""A name starts and ends at a boundary between a letter or digit and anything else. Underscore
counts as a boundary, so "openai_api" is caught; "metadata", "gptq", "palmtree" are not. A name
in a script written without spaces has no such boundary ("用通义千问Qwen"); its own pattern
says where it may stand (`_cjk`)."""

# First unit: a glued or separated version ("llama2", "GPT-4o", "claude-v1"), a tier
# ("claude-instant"), or after a space a short version number or size ("Llama 2", "Claude 3",
# "LLaMA 13B") or a capitalised tier ("Gemini Pro"). Years and counts ("Meta 2023", "GPT-4 3
# times") are not versions: a spaced bare number has at most two digits and only comes first.
_FIRST_UNIT = "|".join(
    [
        _GLUED,
        f"[-_.:]{_VERSION}",
        f"[-_.]{_TIER_ANY}",
        rf"\s+(?:\d{{1,2}}(?:\.\d+)?|{_SIZE}|{_V_TOKEN}|{_TIER_CAP})",
    ]
)
# Later units: separated versions and tiers, spaced sizes, v-numbers and capitalised tiers
# ("Llama 2 70B Chat", "gpt-3.5-turbo-16k", "Claude 3.5 Sonnet"); after a version, product
# tiers in lower case too ("GPT-4o mini").
_PRODUCT_TIER = "(?:mini|nano|turbo|pro|max|flash|lite|opus|sonnet|haiku|ultra|plus)"
_LATER_UNIT = "|".join(
    [
        f"[-_.:]{_VERSION}",
        f"[-_.]{_TIER_ANY}",
        rf"\s+(?:{_SIZE}|{_V_TOKEN}|{_TIER_CAP})",
        rf"(?:(?<=\d)|(?<=\d[a-z]))\s+{_PRODUCT_TIER}",
    ]
)
TAIL = f"(?:(?:{_FIRST_UNIT}){_END})?(?:(?:{_LATER_UNIT}){_END})*"
"""Version, size and tier suffix of a model name; part of the match, so "[redacted]" replaces
"GPT-4-turbo" as a whole rather than leaving "-turbo" behind."""


# --- spelling helpers ---------------------------------------------------------------------------

_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def first_tokens(parts: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """Letter-run tokens a spelling can start with, whichever optional separators it uses."""
    letters: list[str] = []
    for part in parts:
        if not part.isalpha():
            break
        letters.append(part.lower())
    if not letters:
        return set(), set()
    singles: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for cuts in itertools.product((False, True), repeat=len(letters) - 1):
        tokens = [letters[0]]
        for cut, part in zip(cuts, letters[1:], strict=True):
            if cut:
                tokens.append(part)
            else:
                tokens[-1] += part
        # A digit part right after the letters ends the run, so one token is a whole match.
        if len(tokens) == 1:
            singles.add(tokens[0])
        else:
            pairs.add((tokens[0], tokens[1]))
    return singles, pairs


def _word(
    family: str,
    kind: Kind,
    text: str,
    *,
    ambiguous: bool = False,
    weak: bool = False,
    spaced: bool = False,
) -> Term:
    """Case-insensitive, separator-robust spelling: "OpenAI" also matches "openai", "open-ai",
    "open_ai", "Open AI", "OPEN AI". A space is allowed in any case only with `spaced` ("chat
    gpt"); otherwise only in title or upper case, since "open AI models" is a phrase."""
    parts = _PARTS.findall(text)
    compact = "(?i:" + "[-_.]?".join(re.escape(p) for p in parts) + ")"
    variants = [compact]
    if len(parts) > 1 and all(p.isalpha() for p in parts):
        if spaced:
            variants.append("(?i:" + r"\s+".join(re.escape(p) for p in parts) + ")")
        else:
            variants.append(r"\s+".join(re.escape(p) for p in parts))
            variants.append(r"\s+".join(re.escape(p.upper()) for p in parts))
    singles, pairs = first_tokens(parts)
    return Term(
        family,
        kind,
        text,
        "|".join(variants),
        ambiguous=ambiguous or weak,
        weak=weak,
        triggers=frozenset(singles),
        pairs=frozenset(pairs),
    )


def _exact(
    family: str, kind: Kind, text: str, *, ambiguous: bool = False, weak: bool = False
) -> Term:
    """Exact casing only: "LLaMA" is the model, "llama" may be the animal."""
    singles, pairs = first_tokens(_PARTS.findall(text))
    tokens = LETTER_RUN.findall(text.lower())
    if tokens:
        singles.add(tokens[0])
    return Term(
        family,
        kind,
        text,
        re.escape(text),
        ambiguous=ambiguous or weak,
        weak=weak,
        triggers=frozenset(singles),
        pairs=frozenset(pairs),
    )


def _raw(
    family: str,
    kind: Kind,
    label: str,
    pattern: str,
    *,
    triggers: Iterable[str] = (),
    pairs: Iterable[tuple[str, str]] = (),
    needles: Iterable[str] = (),
    ambiguous: bool = False,
) -> Term:
    return Term(
        family,
        kind,
        label,
        pattern,
        ambiguous=ambiguous,
        triggers=frozenset(triggers),
        pairs=frozenset(pairs),
        needles=frozenset(needles),
    )


def _phrase(family: str, kind: Kind, text: str) -> Term:
    """A multi-word name in title or upper case ("Large Model Systems Organization")."""
    words = text.split()
    titled = r"\s+".join(re.escape(w) for w in words)
    upper = r"\s+".join(re.escape(w.upper()) for w in words)
    first = [w.lower() for w in words[:2]]
    return _raw(family, kind, text, f"{titled}|{upper}", pairs=[(first[0], first[1])])


_KATAKANA = "\u30a1-\u30fa\u30fc"
_HANGUL = "\uac00-\ud7af"
# What may follow a Korean name in its word: case particles and the copula ("클로드는",
# "제미나이입니다", "라마의"). Anything else makes it part of a longer word ("라마단", Ramadan).
_PARTICLES = (
    "(?:은|는|이|가|을|를|의|와|과|로|으로|에|에서|에게|한테|도|만|랑|이랑|처럼|보다"
    "|입니다|이다|예요|이에요|이며|이고|이라는|라는|이라고|라고)"
)


def _cjk(
    family: str, kind: Kind, text: str, *, ambiguous: bool = False, not_after: str = ""
) -> Term:
    """A name in Chinese characters, kana or hangul, found by substring (these scripts have no
    letter-run tokens). Chinese writes no boundary between words, so a Chinese name stands
    anywhere ("百度一下" is still Baidu); a katakana name is not part of a longer katakana word
    ("メタデータ", metadata, holds メタ); a hangul name starts a word and ends it or a particle.
    `not_after`: characters it may not follow ("一千问" is a thousand questions, not Qwen)."""
    if re.match(f"[{_KATAKANA}]", text):
        not_after += _KATAKANA
    if re.match(f"[{_HANGUL}]", text):
        not_after += _HANGUL
    first = re.escape(text[0])
    # The first character is matched before the look back, so that a regex engine trying
    # the lexicon's alternatives passes over this one after comparing one character.
    pattern = first + (f"(?<![{not_after}]{first})" if not_after else "") + re.escape(text[1:])
    if re.search(f"[{_KATAKANA}]$", text):
        pattern += f"(?![{_KATAKANA}])"
    if re.search(f"[{_HANGUL}]$", text):
        pattern += f"(?={_PARTICLES}{{0,2}}(?![{_HANGUL}]))"
    return _raw(family, kind, text, pattern, needles=[text.lower()], ambiguous=ambiguous)


def _company_ai(family: str, name: str) -> Term:
    """A company named "<name> AI" ("Meta AI", "Mistral AI"): unambiguous as a pair even when
    the first word is not."""
    low = name.lower()
    return _raw(
        family,
        "vendor",
        f"{name} AI",
        rf"(?i:{re.escape(name)})[\s-]?AI|{re.escape(name.upper())}[\s-]?AI",
        triggers=[low + "ai"],
        pairs=[(low, "ai")],
    )


# --- spelling of user-supplied names (system names, extra markers) -------------------------------

_CHUNK_SPLIT = re.compile(r"[\s\-_:]+|(?<!\d)\.|\.(?!\d)")
_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[^\W\d_]+|\d+(?:\.\d+)*|[^\w\s]")


def _part_pattern(part: str) -> str:
    if part[0].isdigit():
        # "3.5" also matches "35" (Azure spells it "gpt-35-turbo").
        return r"\.?".join(re.escape(p) for p in part.split("."))
    return re.escape(part)


def user_name_pattern(name: str, *, version_prefix: bool) -> tuple[str, list[str]]:
    """Separator- and case-robust pattern for a system name or extra marker, and its parts.

    "gpt-3.5-turbo" matches "GPT 3.5 Turbo", "gpt3.5-turbo", "GPT-3.5". With `version_prefix`,
    a leading part of the name up to its first versioned chunk is enough ("Vicuna-13B" for
    "vicuna-13b-v1.2", "Claude v1" for "claude-v1"), but never the bare first word, which is a
    family alias with its own rule.
    """
    bare = name.rsplit("/", 1)[-1].strip() or name.strip()
    chunks = [c for c in _CHUNK_SPLIT.split(bare) if c]
    parts_per_chunk = [_NAME_PARTS.findall(c) for c in chunks]
    chunk_patterns = [r"[\s\-_]?".join(_part_pattern(p) for p in ps) for ps in parts_per_chunk]
    required = len(chunks)
    if version_prefix:
        digits = [i for i, c in enumerate(chunks) if any(ch.isdigit() for ch in c)]
        if digits:
            required = digits[0] + 1
    sep = r"(?:\s*[-_.]\s*|\s+)?"
    pattern = sep.join(chunk_patterns[:required])
    optional = ""
    for chunk in reversed(chunk_patterns[required:]):
        optional = f"(?:{sep}{chunk}{optional})?"
    parts = [p for ps in parts_per_chunk for p in ps]
    return f"(?i:{pattern}{optional})", parts


# --- the lexicon ---------------------------------------------------------------------------------

_V, _A = "vendor", "alias"

LEXICON: tuple[Term, ...] = (
    # openai
    _word("openai", _V, "OpenAI"),
    _word("openai", _A, "ChatGPT", spaced=True),
    _word("openai", _A, "InstructGPT", spaced=True),
    # Bare "GPT" is also the GUID partition table; with a version number ("GPT-4", "gpt4o",
    # "gpt 3.5") it is a model name in any case. "GPTQ" (a quantisation method) never matches.
    _raw("openai", _A, "GPT-n", r"(?i:gpt)(?=(?:[-_.]|\s+)?\d)", triggers=["gpt"]),
    _word("openai", _A, "GPT", ambiguous=True),
    _raw("openai", _A, "text-davinci", r"(?i:text-davinci)", pairs=[("text", "davinci")]),
    _word("openai", _A, "davinci", ambiguous=True),
    _word("openai", _A, "Codex", ambiguous=True),
    _raw("openai", _A, "DALL-E", r"(?i:dall[-·‧.\s]?e)", triggers=["dall", "dalle"]),
    # anthropic: "the anthropic principle" is cosmology, so only the capitalised name is sure,
    # and not before the cosmologists' nouns ("Anthropic reasoning is ...").
    _raw(
        "anthropic",
        _V,
        "Anthropic",
        r"(?:Anthropic|ANTHROPIC)(?!\s+(?i:principle|reasoning|bias|arguments?|selection))",
        triggers=["anthropic"],
    ),
    _word("anthropic", _V, "anthropic", ambiguous=True),
    _word("anthropic", _A, "Claude", ambiguous=True),
    # google
    _word("google", _V, "Google", ambiguous=True),
    _word("google", _V, "DeepMind"),
    _phrase("google", _V, "Google Brain"),
    _phrase("google", _V, "Google Research"),
    _company_ai("google", "Google"),
    _word("google", _A, "Gemini", ambiguous=True),
    _word("google", _A, "Bard", ambiguous=True),
    _exact("google", _A, "PaLM"),
    _word("google", _A, "PaLM", ambiguous=True),
    _word("google", _A, "Gemma", ambiguous=True),
    _word("google", _A, "LaMDA"),
    _raw("google", _A, "Flan-T5", r"(?i:flan[-_]?t5)", triggers=["flan", "flant"]),
    _raw(
        "google",
        _A,
        "text-bison",
        r"(?i:(?:text|chat|code)-bison)",
        pairs=[("text", "bison"), ("chat", "bison"), ("code", "bison")],
    ),
    # meta
    _word("meta", _V, "Meta", ambiguous=True),
    _company_ai("meta", "Meta"),
    _word("meta", _V, "Facebook", ambiguous=True),
    _phrase("meta", _V, "Facebook AI Research"),
    _company_ai("meta", "Facebook"),
    _exact("meta", _A, "LLaMA"),
    _word("meta", _A, "Llama", ambiguous=True),
    _raw(
        "meta",
        _A,
        "Code Llama",
        r"(?i:code[-_]?llama)|Code\s+Llama",
        triggers=["codellama"],
        pairs=[("code", "llama")],
    ),
    _exact("meta", _A, "OPT", weak=True),
    _word("meta", _A, "Galactica", ambiguous=True),
    # mistral
    _company_ai("mistral", "Mistral"),
    _word("mistral", _A, "Mistral", ambiguous=True),
    _word("mistral", _A, "Mixtral"),
    _word("mistral", _A, "Codestral"),
    _word("mistral", _A, "Ministral"),
    _word("mistral", _A, "Pixtral"),
    _word("mistral", _A, "Magistral", ambiguous=True),
    # alibaba
    _word("alibaba", _V, "Alibaba", ambiguous=True),
    _phrase("alibaba", _V, "Alibaba Cloud"),
    _word("alibaba", _A, "Qwen"),
    _raw("alibaba", _A, "QwQ", r"(?i:qwq)", triggers=["qwq"]),
    _word("alibaba", _A, "Tongyi"),
    _word("alibaba", _A, "Qianwen"),
    # deepseek
    _company_ai("deepseek", "DeepSeek"),
    _word("deepseek", _A, "DeepSeek", spaced=True),
    # lmsys
    _word("lmsys", _V, "LMSYS"),
    _phrase("lmsys", _V, "Large Model Systems Organization"),
    _word("lmsys", _A, "Vicuna", ambiguous=True),
    _word("lmsys", _A, "FastChat"),
    _phrase("lmsys", _A, "Chatbot Arena"),
    # stanford
    _word("stanford", _V, "Stanford", ambiguous=True),
    _exact("stanford", _V, "CRFM"),
    _word("stanford", _A, "Alpaca", ambiguous=True),
    # microsoft
    _word("microsoft", _V, "Microsoft", ambiguous=True),
    _phrase("microsoft", _V, "Microsoft Research"),
    _word("microsoft", _A, "Phi", weak=True),
    _word("microsoft", _A, "Orca", ambiguous=True),
    _word("microsoft", _A, "WizardLM", spaced=True),
    _phrase("microsoft", _A, "Bing Chat"),
    _word("microsoft", _A, "Copilot", ambiguous=True),
    # cohere
    _word("cohere", _V, "Cohere", ambiguous=True),
    _raw(
        "cohere",
        _A,
        "Command R",
        r"(?i:command[-_]?r\+?)(?!\w)|Command\s+R\+?",
        triggers=["commandr"],
        pairs=[("command", "r")],
    ),
    _word("cohere", _A, "Aya", ambiguous=True),
    # xai ("XAI" is explainable AI)
    _exact("xai", _V, "xAI"),
    _word("xai", _A, "Grok", ambiguous=True),
    # tii
    _exact("tii", _V, "TII"),
    _phrase("tii", _V, "Technology Innovation Institute"),
    # "Falcon 9" and "Falcon Heavy" are rockets, not models.
    _raw(
        "tii",
        _A,
        "Falcon",
        r"(?i:falcon)(?!\s+(?:9|Heavy)(?![^\W_]))",
        triggers=["falcon"],
        ambiguous=True,
    ),
    # 01ai
    _raw("01ai", _V, "01.AI", r"(?i:01[-.]?ai)", needles=["01.ai", "01-ai", "01ai"]),
    _exact("01ai", _A, "Yi", weak=True),
    # nvidia
    _word("nvidia", _V, "Nvidia", ambiguous=True),
    _word("nvidia", _A, "Nemotron"),
    # databricks
    _word("databricks", _V, "Databricks"),
    _word("databricks", _A, "DBRX"),
    _word("databricks", _A, "Dolly", ambiguous=True),
    # mosaicml
    _word("mosaicml", _V, "MosaicML", spaced=True),
    _exact("mosaicml", _A, "MPT", weak=True),
    # eleutherai
    _word("eleutherai", _V, "EleutherAI", spaced=True),
    _raw(
        "eleutherai",
        _A,
        "GPT-J",
        r"(?i:gpt[-_]?(?:j|neox?))",
        triggers=["gpt", "gptj", "gptneo", "gptneox"],
    ),
    _word("eleutherai", _A, "Pythia", ambiguous=True),
    # bigscience
    _word("bigscience", _V, "BigScience"),
    _exact("bigscience", _A, "BLOOMZ"),
    _exact("bigscience", _A, "BLOOM"),
    _word("bigscience", _A, "Bloom", ambiguous=True),
    # tsinghua / zhipu
    _word("tsinghua", _V, "Tsinghua", ambiguous=True),
    _word("tsinghua", _V, "Zhipu"),
    _word("tsinghua", _A, "ChatGLM", spaced=True),
    _exact("tsinghua", _A, "GLM", weak=True),
    # baichuan
    _word("baichuan", _V, "Baichuan"),
    # moonshot
    _company_ai("moonshot", "Moonshot"),
    _word("moonshot", _A, "Kimi", ambiguous=True),
    # Families that family_of() does not infer: reached only through `families:` overrides,
    # and through self-identification and signatures, which cover the whole lexicon.
    _word("amazon", _V, "Amazon", ambiguous=True),
    _word("amazon", _A, "Titan", ambiguous=True),
    _raw("ai21", _V, "AI21", r"(?i:ai21)(?:\s+Labs)?", needles=["ai21"]),
    _word("ai21", _A, "Jurassic", ambiguous=True),
    _word("ai21", _A, "Jamba", ambiguous=True),
    _company_ai("inflection", "Inflection"),
    _exact("inflection", _A, "Pi", weak=True),
    _exact("ibm", _V, "IBM", ambiguous=True),
    _word("ibm", _A, "Granite", weak=True),
    _company_ai("stability", "Stability"),
    _word("stability", _A, "StableLM"),
    # Chinese vendors and models in Latin letters. Big companies are ambiguous, as Google is:
    # an answer about TikTok names ByteDance without naming a model.
    _word("baidu", _V, "Baidu"),
    _exact("baidu", _A, "ERNIE"),
    _word("baidu", _A, "Ernie", ambiguous=True),
    _word("baidu", _A, "Wenxin"),
    _word("bytedance", _V, "ByteDance", ambiguous=True),
    _word("bytedance", _A, "Doubao"),
    _word("tencent", _V, "Tencent", ambiguous=True),
    _word("tencent", _A, "Hunyuan"),
    _word("iflytek", _V, "iFlytek"),
    _word("sensetime", _V, "SenseTime"),
    _word("sensetime", _A, "SenseNova"),
    # "minimax" is also the game-theory rule; the company writes MiniMax.
    _exact("minimax", _V, "MiniMax"),
    # --- the same families in Chinese, Japanese and Korean -------------------------------------
    # Ambiguous where the word is also ordinary Chinese: 通义 (a word of classical
    # titles, 《白虎通义》), 文心 (《文心雕龙》), 混元 (Daoist cosmology), 百川 (海纳百川,
    # "all rivers"), 豆包 (a bean bun), 商汤 (King Tang of Shang), 日日新 ("new every
    # day", the Great Learning), 月之暗面 (the dark side of the moon), 星火 (a spark),
    # and the big companies. 百度 is the vendor even as a verb: "百度一下" names it.
    _cjk("alibaba", _A, "通义千问"),
    _cjk("alibaba", _A, "通义", ambiguous=True),
    _cjk("alibaba", _A, "千问", not_after="一二三四五六七八九十百千万两几数0-9"),
    _cjk("alibaba", _V, "阿里云"),
    _cjk("alibaba", _V, "阿里巴巴", ambiguous=True),
    _cjk("baidu", _V, "百度"),
    _cjk("baidu", _A, "文心一言"),
    _cjk("baidu", _A, "文心", ambiguous=True),
    _cjk("tsinghua", _V, "智谱"),
    _cjk("tsinghua", _V, "智谱AI"),
    _cjk("tsinghua", _A, "智谱清言"),
    _cjk("moonshot", _V, "月之暗面", ambiguous=True),
    _cjk("moonshot", _V, "月之暗面科技"),
    _cjk("deepseek", _V, "深度求索"),
    _cjk("bytedance", _V, "字节跳动"),
    _cjk("bytedance", _A, "豆包", ambiguous=True),
    _cjk("iflytek", _V, "科大讯飞"),
    _cjk("iflytek", _V, "讯飞"),
    _cjk("iflytek", _A, "讯飞星火"),
    _cjk("iflytek", _A, "星火", ambiguous=True),
    _cjk("tencent", _V, "腾讯", ambiguous=True),
    _cjk("tencent", _A, "腾讯混元"),
    _cjk("tencent", _A, "混元", ambiguous=True),
    _cjk("01ai", _V, "零一万物"),
    _cjk("baichuan", _V, "百川智能"),
    _cjk("baichuan", _A, "百川", ambiguous=True),
    _cjk("minimax", _V, "稀宇"),
    _cjk("minimax", _V, "稀宇科技"),
    _cjk("minimax", _A, "海螺AI"),
    _cjk("sensetime", _V, "商汤科技"),
    _cjk("sensetime", _V, "商汤", ambiguous=True),
    _cjk("sensetime", _A, "日日新", ambiguous=True),
    _cjk("google", _V, "谷歌", ambiguous=True),
    _cjk("microsoft", _V, "微软", ambiguous=True),
    _cjk("anthropic", _A, "克劳德", ambiguous=True),
    # Japanese: クロード is also Claude Monet (クロード・モネ), ジェミニ the Gemini
    # programme, ラマ the animal, バード a bird; アンソロピック and the "オープン" and
    # "チャット" forms are only names.
    _cjk("anthropic", _V, "アンソロピック"),
    _cjk("anthropic", _A, "クロード", ambiguous=True),
    _cjk("openai", _V, "オープンAI"),
    _cjk("openai", _V, "オープンエーアイ"),
    _cjk("openai", _A, "チャットGPT"),
    _cjk("openai", _A, "チャットジーピーティー"),
    _cjk("google", _V, "グーグル", ambiguous=True),
    _cjk("google", _A, "ジェミニ", ambiguous=True),
    _cjk("google", _A, "バード", ambiguous=True),
    _cjk("meta", _V, "メタ", ambiguous=True),
    _cjk("meta", _A, "ラマ", ambiguous=True),
    _cjk("mistral", _A, "ミストラル", ambiguous=True),
    _cjk("deepseek", _A, "ディープシーク"),
    _cjk("microsoft", _V, "マイクロソフト", ambiguous=True),
    # Korean: 제미나이 is the model (the constellation is 쌍둥이자리, the programme 제미니); 클로드
    # is also the given name, 라마 the animal and the Dalai Lama.
    _cjk("anthropic", _V, "앤트로픽"),
    _cjk("anthropic", _A, "클로드", ambiguous=True),
    _cjk("openai", _V, "오픈AI"),
    _cjk("openai", _A, "챗GPT"),
    _cjk("google", _V, "구글", ambiguous=True),
    _cjk("google", _A, "제미나이"),
    _cjk("meta", _V, "메타", ambiguous=True),
    _cjk("meta", _A, "라마", ambiguous=True),
    _cjk("mistral", _A, "미스트랄", ambiguous=True),
    _cjk("deepseek", _A, "딥시크"),
    _cjk("microsoft", _V, "마이크로소프트", ambiguous=True),
)
"""Vendors and model names by family. Extend through config `extra_markers` (always scrubbed)
and `scrub_ambiguous` (an ambiguous word scrubbed everywhere)."""

FAMILIES: frozenset[str] = frozenset(t.family for t in LEXICON)


def ambiguous_labels() -> list[str]:
    """Lower-cased labels a `scrub_ambiguous` entry may name, for error messages."""
    return sorted({t.label.lower() for t in LEXICON if t.ambiguous})
