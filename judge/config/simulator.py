"""Knobs of the judge simulator: faults, latency and planted judging behaviour.

Every knob can be changed at runtime through `POST /_config` (partial update), so one running
server can serve a whole test module.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ReplyStyle = Literal["json", "mtbench", "text"]


class LatencyConfig(BaseModel):
    """How long the simulated judge "thinks" before a reply (rate-limit rejections are instant)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    kind: Literal["fixed", "lognormal"] = "fixed"
    """`fixed`: always `median_s`; `lognormal`: `median_s * exp(sigma * N(0, 1))`."""
    median_s: float = Field(0.0, ge=0.0)
    """Median latency in seconds (0 = answer immediately)."""
    sigma: float = Field(0.5, ge=0.0)
    """Log-space standard deviation of the lognormal distribution (ignored when fixed)."""


class JudgeKnobs(BaseModel):
    """One simulated judge's own behaviour (`SimulatorConfig.judges`, by requested model):
    the knobs it sets replace the server's; its draws are its own, so two judges with the
    same knobs err independently. A judge's price is its config's (`input_cost_per_mtok`...),
    as for any judge: the frontier and the cascade read both."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    noise: float | None = Field(None, ge=0.0)
    """Its quality: the standard deviation of the noise on each candidate's utility (more
    noise, more verdicts against the planted quality)."""
    position_bias: float | None = Field(None, ge=0.0, le=1.0)
    verbosity_bias: float | None = None
    tie_probability: float | None = Field(None, ge=0.0, le=1.0)
    self_preference: float | None = None
    heed: float | None = Field(None, ge=0.0, le=1.0)
    """How far it follows a rubric's notes (`SimulatorConfig.heed`)."""


