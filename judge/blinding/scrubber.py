"""The scrubber: replaces identity markers in a response with one neutral placeholder.

A judge must not learn which system wrote a response; its text gives it away through system
names, vendor and model names of every known family (a fine-tuned or in-house system says what
its base model said), self-identification ("I am Claude", "je suis Mistral", "我是…"),
signatures ("— Claude", "Sent from GPT-4", "Gemini here"), configured extra markers, and the
sentence a model describes itself and its maker with, whether the maker is named, already
replaced or generic ("I am a large language model trained by [redacted]", a *frame*).
`Scrubber` removes each of them (the rules are `RULES`); `judge.blinding.blind` applies it to every
response together with opaque ids and seeded order.

Matching runs on the normalised text (`judge.normalise`: look-alike letters, fullwidth forms,
zero-width characters, hyphen variants, spaced-out letters and digits standing for letters
undone); each match is mapped back, and only the marker's span of the writer's text is replaced.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from judge.blinding.lexicon import (
    LEXICON,
    NAME_END,
    NAME_START,
    TAIL,
    Term,
    ambiguous_labels,
    first_tokens,
    user_name_pattern,
)
from judge.blinding.phrases import (
    AFTER_AI_NOUN,
    ATTRIBUTION_ENDS,
    ATTRIBUTION_LEAD,
    ATTRIBUTION_TRAIL,
    BEFORE_AI_NOUN,
    CJK_NOT_A_CLAIM,
    CLAIM,
    CLAIM_ENDS,
    ENDS_TEXT,
    FRAME_NOUN_NEEDLES,
    FRAME_NOUN_TOKENS,
    FRAME_SUBJECT_NEEDLES,
    FRAME_SUBJECT_PAIRS,
    FRAME_SUBJECT_TOKENS,
    HERE_LEAD,
    HERE_TRAIL,
    HHH,
    LIST_JOIN,
    MAKER,
    MAKER_BEFORE_VERB,
    MAKER_BEFORE_VERB_HINT,
    MAKER_ENDS,
    MAKER_VERB,
    RUN_JOIN,
    SIGN_LEAD,
    SIGN_TRAIL,
    frame_pattern,
)
from judge.blinding.triggers import (
    Reach,
    Triggers,
    at,
    near,
    starts_before,
    windows,
)
from judge.errors import ConfigError
from judge.normalise import disguised, normalise

DEFAULT_PLACEHOLDER = "[redacted]"

RULES: tuple[str, ...] = (
    "system_name",
    "family_alias",
    "vendor",
    "self_identification",
    "signature",
    "extra_marker",
    "frame",
)
"""Rule names: the keys of the counts returned by `Scrubber.scrub` and of `ScrubReport.by_rule`.
A `frame` replaces a whole self-description ("a large language model trained by OpenAI"),
names in it included: one placeholder, counted once, as a frame."""

KINDS: tuple[str, ...] = ("plain", "disguised", "self_introduction", "signature")
"""What kind of marker each replacement was (`ScrubReport.by_kind`): `disguised` when the
writer's characters differ from the normalised ones the match was found in (look-alike letters,
invisible characters, spaced-out letters), else `signature` and `self_introduction` by rule,
else `plain` (a name written as such)."""
_KIND_OF_RULE = {
    "signature": "signature",
    "self_identification": "self_introduction",
    "frame": "self_introduction",
}


@dataclass(frozen=True, slots=True)
class Mark:
    """One replaced marker: its span in the input text, the rule that found it, its kind."""

    start: int
    end: int
    rule: str
    kind: str


_HHH = "harmless"


_Anchors = tuple[list[int], list[tuple[int, int]]]
"""Where names and placeholders may start (the name rules are tried there), and the spans of
the lexicon names (and "harmless") found there (the other rules are searched around them)."""

_Edit = tuple[int, int, str]
"""A replacement in the working text: start, end, rule."""

# Placeholder passes are bounded: each pass only replaces names, so two suffice in practice.
_MAX_PASSES = 5
# Names a digit or symbol may spell once read as letters ("GP7", "C1aude"): shorter ones and
# weak ones ("pi", "yi", "phi") are everyday labels ("P1", "Y1", "Ph1").
_MIN_STAND_IN_NAME = 3
_WINDOW = 80
_CAPITALISED_WORD = re.compile(r"\s+[A-Z][a-z]")
_NEXT_WORD = re.compile(r"[^\S\n]+[^\W\d_]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_SENTENCE_END = re.compile(r"[。！？!?\n]")
# How far a rule's match reaches around the name (or "harmless") in it, in non-space characters,
# with room to spare (a name rule's match starts at the name, `judge.blinding.triggers.at`): a
# name's
# version suffix and look-ahead under 40; with words of up to 20 letters, the widest leads
# `re._parser` finds in `judge.blinding.phrases`: an attribution's under 40 ("-- Sent from"), a
# self-introduction's 122 ("you're talking with an AI language model called"), a maker
# statement's 154 ("I am a large language model that was trained and fine-tuned by the team of
# researchers at").
# What comes right before the name ("our parent company is the researchers at the") is under
# 40, but an attribution's dashes ("---- Sent from") may be as many as its lead allows.
_ATTRIBUTION_REACH = Reach(96, 48, ATTRIBUTION_ENDS, ends_before=96)
_CLAIM_REACH = Reach(160, 48, CLAIM_ENDS)
# A maker statement may end in a second name: "trained by Meta (LLaMA)".
_MAKER_REACH = Reach(200, 112, MAKER_ENDS)
_MAKER_BEFORE_VERB_REACH = Reach(200, 112)


def _compile_names(keep: str, patterns: Sequence[str], *, tail: bool) -> re.Pattern[str] | None:
    if not patterns:
        return None
    suffix = f"(?P<tail>{TAIL})" if tail else ""
    return re.compile(f"{keep}{NAME_START}(?P<name>{_alternation(patterns)}){suffix}{NAME_END}")


def _alternation(patterns: Iterable[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


def _ordered(terms: Iterable[Term]) -> list[Term]:
    # Longer names first ("GPT-J" before "GPT", "Mistral AI" before "Mistral"); at equal
    # length the unambiguous spelling first ("LLaMA" before "Llama"). Names in other scripts
    # last: they never start where a Latin one does, and a Latin name is found sooner.
    return sorted(
        terms, key=lambda t: (not t.label[0].isascii(), -len(t.label), t.ambiguous, t.label)
    )


class Scrubber:
    """Replaces identity markers with one neutral placeholder; see RULES for what it removes.

    Every vendor and model name of the lexicon is scrubbed, whatever the systems under test are
    called. Ambiguous lexicon words (llama, claude, palm, meta, google, mistral, gemini, ...)
    are removed only in a model context unless listed in `scrub_ambiguous`: followed by a
    version, size or tier ("Llama 2", "Claude-v1", "Gemini Pro"), next to another lexicon name
    ("Stanford Alpaca", "Meta's Llama"), next to an AI noun ("Meta AI", "the chatbot Bard"),
    listed with an unambiguous name ("ChatGPT, Claude and Bard"), in a self-identification ("I
    am Claude", "je suis Mistral") or a signature ("— Claude", "Gemini here"). A lower-case
    ambiguous word counts only when glued to a version or a name ("llama-2", "meta-llama").
    """

    def __init__(
        self,
        systems: Iterable[str],
        *,
        extra_markers: Iterable[str] = (),
        scrub_ambiguous: Iterable[str] = (),
        placeholder: str = DEFAULT_PLACEHOLDER,
    ) -> None:
        if not placeholder.strip():
            raise ConfigError("the scrub placeholder must be visible text, e.g. '[redacted]'")
        self.systems = tuple(sorted(set(systems)))
        self.placeholder = placeholder
        self._everywhere = _resolve_ambiguous(scrub_ambiguous)
        marker_names = list(dict.fromkeys(m.strip() for m in extra_markers if m.strip()))

        keep_alt = re.escape(placeholder)
        keep = f"(?P<keep>{keep_alt})|"
        self._terms = _ordered(LEXICON)
        all_names = _alternation(t.pattern for t in self._terms)
        sure_names = _alternation(t.pattern for t in self._terms if not t.ambiguous)
        self._classify = _classifier(self._terms)

        # Every rule needs a name (or "harmless"), and every name has trigger tokens: a text
        # without any (most responses) is returned after one tokenisation, no regex pass.
        self._triggers = Triggers()
        for term in self._terms:
            self._triggers.add(term.triggers, term.pairs, term.needles)
        self._triggers.add({_HHH}, (), ())
        systems = [self._user_name(s, version_prefix=True) for s in self.systems]
        markers = [self._user_name(m, version_prefix=False) for m in marker_names]

        # One regex per rule class, compiled once. Longest names first, so "gpt-3.5-turbo" wins
        # over a "gpt-3" system at the same position.
        systems.sort(key=len, reverse=True)
        markers.sort(key=len, reverse=True)
        name = f"{NAME_START}(?P<name>{all_names})(?P<tail>{TAIL}){NAME_END}"
        paren = rf"(?P<paren>\s*\(\s*{NAME_START}(?:{all_names}){NAME_END}\s*\))?"
        self._extra = _compile_names(keep, markers, tail=False)
        self._system = _compile_names(keep, systems, tail=True)
        self._claim = re.compile(f"{keep}(?P<pre>{CLAIM}){name}")
        self._maker = re.compile(f"{keep}(?P<pre>{MAKER}){name}{paren}|{HHH}")
        self._maker_before_verb = re.compile(
            f"{keep}(?P<pre>{MAKER_BEFORE_VERB}){name}{MAKER_VERB}"
        )
        self._signature = re.compile(f"{SIGN_LEAD}{name}{SIGN_TRAIL}")
        self._attribution = re.compile(
            f"{keep}(?P<pre>{ATTRIBUTION_LEAD}){name}{ATTRIBUTION_TRAIL}"
            f"|{keep.replace('keep', 'keep2')}(?P<here>{HERE_LEAD})"
            f"{name.replace('?P<name>', '?P<hname>').replace('?P<tail>', '?P<htail>')}"
            f"(?={HERE_TRAIL})"
        )
        self._family = _compile_names(keep, [t.pattern for t in self._terms], tail=True)
        self._name = re.compile(f"{NAME_START}(?:{all_names})(?:{TAIL}){NAME_END}")

        neighbour = f"(?:{keep_alt}|{NAME_START}(?:{all_names}){NAME_END})"
        sure = f"(?:{keep_alt}|{NAME_START}(?:{sure_names})(?:{TAIL}){NAME_END})"
        self._after_run = re.compile(RUN_JOIN + neighbour)
        self._before_run = re.compile(
            rf"(?:{keep_alt}|{NAME_START}(?:{all_names})(?:{TAIL}){NAME_END}){RUN_JOIN}\Z"
        )
        self._after_list = re.compile(LIST_JOIN + sure)
        self._before_list = re.compile(sure + LIST_JOIN + r"\Z")

        # Frames hold no name of their own: they are tried at their subjects, near their nouns.
        self._frame = re.compile(frame_pattern(placeholder))
        self._frame_nouns = Triggers()
        self._frame_nouns.add(FRAME_NOUN_TOKENS, (), FRAME_NOUN_NEEDLES)
        self._frame_subjects = Triggers()
        self._frame_subjects.add(FRAME_SUBJECT_TOKENS, FRAME_SUBJECT_PAIRS, FRAME_SUBJECT_NEEDLES)
        self._frame_before = _frame_before(placeholder)
        self._gate = Triggers()
        self._gate.include(self._triggers)
        self._gate.include(self._frame_nouns)
        weak = {token for t in LEXICON if t.weak for token in t.triggers}
        self._names = frozenset(
            w for w in self._triggers.words() - weak if len(w) >= _MIN_STAND_IN_NAME
        )

    # --- public ---------------------------------------------------------------------------------

    def scrub(self, text: str) -> tuple[str, Counter[str]]:
        """The text with every identity marker replaced, and how many each rule replaced."""
        out, marks = self.scrub_marks(text)
        return out, Counter(m.rule for m in marks)

    def scrub_marks(self, text: str) -> tuple[str, list[Mark]]:
        """The text with every identity marker replaced, and each replaced span of `text`."""
        norm = normalise(text, self._names)
        if not self._gate.present(norm.text):
            return text, []
        names = self._triggers.present(norm.text)
        frames = self._frame_nouns.present(norm.text) and (
            self._frame_subjects.present(norm.text) or _KANA.search(norm.text) is not None
        )
        if not names and not frames:
            return text, []
        work = _Work(text, norm.text, norm.positions(), self._anchors)
        # Replacing a name can put an ambiguous word next to a placeholder (a model context),
        # so passes repeat until nothing changes: scrubbing twice changes nothing more.
        framed = None  # the text frames were last looked for in: no need to look again
        for _ in range(_MAX_PASSES):
            before = len(work.marks)
            if names:
                self._pass(work)
            if frames and work.text is not framed:
                self._frames(work)
                framed = work.text
            if len(work.marks) == before:
                break
        marks = sorted(work.kept(), key=lambda m: m.start)
        if not marks:
            return text, []
        parts, last = [], 0
        for mark in marks:
            parts += [text[last : mark.start], self.placeholder]
            last = mark.end
        parts.append(text[last:])
        return "".join(parts), marks

    # --- passes ---------------------------------------------------------------------------------

    def _anchors(self, text: str) -> _Anchors | None:
        starts = self._triggers.anchors(text, (self.placeholder,))
        if starts is None:
            return None
        names = []
        for start in starts:
            m = self._name.match(text, start)
            if m is not None:
                names.append((start, m.end()))
            elif text[start : start + len(_HHH)].lower() == _HHH:
                names.append((start, start + len(_HHH)))  # "helpful, harmless, and honest"
        return starts, names

    def _user_name(self, name: str, *, version_prefix: bool) -> str:
        pattern, parts = user_name_pattern(name, version_prefix=version_prefix)
        singles, pairs = first_tokens(parts)
        # A name that starts with no letters has no trigger token: every text is scanned.
        self._triggers.add(singles, pairs, (), always=not singles and not pairs)
        return pattern

    def _pass(self, work: _Work) -> None:
        # Order matters for credit and for context: configured and system names go first, so
        # a self-identification or an ambiguous alias next to them sees the placeholder.
        p = self.placeholder
        if self._extra is not None:
            work.apply(self._extra, None, _whole("extra_marker"), p)
        if self._system is not None:
            work.apply(self._system, None, _whole("system_name"), p)
        work.apply(self._claim, _CLAIM_REACH, self._on_claim, p)
        work.apply(self._maker, _MAKER_REACH, _on_maker, p)
        if MAKER_BEFORE_VERB_HINT.search(work.text.lower()) is not None:
            rule = self._maker_before_verb
            work.apply(rule, _MAKER_BEFORE_VERB_REACH, self._on_maker_before_verb, p)
        self._sign(work)
        work.apply(self._attribution, _ATTRIBUTION_REACH, self._on_attribution, p)
        work.apply(self._family, None, lambda m: self._on_family(m, work), p)

    def _frames(self, work: _Work) -> None:
        text = work.text
        nouns = self._frame_nouns.anchors(text, ())
        subjects = self._frame_subjects.anchors(text, ())
        if nouns is None or subjects is None:
            matches = self._frame.finditer(text)
        else:
            if _KANA.search(text) is not None:  # a Japanese frame may start a sentence instead
                ends = (m.end() for m in _SENTENCE_END.finditer(text))
                subjects = sorted({0, *subjects, *ends})
            starts = starts_before(text, subjects, nouns, self._frame_before)
            matches = at(self._frame, text, starts)
        edits = [(*_frame_span(m), "frame") for m in matches]
        if edits:
            work.replace(edits, self.placeholder)

    def _on_claim(self, m: re.Match[str]) -> _Edit | None:
        if m.group("keep") is not None:
            return None
        term = self._classify(m)
        s, end = m.string, m.end()
        if m.group("as") is not None and not s.startswith(",", end):
            return None  # "As Claude Monet said" is not "As Claude, I ..."
        if term.ambiguous and term.label.lower() not in self._everywhere:
            if m.group("indefinite") is not None and m.group("called") is None:
                return None  # "I'm a Gemini" (the star sign)
            if not m.group("tail") and _CAPITALISED_WORD.match(s, end):
                return None  # "I am Claude Monet"
            if m.group("cjk") is not None and (
                s[end : end + 1] in CJK_NOT_A_CLAIM or _NEXT_WORD.match(s, end)
            ):
                return None  # "我是Claude的粉丝": a fan of Claude; "저는 클로드 모네의 ..."
        return m.end("pre"), end, "self_identification"

    def _on_maker_before_verb(self, m: re.Match[str]) -> _Edit | None:
        if m.group("keep") is not None:
            return None
        return m.end("pre"), m.end(), "self_identification"

    def _on_attribution(self, m: re.Match[str]) -> _Edit | None:
        if m.group("keep") is not None or m.group("keep2") is not None:
            return None
        if m.group("here") is not None:
            return m.start("hname"), m.end("htail"), "signature"
        if m.group("enddash") is not None and not ENDS_TEXT.match(m.string, m.end()):
            return None  # "A - Claude" mid-text is a list, not a sign-off
        return m.start("name"), m.end(), "signature"

    def _sign(self, work: _Work) -> None:
        text = work.text
        end = len(text.rstrip())
        start = text.rfind("\n", 0, end) + 1
        m = self._signature.fullmatch(text, start, end)
        if m is None:
            return
        term = self._classify(m)
        if term.ambiguous and term.label.lower() not in self._everywhere:
            signed = m.group("dash") is not None or m.group("signoff") is not None
            if not signed:
                previous = text[:start].rstrip()
                last = previous[previous.rfind("\n") + 1 :].strip()
                # A short line ending in a comma: "Best regards," / "Your friend,".
                if not (last.endswith(",") and len(last) <= 60):
                    return
        work.replace([(m.start("name"), m.end("tail"), "signature")], self.placeholder)

    def _on_family(self, m: re.Match[str], work: _Work) -> _Edit | None:
        if m.group("keep") is not None:
            return None
        term = self._classify(m)
        if (
            term.ambiguous
            and term.label.lower() not in self._everywhere
            # Nobody disguises the star sign: "g e m i n i" or "Сlaude" (Cyrillic С) is a name
            # written to slip past a word list.
            and not disguised(work.source_text(m.start(), m.end()), m.group(0))
            and not self._model_context(m, term, work.starts())
        ):
            return None
        if term.kind == "vendor":
            return m.start("name"), m.end("name"), "vendor"  # a vendor has no version
        return m.start(), m.end(), "family_alias"

    def _model_context(self, m: re.Match[str], term: Term, anchors: Sequence[int] | None) -> bool:
        s, start, end = m.string, m.start(), m.end()
        name, tail = m.group("name"), m.group("tail")
        # Chinese, Japanese and Korean have no case: a name in them reads as a capitalised one.
        capitalised = not name[:1].islower()
        if tail and term.kind == "alias" and (not tail[0].isspace() or capitalised):
            return True
        window = s[max(0, start - _WINDOW) : start]
        after = self._after_run.match(s, end)
        if after and (capitalised or not any(c.isspace() for c in after.group("j"))):
            return True
        before = _ending_at(self._before_run, s, start, anchors)
        if before and (capitalised or not any(c.isspace() for c in before.group("j"))):
            return True
        if term.weak or not capitalised:
            return False
        if not tail and _CAPITALISED_WORD.match(s, end):
            return False  # a proper noun of its own: "Claude Monet", "Google Pixel", "Meta Quest"
        return bool(
            AFTER_AI_NOUN.match(s, end)
            or BEFORE_AI_NOUN.search(window)
            or self._after_list.match(s, end)
            or _ending_at(self._before_list, s, start, anchors)
        )


def _ending_at(
    pattern: re.Pattern[str], s: str, end: int, anchors: Sequence[int] | None
) -> re.Match[str] | None:
    """The first match of `pattern` (a name or the placeholder, then a join, then `\\Z`) that
    ends at `end`, starting at most `_WINDOW` characters before it. Every such match starts at
    an anchor: tried there only, since a names alternation tried at every position of the
    window is the scrubber's dearest search."""
    lo = max(0, end - _WINDOW)
    if anchors is None:
        return pattern.search(s, lo, end)
    for anchor in anchors[bisect.bisect_left(anchors, lo) :]:
        if anchor >= end:
            break
        if (found := pattern.match(s, anchor, end)) is not None:
            return found
    return None


def _frame_span(m: re.Match[str]) -> tuple[int, int]:
    """What a frame match replaces: its description, not its subject ("I am ")."""
    group = next(g for g in ("body", "cjk", "bare") if m.group(g) is not None)
    return m.span(group)


def _frame_before(placeholder: str) -> int:
    # How far a frame's start (its subject) may be before its noun, in non-space characters,
    # with words of up to 20 letters (or the placeholder): a subject, a placeholder, an article
    # and four words, or in German a maker of six words and its verb ("ein von ...
    # entwickeltes großes Sprachmodell"), or in Chinese and Japanese a maker of 30 characters.
    word = max(20, len(placeholder)) + 1
    return 12 * word + 40


def _whole(rule: str) -> Callable[[re.Match[str]], _Edit | None]:
    def decide(m: re.Match[str]) -> _Edit | None:
        return None if m.group("keep") is not None else (m.start(), m.end(), rule)

    return decide


def _on_maker(m: re.Match[str]) -> _Edit | None:
    if m.group("keep") is not None:
        return None
    if m.group("hhh") is not None:
        return m.end("hpre"), m.end(), "self_identification"
    return m.end("pre"), m.end(), "self_identification"


class _Work:
    """The normalised text being scrubbed, where each of its characters came from in the input
    (-1 - k for the characters of mark k's placeholder), and the marks replaced so far; a mark
    inside a later one (a name in a frame) is absorbed by it."""

    def __init__(
        self,
        original: str,
        text: str,
        source: list[int],
        find_anchors: Callable[[str], _Anchors | None],
    ) -> None:
        self.original = original
        self.text = text
        self.source = source
        self.marks: list[Mark] = []
        self.absorbed: set[int] = set()
        self._find_anchors = find_anchors
        self._anchored: str | None = None
        self._anchors: _Anchors | None = None
        self._windows: dict[Reach, list[tuple[int, int]]] = {}

    def apply(
        self,
        pattern: re.Pattern[str],
        reach: Reach | None,
        decide: Callable[[re.Match[str]], _Edit | None],
        placeholder: str,
    ) -> None:
        # Anchors move only when a replacement changes the text, which is rare.
        if self._anchored != self.text:
            self._anchors, self._anchored = self._find_anchors(self.text), self.text
            self._windows = {}
        if self._anchors is None:
            matches = pattern.finditer(self.text)
        elif reach is None:
            matches = at(pattern, self.text, self._anchors[0])
        else:
            spans = self._windows.get(reach)
            if spans is None:
                spans = self._windows[reach] = windows(self.text, self._anchors[1], reach)
            matches = near(pattern, self.text, spans)
        edits = [e for e in map(decide, matches) if e is not None]
        if edits:
            self.replace(edits, placeholder)

    def starts(self) -> list[int] | None:
        """Where names and placeholders may start in the current text (None: anywhere)."""
        return self._anchors[0] if self._anchors is not None else None

    def source_text(self, start: int, end: int) -> str:
        """The input characters the working span [start, end) came from."""
        origin = [i for i in self.source[start:end] if i >= 0]
        return self.original[origin[0] : origin[-1] + 1] if origin else ""

    def kept(self) -> list[Mark]:
        """The marks not absorbed by a later one: one per placeholder in the output."""
        return [m for k, m in enumerate(self.marks) if k not in self.absorbed]

    def replace(self, edits: Sequence[_Edit], placeholder: str) -> None:
        """Replace each (start, end) span, in order and not overlapping, with the placeholder."""
        text, source = self.text, self.source
        parts: list[str] = []
        kept: list[int] = []
        last = 0
        for start, end, rule in edits:
            span = source[start:end]
            origin = [i for i in span if i >= 0]
            if not origin:
                continue
            first, stop = origin[0], origin[-1] + 1
            written, seen, inner_hidden = self.original[first:stop], text[start:end], False
            if len(origin) < len(span):  # it holds earlier placeholders (a frame, its names)
                first, stop, written, seen, inner_hidden = self._absorb(first, stop, seen, span)
            # A frame is a sentence in the writer's language, so its accents and widths are how
            # that language is written; look-alike letters or invisible characters in it are not.
            hidden = inner_hidden or (
                disguised(written, seen) if rule == "frame" else written != seen
            )
            kind = "disguised" if hidden else _KIND_OF_RULE.get(rule, "plain")
            parts += [text[last:start], placeholder]
            kept += source[last:start]
            kept += [-1 - len(self.marks)] * len(placeholder)
            self.marks.append(Mark(first, stop, rule, kind))
            last = end
        parts.append(text[last:])
        kept += source[last:]
        self.text, self.source = "".join(parts), kept

    def _absorb(
        self, first: int, stop: int, seen: str, span: Sequence[int]
    ) -> tuple[int, int, str, str, bool]:
        """The input span of a replacement that holds the marks whose placeholders are in
        `span` (which are absorbed), the writer's characters and the matched ones outside them,
        and whether one of them was disguised."""
        inner = sorted({-1 - i for i in span if i < 0})
        self.absorbed.update(inner)
        first = min(first, *(self.marks[k].start for k in inner))
        stop = max(stop, *(self.marks[k].end for k in inner))
        written = self.original[first:stop]
        for mark in sorted((self.marks[k] for k in inner), key=lambda m: -m.start):
            written = written[: mark.start - first] + written[mark.end - first :]
        own = "".join(c for c, i in zip(seen, span, strict=True) if i >= 0)
        return first, stop, written, own, any(self.marks[k].kind == "disguised" for k in inner)


def _classifier(terms: Sequence[Term]) -> Callable[[re.Match[str]], Term]:
    """Which term the `name` group of a match belongs to: the first, in alternation order, that
    spells it at that position (some spellings look ahead: "Anthropic principle")."""
    compiled = [(re.compile(t.pattern), t) for t in terms]
    cache: dict[tuple[str, str], Term] = {}

    def classify(m: re.Match[str]) -> Term:
        start, end = m.span("name")
        key = (m.group("name"), m.string[end : end + 32])
        term = cache.get(key)
        if term is None:
            term = next(
                (t for pattern, t in compiled if _spells(pattern, m.string, start, end)),
                None,
            ) or next(t for pattern, t in compiled if pattern.fullmatch(m.group("name")))
            if len(cache) < 10_000:
                cache[key] = term
        return term

    return classify


def _spells(pattern: re.Pattern[str], s: str, start: int, end: int) -> bool:
    found = pattern.match(s, start)
    return found is not None and found.end() == end


def _resolve_ambiguous(words: Iterable[str]) -> frozenset[str]:
    known = {t.label.lower() for t in LEXICON}
    wanted = {w.strip().lower() for w in words if w.strip()}
    unknown = sorted(wanted - known)
    if unknown:
        raise ConfigError(
            f"blinding.scrub_ambiguous: {', '.join(map(repr, unknown))} not in the built-in "
            f"lexicon; its ambiguous words are: {', '.join(ambiguous_labels())}. "
            "Put other names under blinding.extra_markers (always scrubbed)."
        )
    return frozenset(wanted)
