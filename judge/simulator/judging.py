"""How the simulated judge decides: candidates, latent quality, planted biases, reply text.

Pure functions over strings; no HTTP. The server hands in the last user message, the system
instructions and a digest of the request's messages, and gets back a `Decision` and the reply
text for it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from judge.blinding.injection import detect
from judge.config.simulator import ReplyStyle, SimulatorConfig
from judge.rubric.rubrics import NOTES_HEADING


def _delimited(tag: str) -> re.Pattern[str]:
    # `[TAG]text[/TAG]`, written as an unrolled loop (runs of non-brackets, then a bracket that
    # does not close): five times faster than a lazy `.*?` on every request. Whitespace and
    # newlines around the text belong to the template; callers strip them.
    close = re.escape(f"[/{tag}]")
    return re.compile(rf"\[{re.escape(tag)}\]([^\[]*(?:\[(?!{close[2:]})[^\[]*)*){close}")


# Delimiters written by the rubric templates (see rubrics/*.yaml).
RESPONSE_A_PATTERN = _delimited("RESPONSE A")
RESPONSE_B_PATTERN = _delimited("RESPONSE B")
RESPONSE_PATTERN = _delimited("RESPONSE")
SUMMARY_PATTERN = _delimited("SUMMARY")
SINGLE_PATTERNS = (RESPONSE_PATTERN, SUMMARY_PATTERN)
"""Where an absolute rubric puts the one candidate, tried in this order."""
# Any other rubric's delimiters, `[ANSWER A]...[/ANSWER A]` or `<answer_b>...</answer_b>`: tried
# only when the built-in rubrics' tags are absent (a backreference is slower).
_ANY_DELIMITED = re.compile(
    r"\[(?P<sq>[A-Za-z][\w \-]{0,40})\](?P<sq_body>.*?)\[/(?P=sq)\]"
    r"|<(?P<ang>[A-Za-z][\w\-]{0,40})>(?P<ang_body>.*?)</(?P=ang)>",
    re.S,
)
_SLOT_SUFFIX = re.compile(r"(?:^|[\s_\-])([AB12])$", re.I)
# What an absolute rubric's instructions say about the expected reply (rubrics render the
# scale as "an integer from 1 to 10" and multi-criterion replies as "scores": {"x": ...}).
SCALE_PATTERN = re.compile(r"\bfrom (\d+) to (\d+)\b")
SCORES_SPEC_PATTERN = re.compile(r'"scores"\s*:\s*\{([^{}]*)\}')
_SPEC_KEY = re.compile(r'"([^"]+)"\s*:')
# Hidden ground truth planted in a candidate's text by tests: ⟦quality=0.73⟧.
QUALITY_PATTERN = re.compile(r"⟦quality=([0-9]*\.?[0-9]+)⟧")

FAMILY_MARKERS: dict[str, tuple[str, ...]] = {
    "openai": ("ChatGPT", "OpenAI", "GPT-4", "GPT-4o", "GPT-3.5", "GPT-5"),
    "anthropic": ("Claude", "Anthropic"),
    "google": ("Gemini", "Bard", "Google DeepMind", "Gemma"),
    "meta": ("Llama", "Meta AI"),
    "mistral": ("Mistral", "Mixtral", "Le Chat"),
    "alibaba": ("Qwen", "Tongyi", "Alibaba Cloud"),
    "deepseek": ("DeepSeek",),
    "lmsys": ("Vicuna", "LMSYS"),
    "stanford": ("Alpaca",),
    "microsoft": ("Phi-3", "Phi-4", "Orca", "WizardLM"),
    "cohere": ("Command R", "Cohere"),
    "xai": ("Grok", "xAI"),
}
"""Identity markers a family's models leave in their answers ("As ChatGPT, ..."). A family not
listed here is recognised by its own name."""

REFUSAL_TEXT = "I can't help with that."
MALFORMED_TEXT = (
    "Both responses have merits and drawbacks, and which one is preferable depends on what "
    "the user values most: brevity, completeness or tone. More context would help here."
)
NO_CANDIDATES_TEXT = (
    "I could not find the responses to evaluate: expected them between delimiter tags, "
    "[RESPONSE A]...[/RESPONSE A] and [RESPONSE B]...[/RESPONSE B] (any tags ending in A and B, "
    "or 1 and 2), or one response as the last delimited block ([RESPONSE]...[/RESPONSE])."
)

# Absolute rubrics have no second answer to compare lengths with: verbosity is measured
# against an answer of typical length.
_TYPICAL_CHARS = 400
_MTBENCH_TIE = "C"  # MT-Bench's pairwise prompt asks for [[A]], [[B]] or [[C]] for a tie
_ADJECTIVES = ("poor", "weak", "adequate", "good", "excellent")
_REASONING_KEYS = ("reason", "explan", "rational", "analysis", "thought", "justif", "critique")
_LABEL_KEYS = {"verdict", "label", "winner", "choice", "preference", "better", "answer"}
_SCORE_KEYS = {"score", "rating", "grade"}
_TIE_SPELLINGS = ("tie", "Tie", "TIE", "C", "draw", "equal", "none")


@dataclass(frozen=True, slots=True)
class Decision:
    """What the simulated judge concluded about one request."""

    kind: Literal["pairwise", "absolute"]
    label: Literal["A", "B", "tie"] | None = None
    utility: float = 0.0
    """Absolute rubrics: the response's utility, clipped to [0, 1]."""
    unsure: bool = False
    low: int = 1
    high: int = 5
    """Absolute rubrics: the score range the instructions asked for (default 1-5)."""
    criteria: tuple[tuple[str, float], ...] = ()
    """Multi-criterion absolute rubrics: (criterion, utility) in the order asked for."""

    def score(self, low: int | None = None, high: int | None = None) -> int:
        return _scale(
            self.utility, self.low if low is None else low, self.high if high is None else high
        )

    def scores(self, low: int | None = None, high: int | None = None) -> dict[str, int]:
        low, high = self.low if low is None else low, self.high if high is None else high
        return {name: _scale(utility, low, high) for name, utility in self.criteria}

    def criterion_score(self, name: str, low: int | None = None, high: int | None = None) -> int:
        utility = dict(self.criteria).get(name, self.utility)
        return _scale(
            utility, self.low if low is None else low, self.high if high is None else high
        )

    def reasoning(self) -> str:
        if self.kind == "absolute":
            adjective = _ADJECTIVES[min(4, int(self.utility * 5))]
            return f"The response is {adjective} overall for what was asked."
        if self.label == "tie":
            return "Both responses are of comparable quality; neither is clearly better."
        other = "B" if self.label == "A" else "A"
        if self.unsure:
            return (
                f"Both responses are of similar quality; Response {self.label} is marginally "
                f"preferable to Response {other}."
            )
        return (
            f"Response {self.label} addresses the question more completely and accurately "
            f"than Response {other}."
        )