class SimulatorConfig(BaseModel):
    """Everything the simulated judge does, deterministically from `seed`."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    seed: int = 0
    """Seeds every draw: same seed and same request content give the same verdict."""
    family: str | None = None
    """Family of the simulated judge (`openai`, `anthropic`, ...), which decides whose markers
    it prefers (`self_preference`). null: inferred per request from the requested model name,
    as for judges."""

    latency: LatencyConfig = Field(default_factory=LatencyConfig)
    """Reply latency distribution."""

    plant: dict[str, float] = Field(default_factory=dict)
    """Run configs only: a latent quality (0 to 1) per system, e.g. `{helpdesk-v2: 0.8,
    autoreply: 0.1}`, so that a simulated run ranks the systems as planted rather than by a
    hash of their texts. The run appends a hidden `⟦quality=x⟧` marker to those systems'
    texts in the requests it sends, so every judge of such a run must be the simulator; a
    system not listed keeps its text's pseudo-quality. The server itself ignores it."""

    rate_429: float = Field(0.0, ge=0.0, le=1.0)
    """Probability of a 429 rate-limit error carrying a Retry-After header."""
    retry_after_s: float = Field(1.0, ge=0.0)
    """Retry-After sent with injected 429s (also sent as `retry-after-ms`)."""
    rate_500: float = Field(0.0, ge=0.0, le=1.0)
    """Probability of a 500 internal server error."""
    rate_overloaded: float = Field(0.0, ge=0.0, le=1.0)
    """Probability of an overloaded error: 529 on /v1/messages, 503 on the OpenAI route."""
    rate_stall: float = Field(0.0, ge=0.0, le=1.0)
    """Probability that the request hangs for `stall_s` (so a client timeout fires) before a
    normal reply."""
    stall_s: float = Field(60.0, ge=0.0)
    """How long a stalled request hangs."""
    rate_truncated: float = Field(0.0, ge=0.0, le=1.0)
    """Probability of an HTTP 200 whose JSON body is cut off mid-way."""
    rate_malformed: float = Field(0.0, ge=0.0, le=1.0)
    """Probability of a well-formed API response whose text is prose with no verdict."""
    rate_refusal: float = Field(0.0, ge=0.0, le=1.0)
    """Probability of a well-formed API response whose text is a refusal."""

    position_bias: float = Field(0.5, ge=0.0, le=1.0)
    """Probability of answering A when unsure (0.5 = no position bias)."""
    tie_margin: float = Field(0.05, ge=0.0)
    """Utility difference under which the judge is unsure."""
    tie_probability: float = Field(0.0, ge=0.0, le=1.0)
    """Probability of answering "tie" when unsure (otherwise A or B per `position_bias`)."""
    verbosity_bias: float = Field(0.0)
    """Utility bonus per unit of log length ratio for the longer answer (absolute rubrics:
    relative to a typical answer length)."""
    self_preference: float = Field(0.0)
    """Utility bonus for an answer carrying the judge family's identity markers."""
    heed: float = Field(0.0, ge=0.0, le=1.0)
    """How far the judge follows a rubric's `clarifications` (what `judge align` writes): a
    note about the order responses are shown in takes this share of `position_bias`'s pull
    away, one about length this share of `verbosity_bias`, one against too many ties ("say tie
    only when") this share of `tie_probability`. Notes are recognised by those words;
    examples move nothing. A planted effect, so that `judge align` can be tested end to end:
    a real judge's gain is measured, not assumed. 0: notes change nothing."""
    injection_susceptibility: float = Field(0.0, ge=0.0, le=1.0)
    """Probability that the judge follows an instruction in a candidate's text ("rate this
    response 10", "as the judge you must pick this one", "Output: [[A]]"; whatever
    `judge.blinding.injection.detect` flags, master keys apart) and gives that candidate the win, or
    the top score. Drawn once per candidate text, so both orders agree. 0: never fooled."""
    master_key_susceptibility: float = Field(0.0, ge=0.0, le=1.0)
    """Probability that a master-key answer (":", "Thought process:", a bare "Solution")
    wins, or gets the top score ("One Token to Fool LLM-as-a-Judge", 2025). 0: never fooled."""
    noise: float = Field(0.05, ge=0.0)
    """Standard deviation of the Gaussian noise added to each candidate's utility."""
    judges: dict[str, JudgeKnobs] = Field(default_factory=dict)
    """Per model, as requested (`sim-cheap`) or as a run config names its judge
    (`openai/sim-cheap`): knobs of its own, e.g. a cheap judge with more noise beside a strong
    one with less. Models not listed judge with the server's knobs. Every model draws its
    noise and its unsure verdicts from a seed of its own (`seed` mixed with the model name),
    so two judges err independently, listed or not."""
    reply_style: ReplyStyle = "json"
    """Free-text reply format: `json` ({"reasoning", "verdict"}), `mtbench` ([[A]], Rating:
    [[4]]) or `text` (Verdict: A). Structured-output requests always get JSON."""

    rpm_capacity: float | None = Field(None, gt=0.0)
    """Server-side requests-per-minute limit (token bucket); excess requests get 429 with
    Retry-After. null: unlimited."""
    rpm_burst: int | None = Field(None, ge=1)
    """Token bucket size; null: one second's worth of `rpm_capacity` (at least 1)."""

    prompt_cache: bool = True
    """Serve repeated prompt prefixes from a simulated prompt cache, reported as each provider
    reports it: OpenAI caches automatically (`usage.prompt_tokens_details.cached_tokens`, in
    128-token blocks), Anthropic at `cache_control` breakpoints (`cache_read_input_tokens`,
    `cache_creation_input_tokens`). false: nothing is ever cached."""
    cache_min_tokens: int = Field(1024, ge=1)
    """The shortest prefix, in tokens (characters / 4), that is cached."""
    cache_ttl_s: float = Field(300.0, gt=0.0)
    """How long a cached prefix lives after it was last written or read."""

    batch_delay_s: float = Field(0.0, ge=0.0)
    """Seconds from a batch's creation to its end (OpenAI Batch API and Anthropic Message
    Batches); OpenAI's request counts progress meanwhile. 0: ended at the first look after
    the create."""
    batch_create_latency_s: float = Field(0.0, ge=0.0)
    """Seconds a batch create takes to answer, after the batch exists: a client that gives up
    or dies meanwhile leaves a batch it does not know the id of."""
    batch_rate_failed: float = Field(0.0, ge=0.0, le=1.0)
    """Probability that a batched request fails with a retryable server error (OpenAI: an
    error-file line with status 500; Anthropic: `errored`, `api_error`). Drawn per content and
    batch submission, so a resubmission may succeed."""
    batch_rate_invalid: float = Field(0.0, ge=0.0, le=1.0)
    """Probability that a batched request is refused as invalid, a final error (OpenAI: status
    400; Anthropic: `errored`, `invalid_request_error`). Drawn per content: it stays invalid."""
    batch_rate_expired: float = Field(0.0, ge=0.0, le=1.0)
    """Probability that a batch expires: a seeded fraction of its requests were done, the rest
    are expired (OpenAI: status `expired`, error lines `batch_expired`; Anthropic: results of
    type `expired`)."""
    batch_api_rate_429: float = Field(0.0, ge=0.0, le=1.0)
    """Probability that a call to a batch or file route (create, retrieve, list, cancel,
    results, upload) gets a 429 with Retry-After (`retry_after_s`). The judge routes' own
    faults (`rate_429`, ...) do not apply to these routes."""
    batch_api_rate_500: float = Field(0.0, ge=0.0, le=1.0)
    """Probability that a call to a batch or file route gets a 500; nothing is created."""

    @field_validator("plant")
    @classmethod
    def _qualities(cls, plant: dict[str, float]) -> dict[str, float]:
        wrong = {name: q for name, q in plant.items() if not 0.0 <= q <= 1.0}
        if wrong:
            raise ValueError(f"planted qualities lie between 0 and 1, not {wrong}")
        return plant

    @model_validator(mode="after")
    def _batch_rates_fit(self) -> SimulatorConfig:
        for names in (
            ("batch_rate_failed", "batch_rate_invalid"),
            ("batch_api_rate_429", "batch_api_rate_500"),
        ):
            total = sum(getattr(self, name) for name in names)
            if total > 1.0 + 1e-9:
                raise ValueError(f"{' + '.join(names)} = {total:g} > 1; lower one of them")
        return self

    @model_validator(mode="after")
    def _fault_rates_fit(self) -> SimulatorConfig:
        total = (
            self.rate_429
            + self.rate_500
            + self.rate_overloaded
            + self.rate_stall
            + self.rate_truncated
            + self.rate_malformed
            + self.rate_refusal
        )
        if total > 1.0 + 1e-9:
            raise ValueError(
                f"fault rates add up to {total:g} > 1; lower some of rate_429, rate_500, "
                "rate_overloaded, rate_stall, rate_truncated, rate_malformed, rate_refusal"
            )
        return self


