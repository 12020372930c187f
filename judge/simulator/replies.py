"""What the simulated judge answers to one call, whichever way it came (a synchronous request or
an item of a batch): the fault drawn for it, the reply text and its usage, and that reply as
each provider's wire format (OpenAI, Anthropic, Gemini) spells it.

One path for both, so a request judged in a batch gets the reply text, and the verdict, it
would get sent on its own.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from judge.config.simulator import SimulatorConfig, for_model
from judge.families import family_of
from judge.simulator.judging import (
    MALFORMED_TEXT,
    NO_CANDIDATES_TEXT,
    REFUSAL_TEXT,
    decide,
    reply_text,
    structured_reply,
    uniforms,
)
from judge.simulator.wire import JudgeCall, OutputMode

FAULTS = ("429", "500", "overloaded", "stall", "truncated", "malformed", "refusal")
"""Per-attempt faults of the judge routes, in the order their rates are stacked on one draw."""
_REPLY_FAULTS = frozenset({"malformed", "refusal"})
"""Faults that are a reply (a 200 without a verdict) rather than a failed transport."""
_OPENAI_COMPLETION_DETAILS = {
    "reasoning_tokens": 0,
    "audio_tokens": 0,
    "accepted_prediction_tokens": 0,
    "rejected_prediction_tokens": 0,
}

Faults = tuple[tuple[str, float], ...]


def fault_table(config: SimulatorConfig) -> Faults:
    """The non-zero fault rates, in `FAULTS` order: the per-request path walks only these."""
    rates = ((name, getattr(config, f"rate_{name}")) for name in FAULTS)
    return tuple((name, rate) for name, rate in rates if rate > 0)


def pick_fault(faults: Faults, draw: float) -> str:
    for name, rate in faults:
        if draw < rate:
            return name
        draw -= rate
    return "ok"


def fault_draws(config: SimulatorConfig, call: JudgeCall, attempt: int) -> tuple[float, ...]:
    """The uniforms deciding the fault and latency of one attempt at `call`: the attempt number
    makes a retry draw afresh, while the verdict (seeded by content only) stays the same."""
    return uniforms(config.seed, b"fault", call.content_digest, attempt.to_bytes(8, "big"))


def batch_outcome(config: SimulatorConfig, faults: Faults, call: JudgeCall) -> str:
    """How a batched request is answered: as the first synchronous attempt at the same content
    would be, transport faults apart (a batch has no connection to break), so a request's parse
    outcome does not depend on how it was sent."""
    if not any(name in _REPLY_FAULTS for name, _ in faults):
        return "ok"
    outcome = pick_fault(faults, fault_draws(config, call, 0)[0])
    return outcome if outcome in _REPLY_FAULTS else "ok"


@dataclass(slots=True)
class Reply:
    """One reply, small enough to keep for every item of a large batch: rendered to the
    provider's JSON only when it is sent."""

    model: str
    text: str
    mode: OutputMode
    tool_name: str | None
    tool_use: bool
    """Anthropic: the text is the JSON input of a `tool_use` block."""
    refusal: bool
    judged: bool
    """A verdict was given (not a malformed reply, a refusal, or a prompt without candidates)."""
    prompt_tokens: int
    """Every prompt token, cached or not."""
    output_tokens: int
    cache_read: int = 0
    cache_written: int = 0


def compose(config: SimulatorConfig, call: JudgeCall, outcome: str) -> Reply:
    """The reply to `call` for an outcome that is a reply (`ok`, `malformed`, `refusal`, or a
    transport fault that still carries one, as `stall` and `truncated` do)."""
    judged = tool_use = False
    if outcome == "malformed":
        text = MALFORMED_TEXT
    elif outcome == "refusal":
        text = REFUSAL_TEXT
    else:
        family = config.family or _family(call.model)
        judging = for_model(config, call.model)
        decision = decide(judging, family, call.user_text, call.content_digest, call.system_text)
        if decision is None:
            text = NO_CANDIDATES_TEXT
        else:
            judged = True
            if call.output_mode == "text":
                text = reply_text(decision, config.reply_style)
            else:
                text = json.dumps(structured_reply(decision, call.schema))
                tool_use = call.output_mode == "tool"
    return Reply(
        model=call.model,
        text=text,
        mode=call.output_mode,
        tool_name=call.tool_name,
        tool_use=tool_use,
        refusal=outcome == "refusal",
        judged=judged,
        prompt_tokens=_tokens(call.input_chars),
        output_tokens=_tokens(len(text)),
    )


def openai_completion(
    reply: Reply, reply_id: str, created: int | None = None, service_tier: str = "default"
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
    if reply.refusal and reply.mode == "json_schema":
        # Structured-output refusals come in their own field; the text is kept in `content`
        # too so a client reading only `content` still sees an unparseable reply.
        message["refusal"] = reply.text
    message["annotations"] = []
    prompt, completion = reply.prompt_tokens, reply.output_tokens
    return {
        "id": reply_id,
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": reply.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            # `prompt_tokens` includes the cached ones.
            "prompt_tokens_details": {"cached_tokens": reply.cache_read, "audio_tokens": 0},
            "completion_tokens_details": dict(_OPENAI_COMPLETION_DETAILS),
        },
        "service_tier": service_tier,
        "system_fingerprint": "fp_simulator",
    }


def anthropic_message(
    reply: Reply, message_id: str, tool_use_id: str, service_tier: str = "standard"
) -> dict[str, Any]:
    if reply.tool_use:
        content: list[dict[str, Any]] = [
            {
                "type": "tool_use",
                "id": tool_use_id,
                "name": reply.tool_name,
                "input": json.loads(reply.text),
            }
        ]
        stop_reason = "tool_use"
    else:
        content, stop_reason = [{"type": "text", "text": reply.text}], "end_turn"
    read, written = reply.cache_read, reply.cache_written
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            # Anthropic's input_tokens leaves out what was read from or written to the cache.
            "input_tokens": reply.prompt_tokens - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": written,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": reply.output_tokens,
            "service_tier": service_tier,
        },
    }


def gemini_response(reply: Reply, response_id: str) -> dict[str, Any]:
    """A generateContent response. `promptTokenCount` includes the cached tokens, which
    `cachedContentTokenCount` reports (absent when nothing was read from the cache)."""
    prompt, output = reply.prompt_tokens, reply.output_tokens
    usage: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
    }
    if reply.cache_read:
        usage["cachedContentTokenCount"] = reply.cache_read
        usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": reply.cache_read}]
    return {
        "candidates": [
            {
                "content": {"parts": [{"text": reply.text}], "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": usage,
        "modelVersion": reply.model,
        "responseId": response_id,
    }


def _tokens(chars: int) -> int:
    return max(1, chars // 4)


@lru_cache(maxsize=1024)
def _family(model: str) -> str:
    return family_of(model)
