"""Gemini's generateContent wire format, shared by the SDK adapter (`gemini_sdk`), the lean
transport (`gemini_http`) and the batch adapter (`judge.batch.gemini_api`), so a request is
built, and a reply read, one way whichever of them sends it.

The request (`POST {base}/v1beta/models/{model}:generateContent`, key in `x-goog-api-key`):
system messages become `systemInstruction`, assistant turns the `model` role, sampling and
structured output go in `generationConfig`, the service tier at the top (`serviceTier`). The
reply: the first candidate's text parts (thought parts left out), and `usageMetadata`, whose
`promptTokenCount` includes the `cachedContentTokenCount` its implicit cache served.

Errors are Google's: `{"error": {"code", "message", "status", "details"}}`; a 429
(`RESOURCE_EXHAUSTED`) says how long to wait only in a `google.rpc.RetryInfo` detail, never
in a Retry-After header, and names a per-day quota in a `google.rpc.QuotaFailure` detail
(not worth retrying within a run).

Nothing here imports the SDK.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from judge.config.run_config import JudgeSpec
from judge.providers._common import resolve_api_key
from judge.providers.base import ProviderCall, ProviderReply
from judge.types import ChatMessage, Usage

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
"""The Gemini Developer API, without the version (as the SDK's `base_url` takes it)."""
API_VERSION = "v1beta"
BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"
"""The SDK's own base-URL variable, honoured by both transports."""
KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
"""Where the key is looked for, in the SDK's order (it prefers GOOGLE_API_KEY when both are
set)."""
INSTALL_HINT = "pip install 'judge-pipeline[gemini]' (or pip install 'google-genai>=1.30')"

_PARAM_NAMES = {"max_tokens": "max_output_tokens", "max_completion_tokens": "max_output_tokens"}
"""Sampling parameters spelled as the other providers spell them -> Gemini's (snake) names."""
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_QUOTA_FAILURE = "type.googleapis.com/google.rpc.QuotaFailure"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)s\s*$")
_PER_DAY = re.compile(r"per\s*day", re.IGNORECASE)
_FINAL_GRPC = frozenset({3, 5, 7, 9, 11, 12, 16})
"""google.rpc.Code values a batch item's error is final with (invalid argument, not found,
permission denied, failed precondition, out of range, unimplemented, unauthenticated); the
others (resource exhausted, internal, unavailable, deadline exceeded, ...) are worth another
try."""


def key_variable() -> str:
    """The variable the key is read from: GOOGLE_API_KEY when set (as the SDK prefers it),
    else GEMINI_API_KEY (the one an error names when neither is set)."""
    return KEY_VARIABLES[0] if os.environ.get(KEY_VARIABLES[0], "").strip() else KEY_VARIABLES[1]


def resolve_key(spec: JudgeSpec) -> str:
    return resolve_api_key(spec, key_variable())


def base_url(spec: JudgeSpec) -> str:
    """The API's root without the version: the config's, else the SDK's variable's, else
    Google's."""
    env = os.environ.get(BASE_URL_ENV, "").strip()
    return (spec.base_url or env or DEFAULT_BASE_URL).rstrip("/")


def split_messages(
    messages: tuple[ChatMessage, ...],
) -> tuple[str | None, list[dict[str, Any]]]:
    """(system instruction, contents): Gemini takes the system prompt apart from the turns and
    calls the assistant `model`."""
    system = [m.content for m in messages if m.role == "system"]
    contents = [
        {"role": "model" if m.role == "assistant" else "user", "parts": [{"text": m.content}]}
        for m in messages
        if m.role != "system"
    ]
    return ("\n\n".join(system) if system else None), contents


def generation_config(spec: JudgeSpec, schema: dict[str, Any] | None) -> dict[str, Any]:
    """`generationConfig` in the SDK's snake_case names (`camel` spells it for the wire): the
    judge's params (OpenAI's names accepted: max_tokens, stop), `thinking_budget` as Gemini's
    thinking config, and the reply schema for structured output."""
    config: dict[str, Any] = {}
    for name, value in spec.params.items():
        if name == "thinking_budget":
            # Thinking tokens are billed as output: a judge may want to bound or disable them.
            config["thinking_config"] = {"thinking_budget": value}
        elif name == "stop":
            config["stop_sequences"] = [value]
        else:
            config[_PARAM_NAMES.get(name, name)] = value
    if spec.structured_output and schema is not None:
        config["response_mime_type"] = "application/json"
        config["response_schema"] = response_schema(schema)
    return config


def response_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema as Gemini's `responseSchema` (an OpenAPI 3.0 subset): types upper-cased,
    `additionalProperties` dropped (the Developer API refuses it there), and the properties'
    order made explicit with `propertyOrdering`, since Gemini otherwise orders them
    alphabetically and the reasoning must come before the verdict."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "additionalProperties":
            continue
        if key == "type" and isinstance(value, str):
            out[key] = value.upper()
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: response_schema(sub) for name, sub in value.items()}
            out["propertyOrdering"] = list(value)
        elif key == "items" and isinstance(value, dict):
            out[key] = response_schema(value)
        else:
            out[key] = value
    return out


