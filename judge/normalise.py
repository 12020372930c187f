"""Text as the scrubber matches it: what a disguise changes, undone, with a map back.

A marker written to slip past a word list (`Сlaude` with a Cyrillic С, fullwidth `ＣＬＡＵＤＥ`,
a zero-width space inside `Claude`, a non-breaking hyphen in `GPT‑4`, `g e m i n i`) reads as
the plain name after `normalise`. The folded text is for matching only: `Normalised.source`
says which input character each folded character came from, so the scrubber replaces the
marker's own span of the writer's text and leaves every other character as written.

Folding, one character at a time:

* Unicode NFKC (fullwidth forms, mathematical letters, ligatures), except where it would turn
  one symbol into several ("…" stays one character);
* format characters (category Cf: zero-width spaces and joiners, bidi controls, soft hyphen,
  byte-order mark, tag characters) and combining marks removed, and accents taken off Latin,
  Greek and Cyrillic letters ("Cláude" reads "Claude"; CJK text keeps its marks);
* Unicode's confusables (UTS #39 `confusables.txt`, as shipped by the maintained
  `confusable_homoglyphs` package): a non-ASCII letter with an ASCII look-alike becomes that
  letter in its own case (Cyrillic С -> C, Greek Α -> A, Greek Ι -> I);
* hyphen and dash variants become "-", other spaces " ".

Then runs of three or more single letters joined by one repeated separator ("g e m i n i",
"C.l.a.u.d.e", "G-P-T") are joined, keeping a lone first or last letter apart where the case
changes ("a C l a u d e" reads "a Claude", "q w e n I" reads "qwen I"); an abbreviation's
closing dot before a version goes with it ("G.P.T.-4" reads "GPT-4").

Given `names`, digits and symbols written for letters ("0penAI", "C1aude", "Cl@ude",
"Ant#ropic", "L1ama", "Gem1n1") are read as those letters, but only in a word that then
spells one of the names: "mp3", "H2O", "4th", "GPT-4o", "C#" and e-mail addresses stay as
written, since no general rule tells "1" the letter from "1" the number.

`disguised(original, folded)` tells a disguise from a mere typing style: fullwidth forms and
accents are how some keyboards write, look-alike letters, invisible characters and spaced-out
letters are not.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Container
from dataclasses import dataclass
from functools import cache

_HYPHENS = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\ufe58\ufe63\uff0d")
_DROPPED_CATEGORIES = frozenset({"Cf", "Mn", "Me"})
# Latin, Greek and Cyrillic end here: their accents are decoration for matching purposes.
_ACCENTED_SCRIPTS_END = 0x0530
UNSPACED = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
"""Scripts written without spaces between words (CJK ideographs, kana, hangul), as a regex
character-class body: their characters are never part of a Latin word ("阿里云G.P.T.-4")."""
_LETTER = r"[^\W\d_]"
_WORD = rf"[^\W_{UNSPACED}]"  # a Latin (Greek, Cyrillic, ...) word's characters
# A spaced-out run starts and ends outside a word; a Chinese, Japanese or Korean character is
# a word's neighbour to a character of its own scripts only ("阿里云G.P.T.-4" holds "G.P.T").
_RUN_START = rf"(?:(?<![^\W_])|(?<=[{UNSPACED}])(?=[^\W\d_{UNSPACED}]))"
_RUN_END = rf"(?:(?![^\W_])|(?<=[^\W\d_{UNSPACED}])(?=[{UNSPACED}]))"
_SPACED = re.compile(
    # Not after an apostrophe: the "m" of "I'm" is no letter of its own.
    rf"{_RUN_START}(?<!['’]){_LETTER}(?P<sep>[ .*_\-·])"
    rf"(?:{_LETTER}(?P=sep)){{1,}}{_LETTER}{_RUN_END}"
)
# How every spaced-out run ends ("i n i" of "g e m i n i"): four times cheaper to look for
# than the run itself, and absent from nearly every response.
_SPACED_END = re.compile(rf"([ .*_\-·]){_LETTER}\1{_LETTER}{_RUN_END}")
_VERSION_AFTER_DOT = frozenset("-0123456789")

# The letters each digit or symbol may stand for in a disguised name.
_STAND_INS = {
    **{"0": "o", "1": "li", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g"},
    **{"@": "a", "$": "s", "#": "h", "!": "il", "|": "li", "€": "e"},
}
_STAND_IN = re.escape("".join(_STAND_INS))
# A stand-in before a letter ("C1aude", "0penAI") or ending a word ("GP7-4o", "Gemm@ 2"):
# where every disguised word has one ("!" and "|" end words too often to count there: "Hi!",
# "| x |"). The pattern starts with the stand-ins, so the search skips from one to the next in
# C.
_WORD_END = re.escape("".join(c for c in _STAND_INS if c not in "!|"))
_STAND_IN_HIT = re.compile(
    rf"[{_STAND_IN}](?:(?={_LETTER})|(?<={_LETTER}[{_WORD_END}])(?!{_WORD}|[{_STAND_IN}]))"
)
_UNSPACED_LETTER = re.compile(f"[{UNSPACED}]")
_MAX_STAND_INS = 4
_MAX_WORD = 40  # longer runs of letters and digits (hashes, base64) hold no disguised name


@dataclass(frozen=True, slots=True)
class Normalised:
    """The folded text and, unless it is the input itself, where each character came from."""

    text: str
    source: list[int] | None
    """Index in the input of each folded character; None when character i came from input
    character i (the fold changed no lengths)."""
    changed: bool
    """The folded text differs from the input."""

    def positions(self) -> list[int]:
        return self.source if self.source is not None else list(range(len(self.text)))


class _FoldTable(dict[int, str]):
    """`str.translate` table filled on first use of each character."""

    def __init__(self) -> None:
        super().__init__()
        self.uneven: set[str] = set()

    def __missing__(self, code: int) -> str:
        folded = _fold_char(chr(code))
        if len(folded) != 1:
            self.uneven.add(chr(code))
        self[code] = folded
        return folded


@cache
def _confusables() -> dict[str, str]:
    """Non-ASCII character -> its ASCII look-alike, from Unicode's confusables data."""
    from confusable_homoglyphs.utils import load

    table: dict[str, str] = {}
    for char, glyphs in load("confusables.json").items():
        if len(char) != 1 or char.isascii():
            continue
        for glyph in glyphs:
            target = glyph["c"].strip("\u200e\u200f")
            if len(target) == 1 and target.isascii() and target.isalnum():
                table[char] = target
                break
    return table


