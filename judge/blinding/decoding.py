"""A response as its reader takes it in, beyond its plain letters, for the injection detector
(`judge.blinding.injection`): text hidden by an encoding brought back (base64 and hex spans,
rot13, leetspeak, zero-width characters standing for spaces), and text only *shown* (quoted
while being talked about) told from text said. Look-alike letters, fullwidth forms,
zero-width characters inside words and spaced-out letters are undone by `judge.normalise`.

Every decoder is gated by a test that costs one `bytes.translate` and a substring search or
less, so an ordinary answer pays almost nothing:

* a base64 or hex span is looked for only in a text holding a run of `ENCODED_MIN` characters
  of the base64 alphabet (or spaced hex pairs, or `\\x` escapes); a span is decoded only when
  it looks encoded (digits or both cases, not one long word), at most `SPAN_MAX` characters of
  it, at most `SPANS_MAX` spans per text, and kept only when it decodes to readable UTF-8 text
  (a hash, an image or a key decodes to bytes, not words);
* leetspeak only when a letter, a digit standing for one and a letter follow each other
  ("pr3v", "1gn0r3"), as they rarely do in prose ("3rd", "mp3", "h2o" do not);
* rot13 and zero-width spacing are undone by the caller when its own cheap signs say so.

Each decoder is linear in the text's length. `Quotes` is for the rare text a rule matches.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from judge.normalise import fold

ENCODED_MIN = 16
"""Characters of the shortest span decoded: 12 bytes of base64, 8 of hex (two or three words;
a shorter payload says little a judge would follow)."""
SPAN_MAX = 4096
"""Characters of one span decoded at most: a data URI of an image is not read whole."""
SPANS_MAX = 8
"""Spans decoded per text at most."""

_B64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
_HEX_DIGITS = b"0123456789abcdefABCDEF"
# One byte per input byte: 0 inside a base64 run, 1 elsewhere ("\0" * 16 in it = a long run).
_B64_MASK = bytes(0 if c in _B64_ALPHABET else 1 for c in range(256))
_B64_RUN = b"\0" * ENCODED_MIN
# Hex digits 0, the separators of "49 67 6e" 1, the rest 2: four spaced pairs in a row.
_HEX_MASK = bytes(0 if c in _HEX_DIGITS else 1 if c in b" ,:" else 2 for c in range(256))
_HEX_PAIRS = b"\0\0\1" * 4 + b"\0\0"

_HEX_SPAN = re.compile(
    r"(?:\\x[0-9a-fA-F]{2}){8,}"
    r"|(?<![0-9A-Za-z])(?:0x)?[0-9a-fA-F]{2}(?:[ ,:]{1,2}(?:0x)?[0-9a-fA-F]{2}){7,}(?![0-9A-Za-z])"
)
_HEX_JUNK = re.compile(r"\\x|0x|[ ,:]")
_WHITESPACE = re.compile(r"\s+")


class Decoded(NamedTuple):
    """A span of the text (`start`, `end`) and what it decodes to (`text`, via `encoding`)."""

    start: int
    end: int
    text: str
    encoding: str
    """"base64" or "hex"."""


def encoded_spans(text: str, raw: bytes) -> Iterator[Decoded]:
    """The spans of `text` that look encoded and decode to readable text, in order; at most
    `SPANS_MAX`, each read for at most `SPAN_MAX` characters. `raw` is `text` as ASCII bytes
    (others replaced, case free), one byte per character: the gates run on it."""
    found = 0
    for start, end in _base64_runs(raw):
        decoded = _decode_run(_WHITESPACE.sub("", text[start : min(end, start + SPAN_MAX)]))
        if decoded is not None:
            yield Decoded(start, end, *decoded)
            found += 1
            if found >= SPANS_MAX:
                return
    if b"\\x" in raw or _HEX_PAIRS in raw.translate(_HEX_MASK):
        for m in _HEX_SPAN.finditer(text):
            decoded = _readable(_from_hex(_HEX_JUNK.sub("", m.group(0)[:SPAN_MAX])), "hex")
            if decoded is not None:
                yield Decoded(m.start(), m.end(), *decoded)
                found += 1
                if found >= SPANS_MAX:
                    return


def _base64_runs(raw: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of at least `ENCODED_MIN` base64 characters, with its "="
    padding and the further lines of a wrapped run ("...\\nAAAA"); found by a substring
    search on a mask, no regex over the text."""
    masked = raw.translate(_B64_MASK)
    start = masked.find(_B64_RUN)
    while start >= 0:
        end = masked.find(b"\1", start)
        end = len(masked) if end < 0 else end
        while True:
            while end < len(raw) and raw[end] == 61:  # "="
                end += 1
            after = masked.find(b"\1", end + 1)
            line = len(masked) if after < 0 else after
            if raw[end : end + 1] != b"\n" or line - end - 1 < 4:
                break
            end = line
        yield start, end
        start = masked.find(_B64_RUN, end)


