"""`litellm/<litellm model>`: every provider LiteLLM reaches, through `litellm.acompletion`.

For the long tail of providers only: importing LiteLLM takes seconds and each call costs
~12 ms of client CPU, so the OpenAI-compatible and Anthropic paths carry the volume.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from judge.config.run_config import JudgeSpec
from judge.errors import ProviderError
from judge.providers._common import (
    LOCAL_DUMMY_KEY,
    classify_common,
    is_loopback,
    openai_messages,
    openai_response_format,
    openai_usage,
    resolve_api_key,
    response_headers,
    retry_after_from,
    scrub_secret,
)
from judge.providers.base import ErrorKind, Provider, ProviderCall, ProviderReply

INSTALL_HINT = "litellm is not installed: pip install 'judge-pipeline[litellm]'"


class LiteLLMProvider(Provider):
    """The model string after `litellm/` is LiteLLM's own (`groq/llama-3.1-8b-instant`,
    `bedrock/...`, `openai/<model>` with `base_url`). Keys: `api_key` / `api_key_env` when
    given, else LiteLLM's per-provider variables (GROQ_API_KEY, ...)."""

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        # By default LiteLLM fetches its price table from the network at import (5 s timeout
        # when offline); the copy shipped in the package is enough. Set before the import.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm
        except ImportError:
            raise ProviderError(INSTALL_HINT) from None
        self._litellm = litellm
        self._key: str | None = None
        if spec.api_key is not None or spec.api_key_env:
            self._key = resolve_api_key(spec, None)
        elif spec.base_url and is_loopback(spec.base_url):
            self._key = LOCAL_DUMMY_KEY
        self._schema_ok: bool | None = None
        self._priced_by_config = (
            spec.input_cost_per_mtok is not None or spec.output_cost_per_mtok is not None
        )

    def _supports_schema(self) -> bool:
        if self._schema_ok is None:
            try:
                self._schema_ok = bool(
                    self._litellm.supports_response_schema(model=self.spec.model_name)
                )
            except Exception:  # unknown model or provider: LiteLLM raises rather than says no
                self._schema_ok = False
        return self._schema_ok

    async def complete(self, call: ProviderCall) -> ProviderReply:
        extra: dict[str, Any] = dict(self.spec.params)
        # Only where LiteLLM knows the model takes a JSON schema: elsewhere it would reject the
        # request, and the text parser reads the reply anyway.
        if self.spec.structured_output and call.schema is not None and self._supports_schema():
            extra["response_format"] = openai_response_format(call.schema)
        if self.spec.base_url:
            extra["api_base"] = self.spec.base_url
        if self._key is not None:
            extra["api_key"] = self._key
        try:
            response = await self._litellm.acompletion(
                model=self.spec.model_name,
                messages=openai_messages(call.messages),
                timeout=call.timeout_s,
                num_retries=0,  # the runner retries; LiteLLM also passes this on to the SDK
                max_retries=0,
                **extra,
            )
        except Exception as exc:
            if self._key is not None:
                scrub_secret(exc, self._key)
            raise
        text = None
        if response.choices:
            message = response.choices[0].message
            text = message.content or getattr(message, "refusal", None) or None
        return ProviderReply(
            text=text,
            # LiteLLM reports every provider's usage in OpenAI's shape, cached tokens included.
            usage=openai_usage(getattr(response, "usage", None)),
            provider_request_id=getattr(response, "id", None) or None,
            cost_usd=None if self._priced_by_config else self._cost(response),
        )

    def _cost(self, response: Any) -> float | None:
        try:
            cost = self._litellm.completion_cost(completion_response=response)
        except Exception:  # a model missing from LiteLLM's table: the runner prices or not
            return None
        return float(cost) if cost is not None else None

    def classify_error(self, exc: BaseException) -> ErrorKind | None:
        # LiteLLM's exceptions subclass openai's and all carry `status_code` (its Timeout is
        # 408, its APIConnectionError 500), so the shared rules cover them.
        kind = classify_common(exc)
        if kind is None:
            import openai  # installed with litellm, and already imported by it

            if isinstance(exc, openai.APIConnectionError):
                return "transient"
        return kind

    def retry_after(self, exc: BaseException) -> float | None:
        for headers in (
            getattr(exc, "litellm_response_headers", None),
            response_headers(exc),
            getattr(exc, "headers", None),
        ):
            if isinstance(headers, Mapping) or hasattr(headers, "get"):
                seconds = retry_after_from(headers)  # type: ignore[arg-type]
                if seconds is not None:
                    return seconds
        return None
