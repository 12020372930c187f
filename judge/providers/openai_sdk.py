"""OpenAI chat completions through the official SDK; with `base_url`, any OpenAI-compatible
server (vLLM, Ollama, llama.cpp, the simulator)."""

from __future__ import annotations

from typing import Any

from judge.config.run_config import JudgeSpec
from judge.errors import ProviderError
from judge.providers._common import (
    classify_common,
    openai_messages,
    openai_response_format,
    openai_usage,
    resolve_api_key,
    response_headers,
    retry_after_from,
    scrub_secret,
)
from judge.providers.base import ErrorKind, Provider, ProviderCall, ProviderReply


class OpenAIProvider(Provider):
    """`openai/<model>` with `transport: sdk`."""

    def __init__(self, spec: JudgeSpec, *, default_key_env: str | None = "OPENAI_API_KEY") -> None:
        super().__init__(spec)
        try:
            import openai
        except ImportError:
            raise ProviderError(
                f"judge {spec.model} needs the openai SDK: pip install 'openai>=1.40'"
            ) from None
        self._openai = openai
        self._key = resolve_api_key(spec, default_key_env)
        # The runner retries (one policy, Retry-After honoured); an SDK retrying underneath it
        # would multiply attempts and hide 429s from the rate limiter.
        self._client = openai.AsyncOpenAI(
            api_key=self._key, base_url=spec.base_url, max_retries=0, timeout=spec.timeout_s
        )

    async def complete(self, call: ProviderCall) -> ProviderReply:
        extra: dict[str, Any] = dict(self.spec.params)
        if self.spec.structured_output and call.schema is not None:
            extra["response_format"] = openai_response_format(call.schema)
        try:
            completion = await self._client.chat.completions.create(
                model=self.spec.model_name,
                messages=openai_messages(call.messages),  # type: ignore[arg-type]
                timeout=call.timeout_s,
                **extra,
            )
        except Exception as exc:
            scrub_secret(exc, self._key)
            raise
        text: str | None = None
        if completion.choices:
            message = completion.choices[0].message
            # A structured-output refusal leaves `content` empty: passing the refusal on as the
            # text lets the parser record it as a refusal instead of an empty reply.
            text = message.content or getattr(message, "refusal", None) or None
        return ProviderReply(
            text=text,
            usage=openai_usage(completion.usage),
            provider_request_id=completion.id or None,
        )

    def classify_error(self, exc: BaseException) -> ErrorKind | None:
        kind = classify_common(exc)
        if kind is None and isinstance(exc, self._openai.APIConnectionError):
            return "transient"  # APITimeoutError included
        return kind

    def retry_after(self, exc: BaseException) -> float | None:
        return retry_after_from(response_headers(exc))

    async def aclose(self) -> None:
        await self._client.close()