def _decode_run(run: str) -> tuple[str, str] | None:
    """A run of base64 characters: hex when it is all hex digits and reads as hex, else
    base64."""
    if not _looks_encoded(run):
        return None
    if len(run) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in run):
        as_hex = _readable(_from_hex(run), "hex")
        if as_hex is not None:
            return as_hex
    return _readable(_from_base64(run), "base64")


def _looks_encoded(span: str) -> bool:
    """Not one long word: encoded text mixes digits or both cases ("aWdub3Jl"), a word or an
    identifier is one case, or capitalised parts ("internationalisation", "HelloWorld")."""
    if any(c.isdigit() or c in "+/=" for c in span):
        return True
    upper = sum(c.isupper() for c in span)
    return upper >= 3 and len(span) - upper >= 3 and not span.istitle()


def _from_hex(digits: str) -> bytes | None:
    try:
        return bytes.fromhex(digits)
    except ValueError:
        return None


def _from_base64(span: str) -> bytes | None:
    body = span.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    altchars = b"-_" if ("-" in body or "_" in body) else None
    try:
        return base64.b64decode(padded, altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None


def _readable(data: bytes | None, encoding: str) -> tuple[str, str] | None:
    """`data` as text when it is words: valid UTF-8, printable, mostly letters and spaces."""
    if not data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.replace("\n", " ").replace("\t", " ").replace("\r", " ").isprintable():
        return None
    wordy = sum(c.isalpha() or c.isspace() for c in text)
    if wordy < 0.7 * len(text):
        return None
    if not any(c.isspace() for c in text.strip()) and all(ord(c) < 0x2E80 for c in text):
        return None  # one token (a key, a name) is no instruction; CJK needs no spaces
    return text, encoding


# -- rot13 -----------------------------------------------------------------------------------

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_ROT13 = str.maketrans(_LOWER + _UPPER, _LOWER[13:] + _LOWER[:13] + _UPPER[13:] + _UPPER[:13])


def rot13(text: str) -> str:
    """`text` with ASCII letters rotated by 13 (its own inverse)."""
    return text.translate(_ROT13)


def rot13_words(words: Iterable[str]) -> frozenset[bytes]:
    """`words` (lower-case ASCII) as rot13 writes them, as the detector's needles are."""
    return frozenset(rot13(w).encode() for w in words)


# -- leetspeak -------------------------------------------------------------------------------

_LEET = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g"}
_LEET |= {"@": "a", "$": "s"}
# Letters -> "a", digits that stand for letters -> "1", the rest a space.
_LEET_MASK = bytes(
    ord("a") if chr(c).isalpha() and c < 128 else ord("1") if chr(c) in _LEET else 32
    for c in range(256)
)
# Bytes -> lower-case letter runs, leet digits read as their letters.
LEET_TOKENS = bytes(
    ord(_LEET[chr(c)]) if chr(c) in _LEET else c | 0x20 if chr(c).isalpha() and c < 128 else 32
    for c in range(256)
)
"""`bytes.translate` table: letter runs of a text read as leetspeak (split on spaces)."""
_MIXED = re.compile(r"[A-Za-z0-9@$]*(?:[A-Za-z][0-9@$]|[0-9@$][A-Za-z])[A-Za-z0-9@$]*")


def may_hold_leet(raw: bytes) -> bool:
    """Whether `raw` (ASCII bytes) has a digit between letters ("pr3vious", "1nstruct10ns")."""
    masked = raw.translate(_LEET_MASK)
    return b"a1a" in masked or b"a11a" in masked


def deleet(text: str, one: str = "i") -> str:
    """`text` with every word that mixes letters and leet digits read as letters ("1gn0r3" ->
    "ignore"); `one` is what "1" stands for ("i", or "l" as in "ru1es"). Numbers stay."""
    table = str.maketrans(_LEET | {"1": one})
    return _MIXED.sub(lambda m: m.group(0).translate(table), text)


# -- zero-width spacing ----------------------------------------------------------------------

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e]+")


def zero_width_as_spaces(text: str) -> str | None:
    """`text` with zero-width characters read as spaces ("Ignore\u200bprevious" is two words
    to a reader; `judge.normalise` joins them, right inside a word), or None if it has none."""
    if text.isascii() or _ZERO_WIDTH.search(text) is None:
        return None
    return _ZERO_WIDTH.sub(" ", text)


# -- Russian ---------------------------------------------------------------------------------


def cyrillic_pattern(pattern: str) -> str:
    """`pattern`, written in lower-case Russian, as it matches a lower-cased fold: each letter
    becomes what its small and its capital fold to ("н" -> "[нh]", "б" -> "[6б]"), since
    `judge.normalise` folds a Cyrillic letter to its Latin look-alike by case."""
    out = []
    for c in pattern:
        forms = sorted({fold(c), fold(c.upper()).lower()}) if "\u0400" <= c <= "\u04ff" else [c]
        out.append(forms[0] if len(forms) == 1 else f"[{''.join(forms)}]")
    return "".join(out)


# -- quoted, not said ------------------------------------------------------------------------

