"""Helpers shared by the adapters: API keys, error classification, Retry-After, messages.

Nothing here imports an SDK: each adapter imports its own, lazily.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from judge.config.run_config import JudgeSpec
from judge.errors import ProviderError
from judge.providers.base import ErrorKind
from judge.types import ChatMessage, Usage

LOCAL_DUMMY_KEY = "sk-local-no-key"
"""Sent to servers on this machine when no key is configured (vLLM, Ollama and llama.cpp do
not check it unless started with one, but the SDKs refuse to run without one)."""

# The statuses the official SDKs retry too; 529 is Anthropic's "overloaded".
_TRANSIENT_STATUSES = frozenset({408, 409, 500, 502, 503, 504, 529})


def resolve_api_key(spec: JudgeSpec, default_env: str | None) -> str:
    """The key for `spec`: its explicit secret, else `api_key_env`, else the SDK's own variable
    (`default_env`), else a dummy for a server on loopback. Errors name the variable to set,
    never a value."""
    if spec.api_key is not None and spec.api_key.get_secret_value():
        return spec.api_key.get_secret_value()
    if spec.api_key_env:
        key = os.environ.get(spec.api_key_env, "").strip()
        if not key:
            raise ProviderError(
                f"judge {spec.model}: the environment variable {spec.api_key_env} "
                "(api_key_env) is not set or empty; export it or change api_key_env"
            )
        return key
    if default_env:
        key = os.environ.get(default_env, "").strip()
        if key:
            return key
    if spec.base_url and is_loopback(spec.base_url):
        return LOCAL_DUMMY_KEY
    hint = f"export {default_env}, or " if default_env else ""
    raise ProviderError(
        f"judge {spec.model}: no API key; {hint}set api_key_env to the name of the "
        "variable holding it"
    )


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def classify_status(status: int) -> ErrorKind | None:
    if status == 429:
        return "rate_limit"
    if status in _TRANSIENT_STATUSES or status >= 500:
        # Other 5xx (520-524 from CDNs in front of self-hosted servers) are also the server's
        # trouble, not the request's; the runner's attempts are finite either way.
        return "transient"
    return None


def classify_common(exc: BaseException) -> ErrorKind | None:
    """What every adapter shares: an HTTP status on the exception (the SDKs' `status_code`,
    our transport's `status`), timeouts, dropped connections, truncated JSON bodies."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(exc, "status", None)
    if isinstance(status, int) and not isinstance(status, bool):
        return classify_status(status)
    # TimeoutError is asyncio.TimeoutError on 3.11; ConnectionError covers resets and refusals.
    # The SDKs raise json.JSONDecodeError unwrapped when a 200 body is cut off.
    if isinstance(exc, TimeoutError | ConnectionError | json.JSONDecodeError):
        return "transient"
    return None


def retry_after_from(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` (OpenAI, Anthropic) or `retry-after` (seconds or
    an HTTP date); None when absent or unreadable."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def response_headers(exc: BaseException) -> Mapping[str, str] | None:
    """The response headers an SDK exception carries (openai, anthropic, litellm)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if headers is not None else None


def split_system(messages: tuple[ChatMessage, ...]) -> tuple[str | None, list[dict[str, str]]]:
    """Anthropic takes the system prompt apart from the turns."""
    system = [m.content for m in messages if m.role == "system"]
    turns = [{"role": m.role, "content": m.content} for m in messages if m.role != "system"]
    return ("\n\n".join(system) if system else None), turns


def openai_messages(messages: tuple[ChatMessage, ...]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def openai_response_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": schema, "strict": True},
    }


def openai_usage(usage: Any) -> Usage:
    """Usage from an OpenAI reply's `usage` (a dict or the SDK's object): `prompt_tokens`
    includes the cached ones (`prompt_tokens_details.cached_tokens`)."""
    if usage is None:
        return Usage()
    if isinstance(usage, dict):  # the lean transport's: read as a dict, once per reply
        details = usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        return Usage(
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            cache_read_tokens=cached or 0,
        )
    details = _field(usage, "prompt_tokens_details")
    return Usage(
        input_tokens=_field(usage, "prompt_tokens") or 0,
        output_tokens=_field(usage, "completion_tokens") or 0,
        cache_read_tokens=(_field(details, "cached_tokens") or 0) if details else 0,
    )


def anthropic_usage(usage: Any) -> Usage:
    """Usage from an Anthropic reply's `usage` (a dict or the SDK's object). Anthropic's
    `input_tokens` leaves out the tokens read from and written to the prompt cache; ours is
    every prompt token, so the three are added."""
    if usage is None:
        return Usage()
    read = _field(usage, "cache_read_input_tokens") or 0
    written = _field(usage, "cache_creation_input_tokens") or 0
    return Usage(
        input_tokens=(_field(usage, "input_tokens") or 0) + read + written,
        output_tokens=_field(usage, "output_tokens") or 0,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def anthropic_system(system: str, *, cache: bool) -> str | list[dict[str, Any]]:
    """The system prompt, as one text block with a `cache_control` breakpoint when caching:
    the rubric's instructions (and, before them, the verdict tool) are the same in every
    request of a run, so the provider can serve that prefix from its cache. A prefix shorter
    than the provider's minimum (1,024 tokens on most models) is simply not cached, at no cost."""
    if not cache:
        return system
    return [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]


TOOL_NAME = "record_verdict"


def anthropic_tool(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": TOOL_NAME,
        "description": "Record your verdict: your reasoning first, then the answer.",
        "input_schema": schema,
    }


ANTHROPIC_TOOL_CHOICE = {"type": "tool", "name": TOOL_NAME}
DEFAULT_ANTHROPIC_MAX_TOKENS = 1024
"""The Messages API requires max_tokens; enough for reasoning plus a verdict."""


def redact(text: str, secret: str) -> str:
    # A very short "secret" (a placeholder like "x") would mangle ordinary words.
    if len(secret) < 8 or secret == LOCAL_DUMMY_KEY:
        return text
    return text.replace(secret, "[redacted]")


def scrub_secret(exc: BaseException, secret: str) -> BaseException:
    """Remove `secret` from the exception's message, in place. Servers sometimes echo the key
    they rejected ("Incorrect API key provided: sk-...") and the runner stores `str(exc)`."""
    if len(secret) < 8 or secret == LOCAL_DUMMY_KEY:
        return exc
    if any(isinstance(a, str) and secret in a for a in exc.args):
        exc.args = tuple(redact(a, secret) if isinstance(a, str) else a for a in exc.args)
    # `message` is what litellm's __str__ prints; `api_message` is anthropic's copy of it.
    for attr in ("message", "api_message", "detail", "body"):
        value = getattr(exc, attr, None)
        if isinstance(value, str) and secret in value:
            with contextlib.suppress(AttributeError):
                setattr(exc, attr, redact(value, secret))
        elif isinstance(value, dict) and secret in json.dumps(value, default=str):
            # Error bodies are not part of str(exc), but they are one attribute away from it.
            with contextlib.suppress(AttributeError):
                setattr(exc, attr, None)
    return exc