def camel(value: Any) -> Any:
    """Snake-case keys as the REST API spells them (`max_output_tokens` -> `maxOutputTokens`);
    a response schema is left as it is (its property names are the rubric's own)."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        head, *rest = key.split("_")
        name = head + "".join(part.title() for part in rest)
        out[name] = item if name == "responseSchema" else camel(item)
    return out


def payload(spec: JudgeSpec, call: ProviderCall) -> dict[str, Any]:
    """The generateContent request body for `call` (the model is in the URL)."""
    system, contents = split_messages(call.messages)
    body: dict[str, Any] = {"contents": contents}
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    config = generation_config(spec, call.schema)
    if config:
        body["generationConfig"] = camel(config)
    if spec.service_tier is not None:
        body["serviceTier"] = spec.service_tier
    return body


def reply(data: Mapping[str, Any]) -> ProviderReply:
    """A generateContent response (REST JSON) as a reply."""
    candidates = data.get("candidates") or []
    text = None
    if candidates:
        content = candidates[0].get("content") or {}
        text = _joined(content.get("parts") or [])
    return ProviderReply(
        text=text,
        usage=usage(data.get("usageMetadata")),
        provider_request_id=data.get("responseId") or None,
    )


def _joined(parts: list[Any]) -> str | None:
    # Thought summaries (`thought: true`) are the model's notes, not its answer.
    texts = [
        _field(p, "text")
        for p in parts
        if isinstance(_field(p, "text"), str) and not _field(p, "thought")
    ]
    return "".join(texts) if texts else None


def sdk_text(response: Any) -> str | None:
    """The reply text of the SDK's `GenerateContentResponse` (read from its parts: the SDK's
    own `.text` warns on every non-text part)."""
    candidates = getattr(response, "candidates", None) or []
    content = getattr(candidates[0], "content", None) if candidates else None
    return _joined(list(getattr(content, "parts", None) or []))


_USAGE_NAMES = {
    "prompt": ("promptTokenCount", "prompt_token_count"),
    "output": ("candidatesTokenCount", "candidates_token_count"),
    "thoughts": ("thoughtsTokenCount", "thoughts_token_count"),
    "cached": ("cachedContentTokenCount", "cached_content_token_count"),
}


def usage(metadata: Any) -> Usage:
    """Usage from `usageMetadata` (the REST dict or the SDK's object). `promptTokenCount`
    counts every prompt token, the cached ones included (as ours does); thinking tokens are
    billed as output, so they are output tokens here."""
    if metadata is None:
        return Usage()

    def count(kind: str) -> int:
        for name in _USAGE_NAMES[kind]:
            value = _field(metadata, name)
            if isinstance(value, int):
                return value
        return 0

    return Usage(
        input_tokens=count("prompt"),
        output_tokens=count("output") + count("thoughts"),
        cache_read_tokens=count("cached"),
    )


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def error_of(body: Any) -> dict[str, Any]:
    """The `error` object of a Google error body (parsed JSON or raw bytes); {} when it has
    none. A body may also be a one-element list (some proxies wrap it)."""
    if isinstance(body, bytes | str):
        try:
            body = json.loads(body)
        except ValueError:
            return {}
    if isinstance(body, list) and body:
        body = body[0]
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def retry_delay(error: Mapping[str, Any]) -> float | None:
    """Seconds a `RetryInfo` detail asks to wait (`"retryDelay": "41.5s"`); None without one."""
    for detail in _details(error):
        if detail.get("@type") == _RETRY_INFO:
            delay = detail.get("retryDelay")
            if isinstance(delay, str) and (match := _DURATION.match(delay)):
                return float(match.group(1))
            if isinstance(delay, dict):  # the SDK's proto-plus form {"seconds": n, "nanos": n}
                return float(delay.get("seconds", 0)) + float(delay.get("nanos", 0)) / 1e9
    return None


def daily_quota(error: Mapping[str, Any]) -> bool:
    """Whether a 429 names a per-day quota: it resets in hours, so the run's retries would
    only spend their attempts on it."""
    for detail in _details(error):
        if detail.get("@type") != _QUOTA_FAILURE:
            continue
        for violation in detail.get("violations") or []:
            if isinstance(violation, dict) and any(
                _PER_DAY.search(str(violation.get(k) or "")) for k in ("quotaId", "quotaMetric")
            ):
                return True
    return False


def _details(error: Mapping[str, Any]) -> list[dict[str, Any]]:
    details = error.get("details")
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def item_error_final(error: Mapping[str, Any]) -> bool:
    """Whether a batch item's error (a `google.rpc.Status`: a gRPC `code`, or an HTTP one)
    refuses the request itself rather than failing to serve it."""
    code = error.get("code")
    if not isinstance(code, int):
        return False
    if code >= 100:  # an HTTP status
        return 400 <= code < 500 and code not in (408, 409, 429)
    return code in _FINAL_GRPC