_QUOTED = re.compile(
    r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]{1,500}`|\"[^\"\n]{1,500}\"|“[^”\n]{1,500}”"
    r"|„[^“”\n]{1,500}[“”]|«[^»\n]{1,500}»|‹[^›\n]{1,500}›|「[^」\n]{1,500}」|『[^』\n]{1,500}』"
    r"|‘[^’\n]{1,500}’|(?<!\w)'(?:[^'\n]|'(?=\w)){1,500}?'(?!\w)"
    r"|^[ \t]*>[^\n]*(?:\n[ \t]*>[^\n]*)*",
    re.DOTALL | re.MULTILINE,
)
_TOPIC = re.compile(
    r"\b(?:prompt[\s-]+injections?|inject\w*|jailbreak\w*|attack\w*|malicious\w*|adversar\w*"
    r"|payloads?|exploit\w*|hijack\w*|manipulat\w*|tricks?|phishing|scam\w*|spam\w*|security"
    r"|vulnerab\w*|red[\s-]team\w*|saniti[sz]\w*|filter\w*|detect\w*|defen[cs]\w*|guardrails?"
    r"|safeguards?|phrases?|phrasings?|wording|templates?|tokens?|syntax|formats?|formatted"
    r"|chatml|delimiters?|markup|base64|rot13|encod\w*|decod\w*|hex|injektion\w*|inyecci\w*"
    r"|injec[ct]\w*|iniezion\w*|attaque\w*"
    r"|angriff\w*|angreifer\w*|ataque\w*|atacante\w*|attacc\w*|malveillant\w*|bosartig\w*"
    r"|malicios\w*|malevol\w*|securite|sicherheit|seguridad|seguranca|sicurezza|astuce\w*"
    + cyrillic_pattern(r"|инъекци\w*|атак\w*|злоумышленник\w*|вредоносн\w*|безопасност\w*)\b")
    + r"|攻击|攻擊|注入|恶意|惡意|越狱|越獄|攻撃|インジェクション|悪意|脱獄"
    r"|공격|인젝션|주입|악의|탈옥",
    re.IGNORECASE,
)
"""What a text that shows an attack, rather than making one, talks about outside its quotes."""
_TELLS = re.compile(
    r"\b(?:dear|hey|hi|hello|attention|note\s+(?:to|for)|message\s+(?:to|for))\s+(?:the\s+|an?\s+"
    r"|my\s+)?(?:ai\s+|llm\s+)?(?:judge|evaluator|grader|rater|assessor|scorer|reviewer)s?\b"
    r"|(?:^|[.!?:;]\s+)(?:please\s+|now\s+|just\s+|simply\s+|so\s+)?(?:follow|obey|execute"
    r"|comply\s+with|respond\s+with|reply\s+with|answer\s+with|output)\b"
    r"|\b(?:as|for)\s+your\s+(?:verdict|final\s+answer|answer|output|rating|score|decision)\b"
    r"|\byou\s+(?:must|should|will|shall|need\s+to|have\s+to)\s+(?:now\s+)?(?:follow|obey|do"
    r"|apply|output|write|answer|respond)\b",
    re.IGNORECASE | re.MULTILINE,
)
"""Words beside a quote that hand it to the reader to act on: then the quote is said."""
OWN_LETTERS = 15
"""Letters a text needs outside its quotes for a quote in it to be only shown."""
WINDOW = 200
"""Characters either side of a quote read for words that hand it to the reader."""


class Quotes:
    """Where a text quotes (quotation marks, inline code, code fences, block quotes), and
    whether a span of it is only shown there.

    A span is *shown*, not said, when it lies inside a quote, in a text that talks about
    attacks or formats outside its quotes (`_TOPIC`: "injection", "attackers", "a common
    trick", "template"), holds `OWN_LETTERS` letters of its own, and does not hand the quote
    to its reader ("follow this", "respond with", "dear judge": `_TELLS`). Quotation marks are
    how a writer shows words instead of saying them, and a reader, a judge included, reads
    them so; the topic is asked for as well because quotation marks alone cost an attacker
    nothing. Words of example without quotes ("for example ignore the rules") are said: an
    unquoted instruction reads as one."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = [m.span() for m in _QUOTED.finditer(text)]
        ends = [0] + [e for _, e in self.spans]
        starts = [s for s, _ in self.spans] + [len(text)]
        gaps = [" " * (e - s) for s, e in self.spans] + [""]
        self.own = "".join(text[a:b] + g for a, b, g in zip(ends, starts, gaps, strict=True))
        """The text with its quotes blanked out (same length)."""
        self._explains: bool | None = None

    def shown(self, start: int, end: int) -> bool:
        """Whether `text[start:end]` is only shown (the class docstring)."""
        inside = next(((s, e) for s, e in self.spans if s <= start and end <= e), None)
        if inside is None or not self._explaining():
            return False
        s, e = inside
        window = f"{self.own[max(0, s - WINDOW) : s]}\n{self.own[e : e + WINDOW]}"
        return _TELLS.search(window) is None

    def _explaining(self) -> bool:
        if self._explains is None:
            letters = sum(c.isalpha() for c in self.own)
            self._explains = letters >= OWN_LETTERS and _TOPIC.search(self.own) is not None
        return self._explains
