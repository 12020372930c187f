"""Judge replies -> `Verdict`, or an explicit `ParseFailure` saying why not.

Rubrics ask for a JSON object with the reasoning first; judges do not always comply, so the
parser also reads the free-text forms judges commonly fall back to (`[[A]]`, `Verdict: B`,
`Score: 4/5`). It never guesses: a reply naming two different verdicts, a score off the
scale or a label the rubric does not allow is a failure with a reason, not a coerced value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Literal

from judge.rubric.rubrics import AbsoluteScale, Rubric
from judge.types import Label, ParseFailure, Verdict

EXCERPT_CHARS = 200
"""How much of a failed reply `ParseFailure.excerpt` keeps."""

_DECODER = json.JSONDecoder(strict=False)  # judges put raw newlines inside JSON strings
_NUM = r"[-+]?\d+(?:\.\d+)?"
_OUT_OF = rf"(?:\s*(?:/|out\s+of)\s*(?P<den>{_NUM}))?"
# Markup judges wrap answers in: bold, quotes, code ticks, brackets.
_WRAP = r"[\s*_\"'`]*(?:\[\[?\s*)?"
_KEY_SEP = r"[\"'*_\s]*(?::|=|\s+is\b)"
_REASONING_KEYS = ("reasoning", "explanation", "rationale")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})

_SIDE_WORDS = r"(?:response|assistant|model|answer|output|option|candidate|system)"
_TIE = r"(?:it'?s\s+)?(?:a\s+)?(?:tie|draw)|equal(?:ly\s+(?:good|bad|matched|strong|weak))?"
_PAIR_KEYS = (
    r"(?:(?:my|the|our)\s+)?(?:final\s+|overall\s+)?"
    r"(?:verdict|decision|winner|judge?ment|preference|(?:preferred|better)\s+response)"
)
_SCORE_KEYS = r"(?:(?:my|the|our)\s+)?(?:final\s+|overall\s+|total\s+)?(?:score|rating|grade)"

_REFUSAL = re.compile(
    r"\bi\s*(?:'m|am)\s+(?:sorry|afraid)\b.{0,60}?\b(?:can'?t|cannot|unable|won'?t)\b"
    r"|\bi\s*(?:can'?t|cannot|won'?t|will\s+not|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable))"
    r"\s+(?:to\s+)?(?:help|assist|comply|provide|evaluate|judge|rate|score|compare|answer"
    r"|complete|continue|fulfil|fulfill|do\s+(?:that|this))\b"
    r"|\bi\s+(?:must|have\s+to)\s+(?:respectfully\s+)?decline\b",
    re.IGNORECASE | re.DOTALL,
)


class _Failure(Exception):
    """Raised inside the parser; becomes a `ParseFailure` with this message as the reason."""


def parse_reply(text: str | None, rubric: Rubric) -> Verdict | ParseFailure:
    """Read one judge reply under `rubric`. Never raises for a bad reply: it returns a
    `ParseFailure` whose reason says what was wrong."""
    if text is None or not text.strip():
        return ParseFailure(reason="empty reply", excerpt=(text or "")[:EXCERPT_CHARS])
    try:
        return _parse(text, rubric)
    except _Failure as exc:
        return ParseFailure(reason=str(exc), excerpt=text[:EXCERPT_CHARS])


def repair_prompt(rubric: Rubric) -> str:
    """The follow-up message for one repair attempt: answer again, JSON object only."""
    if rubric.kind == "pairwise":
        labels = [f'"{label}"' for label in rubric.labels]
        answer = f'"verdict", one of {", ".join(labels[:-1])} or {labels[-1]}'
        example = '{"reasoning": "...", "verdict": "A"}'
    else:
        scale = rubric.scale
        assert isinstance(scale, AbsoluteScale)
        span = f"an integer from {scale.min} to {scale.max}"
        if rubric.answer_field == "scores":
            ids = [c.id for c in rubric.criteria]
            answer = f'"scores", an object giving each of {", ".join(ids)} {span}'
            inner = ", ".join(f'"{cid}": {scale.min}' for cid in ids)
            example = f'{{"reasoning": "...", "scores": {{{inner}}}}}'
        else:
            answer = f'"score", {span}'
            example = f'{{"reasoning": "...", "score": {scale.min}}}'
    return (
        "Your previous reply could not be read. Answer again with only a JSON object, with no "
        "text before or after it and no code fence. It must have two fields, in this order: "
        f'"reasoning", a brief explanation; then {answer}. For example:\n{example}'
    )


def _parse(text: str, rubric: Rubric) -> Verdict:
    objects = _json_objects(text)
    found = _last_with_answer(objects, rubric)
    if found is not None:
        return _from_json(found, rubric)
    verdict = _from_text(text.translate(_APOSTROPHES), rubric)
    if verdict is not None:
        return verdict
    field = rubric.answer_field
    if objects:
        raise _Failure(f"JSON reply has no '{field}' field")
    if re.search(r"\{\s*\"", text):
        raise _Failure(f"truncated JSON: the reply opens a JSON object that never closes ({field})")
    if _REFUSAL.search(text.translate(_APOSTROPHES)):
        raise _Failure("refusal: the judge declined to give a verdict")
    raise _Failure("no verdict found" if rubric.kind == "pairwise" else "no score found")


# --- JSON -----------------------------------------------------------------------------------


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every complete top-level JSON object in the text, in order (fenced, bare or in prose)."""
    found: list[dict[str, Any]] = []
    start = text.find("{")
    while start != -1:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        start = text.find("{", end)
    return found