def _scale(utility: float, low: int, high: int) -> int:
    return max(low, min(high, round(low + (high - low) * utility)))


def decide(
    config: SimulatorConfig,
    family: str,
    user_text: str,
    content_digest: bytes,
    instructions: str = "",
) -> Decision | None:
    """The verdict for one request; None when the prompt holds no delimited candidates.

    `instructions` (the system text) is read by absolute rubrics only, for the score range and
    the criteria of a multi-criterion reply.

    Utilities depend on the candidates only (their noise is keyed by the unordered pair), so
    presenting a pair in the other order changes nothing but the unsure case, which is where
    position bias acts.
    """
    if config.heed and NOTES_HEADING in instructions:
        config = heeded(config, instructions.partition(NOTES_HEADING)[2])
    a = RESPONSE_A_PATTERN.search(user_text)
    b = RESPONSE_B_PATTERN.search(user_text)
    if a and b:
        return _decide_pair(config, family, a.group(1).strip(), b.group(1).strip(), content_digest)
    found = next((m.group(1) for p in SINGLE_PATTERNS if (m := p.search(user_text))), None)
    if found is None:
        pair, found = _other_delimiters(user_text)
        if pair is not None:
            return _decide_pair(config, family, pair[0].strip(), pair[1].strip(), content_digest)
    if found is None:
        return None
    decision = _decide_single(config, family, found.strip(), content_digest)
    return _shape_absolute(config, decision, found, instructions, user_text)


_NOTE_TOPICS = {
    "position": re.compile(r"\border\b|\bshown first\b|\bposition", re.IGNORECASE),
    "length": re.compile(r"\blonger\b|\bshorter\b|\blength\b", re.IGNORECASE),
    # Only the note against too many ties: the other asks for more, which this does not model.
    "tie": re.compile(r"\bsay tie only when\b", re.IGNORECASE),
}


