"""The scrubber: replaces identity markers in a response with one neutral placeholder.

A judge must not learn which system wrote a response; its text gives it away through system
names, vendor and family names, self-identification ("I am Claude"), signatures and configured
extra markers. `Scrubber` removes each of them (the rules are `RULES`); `judge.blinding` applies
it to every response together with opaque ids and seeded order.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from judge.errors import ConfigError
from judge.families import family_of
from judge.lexicon import (
    AFTER_AI_NOUN,
    BEFORE_AI_NOUN,
    CLAIM,
    HHH,
    LETTER_RUN,
    LEXICON,
    LIST_JOIN,
    MAKER,
    NAME_END,
    NAME_START,
    RUN_JOIN,
    SIGN_LEAD,
    SIGN_TRAIL,
    TAIL,
    Term,
    ambiguous_labels,
    first_tokens,
    user_name_pattern,
)

DEFAULT_PLACEHOLDER = "[redacted]"

RULES: tuple[str, ...] = (
    "system_name",
    "family_alias",
    "vendor",
    "self_identification",
    "signature",
    "extra_marker",
)
"""Rule names: the keys of the counts returned by `Scrubber.scrub` and of `ScrubReport.by_rule`."""

# Placeholder passes are bounded: each pass only replaces names, so two suffice in practice.
_MAX_PASSES = 5
_WINDOW = 80
_CAPITALISED_WORD = re.compile(r"\s+[A-Z][a-z]")
_ASCII_RUN = re.compile(r"[a-z]+")


def _compile_names(keep: str, patterns: Sequence[str], *, tail: bool) -> re.Pattern[str] | None:
    if not patterns:
        return None
    suffix = f"(?P<tail>{TAIL})" if tail else ""
    return re.compile(f"{keep}{NAME_START}(?P<name>{_alternation(patterns)}){suffix}{NAME_END}")


def _alternation(patterns: Iterable[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


def _ordered(terms: Iterable[Term]) -> list[Term]:
    # Longer names first ("GPT-J" before "GPT", "Mistral AI" before "Mistral"); at equal
    # length the unambiguous spelling first ("LLaMA" before "Llama").
    return sorted(terms, key=lambda t: (-len(t.label), t.ambiguous, t.label))


class Scrubber:
    """Replaces identity markers with one neutral placeholder; see RULES for what it removes.

    Ambiguous lexicon words (llama, claude, palm, meta, google, ...) are removed only in a model
    context unless listed in `scrub_ambiguous`: followed by a version, size or tier ("Llama 2",
    "Claude-v1", "Gemini Pro"), next to another lexicon name ("Stanford Alpaca", "Meta's Llama"),
    next to an AI noun ("Meta AI", "the chatbot Bard"), listed with an unambiguous name
    ("ChatGPT, Claude and Bard"), or in a self-identification ("I am Claude"). A lower-case
    ambiguous word counts only when glued to a version or a name ("llama-2", "meta-llama").
    """

    def __init__(
        self,
        systems: Iterable[str],
        *,
        extra_markers: Iterable[str] = (),
        scrub_ambiguous: Iterable[str] = (),
        family_overrides: Mapping[str, str] | None = None,
        placeholder: str = DEFAULT_PLACEHOLDER,
    ) -> None:
        if not placeholder.strip():
            raise ConfigError("the scrub placeholder must be visible text, e.g. '[redacted]'")
        self.systems = tuple(sorted(set(systems)))
        self.placeholder = placeholder
        self.families = frozenset(family_of(s, family_overrides) for s in self.systems)
        self._everywhere = _resolve_ambiguous(scrub_ambiguous)
        marker_names = list(dict.fromkeys(m.strip() for m in extra_markers if m.strip()))

        keep_alt = re.escape(placeholder)
        keep = f"(?P<keep>{keep_alt})|"
        self._terms = _ordered(LEXICON)
        self._in_family = frozenset(
            i
            for i, t in enumerate(self._terms)
            if t.family in self.families or t.label.lower() in self._everywhere
        )
        all_names = _alternation(t.pattern for t in self._terms)
        sure_names = _alternation(t.pattern for t in self._terms if not t.ambiguous)
        self._classify_all = _classifier(self._terms)
        self._classify_family = _classifier([self._terms[i] for i in sorted(self._in_family)])

        # Every rule needs a name (or "harmless"), and every name has trigger tokens: a text
        # without any (most responses) is returned after one tokenisation, no regex pass.
        self._triggers = _Triggers()
        for term in self._terms:
            self._triggers.add(term.triggers, term.pairs, term.needles)
        self._triggers.add({"harmless"}, (), ())
        systems = [self._user_name(s, version_prefix=True) for s in self.systems]
        markers = [self._user_name(m, version_prefix=False) for m in marker_names]

        # One regex per rule class, compiled once. Longest names first, so "gpt-3.5-turbo" wins
        # over a "gpt-3" system at the same position.
        family = [self._terms[i].pattern for i in sorted(self._in_family)]
        systems.sort(key=len, reverse=True)
        markers.sort(key=len, reverse=True)
        name = f"{NAME_START}(?P<name>{all_names})(?P<tail>{TAIL}){NAME_END}"
        paren = rf"(?P<paren>\s*\(\s*{NAME_START}(?:{all_names}){NAME_END}\s*\))?"
        self._extra = _compile_names(keep, markers, tail=False)
        self._system = _compile_names(keep, systems, tail=True)
        self._claim = re.compile(f"{keep}(?P<pre>{CLAIM}){name}")
        self._maker = re.compile(f"{keep}(?P<pre>{MAKER}){name}{paren}|{HHH}")
        self._signature = re.compile(f"{SIGN_LEAD}{name}{SIGN_TRAIL}")
        self._family = _compile_names(keep, family, tail=True)

        neighbour = f"(?:{keep_alt}|{NAME_START}(?:{all_names}){NAME_END})"
        sure = f"(?:{keep_alt}|{NAME_START}(?:{sure_names})(?:{TAIL}){NAME_END})"
        self._after_run = re.compile(RUN_JOIN + neighbour)
        self._before_run = re.compile(
            rf"(?:{keep_alt}|{NAME_START}(?:{all_names})(?:{TAIL}){NAME_END}){RUN_JOIN}\Z"
        )
        self._after_list = re.compile(LIST_JOIN + sure)
        self._before_list = re.compile(sure + LIST_JOIN + r"\Z")

    # --- public ---------------------------------------------------------------------------------

    def scrub(self, text: str) -> tuple[str, Counter[str]]:
        """The text with every identity marker replaced, and how many each rule replaced."""
        counts: Counter[str] = Counter()
        if not self._triggers.present(text):
            return text, counts
        # Replacing a name can put an ambiguous word next to a placeholder (a model context),
        # so passes repeat until nothing changes: scrubbing twice changes nothing more.
        for _ in range(_MAX_PASSES):
            before = counts.total()
            text = self._pass(text, counts)
            if counts.total() == before:
                break
        return text, counts

    # --- passes ---------------------------------------------------------------------------------

    def _user_name(self, name: str, *, version_prefix: bool) -> str:
        pattern, parts = user_name_pattern(name, version_prefix=version_prefix)
        singles, pairs = first_tokens(parts)
        # A name that starts with no letters has no trigger token: every text is scanned.
        self._triggers.add(singles, pairs, (), always=not singles and not pairs)
        return pattern

    def _pass(self, text: str, counts: Counter[str]) -> str:
        # Order matters for credit and for context: configured and system names go first, so
        # a self-identification or an ambiguous alias next to them sees the placeholder.
        if self._extra is not None:
            text = self._extra.sub(self._simple("extra_marker", counts), text)
        if self._system is not None:
            text = self._system.sub(self._simple("system_name", counts), text)
        text = self._claim.sub(self._on_claim(counts), text)
        text = self._maker.sub(self._on_maker(counts), text)
        text = self._sign(text, counts)
        if self._family is not None:
            text = self._family.sub(self._on_family(counts), text)
        return text

    def _simple(self, rule: str, counts: Counter[str]) -> Callable[[re.Match[str]], str]:
        def replace(m: re.Match[str]) -> str:
            if m.group("keep") is not None:
                return m.group(0)
            counts[rule] += 1
            return self.placeholder

        return replace

    def _on_claim(self, counts: Counter[str]) -> Callable[[re.Match[str]], str]:
        def replace(m: re.Match[str]) -> str:
            if m.group("keep") is not None:
                return m.group(0)
            tail = m.group("tail")
            term = self._classify_all(m)
            s, end = m.string, m.end()
            if m.group("as") is not None and not s.startswith(",", end):
                return m.group(0)  # "As Claude Monet said" is not "As Claude, I ..."
            if term.ambiguous and term.label.lower() not in self._everywhere:
                if m.group("art") is not None and m.group("called") is None:
                    return m.group(0)  # "I'm a Gemini" (the star sign)
                if not tail and _CAPITALISED_WORD.match(s, end):
                    return m.group(0)  # "I am Claude Monet"
            counts["self_identification"] += 1
            return m.group("pre") + self.placeholder

        return replace

    def _on_maker(self, counts: Counter[str]) -> Callable[[re.Match[str]], str]:
        def replace(m: re.Match[str]) -> str:
            if m.group("keep") is not None:
                return m.group(0)
            counts["self_identification"] += 1
            if m.group("hhh") is not None:
                return m.group("hpre") + self.placeholder
            return m.group("pre") + self.placeholder

        return replace

    def _sign(self, text: str, counts: Counter[str]) -> str:
        end = len(text.rstrip())
        start = text.rfind("\n", 0, end) + 1
        m = self._signature.fullmatch(text, start, end)
        if m is None:
            return text
        term = self._classify_all(m)
        if term.ambiguous and term.label.lower() not in self._everywhere:
            signed = m.group("dash") is not None or m.group("signoff") is not None
            if not signed:
                previous = text[:start].rstrip()
                last = previous[previous.rfind("\n") + 1 :].strip()
                # A short line ending in a comma: "Best regards," / "Your friend,".
                if not (last.endswith(",") and len(last) <= 60):
                    return text
        counts["signature"] += 1
        return text[: m.start("name")] + self.placeholder + text[m.end("tail") :]

    def _on_family(self, counts: Counter[str]) -> Callable[[re.Match[str]], str]:
        def replace(m: re.Match[str]) -> str:
            if m.group("keep") is not None:
                return m.group(0)
            name, tail = m.group("name"), m.group("tail")
            term = self._classify_family(m)
            if (
                term.ambiguous
                and term.label.lower() not in self._everywhere
                and not self._model_context(m.string, m.start(), m.end(), term, name, tail)
            ):
                return m.group(0)
            if term.kind == "vendor":
                counts["vendor"] += 1
                return self.placeholder + tail  # a vendor has no version: keep what followed
            counts["family_alias"] += 1
            return self.placeholder

        return replace

    def _model_context(
        self, s: str, start: int, end: int, term: Term, name: str, tail: str
    ) -> bool:
        capitalised = name[:1].isupper()
        if tail and term.kind == "alias" and (not tail[0].isspace() or capitalised):
            return True
        window = s[max(0, start - _WINDOW) : start]
        after = self._after_run.match(s, end)
        if after and (capitalised or not any(c.isspace() for c in after.group("j"))):
            return True
        before = self._before_run.search(window)
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
            or self._before_list.search(window)
        )


class _Triggers:
    """Whether a text may hold a name: one of its lower-cased letter-run tokens (or two
    consecutive ones, or a substring) is a trigger of some name."""

    def __init__(self) -> None:
        self._singles: set[str] = set()
        self._pairs: set[tuple[str, str]] = set()
        self._needles: set[str] = set()
        self._always = False
        self._tokens = _ASCII_RUN

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
        self._always |= always
        self._firsts = frozenset(a for a, _ in self._pairs)
        # ASCII letter runs are three times faster to find than Unicode ones, and give the same
        # first token for an ASCII name, which starts and ends at a non-letter.
        ascii_only = all(t.isascii() for t in self._singles | self._firsts) and all(
            b.isascii() for _, b in self._pairs
        )
        self._tokens = _ASCII_RUN if ascii_only else LETTER_RUN

    def present(self, text: str) -> bool:
        if self._always:
            return True
        low = text.lower()
        tokens = self._tokens.findall(low)
        if not self._singles.isdisjoint(tokens):
            return True
        if not self._firsts.isdisjoint(tokens) and not self._pairs.isdisjoint(
            itertools.pairwise(tokens)
        ):
            return True
        return any(needle in low for needle in self._needles)


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
