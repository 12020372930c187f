"""Where a text may hold a lexicon name, and regex search limited to those places.

Every name the scrubber matches starts with a *trigger* of its spelling, a whole token (see
`judge.blinding.lexicon`): most responses hold none and are returned after one tokenisation. In one
that
does, a name rule's match starts at a trigger's occurrence or at a placeholder (an *anchor*),
and every other rule's match contains a name with bounded context around it: a
self-introduction's lead ("I am a large language model trained by the team at") comes at most
a few hundred characters before the name, a look-ahead a few dozen after it. So a name rule is
tried only at the anchors and every other rule searched only within its `Reach` around the
names found there, not over the whole response: the scrubber's cost follows the number of names
in a response, not its length.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence, Set
from typing import NamedTuple, TypeVar

from judge.blinding.lexicon import LETTER_RUN
from judge.normalise import UNSPACED

_T = TypeVar("_T", str, bytes)
_UNSPACED_CHAR = re.compile(f"[{UNSPACED}]")
_ASCII_RUN = re.compile(r"[a-z]+")
_NEXT_ASCII = re.compile(r"[^a-z]*([a-z]+)")
_NEXT_LETTERS = re.compile(rf"(?s:.*?)({LETTER_RUN.pattern})")
_BUFFER_TOKEN = re.compile(rb" +([a-z]+)")
# ASCII letters lower-cased and everything else (other characters encode as "?") a space.
_ASCII_TOKENS = bytes(c | 0x20 if chr(c).isalpha() and c < 128 else 0x20 for c in range(256))


class Reach(NamedTuple):
    """How far a rule's match extends around the name it contains."""

    before: int
    """Non-space characters from the start of a match to the start of its name (whitespace
    runs do not count: "I am" and "Claude" may be any number of blank lines apart)."""
    after: int
    """Non-space characters from the end of the name, as found on its own, to the end of the
    match and of what it looks ahead at."""
    ends: re.Pattern[str] | None = None
    """What every match has right before its name (ending in `\\Z`); a name without it is
    passed over."""
    ends_before: int = 64
    """Non-space characters from the start of `ends` to the name."""