def _fold_char(char: str) -> str:
    if char.isascii():
        return char
    nfkc = unicodedata.normalize("NFKC", char)
    if len(nfkc) > 1 and not unicodedata.category(char).startswith("L"):
        nfkc = char  # "…", "½", "™": one symbol, not several characters to match on
    return "".join(_fold_one(c) for c in nfkc)


def _fold_one(c: str) -> str:
    if c.isascii():
        return c
    if unicodedata.category(c) in _DROPPED_CATEGORIES:
        return ""
    if c in _HYPHENS:
        return "-"
    if c.isspace():
        return " "
    decomposed = unicodedata.normalize("NFD", c)
    if len(decomposed) > 1 and ord(decomposed[0]) < _ACCENTED_SCRIPTS_END:
        c = decomposed[0]
        if c.isascii():
            return c
    target = _confusables().get(c)
    if target is None:
        return c
    # Confusables' skeleton is caseless (capital I reads "l"); the lexicon is not.
    if c.isupper():
        return "I" if target == "l" else target.upper()
    return target.lower() if c.islower() else target


_TABLE = _FoldTable()
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def normalise(text: str, names: Container[str] = frozenset()) -> Normalised:
    """`text` as matched: folded characters, joined spaced-out letters and, where they spell
    one of `names` (lower case), digits and symbols read as letters; with a map back."""
    folded, source = (text, None) if text.isascii() else _fold(text)
    if names and _STAND_IN_HIT.search(folded) is not None:
        folded = _read_stand_ins(folded, names)  # letter for character: the map is unchanged
    if _SPACED_END.search(folded) is not None and _SPACED.search(folded) is not None:
        folded, source = _join_spaced(folded, source)
    return Normalised(folded, source, folded != text)


def _read_stand_ins(text: str, names: Container[str]) -> str:
    parts: list[str] = []
    last = done = 0
    for hit in _STAND_IN_HIT.finditer(text):
        if hit.start() < done:
            continue  # in a word already read: each word is walked once, so time stays linear
        start, end = hit.start(), hit.end()
        while start > done and _wordish(text[start - 1]):
            start -= 1
        while end < len(text) and _wordish(text[end]):
            end += 1
        done = end
        word = _spelled(text[start:end], names) if end - start <= _MAX_WORD else None
        if word is not None:
            parts += [text[last:start], word]
            last = end
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def _wordish(c: str) -> bool:
    # Chinese, Japanese and Korean letters are no part of a Latin word ("0penAI阿里云").
    return c in _STAND_INS or (c.isalnum() and not _UNSPACED_LETTER.match(c))


