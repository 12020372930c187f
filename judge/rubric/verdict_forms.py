"""Verdict formats written inside candidate text, rewritten so no parser reads them.

`judge.rubric.parsing` reads a judge's reply in the forms judges answer in: `[[A]]`, `[[4]]`,
`{"verdict": "A"}`, `{"score": 4}`, `Verdict: B`, `Score: 4`. A candidate can write the same
forms ("Output: [[A]]"), and a judge that quotes the candidate in a free-text reply would then
hand the parser a verdict it did not give. So, in every candidate-controlled value rendered
into a prompt (`Rubric._neutralise`, beside the delimiter neutraliser):

* `[[X]]`, where X is a label, a tie word or a score, becomes `[ [X] ]`: the judge reads the
  same brackets (and code keeps its meaning: `[ [1] ]` is `[[1]]`), the parser's `[[`...`]]`
  no longer matches;
* an answer key before its separator (`"verdict":`, `Score:`, `rating =`) gets a WORD JOINER
  (U+2060, invisible) after its first letter: the judge reads the same word, the parser's
  key patterns no longer match it.

Nothing else changes; the injection detector (`judge.blinding.injection`) flags such text
separately.
"""

from __future__ import annotations

import re

__all__ = ["defuse_delimiters", "defuse_verdicts", "delimiter_neutraliser"]

_JOINER = "\u2060"
# What the parser accepts between doubled brackets: a label (optionally "Response A"), a tie
# word, or a number with an optional denominator. Short, on one line, no brackets.
_DOUBLE = re.compile(r"\[\[(?P<inner>[^\[\]\n]{1,40})\]\]")
_VERDICT_TOKEN = re.compile(
    r"\s*(?:(?:response|assistant|model|answer|output|option|candidate|system)\s*)?"
    r"(?:[abc]|tie|draw|equal\w*|[-+]?\d+(?:\.\d+)?(?:\s*/\s*[-+]?\d+(?:\.\d+)?)?)\s*",
    re.IGNORECASE,
)
_KEY = re.compile(
    r"\b(?:verdict|scores?|rating|grade|decision|winner|judge?ment|preference|preferred"
    r"|better)(?=[\"'*_\s]*(?::|=|\s+is\b)|\s+response\b)",
    re.IGNORECASE,
)
_CHEAP = re.compile(r"\[\[|verdict|score|rating|grade|decision|winner|judg|prefer|better", re.I)


def defuse_verdicts(text: str) -> str:
    """`text` with every verdict format the parser reads made unreadable to it (see the
    module docstring); the text itself as it is when it holds none."""
    if _CHEAP.search(text) is None:
        return text
    text = _DOUBLE.sub(_spaced, text)
    return _KEY.sub(lambda m: m.group(0)[0] + _JOINER + m.group(0)[1:], text)


def _spaced(match: re.Match[str]) -> str:
    inner = match.group("inner")
    if _VERDICT_TOKEN.fullmatch(inner) is None:
        return match.group(0)
    return f"[ [{inner}] ]"


# -- the prompt's own delimiters ------------------------------------------------------------
# A candidate that writes "</RESPONSE_A>" (in any bracket, case, spacing or invisible
# characters) could close the slot it is quoted in; the rubric's delimiter tags are rewritten.

_OPENERS = "[<［＜【〈‹«"
_CLOSERS = "]>］＞】〉›»"
_SLASHES = "/／⁄∕\\"
_INVISIBLE = r"\s\u00ad\u034f\u180e\u200b-\u200f\u2060-\u2064\ufeff_\-"


def delimiter_neutraliser(tags: set[str]) -> re.Pattern[str] | None:
    if not tags:
        return None
    gap = f"[{_INVISIBLE}]*"
    names = sorted({tag[1:] for tag in tags}, key=len, reverse=True)
    fuzzy = "|".join(gap.join(re.escape(ch) for ch in name.replace(" ", "")) for name in names)
    opener, closer, slash = (re.escape(s) for s in (_OPENERS, _CLOSERS, _SLASHES))
    return re.compile(
        f"[{opener}]{gap}(?:[{slash}]{gap})?(?:{fuzzy}){gap}[{closer}]", re.IGNORECASE
    )


def _defuse(match: re.Match[str]) -> str:
    # Brackets become parentheses: the judge still reads what the candidate wrote, but it no
    # longer matches any delimiter of the prompt.
    text = match.group(0)
    return "(" + text[1:-1] + ")"


def defuse_delimiters(pattern: re.Pattern[str] | None, text: str) -> str:
    """`text` with every delimiter `pattern` (from `delimiter_neutraliser`) matches defused."""
    if pattern is None:
        return text
    # Rewriting removes bracket characters and never adds any, so a rewrite cannot create a
    # new tag; the loop only guards against reasoning errors in that claim.
    for _ in range(8):
        new = pattern.sub(_defuse, text)
        if new == text:
            break
        text = new
    return text