def heeded(config: SimulatorConfig, notes: str) -> SimulatorConfig:
    """`config` as a judge that read `notes` (a rubric's clarifications) follows them: each
    bias a note is about loses `heed` of its pull (`SimulatorConfig.heed`)."""
    keep = 1.0 - config.heed
    update: dict[str, float] = {}
    if _NOTE_TOPICS["position"].search(notes):
        update["position_bias"] = 0.5 + (config.position_bias - 0.5) * keep
    if _NOTE_TOPICS["length"].search(notes):
        update["verbosity_bias"] = config.verbosity_bias * keep
    if _NOTE_TOPICS["tie"].search(notes):
        update["tie_probability"] = config.tie_probability * keep
    return config.model_copy(update=update) if update else config


def _other_delimiters(user_text: str) -> tuple[tuple[str, str] | None, str | None]:
    """Candidates between a custom rubric's own tags: two blocks whose names end in A and B (or
    1 and 2) are a pair; otherwise the last block is the one response (it follows the
    question in every rubric this simulator has met)."""
    blocks = [
        (m.group("sq") or m.group("ang"), m.group("sq_body") or m.group("ang_body") or "")
        for m in _ANY_DELIMITED.finditer(user_text)
    ]
    slots: dict[str, str] = {}
    for name, body in blocks:
        suffix = _SLOT_SUFFIX.search(name)
        if suffix:
            slots.setdefault(
                {"1": "A", "2": "B"}.get(suffix.group(1), suffix.group(1).upper()), body
            )
    if "A" in slots and "B" in slots:
        return (slots["A"], slots["B"]), None
    return None, (blocks[-1][1] if blocks else None)


def _shape_absolute(
    config: SimulatorConfig, decision: Decision, text: str, instructions: str, user_text: str
) -> Decision:
    """Fit an absolute decision to the reply the instructions ask for: range and criteria."""
    outside = user_text.replace(text, "")  # what the candidate wrote must not steer this
    low, high = decision.low, decision.high
    scale = SCALE_PATTERN.search(instructions) or SCALE_PATTERN.search(outside)
    if scale and int(scale.group(1)) < int(scale.group(2)):
        low, high = int(scale.group(1)), int(scale.group(2))
    spec = SCORES_SPEC_PATTERN.search(instructions) or SCORES_SPEC_PATTERN.search(outside)
    criteria: tuple[tuple[str, float], ...] = ()
    if spec:
        names = _SPEC_KEY.findall(spec.group(1))
        # Criteria share the response's utility, each with its own seeded wobble.
        criteria = tuple(
            (name, _clip(decision.utility + _criterion_noise(config, text, name))) for name in names
        )
    return Decision("absolute", utility=decision.utility, low=low, high=high, criteria=criteria)


def _criterion_noise(config: SimulatorConfig, text: str, name: str) -> float:
    if config.noise <= 0:
        return 0.0
    u = uniforms(config.seed, b"criterion", name.encode(), b"\0", text.encode())
    return config.noise * normal_pair(u[0], u[1])[0]


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def fooled(config: SimulatorConfig, text: str, context: bytes = b"") -> bool:
    """Whether the judge falls for what this candidate's text tells it (or, for a master key,
    for what it leaves out): `injection_susceptibility` and `master_key_susceptibility`. The
    judge reads the text as rendered, neutralisation included: a verdict format the rubric
    defused (`[ [A] ]`) no longer reads as one. The draw is keyed by the text and `context`
    (the other candidate, or the request), so a constant answer is not fooled all-or-nothing.
    Free when both knobs are 0."""
    if not (config.injection_susceptibility or config.master_key_susceptibility):
        return False
    rule = detect(text)
    if rule is None:
        return False
    chance = (
        config.master_key_susceptibility
        if rule == "master_key"
        else config.injection_susceptibility
    )
    return uniforms(config.seed, b"fooled", text.encode(), b"\0", context)[0] < chance


