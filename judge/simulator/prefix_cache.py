"""The simulated prompt cache, one for the synchronous routes and the batch items alike.

OpenAI (and Gemini's implicit cache) caches automatically: a prompt of at least
`cache_min_tokens` tokens is cached in 128-token blocks, and a later request of the same model
reads the longest prefix, in whole blocks, that an earlier one sent within `cache_ttl_s`.
Anthropic caches explicitly: only a prefix ending at a `cache_control` breakpoint counts; the
longest one cached within the TTL is read, the later breakpoints are written.

Tokens are characters / 4, as everywhere in the simulator. A request is looked at in two steps:
`probe` hashes its cacheable prefixes (pure, O(prompt length): one running hash, copied at each
block boundary), `PromptCache.apply` reads and writes the cache. A batch probes every request
while it is validated and applies them only once the whole batch was accepted.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from judge.config.simulator import SimulatorConfig
from judge.simulator.wire import JudgeCall

_CHARS_PER_TOKEN = 4
_BLOCK_TOKENS = 128
"""OpenAI's cache granularity."""
_KEY_BYTES = 16
_MAX_ENTRIES = 500_000
"""Beyond this, the least recently used prefixes go first (bounds memory on long benchmarks)."""


@dataclass(frozen=True, slots=True)
class CacheProbe:
    """A request's cacheable prefixes as (tokens, key), shortest first."""

    automatic: bool
    """OpenAI: every block boundary is a prefix, and writes are not reported."""
    prefixes: tuple[tuple[int, bytes], ...] = ()


NO_PROBE = CacheProbe(automatic=True)


def probe(config: SimulatorConfig, call: JudgeCall) -> CacheProbe:
    """The prefixes of `call` the cache could serve (none when caching is off or the prompt is
    under `cache_min_tokens`)."""
    if not config.prompt_cache:
        return NO_PROBE
    minimum = config.cache_min_tokens
    prompt = call.prompt
    total = len(prompt) // _CHARS_PER_TOKEN
    # Gemini's implicit cache works as OpenAI's does: by itself, on any long prefix.
    automatic = call.route in ("openai", "gemini")
    if automatic:
        first = -(-minimum // _BLOCK_TOKENS) * _BLOCK_TOKENS
        ends = [t * _CHARS_PER_TOKEN for t in range(first, total + 1, _BLOCK_TOKENS)]
    else:
        ends = sorted({end for end in call.breakpoints if end // _CHARS_PER_TOKEN >= minimum})
    if not ends:
        return CacheProbe(automatic)
    # The model and route are part of every key: caches are per model.
    running = hashlib.sha256(f"{call.route}\0{call.model}\0".encode())
    view = memoryview(prompt)
    start = 0
    prefixes = []
    for end in ends:
        running.update(view[start:end])
        start = end
        prefixes.append((end // _CHARS_PER_TOKEN, running.copy().digest()[:_KEY_BYTES]))
    return CacheProbe(automatic, tuple(prefixes))


class PromptCache:
    """Cached prefixes by key, with when each was last written or read (least recent first);
    counts what it served. The TTL is read at each look, so changing `cache_ttl_s` applies to
    what is already cached."""

    def __init__(self) -> None:
        self._used: OrderedDict[bytes, float] = OrderedDict()
        self.read_tokens = 0
        self.written_tokens = 0
        self.hits = 0
        self.lookups = 0

    def apply(self, config: SimulatorConfig, found: CacheProbe) -> tuple[int, int]:
        """(tokens read, tokens written) for one request, which then leaves its prefixes in
        the cache."""
        prefixes = found.prefixes
        if not prefixes:
            return 0, 0
        now = time.monotonic()
        oldest = now - config.cache_ttl_s
        used = self._used
        self._evict(oldest)
        hit = -1
        for i, (_, key) in enumerate(prefixes):
            last = used.get(key)
            if last is not None and last > oldest:
                hit = i
        read = prefixes[hit][0] if hit >= 0 else 0
        # OpenAI reports no writes; Anthropic writes from the read prefix to the last breakpoint.
        written = 0 if found.automatic else prefixes[-1][0] - read
        # OpenAI's request is now cached in every block; Anthropic refreshes the prefix it read
        # and writes the later breakpoints (the shorter ones are not touched).
        for _, key in prefixes if found.automatic else prefixes[max(hit, 0) :]:
            used[key] = now
            used.move_to_end(key)
        self.lookups += 1
        self.hits += int(read > 0)
        self.read_tokens += read
        self.written_tokens += written
        return read, written

    def _evict(self, oldest: float) -> None:
        used = self._used
        while used:
            key, last = next(iter(used.items()))
            if last > oldest and len(used) <= _MAX_ENTRIES:
                break
            del used[key]

    def snapshot(self) -> dict[str, Any]:
        return {
            "lookups": self.lookups,
            "hits": self.hits,
            "read_tokens": self.read_tokens,
            "written_tokens": self.written_tokens,
            "entries": len(self._used),
        }