class Triggers:
    """Whether a text may hold a name: one of its lower-cased letter-run tokens (or two
    consecutive ones, or a substring) is a trigger of some name; and where."""

    def __init__(self) -> None:
        self._singles: set[str] = set()
        self._pairs: set[tuple[str, str]] = set()
        self._needles: set[str] = set()
        # Needles in scripts without spaces (CJK names) are looked for only in a text that
        # holds such a script: most texts are spared a search per needle.
        self._ascii_needles: set[str] = set()
        self._always = False
        self._firsts: frozenset[str] = frozenset()
        self._seconds: dict[str, set[str]] = {}
        self._words: frozenset[str] = frozenset()
        self._tokens = _ASCII_RUN
        self._next = _NEXT_ASCII
        self._ascii: tuple[frozenset[bytes], frozenset[bytes], frozenset[tuple[bytes, bytes]]]
        self._ascii = (frozenset(), frozenset(), frozenset())
        self._ascii_words: frozenset[bytes] = frozenset()
        self._ascii_seconds: dict[bytes, set[bytes]] = {}

    def add(
        self,
        singles: Iterable[str],
        pairs: Iterable[tuple[str, str]],
        needles: Iterable[str],
        *,
        always: bool = False,
    ) -> None:
        self._singles.update(singles)
        self._pairs.update(pairs)
        self._needles.update(needles)
        self._ascii_needles = {n for n in self._needles if not _UNSPACED_CHAR.search(n)}
        self._always |= always
        self._firsts = frozenset(a for a, _ in self._pairs)
        for a, b in self._pairs:
            self._seconds.setdefault(a, set()).add(b)
        self._words = self._firsts | self._singles
        # ASCII letter runs are three times faster to find than Unicode ones, and give the same
        # first token for an ASCII name, which starts and ends at a non-letter.
        self._tokens = _ASCII_RUN if all(t.isascii() for t in self._words) else LETTER_RUN
        self._next = _NEXT_ASCII if self._tokens is _ASCII_RUN else _NEXT_LETTERS
        self._ascii = (
            frozenset(t.encode() for t in self._singles if t.isascii()),
            frozenset(t.encode() for t in self._firsts if t.isascii()),
            frozenset((a.encode(), b.encode()) for a, b in self._pairs if (a + b).isascii()),
        )
        self._ascii_words = self._ascii[0] | self._ascii[1]
        self._ascii_seconds = {
            a.encode(): {b.encode() for b in bs if b.isascii()}
            for a, bs in self._seconds.items()
            if a.isascii()
        }

    def include(self, other: Triggers) -> None:
        """Hold `other`'s triggers too: one check for several sets, for the texts that hold
        none of them (most)."""
        self.add(other._singles, other._pairs, other._needles, always=other._always)

    def present(self, text: str) -> bool:
        if self._always:
            return True
        if self._tokens is _ASCII_RUN:
            _, tokens = _token_buffer(text)
            # One pass over the tokens decides for most texts: none is a trigger's first.
            if not self._ascii_words.isdisjoint(tokens) and _has_tokens(tokens, *self._ascii):
                return True
        elif _has_tokens(
            self._tokens.findall(text.lower()), self._singles, self._firsts, self._pairs
        ):
            return True
        needles = self._needles_for(text)
        if not needles:
            return False
        low = text.lower()
        return any(needle in low for needle in needles)

    def _needles_for(self, text: str) -> set[str]:
        if len(self._ascii_needles) == len(self._needles):
            return self._needles
        unspaced = not text.isascii() and _UNSPACED_CHAR.search(text) is not None
        return self._needles if unspaced else self._ascii_needles

    def anchors(self, text: str, literals: Sequence[str]) -> list[int] | None:
        """Sorted starts of the trigger tokens, needles and `literals` in `text`: every match
        of a name starts at one. None when every position must be searched (a configured name
        without letters to trigger on, or lower-casing that moves characters)."""
        low = text.lower()
        if self._always or len(low) != len(text):
            return None
        starts = self._ascii_starts(text) if self._tokens is _ASCII_RUN else self._starts(low)
        for needle in self._needles_for(text):
            starts += _occurrences(low, needle)
        for literal in literals:
            starts += _occurrences(text, literal)
        return sorted(starts)

    def _ascii_starts(self, text: str) -> list[int]:
        # In the token buffer (letters, every other character a space) a whole token is found
        # by one C-level search, however short ("i" of "I am") or common it is.
        buf, tokens = _token_buffer(text)
        starts: list[int] = []
        for word in self._ascii_words.intersection(tokens):
            seconds = None if word in self._ascii[0] else self._ascii_seconds[word]
            key = b" " + word + b" "
            i = buf.find(key)
            while i >= 0:
                end = i + len(key) - 1
                if seconds is None or _next_token(buf, end) in seconds:
                    starts.append(i)  # buf is the text shifted by its leading space
                i = buf.find(key, end)
        return starts

    def _starts(self, low: str) -> list[int]:
        starts: list[int] = []
        for word in self._words.intersection(self._tokens.findall(low)):
            seconds = None if word in self._singles else self._seconds[word]
            for i in _occurrences(low, word):
                if _whole_token(low, i, len(word)) and (
                    seconds is None or self._second_of(low, i + len(word), seconds)
                ):
                    starts.append(i)
        return starts

    def _second_of(self, low: str, end: int, seconds: set[str]) -> bool:
        """Whether the token after the one ending at `end` completes a pair ("open" "ai")."""
        m = self._next.match(low, end)
        return m is not None and m.group(1) in seconds

    def words(self) -> frozenset[str]:
        """Every token a trigger is made of (first and second of a pair too), lower case."""
        seconds = {b for _, b in self._pairs}
        return frozenset(self._singles | self._firsts | seconds)


@functools.lru_cache(maxsize=8)
def _token_buffer(text: str) -> tuple[bytes, list[bytes]]:
    """`text` lower-cased with every character but an ASCII letter a space (padded with one
    each side), and its tokens (`_ASCII_RUN.findall(text.lower())`, encoded, in half the
    time): computed once for the several trigger sets that read one text."""
    # Lower-casing first, as the regex sees it: "K" (Kelvin sign) lower-cases to ASCII "k".
    low = text if text.isascii() else text.lower()
    buf = b" " + low.encode("ascii", "replace").translate(_ASCII_TOKENS) + b" "
    return buf, buf.split()


def _next_token(buf: bytes, end: int) -> bytes | None:
    m = _BUFFER_TOKEN.match(buf, end)
    return m.group(1) if m is not None else None