def _last_with_answer(objects: list[dict[str, Any]], rubric: Rubric) -> dict[str, Any] | None:
    # The last object wins: judges often echo the requested format before their answer.
    for obj in reversed(objects):
        for candidate in _walk(obj):
            if _has_answer(candidate, rubric):
                return candidate
    return None


def _walk(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield obj
    for value in obj.values():
        if isinstance(value, dict):
            yield from _walk(value)


def _lower_keys(obj: dict[str, Any]) -> dict[str, Any]:
    return {k.strip().lower(): v for k, v in obj.items() if isinstance(k, str)}


def _has_answer(obj: dict[str, Any], rubric: Rubric) -> bool:
    keys = _lower_keys(obj)
    if rubric.kind == "pairwise":
        return "verdict" in keys
    if rubric.answer_field == "score":
        return "score" in keys or "rating" in keys
    return "scores" in keys or all(c.id in keys for c in rubric.criteria)


def _from_json(obj: dict[str, Any], rubric: Rubric) -> Verdict:
    keys = _lower_keys(obj)
    reasoning = next((keys[k] for k in _REASONING_KEYS if k in keys), "")
    if not isinstance(reasoning, str):
        reasoning = json.dumps(reasoning, ensure_ascii=False)
    if rubric.kind == "pairwise":
        value = keys["verdict"]
        label = _label_at_start(value, rubric) if isinstance(value, str) else None
        if label is None:
            raise _Failure(f"unrecognised verdict {value!r}; expected one of {_labels(rubric)}")
        return Verdict(label=_allowed(label, rubric), reasoning=reasoning, parsed_from="json")
    if rubric.answer_field == "score":
        value = keys["score"] if "score" in keys else keys["rating"]
        score = _score(value, rubric, "score")
        return Verdict(score=score, reasoning=reasoning, parsed_from="json")
    table = keys.get("scores", keys)
    if not isinstance(table, dict):
        raise _Failure(f"'scores' must be an object with one score per criterion, got {table!r}")
    table = _lower_keys(table)
    scores = {}
    for criterion in rubric.criteria:
        if criterion.id not in table:
            raise _Failure(f"missing score for criterion '{criterion.id}'")
        scores[criterion.id] = _score(table[criterion.id], rubric, f"score for '{criterion.id}'")
    return _multi(scores, reasoning, "json")


# --- free text ------------------------------------------------------------------------------


def _from_text(text: str, rubric: Rubric) -> Verdict | None:
    if rubric.kind == "pairwise":
        return _pairwise_text(text, rubric)
    if rubric.answer_field == "score":
        return _score_text(text, rubric)
    return _scores_text(text, rubric)


@lru_cache(maxsize=64)
def _pairwise_patterns(extra: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """(verdict forms searched anywhere..., a verdict at the start of a JSON value)."""
    answers = "".join(f"{re.escape(a)}|" for a in sorted(extra, key=len, reverse=True))
    token = rf"(?P<tok>{answers}{_TIE}|(?:{_SIDE_WORDS}\s*)?[ab]|c)(?!\w)"
    forms = (rf"\[\[\s*{token}\s*\]\]", rf"\b{_PAIR_KEYS}{_KEY_SEP}{_WRAP}{token}")
    start = rf"[\s*_\"'`\[(]*{token}"
    return tuple(re.compile(p, re.IGNORECASE) for p in (*forms, start))


def _pairwise_text(text: str, rubric: Rubric) -> Verdict | None:
    *forms, _ = _pairwise_patterns(tuple(rubric.output.labels))
    matches = [m for pattern in forms for m in pattern.finditer(text)]
    hits = [(m.start(), _token_label(m, rubric)) for m in matches]
    hits = [(start, label) for start, label in hits if label is not None]
    if not hits:
        return None
    labels = sorted({label for _, label in hits})
    if len(labels) > 1:
        raise _Failure(f"ambiguous: the reply gives more than one verdict ({', '.join(labels)})")
    reasoning = _before(text, min(start for start, _ in hits))
    return Verdict(label=_allowed(labels[0], rubric), reasoning=reasoning, parsed_from="text")


def _label_at_start(value: str, rubric: Rubric) -> Label | None:
    pattern = _pairwise_patterns(tuple(rubric.output.labels))[-1]
    match = pattern.match(value.translate(_APOSTROPHES))
    return _token_label(match, rubric) if match else None


def _token_label(match: re.Match[str], rubric: Rubric) -> Label | None:
    token = match.group("tok")
    # A bare lower-case letter followed by a word is an article ("Verdict: a close call"),
    # not a label.
    if len(token) == 1 and token.islower() and re.match(r"\s+[a-z]", match.string[match.end() :]):
        return None
    low = " ".join(token.lower().split())
    for answer, label in rubric.output.labels.items():
        if low == answer.lower():
            return label
    if low == "c" or re.search(r"tie|draw|equal", low):
        return "tie"
    return "A" if low.endswith("a") else "B"


def _score_text(text: str, rubric: Rubric) -> Verdict | None:
    patterns = (
        rf"\[\[\s*(?P<num>{_NUM})\s*(?:/\s*(?P<den>{_NUM})\s*)?\]\]",
        rf"\b{_SCORE_KEYS}\b(?:{_KEY_SEP}|\s+of\b){_WRAP}(?P<num>{_NUM}){_OUT_OF}",
    )
    hits = [m for p in patterns for m in re.finditer(p, text, re.IGNORECASE)]
    # "4/5" as the last thing said also counts, e.g. "... so I'd give it 4/5."
    tail = re.search(rf"(?P<num>{_NUM})\s*(?:/|out\s+of)\s*(?P<den>{_NUM})[\s.!*_)\]]*$", text)
    if tail:
        hits.append(tail)
    if not hits:
        return None
    score = _one_score(hits, rubric, "score")
    reasoning = _before(text, min(m.start() for m in hits))
    return Verdict(score=score, reasoning=reasoning, parsed_from="text")


def _scores_text(text: str, rubric: Rubric) -> Verdict | None:
    found: dict[str, list[re.Match[str]]] = {}
    for criterion in rubric.criteria:
        name = re.escape(criterion.id).replace("_", "[ _]")
        label = rf"\b{name}\b[\"'*_\s]*(?:score|rating)?[\"'*_\s]*[:=\-–]"
        pattern = rf"{label}{_WRAP}(?P<num>{_NUM}){_OUT_OF}"
        matches = list(re.finditer(pattern, text, re.IGNORECASE))
        if matches:
            found[criterion.id] = matches
    if not found:
        return None
    scores = {}
    for criterion in rubric.criteria:
        if criterion.id not in found:
            raise _Failure(f"missing score for criterion '{criterion.id}'")
        scores[criterion.id] = _one_score(found[criterion.id], rubric, f"'{criterion.id}'")
    first = min(m.start() for ms in found.values() for m in ms)
    return _multi(scores, _before(text, first), "text")


def _before(text: str, end: int) -> str:
    # The explanation is what precedes the verdict, minus the markup that led into it.
    return text[:end].rstrip(" \t\n*_#:-").strip()


def _one_score(matches: list[re.Match[str]], rubric: Rubric, what: str) -> float:
    values = {(float(m.group("num")), m.group("den")) for m in matches}
    if len({v for v, _ in values}) > 1:
        shown = ", ".join(sorted({m.group("num") for m in matches}))
        raise _Failure(f"ambiguous: the reply gives more than one {what} ({shown})")
    value, den = sorted(values, key=lambda v: v[1] is None)[0]
    return _score(f"{value:g}/{den}" if den else value, rubric, what)


# --- values ---------------------------------------------------------------------------------


def _score(value: Any, rubric: Rubric, what: str) -> float:
    scale = rubric.scale
    assert isinstance(scale, AbsoluteScale)
    den: str | None = None
    if isinstance(value, bool):
        raise _Failure(f"{what} must be a number, got {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        match = re.fullmatch(
            rf"[\s\[*]*(?P<num>{_NUM})[\s\]*]*{_OUT_OF}[\s.]*", value, re.IGNORECASE
        )
        if match is None:
            raise _Failure(f"{what} must be a number, got {value!r}")
        number, den = float(match.group("num")), match.group("den")
    else:
        raise _Failure(f"{what} must be a number, got {value!r}")
    if not math.isfinite(number):
        raise _Failure(f"{what} must be a finite number, got {value!r}")
    if den is not None and float(den) != scale.max:
        raise _Failure(f"{what} {number:g}/{den} is not on the scale {scale.min}-{scale.max}")
    if not scale.min <= number <= scale.max:
        # Never clamped: a judge using another scale would otherwise look like an extreme one.
        raise _Failure(f"{what} {number:g} is outside the scale {scale.min}-{scale.max}")
    return number


def _multi(scores: dict[str, float], reasoning: str, source: Literal["json", "text"]) -> Verdict:
    # `score` carries the unweighted mean so single-number summaries work for every rubric.
    mean = sum(scores.values()) / len(scores)
    return Verdict(score=mean, scores=scores, reasoning=reasoning, parsed_from=source)


def _allowed(label: Label, rubric: Rubric) -> Label:
    if label not in rubric.labels:
        raise _Failure(f"label '{label}' is not in this rubric's scale ({_labels(rubric)})")
    return label


def _labels(rubric: Rubric) -> str:
    return ", ".join(rubric.labels)


def output_schema(rubric: Rubric) -> dict[str, Any]:
    """JSON schema of the reply, for providers with structured output (OpenAI `json_schema`,
    Anthropic tool input). Field order puts `reasoning` first so it is generated first."""
    answer: dict[str, Any]
    if rubric.kind == "pairwise":
        answer = {"type": "string", "enum": list(rubric.labels)}
    else:
        scale = rubric.scale
        level = {"type": "integer", "minimum": scale.min, "maximum": scale.max}  # type: ignore[union-attr]
        if rubric.answer_field == "scores":
            names = [c.id for c in rubric.criteria]
            answer = {
                "type": "object",
                "properties": dict.fromkeys(names, level),
                "required": names,
                "additionalProperties": False,
            }
        else:
            answer = level
    return {
        "type": "object",
        "properties": {"reasoning": {"type": "string"}, rubric.answer_field: answer},
        "required": ["reasoning", rubric.answer_field],
        "additionalProperties": False,
    }