def _decide_pair(
    config: SimulatorConfig, family: str, text_a: str, text_b: str, content_digest: bytes
) -> Decision:
    fooled_a = fooled(config, text_a, text_b.encode())
    fooled_b = fooled(config, text_b, text_a.encode())
    if fooled_a != fooled_b:  # both fooling it: the two pulls cancel, quality decides
        return Decision("pairwise", "A" if fooled_a else "B")
    noise_a = noise_b = 0.0
    if config.noise > 0:
        first, second = sorted((text_a, text_b))
        u = uniforms(config.seed, b"pair", first.encode(), b"\0", second.encode())
        noise_first, noise_second = (config.noise * z for z in normal_pair(u[0], u[1]))
        noise_a, noise_b = (
            (noise_first, noise_second) if text_a == first else (noise_second, noise_first)
        )
    u_a = _utility(config, family, text_a) + noise_a
    u_b = _utility(config, family, text_b) + noise_b
    if config.verbosity_bias:
        # Bonus for the longer answer, proportional to how much longer it is.
        ratio = math.log((_length(text_a) + 1) / (_length(text_b) + 1))
        if ratio > 0:
            u_a += config.verbosity_bias * ratio
        else:
            u_b -= config.verbosity_bias * ratio
    if abs(u_a - u_b) >= config.tie_margin:
        return Decision("pairwise", "A" if u_a > u_b else "B")
    # Unsure: this is the only draw that depends on the presented order.
    u = uniforms(config.seed, b"unsure", content_digest)
    if u[0] < config.tie_probability:
        return Decision("pairwise", "tie", unsure=True)
    return Decision("pairwise", "A" if u[1] < config.position_bias else "B", unsure=True)


def _decide_single(
    config: SimulatorConfig, family: str, text: str, content_digest: bytes = b""
) -> Decision:
    if fooled(config, text, content_digest):
        return Decision("absolute", utility=1.0)
    utility = _utility(config, family, text)
    if config.verbosity_bias:
        utility += config.verbosity_bias * math.log((_length(text) + 1) / _TYPICAL_CHARS)
    if config.noise > 0:
        u = uniforms(config.seed, b"single", text.encode())
        utility += config.noise * normal_pair(u[0], u[1])[0]
    return Decision("absolute", utility=_clip(utility))


def _utility(config: SimulatorConfig, family: str, text: str) -> float:
    utility = quality_of(text)
    if config.self_preference and markers_pattern(family).search(text):
        utility += config.self_preference
    return utility


@lru_cache(maxsize=4096)
def quality_of(text: str) -> float:
    """Latent quality: the planted ⟦quality=x⟧ marker; else 0 for a text that talks to the
    judge instead of answering (what `judge.blinding.injection.detect` flags, neutralised or not: a
    judge that is not fooled by a canary still sees the non-answer it is); else a
    pseudo-quality hashed from the text (independent of the seed: it is a property of the
    answer, not of the judge)."""
    found = QUALITY_PATTERN.search(text)
    if found:
        return min(1.0, max(0.0, float(found.group(1))))
    if detect(_as_read(text)) is not None:
        return 0.0
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _as_read(text: str) -> str:
    """`text` as a reader takes it in: a defused verdict (`[ [A] ]`, a word joiner inside
    "verdict") still reads as a forged verdict, though no longer as one in the judge's own
    format (which is what `fooled` asks)."""
    return text.replace("\u2060", "").replace("[ [", "[[").replace("] ]", "]]")


def _length(text: str) -> int:
    # The hidden marker is not part of the answer a reader sees.
    return len(text) - sum(len(m.group(0)) for m in QUALITY_PATTERN.finditer(text))


@lru_cache(maxsize=256)
def markers_pattern(family: str) -> re.Pattern[str]:
    """Case-insensitive pattern matching any identity marker of `family`."""
    markers = FAMILY_MARKERS.get(family, (family,) if len(family) >= 3 else ())
    if not markers:
        return re.compile(r"(?!x)x")  # matches nothing
    alternatives = "|".join(re.escape(m) for m in markers)
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w])", re.IGNORECASE)


_UNIFORMS = struct.Struct(">4Q")
_SCALE = 1.0 / 2**52


def uniforms(seed: int, *parts: bytes) -> tuple[float, float, float, float]:
    """Four independent uniforms in (0, 1), a pure function of the seed and `parts`.

    One sha256 per draw set instead of a seeded `random.Random`: this is on every request's
    path, and seeding a Mersenne Twister costs more than the rest of the judging.
    """
    digest = hashlib.sha256(seed.to_bytes(16, "big", signed=True) + b"".join(parts)).digest()
    # 52 bits each, offset by half a step: strictly inside (0, 1), so log() and `u < p` are safe.
    a, b, c, d = _UNIFORMS.unpack(digest)
    return (
        ((a >> 12) + 0.5) * _SCALE,
        ((b >> 12) + 0.5) * _SCALE,
        ((c >> 12) + 0.5) * _SCALE,
        ((d >> 12) + 0.5) * _SCALE,
    )