def _has_tokens(
    tokens: Sequence[_T], singles: Set[_T], firsts: Set[_T], pairs: Set[tuple[_T, _T]]
) -> bool:
    if not singles.isdisjoint(tokens):
        return True
    return not firsts.isdisjoint(tokens) and not pairs.isdisjoint(itertools.pairwise(tokens))


def _occurrences(text: str, sub: str) -> Iterator[int]:
    i = text.find(sub)
    while i >= 0:
        yield i
        i = text.find(sub, i + 1)


def _whole_token(low: str, start: int, length: int) -> bool:
    # An ASCII letter on either side makes it part of a longer token under either tokeniser;
    # anything else may end a token, so it is kept.
    before = low[start - 1 : start] if start else ""
    after = low[start + length : start + length + 1]
    return not (_ascii_letter(before) or _ascii_letter(after))


def _ascii_letter(c: str) -> bool:
    return c.isascii() and c.isalpha()


def at(pattern: re.Pattern[str], text: str, anchors: Sequence[int]) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)` for a pattern whose every match starts at one of the sorted
    `anchors` (a name, the placeholder)."""
    pos = 0
    for anchor in anchors:
        if anchor >= pos and (m := pattern.match(text, anchor)) is not None:
            yield m
            pos = m.end()


def near(
    pattern: re.Pattern[str], text: str, windows: Sequence[tuple[int, int]]
) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)` for a pattern whose every match starts in one of `windows`
    and ends, with what it looks ahead at, before that window's end. Each match is the whole
    text's (found again without the window's end), so its groups and what follows it are as
    `finditer` gives them."""
    pos = 0
    for start, end in windows:
        pos = max(pos, start)
        while pos < end:
            found = pattern.search(text, pos, end)
            if found is None:
                break
            m = pattern.match(text, found.start())
            if m is None:  # the window's end looked like the end of the text
                pos = found.start() + 1
                continue
            yield m
            pos = max(m.end(), m.start() + 1)


def starts_before(
    text: str, starts: Sequence[int], names: Sequence[int], letters: int
) -> list[int]:
    """The sorted `starts` at most `letters` non-space characters before one of the sorted
    `names` positions (or at it): where a pattern whose matches start at one of `starts` and
    reach one of `names` that far may match."""
    out: list[int] = []
    i = 0
    for name in names:
        lo = _back(text, name, letters)
        while i < len(starts) and starts[i] < lo:
            i += 1
        while i < len(starts) and starts[i] <= name:
            out.append(starts[i])
            i += 1
    return out


def windows(text: str, names: Sequence[tuple[int, int]], reach: Reach) -> list[tuple[int, int]]:
    """Where matches containing one of the sorted `names` spans start and end, as few spans
    as they merge into."""
    out: list[tuple[int, int]] = []
    for name_start, name_end in names:
        if reach.ends is not None and not ends_at(reach.ends, text, name_start, reach.ends_before):
            continue
        last_start, last_end = out[-1] if out else (0, -1)
        # Going back from a later name never ends earlier, so the windows come sorted and a
        # name within reach of the last window joins it without walking back.
        joins = name_start - reach.before <= last_end
        start = last_start if joins else _back(text, name_start, reach.before)
        end = _forth(text, name_end, reach.after)
        if out and start <= last_end:
            out[-1] = (last_start, max(end, last_end))
        else:
            out.append((start, end))
    return out


def ends_at(pattern: re.Pattern[str], text: str, position: int, letters: int) -> bool:
    """Whether `pattern` (ending in `\\Z`) matches text that ends at `position` and starts at
    most `letters` non-space characters before it."""
    return pattern.search(text, _back(text, position, letters), position) is not None


def _forth(text: str, position: int, letters: int) -> int:
    """The position `letters` non-space characters after `position`."""
    while letters > 0 and position < len(text):
        end = position + letters + letters // 4
        letters -= len("".join(text[position:end].split()))
        position = end
    return min(position, len(text))


def _back(text: str, position: int, letters: int) -> int:
    """The position `letters` non-space characters before `position`."""
    while letters > 0 and position > 0:
        # A quarter more than needed covers ordinary spacing in one step.
        start = max(0, position - letters - letters // 4)
        chunk = text[start:position]
        letters -= len("".join(chunk.split()))
        position = start
    return position