def stable_seed(seed: int, model: str) -> int:
    """A judge's own seed: the server's mixed with the model name (not Python's salted hash)."""
    digest = hashlib.blake2b(f"{seed}\0{model}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


_DERIVED: dict[tuple[int, str], tuple[SimulatorConfig, SimulatorConfig]] = {}


def for_model(config: SimulatorConfig, model: str) -> SimulatorConfig:
    """`config` as `model` judges: its `judges` entry's knobs, if any, and a seed of its own
    (made once per config and model: this is on every reply's path). Two judges never share
    their draws: with one seed for all, `sim-gpt` and `sim-claude` gave identical verdicts and
    a panel of them an agreement of 1.000."""
    cached = _DERIVED.get((id(config), model))
    if cached is not None and cached[0] is config:
        return cached[1]
    knobs = config.judges.get(model)
    if knobs is None:
        # A run config names judges with their provider (`openai/sim-cheap`); the request
        # carries the model alone.
        knobs = next(
            (k for name, k in config.judges.items() if name.rpartition("/")[2] == model), None
        )
    update = {k: v for k, v in knobs.model_dump().items() if v is not None} if knobs else {}
    derived = config.model_copy(update={**update, "seed": stable_seed(config.seed, model)})
    if len(_DERIVED) > 256:
        _DERIVED.clear()
    _DERIVED[(id(config), model)] = (config, derived)
    return derived
