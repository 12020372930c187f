"""What a run will cost before it is sent: tokens estimated from the prompts, the reply's
length from what the judge already replied in this run (measured), else from the rubric's
reply format (`reply_length`, an assumption the dry run prints), capped by `max_tokens`;
priced as `judge.judging.pricing` prices replies: synchronously, in provider batches, and with
the prompt cache serving the static prefix.

The static prefix is the request's leading system message (the rubric's instructions, the
same in every request of a rubric). The cached estimate assumes the first request of each
distinct prefix writes it to the cache and every later one reads it from there, and only for
prefixes of the judge's model's minimum (`cache_minimum`) or more: the providers cache nothing
shorter. It is a best case (a cache entry expires after minutes unused; requests sent at once
may all miss it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from judge.config.run_config import JudgeSpec, RunConfig
from judge.judging.pricing import price, rate_card
from judge.rubric.rubrics import Rubric
from judge.store.run_store import RunStore
from judge.types import ChatMessage, JudgeRequest, Usage

__all__ = [
    "MIN_CACHEABLE_TOKENS",
    "JudgeEstimate",
    "PrefixEstimate",
    "ReplyLength",
    "RunEstimate",
    "cache_minimum",
    "estimate_run",
    "estimate_tokens",
    "max_tokens",
    "reply_length",
]

_EST_OUTPUT_TOKENS = 400
"""The longest reply a budget holds back for when the judge sets no `max_tokens` (tokens): a
bound, not an estimate."""
_REASONING_TOKENS = 150
"""Assumed length of a judge's reasoning when the rubric asks for one (about 110 English
words, a short paragraph): an assumption, printed with the estimate, until replies are
measured."""
_VERDICT_TOKENS = 12
"""The JSON around a verdict or a score: braces, keys, quotes and the answer."""
_CRITERION_TOKENS = 6
"""Each criterion's score in a multi-criterion reply (`"accuracy": 4, `)."""
_PAGE = 1000
MIN_CACHEABLE_TOKENS = 1024
"""The shortest prompt prefix OpenAI's models and most of Anthropic's cache (tokens), and the
minimum assumed for a model not in `_CACHE_MINIMUMS`."""
_CACHE_MINIMUMS: dict[str, tuple[tuple[tuple[str, ...], int], ...]] = {
    # docs.anthropic.com prompt caching, "Cache limitations" (read 2026-12): 4,096 for Opus
    # 4.5 and 4.6 and Haiku 4.5, 2,048 for Sonnet 4.6 and the Haiku 3 models, 1,024 otherwise.
    "anthropic": (
        (("opus-4-5", "opus-4.5", "opus-4-6", "opus-4.6", "haiku-4-5", "haiku-4.5"), 4096),
        (("sonnet-4-6", "sonnet-4.6", "3-haiku", "3-5-haiku", "haiku-3"), 2048),
    ),
    # ai.google.dev/gemini-api/docs/caching, implicit caching (updated 2026-10-13): 2,048 for
    # Gemini 2.5 Flash and Pro, 4,096 for every newer model listed (3.x, 4).
    "google": ((("gemini-2.5", "gemini-2-5"), 2048), ((), 4096)),
}
"""Model maker -> (model name parts, minimum) tried in order; `()` matches any model of the
provider. Minimums rise with newer models, so a newer model unknown here gets its provider's
newest minimum, not the lowest."""
_MAX_PREFIXES = 64
"""Distinct static prefixes followed per judge: a rubric has one; a prompt whose system
message differs per request has no shared prefix, and following each would grow with the
run. Requests past this many are estimated uncached."""


def estimate_tokens(messages: Sequence[ChatMessage]) -> int:
    # ~4 characters per token for English text: good enough for limits and budgets.
    return sum(len(m.content) for m in messages) // 4 + 4 * len(messages)


def max_tokens(spec: JudgeSpec) -> int:
    cap = _reply_cap(spec)
    return _EST_OUTPUT_TOKENS if cap is None else cap


def _reply_cap(spec: JudgeSpec) -> int | None:
    """The judge's `max_tokens` (or `max_completion_tokens`); None when it sets neither."""
    value = spec.params.get("max_tokens") or spec.params.get("max_completion_tokens")
    return int(value) if isinstance(value, int | float) else None


def worst_case_cost(request: JudgeRequest, spec: JudgeSpec, *, batch: bool = False) -> float:
    """What sending `request` may cost at most (its prompt, and the longest reply allowed):
    what a budget holds back for it before it is sent. 0 when the price is unknown."""
    usage = Usage(input_tokens=estimate_tokens(request.messages), output_tokens=max_tokens(spec))
    return price(spec.model, usage, spec, batch=batch) or 0.0


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReplyLength(_Model):
    """The output tokens expected of each of a judge's replies, and what that rests on."""

    tokens: int
    basis: str
    """e.g. "measured: mean of 120 replies stored", "the simulator's reply format",
    "assumed: reasoning (~150 tokens) then the verdict, as the rubric asks"."""


