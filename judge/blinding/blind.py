"""Blinding: opaque ids, scrubbed text, seeded presentation order and A/B slots.

A judge must not learn which system wrote a response. Three things give it away, and each has
its counter here:

* ids: a response is known by `opaque_id` (HMAC-SHA256 under a per-run secret), never by
  anything derived from the system name alone;
* text: `Scrubber` (`judge.blinding.scrubber`) replaces identity markers (system names, vendor and
  family names, self-identification, signatures, configured extra markers) with one neutral
  placeholder;
* order: presentation order is a seeded shuffle and the A/B slot of each pair is seeded from the
  pair's content, so neither follows the system name.

The `BlindingKey` (opaque id -> system) is the only record that links them back.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import itertools
import json
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from judge.blinding.scrubber import KINDS, RULES, Mark, Scrubber
from judge.errors import ConfigError, DataError
from judge.types import (
    BlindedPair,
    BlindedResponse,
    BlindingKey,
    ChatMessage,
    Response,
    ScrubReport,
)

# --- opaque ids ----------------------------------------------------------------------------------


def new_secret() -> str:
    """A fresh per-run HMAC secret: 32 random bytes, hex."""
    return secrets.token_hex(32)


@functools.lru_cache(maxsize=16)
def _key_bytes(secret: str) -> bytes:
    try:
        key = bytes.fromhex(secret)
    except ValueError:
        raise ConfigError(
            "blinding secret must be hex (e.g. the output of judge.blinding.blind.new_secret()); "
            "remove `blinding.secret` from the config to get a random one"
        ) from None
    if len(key) < 16:
        raise ConfigError(
            f"blinding secret has {len(key)} bytes; use at least 16 (new_secret() gives 32)"
        )
    return key


def _mac(secret: str, payload: list[object]) -> str:
    # JSON is an unambiguous encoding: ("a|b", "c") and ("a", "b|c") hash differently.
    message = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hmac.new(_key_bytes(secret), message, hashlib.sha256).hexdigest()


def opaque_id(secret: str, item_id: str, system: str) -> str:
    """`r_` + 20 hex chars of HMAC-SHA256(secret, (item_id, system)): stable within a run,
    unguessable without the secret."""
    return "r_" + _mac(secret, ["response", item_id, system])[:20]


def pair_id(secret: str, item_id: str, systems: Iterable[str]) -> str:
    """`p_` + 20 hex chars of HMAC-SHA256(secret, (item_id, sorted systems)): one id per
    unordered pair, whichever slot each system gets."""
    return "p_" + _mac(secret, ["pair", item_id, sorted(systems)])[:20]


# --- responses and pairs ------------------------------------------------------------------------


def blind_responses(
    responses: Iterable[Response],
    *,
    secret: str,
    seed: int,
    scrubber: Scrubber | None,
) -> tuple[list[BlindedResponse], BlindingKey, ScrubReport]:
    """Blind every response: opaque id, scrubbed output and assistant/system context turns
    (user turns are the user's own words and stay as they are), seeded presentation order.

    Returns the blinded responses in presentation order (`presentation_key`: the same for the
    same seed and the same responses, whatever their input order), the key (blind_id ->
    system) and the report. Holds every response: prepare blinds item by item instead
    (`blind_one`, `ScrubTally`).
    """
    _key_bytes(secret)
    rows = sorted(responses, key=lambda r: (r.item_id, r.system))
    tally = ScrubTally(sorted({r.system for r in rows}))
    key_systems: dict[str, str] = {}
    blinded: list[BlindedResponse] = []
    previous: tuple[str, str] | None = None
    for r in rows:
        if (r.item_id, r.system) == previous:
            raise DataError(
                f"two responses for item '{r.item_id}' from system '{r.system}'; "
                "keep one per (item_id, system)",
                field="item_id",
            )
        previous = (r.item_id, r.system)
        b, marks = blind_one(r, secret, scrubber)
        if b.blind_id in key_systems:
            raise ConfigError(
                f"opaque id collision for item '{r.item_id}'; rerun with a new blinding secret"
            )
        key_systems[b.blind_id] = r.system
        tally.add(r.system, marks)
        blinded.append(b)
    blinded.sort(key=lambda b: presentation_key(seed, b.blind_id))
    key = BlindingKey(blinding_secret=secret, systems=key_systems)
    return blinded, key, tally.report()


def presentation_key(seed: int, blind_id: str) -> bytes:
    """Where a blinded response stands in the presentation order: a seeded hash of its opaque
    id, so the order is a seeded shuffle that can be computed one response at a time (a
    table of millions is sorted on disk, not shuffled in memory), and follows no system."""
    payload = json.dumps(["shown", seed, blind_id], separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).digest()[:12]


def blind_one(
    r: Response, secret: str, scrubber: Scrubber | None
) -> tuple[BlindedResponse, list[Mark]]:
    """One response blinded: its opaque id, its scrubbed text and what the scrubber found."""
    output, context, marks = _scrub_response(r, scrubber)
    blind_id = opaque_id(secret, r.item_id, r.system)
    return BlindedResponse(
        blind_id=blind_id, item_id=r.item_id, output=output, context=context
    ), marks


class ScrubTally:
    """The scrub report, counted one response at a time."""

    def __init__(self, systems: Iterable[str]) -> None:
        self._by_system_rule: dict[str, Counter[str]] = {s: Counter() for s in systems}
        self._by_kind: Counter[str] = Counter()
        self._changed = 0
        self._responses = 0

    def add(self, system: str, marks: Sequence[Mark]) -> None:
        self._responses += 1
        if marks:
            self._changed += 1
            self._by_system_rule.setdefault(system, Counter()).update(m.rule for m in marks)
            self._by_kind.update(m.kind for m in marks)

    def report(self) -> ScrubReport:
        return _report(self._by_system_rule, self._by_kind, self._changed, self._responses)


def _scrub_response(
    r: Response, scrubber: Scrubber | None
) -> tuple[str, tuple[ChatMessage, ...], list[Mark]]:
    if scrubber is None:
        return r.output, r.context, []
    output, marks = scrubber.scrub_marks(r.output)
    context = []
    for message in r.context:
        if message.role == "user":
            context.append(message)
            continue
        # System turns are scrubbed too: a per-system prompt ("You are Claude") is a marker.
        content, turn_marks = scrubber.scrub_marks(message.content)
        marks += turn_marks
        if turn_marks:
            message = ChatMessage(role=message.role, content=content)
        context.append(message)
    return output, tuple(context), marks


def _report(
    by_system_rule: Mapping[str, Counter[str]], by_kind: Counter[str], changed: int, n: int
) -> ScrubReport:
    by_rule = Counter({rule: 0 for rule in RULES})
    for counts in by_system_rule.values():
        by_rule.update(counts)
    return ScrubReport(
        total=sum(by_rule.values()),
        responses_changed=changed,
        responses=n,
        by_system={s: sum(c.values()) for s, c in by_system_rule.items()},
        by_rule=dict(by_rule),
        by_system_rule={s: {rule: c[rule] for rule in RULES} for s, c in by_system_rule.items()},
        by_kind={kind: by_kind[kind] for kind in KINDS},
    )


def make_pairs(
    blinded: Sequence[BlindedResponse],
    key: BlindingKey,
    *,
    mode: Literal["all", "baseline"],
    baseline: str | None,
    seed: int,
) -> tuple[list[BlindedPair], BlindingKey, list[tuple[str, str, str]]]:
    """Pairs of responses to the same item: every unordered pair of systems (`all`) or each
    system against `baseline`.

    The A/B slot of a pair is seeded from (seed, item, systems), so reruns and any input order
    give the same slots. Returns the pairs sorted by (item_id, pair_id), the key with `pairs`
    filled (pair_id -> (system in slot A, system in slot B)), and the pairs skipped because a
    response is missing, as (item_id, system, system) (the baseline first in baseline mode,
    else sorted): the caller reports them.
    """
    by_item: dict[str, dict[str, str]] = {}
    for b in blinded:
        system = key.systems.get(b.blind_id)
        if system is None:
            raise ConfigError(
                f"response {b.blind_id} (item '{b.item_id}') is not in the blinding key; "
                "pass the key blind_responses() returned with these responses"
            )
        by_item.setdefault(b.item_id, {})[system] = b.blind_id
    systems = sorted({s for present in by_item.values() for s in present})
    wanted = wanted_pairs(systems, mode, baseline)
    listed = ((item_id, first, second) for item_id in sorted(by_item) for first, second in wanted)
    return _paired(by_item, key, listed, seed)


def wanted_pairs(
    systems: Sequence[str], mode: Literal["all", "baseline"], baseline: str | None
) -> list[tuple[str, str]]:
    """The system pairs judged on every item: every unordered pair of `systems` (`all`, sorted
    within and between pairs) or (baseline, system) for each other system."""
    if mode == "baseline":
        if baseline not in systems:
            shown = f"'{baseline}' is not a system of these responses" if baseline else "missing"
            raise ConfigError(
                f"pairs baseline {shown}; known systems: {', '.join(systems) or 'none'}"
            )
        return [(baseline, s) for s in systems if s != baseline]
    if mode == "all":
        if baseline is not None:
            raise ConfigError("a pairs baseline is only used with pairs mode 'baseline'")
        return list(itertools.combinations(sorted(systems), 2))
    raise ConfigError(f"unknown pairs mode {mode!r}; use 'all' or 'baseline'")


def make_listed_pairs(
    blinded: Sequence[BlindedResponse],
    key: BlindingKey,
    listed: Iterable[tuple[str, str, str]],
    *,
    seed: int,
) -> tuple[list[BlindedPair], BlindingKey]:
    """Pairs of the (item_id, system, system) in `listed` (the canaries' pairs), blinded and
    given slots as `make_pairs` does; every listed response must be in `blinded`."""
    by_item: dict[str, dict[str, str]] = {}
    for b in blinded:
        by_item.setdefault(b.item_id, {})[key.systems[b.blind_id]] = b.blind_id
    pairs, key, skipped = _paired(by_item, key, listed, seed)
    if skipped:
        raise ConfigError(f"no response to pair for {skipped[0]}")
    return pairs, key


def _paired(
    by_item: Mapping[str, Mapping[str, str]],
    key: BlindingKey,
    listed: Iterable[tuple[str, str, str]],
    seed: int,
) -> tuple[list[BlindedPair], BlindingKey, list[tuple[str, str, str]]]:
    pairs, slots, skipped = pair_up(key.blinding_secret, seed, by_item, listed)
    return pairs, key.model_copy(update={"pairs": {**key.pairs, **slots}}), skipped


def pair_up(
    secret: str,
    seed: int,
    by_item: Mapping[str, Mapping[str, str]],
    listed: Iterable[tuple[str, str, str]],
) -> tuple[list[BlindedPair], dict[str, tuple[str, str]], list[tuple[str, str, str]]]:
    """The pairs of `listed` (item_id, system, system), blinded (`by_item`: item_id -> system
    -> opaque id) and given seeded slots; sorted by (item_id, pair_id). Returns them, their
    slots (pair_id -> (system in A, system in B)) and the listed pairs missing a response."""
    pairs: list[BlindedPair] = []
    slots: dict[str, tuple[str, str]] = {}
    skipped: list[tuple[str, str, str]] = []
    for item_id, first, second in listed:
        present = by_item.get(item_id, {})
        if first not in present or second not in present:
            skipped.append((item_id, first, second))
            continue
        a, b = _slots(seed, item_id, first, second)
        pid = pair_id(secret, item_id, (a, b))
        pairs.append(
            BlindedPair(pair_id=pid, item_id=item_id, slot_a=present[a], slot_b=present[b])
        )
        slots[pid] = (a, b)
    pairs.sort(key=lambda p: (p.item_id, p.pair_id))
    return pairs, slots, skipped


def _slots(seed: int, item_id: str, first: str, second: str) -> tuple[str, str]:
    """(system in slot A, system in slot B), a coin flip seeded by the pair's content only."""
    low, high = sorted((first, second))
    payload = json.dumps(["ab", seed, item_id, low, high], separators=(",", ":"))
    flip = hashlib.sha256(payload.encode("utf-8")).digest()[0] & 1
    return (high, low) if flip else (low, high)