def _spelled(word: str, names: Container[str]) -> str | None:
    """`word` with its stand-ins read as letters, if that spells a name (a version glued on
    after it, "L1ama2", kept as digits); else None."""
    for candidate in dict.fromkeys((word, word.rstrip("0123456789"))):
        spots = [i for i, c in enumerate(candidate) if c in _STAND_INS]
        # A short word, or one mostly of stand-ins ("P1", "Y1", "l33t"), is no disguised name.
        if not spots or len(spots) > _MAX_STAND_INS or 2 * len(spots) >= len(candidate):
            continue
        options = [_STAND_INS[candidate[i]] for i in spots]
        for letters in itertools.product(*options):
            chars = list(candidate)
            for i, letter in zip(spots, letters, strict=True):
                chars[i] = letter
            if "".join(chars).lower() in names:
                for i in spots:
                    chars[i] = _cased(chars[i], candidate, i)
                return "".join(chars) + word[len(candidate) :]
    return None


def _cased(letter: str, word: str, i: int) -> str:
    # A name starts with a capital ("0penAI" reads "OpenAI"); inside it, a letter is a capital
    # only between capitals ("ANT#ROPIC"), so "C1aude" reads "Claude".
    before = word[i - 1] if i else ""
    after = word[i + 1] if i + 1 < len(word) else ""
    if not before:
        return letter.upper()
    upper = before.isupper() and (after.isupper() or not after.isalpha())
    return letter.upper() if upper else letter


def _fold(text: str) -> tuple[str, list[int] | None]:
    # A response holds few distinct non-ASCII characters (quotes, dashes, bullets): replacing
    # each one that folds is several times faster than translating every character.
    folds = {}
    for char in set(_NON_ASCII.findall(text)):
        folded = _TABLE[ord(char)]
        if folded != char:
            folds[char] = folded
    if any(len(f) != 1 for f in folds.values()):
        return _fold_tracked(text)
    if not folds.keys().isdisjoint(folds.values()):
        return text.translate(_TABLE), None  # one pass, or a fold would be folded again
    for char, folded in folds.items():
        text = text.replace(char, folded)
    return text, None


def _fold_tracked(text: str) -> tuple[str, list[int]]:
    parts: list[str] = []
    source: list[int] = []
    for i, char in enumerate(text):
        folded = _TABLE[ord(char)]
        parts.append(folded)
        source.extend([i] * len(folded))
    return "".join(parts), source


def _join_spaced(text: str, source: list[int] | None) -> tuple[str, list[int]]:
    positions = source if source is not None else range(len(text))
    parts: list[str] = []
    kept: list[int] = []
    last = 0
    for m in _SPACED.finditer(text):
        parts.append(text[last : m.start()])
        kept.extend(positions[last : m.start()])
        sep = m.group("sep")
        first, final = m.start(), m.end() - 1
        for i in range(first, m.end(), 2):
            # "a C l a u d e", "q w e n I": a lone letter ("a", "I") whose case differs from
            # its neighbour's is a word of its own ("L.L.a.M.A" is one word).
            if (i == first + 2 or i == final) and text[i].isupper() and text[i - 2].islower():
                parts.append(sep)
                kept.append(positions[i - 1])
            parts.append(text[i])
            kept.append(positions[i])
        last = m.end()
        after = text[last + 1 : last + 2]
        if sep == "." and text[last : last + 1] == "." and after and after in _VERSION_AFTER_DOT:
            last += 1  # "G.P.T.-4": the abbreviation's own dot, not a separator before "-4"
    parts.append(text[last:])
    kept.extend(positions[last:])
    return "".join(parts), kept


def disguised(original: str, folded: str) -> bool:
    """Whether `original` needed more than width and accent folding to read `folded`."""
    return _plain_fold(original) != folded


def _plain_fold(text: str) -> str:
    out = []
    for c in text:
        if not c.isascii():
            nfkc = unicodedata.normalize("NFKC", c)
            c = nfkc if nfkc.isascii() else c
            decomposed = unicodedata.normalize("NFD", c)
            if len(decomposed) > 1 and decomposed[0].isascii():
                c = decomposed[0]
        out.append(c)
    return "".join(out)


def fold(text: str) -> str:
    """The folded text alone (for names, not for replacing spans)."""
    return normalise(text).text
