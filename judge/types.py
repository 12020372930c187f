"""Core records that flow through the pipeline (see DESIGN.md, "Data flow and core types").

All are frozen pydantic models with `extra="forbid"`: they are the boundaries between stages
and between the library, the store and the service.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Order = Literal["AB", "BA"]
"""Presentation order of a pairwise request: AB shows the pair's slot A first."""

Label = Literal["A", "B", "tie"]
"""A pairwise verdict, in terms of the *presented* slots of one request."""

PANEL = "panel"
"""The `judge` of the judgments that combine several judges' (`judge.analysis.aggregate`)."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ChatMessage(_Record):
    role: Literal["system", "user", "assistant"]
    content: str


class Item(_Record):
    """One prompt to be answered by every system."""

    item_id: str
    prompt: str | tuple[ChatMessage, ...]
    """The instruction: plain text or a chat transcript ending in the user's turn."""
    reference: str | None = None
    """A reference answer, for reference-guided rubrics."""
    strata: dict[str, str] = Field(default_factory=dict)
    """Every other column of the items table (category, language, ...), as text."""


class Response(_Record):
    """One system's output for one item. Never judge-visible as is: see `BlindedResponse`."""

    item_id: str
    system: str
    output: str
    context: tuple[ChatMessage, ...] = ()
    """This system's own earlier turns (multi-turn items, e.g. MT-Bench turn 2): the judge sees
    them, so they are scrubbed like the output."""
    latency_s: float | None = None
    cost_usd: float | None = None
    tokens: int | None = None


class BlindedResponse(_Record):
    """A response as the judge may see it: opaque id, scrubbed text, no system name."""

    blind_id: str
    item_id: str
    output: str
    context: tuple[ChatMessage, ...] = ()


class BlindedPair(_Record):
    """Two blinded responses to the same item with a seeded A/B slot assignment."""

    pair_id: str
    item_id: str
    slot_a: str
    """blind_id presented as A in the AB order."""
    slot_b: str


class BlindingKey(_Record):
    """Opaque id -> system. Written to its own file; never rendered into a prompt."""

    blinding_secret: str
    """Hex per-run HMAC secret; with it the same run re-derives the same opaque ids on resume."""
    systems: dict[str, str]
    """blind_id -> system."""
    pairs: dict[str, tuple[str, str]] = Field(default_factory=dict)
    """pair_id -> (system in slot A, system in slot B)."""


class ScrubReport(_Record):
    """How much scrubbing changed: counts per system and per rule, never the removed text."""

    total: int
    responses_changed: int
    responses: int
    by_system: dict[str, int]
    by_rule: dict[str, int]
    """Markers per rule (`judge.blinding.scrubber.RULES`), every rule present; `frame` counts
    self-descriptions with their maker ("a large language model trained by ..."), each one
    placeholder with the names in it. Reports written before frames were scrubbed have no
    `frame` key."""
    by_system_rule: dict[str, dict[str, int]]
    by_kind: dict[str, int] = Field(default_factory=dict)
    """Markers per kind (`judge.blinding.scrubber.KINDS`: plain, disguised, self_introduction,
    signature); empty in reports written before kinds were counted."""


class InjectionReport(_Record):
    """Responses whose text addresses the judge (`judge.blinding.injection`): counts per system and
    rule, and the rule per flagged response by opaque id, never the text. Flagged responses
    are judged as written: this records, it does not remove."""

    responses: int
    flagged: int
    by_rule: dict[str, int]
    by_system: dict[str, int]
    by_system_rule: dict[str, dict[str, int]]
    flags: dict[str, str] = Field(default_factory=dict)
    """blind_id -> the rule that fired (`judge.blinding.injection.RULES`)."""


class Verdict(_Record):
    """One judge reply, parsed. Pairwise replies carry `label` (in presented-slot terms);
    absolute replies carry `score` and, for multi-criterion rubrics, `scores`."""

    label: Label | None = None
    score: float | None = None
    scores: dict[str, float] = Field(default_factory=dict)
    reasoning: str = ""
    parsed_from: Literal["json", "text"] = "json"


class ParseFailure(_Record):
    """A reply that yielded no verdict: stored and counted, never dropped."""

    reason: str
    excerpt: str = ""
    """The start of the reply, for diagnosis (judge text only: it holds no system name)."""


class Usage(_Record):
    input_tokens: int = 0
    """Every prompt token, those read from or written to a provider's prompt cache included."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Of `input_tokens`, those served from the provider's prompt cache (OpenAI
    `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`)."""
    cache_write_tokens: int = 0
    """Of `input_tokens`, those written to the prompt cache (Anthropic
    `cache_creation_input_tokens`; priced above plain input)."""


class JudgeRequest(_Record):
    """One request to one judge. `request_id` is a content hash, so re-planning a run yields
    the same ids and writes stay idempotent."""

    request_id: str
    judge: str
    """`provider/model` of the judge."""
    rubric_id: str
    rubric_version: int
    rubric_hash: str
    kind: Literal["pairwise", "absolute"]
    item_id: str
    pair_id: str | None = None
    order: Order | None = None
    blind_id: str | None = None
    messages: tuple[ChatMessage, ...]
    params: dict[str, float | int | str | bool] = Field(default_factory=dict)
    cache_key: str
    """Canonical hash of (provider, model, params, messages): equal keys are never sent twice."""
    same_family: bool = False
    """The judge shares a family with a system in this pair (allowed only by config; flagged)."""


class JudgeResponse(_Record):
    request_id: str
    text: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    latency_s: float | None = None
    attempts: int = 1
    provider_request_id: str | None = None
    error: str | None = None
    """Set when every attempt failed; `text` is then None."""
    cached: bool = False
    batch_id: str | None = None
    """The run's own id of the provider batch that answered (`judge.batch`); None when the
    reply came from a synchronous call (a repair turn of a batch reply is synchronous, and
    its cost is added at the synchronous price)."""
