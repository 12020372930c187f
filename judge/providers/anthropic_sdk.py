"""Anthropic messages through the official SDK."""

from __future__ import annotations

import json
from typing import Any

from judge.config.run_config import JudgeSpec
from judge.errors import ProviderError
from judge.providers._common import (
    ANTHROPIC_TOOL_CHOICE,
    DEFAULT_ANTHROPIC_MAX_TOKENS,
    TOOL_NAME,
    anthropic_system,
    anthropic_tool,
    anthropic_usage,
    classify_common,
    resolve_api_key,
    response_headers,
    retry_after_from,
    scrub_secret,
    split_system,
)
from judge.providers.base import ErrorKind, Provider, ProviderCall, ProviderReply


class AnthropicProvider(Provider):
    """`anthropic/<model>` with `transport: sdk`. Structured output is a forced
    call of one tool whose input schema is the reply schema."""

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        try:
            import anthropic
        except ImportError:
            raise ProviderError(
                f"judge {spec.model} needs the anthropic SDK: pip install 'anthropic>=0.34'"
            ) from None
        self._anthropic = anthropic
        self._key = resolve_api_key(spec, "ANTHROPIC_API_KEY")
        # max_retries=0: the runner retries (see OpenAIProvider).
        self._client = anthropic.AsyncAnthropic(
            api_key=self._key, base_url=spec.base_url, max_retries=0, timeout=spec.timeout_s
        )

    async def complete(self, call: ProviderCall) -> ProviderReply:
        system, turns = split_system(call.messages)
        extra: dict[str, Any] = dict(self.spec.params)
        extra.setdefault("max_tokens", DEFAULT_ANTHROPIC_MAX_TOKENS)
        if system is not None:
            extra["system"] = anthropic_system(system, cache=self.spec.prompt_cache)
        structured = self.spec.structured_output and call.schema is not None
        if structured:
            extra["tools"] = [anthropic_tool(call.schema)]  # type: ignore[arg-type]
            extra["tool_choice"] = ANTHROPIC_TOOL_CHOICE
        try:
            message = await self._client.messages.create(
                model=self.spec.model_name,
                messages=turns,  # type: ignore[arg-type]
                timeout=call.timeout_s,
                **extra,
            )
        except Exception as exc:
            scrub_secret(exc, self._key)
            raise
        text: str | None = None
        for block in message.content:
            if block.type == "tool_use" and block.name == TOOL_NAME:
                text = json.dumps(block.input, ensure_ascii=False)
                break
        else:
            # No tool call (text mode, or a refusal despite the forced tool): the text blocks.
            parts = [block.text for block in message.content if block.type == "text"]
            text = "".join(parts) if parts else None
        return ProviderReply(
            text=text,
            usage=anthropic_usage(message.usage),
            provider_request_id=message.id or None,
        )

    def classify_error(self, exc: BaseException) -> ErrorKind | None:
        kind = classify_common(exc)
        if kind is None and isinstance(exc, self._anthropic.APIConnectionError):
            return "transient"  # APITimeoutError included
        return kind

    def retry_after(self, exc: BaseException) -> float | None:
        return retry_after_from(response_headers(exc))

    async def aclose(self) -> None:
        await self._client.close()