def reply_length(
    spec: JudgeSpec,
    rubric: Rubric,
    measured: tuple[int, float] | None = None,
    simulator_style: str = "json",
) -> ReplyLength:
    """What each reply of `spec` will hold: the mean of its `measured` (count, mean tokens)
    replies, else the simulator's own format for a simulated judge, else the rubric's reply
    format with `_REASONING_TOKENS` for a reasoning field; never more than `max_tokens`."""
    criteria = [c.id for c in rubric.criteria] if "scores" in rubric.output.fields else []
    if measured is not None and measured[0] > 0:
        n, mean = measured
        tokens, basis = round(mean), f"measured: mean of {n:,} replies stored"
    elif spec.stand_in == "simulated":
        from judge.simulator.judging import typical_reply

        style = "json" if spec.structured_output else simulator_style
        text = typical_reply(rubric.kind, criteria, style)  # type: ignore[arg-type]
        tokens, basis = max(1, len(text) // 4), "the simulator's reply format"
    else:
        tokens = _VERDICT_TOKENS + _CRITERION_TOKENS * len(criteria)
        if "reasoning" in rubric.output.fields:
            tokens += _REASONING_TOKENS
            basis = (
                f"assumed: reasoning (~{_REASONING_TOKENS} tokens) then the "
                f"{'scores' if criteria else 'verdict'}, as rubric {rubric.id} asks"
            )
        else:
            basis = f"assumed: the verdict alone, as rubric {rubric.id} asks"
    cap = _reply_cap(spec)
    if cap is not None and tokens > cap:
        return ReplyLength(tokens=cap, basis=f"{basis}; capped by max_tokens {cap}")
    return ReplyLength(tokens=tokens, basis=basis)


class PrefixEstimate(_Model):
    """One distinct static prefix (system message) among a judge's requests to send."""

    tokens: int
    """Estimated tokens of the prefix."""
    requests: int
    """Requests to send that start with it."""
    cacheable: bool
    """At least the judge's `min_cacheable_tokens`: the cached estimate serves it from the
    cache."""


class JudgeEstimate(_Model):
    """One judge's pending requests and what sending them will cost (None: price unknown)."""

    judge: str
    mode: Literal["sync", "batch"]
    """How the judge is configured to send (`JudgeSpec.mode`): the cached estimate's mode."""
    min_cacheable_tokens: int = MIN_CACHEABLE_TOKENS
    """The shortest prefix the judge's model caches (`cache_minimum`)."""
    requests: int
    """Pending requests: no response stored."""
    cached: int
    """Of those, answered by the response cache: nothing is sent, nothing paid."""
    input_tokens: int
    """Estimated prompt tokens of the requests to send."""
    output_tokens: int
    """Estimated reply tokens: `reply.tokens` per request to send."""
    reply: ReplyLength
    """The length expected of each reply, and what it rests on."""
    prefixes: list[PrefixEstimate]
    """The distinct static prefixes of the requests to send, most used first."""
    unfollowed_requests: int
    """Requests to send whose prefix was past the ones followed: estimated uncached."""
    prompt_cache: bool
    """False: an Anthropic judge with `prompt_cache: false`, which the provider will not
    cache; the cached estimate is then the uncached one."""
    cache_read_tokens: int
    """Of `input_tokens`, read from the cache in the cached estimate."""
    cache_write_tokens: int
    """Of `input_tokens`, written to the cache in the cached estimate."""
    cost_sync_usd: float | None
    """Every request sent synchronously, nothing cached."""
    cost_batch_usd: float | None
    """Every request sent in provider batches, nothing cached."""
    cost_cached_usd: float | None
    """In the judge's `mode`, the static prefixes served from the cache."""

    @property
    def to_send(self) -> int:
        return self.requests - self.cached


class RunEstimate(_Model):
    """`--dry-run`: per judge with pending requests, what sending them will cost."""

    judges: dict[str, JudgeEstimate]
    notes: list[str] = []
    """What the estimate could not see or a real run would meet first (a missing API key, a
    run dir that holds another config)."""


def cache_minimum(spec: JudgeSpec | None) -> int:
    """The shortest prompt prefix the judge's model caches, in tokens (`_CACHE_MINIMUMS`):
    by the provider, or for a model reached through another (LiteLLM, a gateway) by its name."""
    if spec is None:
        return MIN_CACHEABLE_TOKENS
    name = spec.model.lower()
    maker = "anthropic" if "claude" in name else "google" if "gemini" in name else spec.provider
    for parts, minimum in _CACHE_MINIMUMS.get(maker, ()):
        if not parts or any(part in name for part in parts):
            return minimum
    return MIN_CACHEABLE_TOKENS


def estimate_run(
    store: RunStore,
    config: RunConfig,
    rubric: Rubric,
    *,
    measured: Mapping[str, tuple[int, float]] | None = None,
    notes: Sequence[str] = (),
    answered: RunStore | None = None,
) -> RunEstimate:
    """Pending requests per judge and their estimated cost (for `--dry-run`), read a page at
    a time: memory holds a page and a few numbers per judge. `measured`: per judge, (replies,
    mean output tokens) already stored for this run (`RunStore.reply_tokens`). `answered`:
    the run's own store when `store` is a scratch copy of it: what it answered is not sent."""
    specs = {spec.model: spec for spec in config.judges}
    style = config.simulator.reply_style if config.simulator is not None else "json"
    tallies: dict[str, _Tally] = {}
    after = 0
    while rows := store.pending_after(after, _PAGE):
        after = rows[-1][0]
        for _, request in rows:
            if answered is not None and answered.has_response(request.request_id):
                continue
            tally = tallies.get(request.judge)
            if tally is None:
                spec = specs.get(request.judge)
                mine = (measured or {}).get(request.judge)
                length = None if spec is None else reply_length(spec, rubric, mine, style)
                tally = tallies[request.judge] = _Tally(request.judge, spec, length)
            cached = store.cached_response(request.cache_key) is not None
            tally.add(request, cached=cached)
    return RunEstimate(
        judges={judge: tally.result() for judge, tally in tallies.items()}, notes=list(notes)
    )


class _Tally:
    """One judge's sums, a request at a time."""

    def __init__(self, judge: str, spec: JudgeSpec | None, reply: ReplyLength | None) -> None:
        self.judge, self.spec = judge, spec
        self.requests = self.cached = self.input_tokens = self.unfollowed = 0
        self.reply = reply or ReplyLength(
            tokens=_EST_OUTPUT_TOKENS, basis="not a judge of this config: the longest reply"
        )
        self.out_per_request = self.reply.tokens
        self.prefixes: dict[str, list[int]] = {}
        """Prefix text -> [estimated tokens, requests]."""

    def add(self, request: JudgeRequest, *, cached: bool) -> None:
        self.requests += 1
        if cached:
            self.cached += 1
            return
        self.input_tokens += estimate_tokens(request.messages)
        prefix = _static_prefix(request.messages)
        if not prefix:
            return
        text = "\n".join(m.content for m in prefix)
        seen = self.prefixes.get(text)
        if seen is not None:
            seen[1] += 1
        elif len(self.prefixes) < _MAX_PREFIXES:
            self.prefixes[text] = [estimate_tokens(prefix), 1]
        else:
            self.unfollowed += 1

    def result(self) -> JudgeEstimate:
        spec = self.spec
        sent = self.requests - self.cached
        output = sent * self.out_per_request
        minimum = cache_minimum(spec)
        prefixes = sorted(
            (
                PrefixEstimate(tokens=t, requests=n, cacheable=t >= minimum)
                for t, n in self.prefixes.values()
            ),
            key=lambda p: (-p.requests, p.tokens),
        )
        # OpenAI caches long prefixes by itself; Anthropic only at the breakpoint that
        # `prompt_cache` sets.
        caches = spec is None or spec.prompt_cache or spec.provider != "anthropic"
        cacheable = [p for p in prefixes if p.cacheable] if caches else []
        read = sum(p.tokens * (p.requests - 1) for p in cacheable)
        written = sum(p.tokens for p in cacheable)
        plain = Usage(input_tokens=self.input_tokens, output_tokens=output)
        with_cache = plain.model_copy(
            update={"cache_read_tokens": read, "cache_write_tokens": written}
        )
        sync = batch = in_mode = None
        if spec is not None:
            card = rate_card(spec)
            sync, batch = card.cost(plain), card.cost(plain, batch=True)
            in_mode = card.cost(with_cache, batch=spec.mode == "batch")
        return JudgeEstimate(
            judge=self.judge,
            mode="sync" if spec is None else spec.mode,
            min_cacheable_tokens=minimum,
            requests=self.requests,
            cached=self.cached,
            input_tokens=self.input_tokens,
            output_tokens=output,
            reply=self.reply,
            prefixes=prefixes,
            unfollowed_requests=self.unfollowed,
            prompt_cache=caches,
            cache_read_tokens=read,
            cache_write_tokens=written,
            cost_sync_usd=sync,
            cost_batch_usd=batch,
            cost_cached_usd=in_mode,
        )


def _static_prefix(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The leading system messages: the part of a prompt that does not change per request."""
    prefix = []
    for message in messages:
        if message.role != "system":
            break
        prefix.append(message)
    return prefix