def normal_pair(u1: float, u2: float) -> tuple[float, float]:
    """Two independent standard normals from two uniforms (Box-Muller)."""
    radius = math.sqrt(-2.0 * math.log(u1))
    angle = 2.0 * math.pi * u2
    return radius * math.cos(angle), radius * math.sin(angle)


def reply_text(decision: Decision, style: ReplyStyle) -> str:
    """The judge's free-text reply, reasoning first."""
    reasoning = decision.reasoning()
    if decision.kind == "absolute":
        score = decision.score()
        if decision.criteria:
            scores = decision.scores()
            if style == "json":
                return json.dumps({"reasoning": reasoning, "scores": scores})
            lines = "\n".join(f"{name}: {value}" for name, value in scores.items())
            return f"{reasoning}\n\n{lines}"
        if style == "json":
            return json.dumps({"reasoning": reasoning, "score": score})
        if style == "mtbench":
            return f"{reasoning}\n\nRating: [[{score}]]"
        return f"{reasoning}\n\nScore: {score}"
    label = decision.label or "tie"
    if style == "json":
        return json.dumps({"reasoning": reasoning, "verdict": label})
    if style == "mtbench":
        return f"{reasoning}\n\n[[{_MTBENCH_TIE if label == 'tie' else label}]]"
    return f"{reasoning}\n\nVerdict: {label}"


def typical_reply(
    kind: Literal["pairwise", "absolute"], criteria: Sequence[str] = (), style: ReplyStyle = "json"
) -> str:
    """A confident verdict's reply as the simulator writes it (structured output reads as
    `json`): what a dry run expects a simulated judge to send back."""
    if kind == "pairwise":
        return reply_text(Decision("pairwise", "A"), style)
    decision = Decision("absolute", utility=0.7, criteria=tuple((c, 0.7) for c in criteria))
    return reply_text(decision, style)


def structured_reply(decision: Decision, schema: dict[str, Any] | None) -> dict[str, Any]:
    """The reply as an object following `schema` (a JSON schema), as structured output does.

    Property names are matched loosely (reasoning/rationale/explanation, verdict/label/winner,
    score/rating); enums are honoured, so a schema may spell the tie "C" or "tie".
    """
    properties = (schema or {}).get("properties")
    if not isinstance(properties, dict) or not properties:
        if decision.kind == "absolute" and decision.criteria:
            return {"reasoning": decision.reasoning(), "scores": decision.scores()}
        if decision.kind == "absolute":
            return {"reasoning": decision.reasoning(), "score": decision.score()}
        return {"reasoning": decision.reasoning(), "verdict": decision.label}
    return {name: _fill(decision, name, sub) for name, sub in properties.items()}


def _fill(decision: Decision, name: str, schema: Any) -> Any:
    schema = schema if isinstance(schema, dict) else {}
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    lowered = name.lower()
    if kind == "object" and isinstance(schema.get("properties"), dict):
        return {k: _fill(decision, k, v) for k, v in schema["properties"].items()}
    if any(key in lowered for key in _REASONING_KEYS):
        return decision.reasoning()
    if decision.kind == "pairwise" and (lowered in _LABEL_KEYS or "enum" in schema):
        return _enum_label(decision.label or "tie", schema.get("enum"))
    if lowered in _SCORE_KEYS or kind in ("integer", "number"):
        low, high = schema.get("minimum", decision.low), schema.get("maximum", decision.high)
        if not (isinstance(low, int | float) and isinstance(high, int | float) and high > low):
            low, high = decision.low, decision.high
        # A named criterion gets its own score; any other number the overall one.
        score = decision.criterion_score(name, math.ceil(low), math.floor(high))
        return score if kind != "number" else float(score)
    return {"string": "", "boolean": False, "array": [], "object": {}}.get(kind, "")


def _enum_label(label: str, enum: Any) -> str:
    if not isinstance(enum, list) or not enum:
        return label
    wanted = _TIE_SPELLINGS if label == "tie" else (label, label.lower())
    for option in enum:
        if option in wanted:
            return option
    return label
