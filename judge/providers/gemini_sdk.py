"""`google/<model>` with `transport: sdk`: Gemini through Google's google-genai SDK (an
optional extra), request and reply read as `gemini_wire` reads them for the lean transport."""

from __future__ import annotations

from typing import Any

from judge.config.run_config import JudgeSpec
from judge.errors import ProviderError
from judge.providers import gemini_wire
from judge.providers._common import classify_common, classify_status, scrub_secret
from judge.providers.base import ErrorKind, Provider, ProviderCall, ProviderReply


def genai_modules(spec: JudgeSpec) -> tuple[Any, Any, Any]:
    """(genai, genai.types, genai.errors), or the install command when the SDK is missing."""
    try:
        from google import genai
        from google.genai import errors, types
    except ImportError:
        raise ProviderError(
            f"judge {spec.model} needs the google-genai SDK: {gemini_wire.INSTALL_HINT}"
        ) from None
    return genai, types, errors


def genai_client(spec: JudgeSpec, key: str, timeout_s: float) -> Any:
    """An SDK client that never retries (the runner, or the batch engine, decides what a
    failure means) and sends to the judge's base URL."""
    genai, types, _ = genai_modules(spec)
    options = types.HttpOptions(
        base_url=gemini_wire.base_url(spec),
        api_version=gemini_wire.API_VERSION,
        timeout=int(timeout_s * 1000),  # milliseconds
        # One attempt: with retry options set the SDK also drops its own hidden retry of
        # dropped connections, which would sleep up to 10 s unseen by the runner.
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key=key, http_options=options)


class GeminiProvider(Provider):
    """Structured output is `responseSchema` with `responseMimeType: application/json`."""

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        _, self._types, self._errors = genai_modules(spec)
        self._key = gemini_wire.resolve_key(spec)
        self._client = genai_client(spec, self._key, spec.timeout_s)

    async def complete(self, call: ProviderCall) -> ProviderReply:
        system, contents = gemini_wire.split_messages(call.messages)
        config: dict[str, Any] = gemini_wire.generation_config(self.spec, call.schema)
        if system is not None:
            config["system_instruction"] = system
        if self.spec.service_tier is not None:
            config["service_tier"] = self.spec.service_tier
        config["http_options"] = {"timeout": int(call.timeout_s * 1000)}
        try:
            response = await self._client.aio.models.generate_content(
                model=self.spec.model_name, contents=contents, config=config
            )
        except Exception as exc:
            scrub_secret(exc, self._key)
            raise
        return ProviderReply(
            text=gemini_wire.sdk_text(response),
            usage=gemini_wire.usage(response.usage_metadata),
            provider_request_id=response.response_id or None,
        )

    def classify_error(self, exc: BaseException) -> ErrorKind | None:
        if isinstance(exc, self._errors.APIError):
            # `status` is Google's word (RESOURCE_EXHAUSTED); `code` the HTTP status.
            if gemini_wire.daily_quota(gemini_wire.error_of(exc.details)):
                return None
            return classify_status(exc.code) if isinstance(exc.code, int) else None
        kind = classify_common(exc)
        if kind is None:
            import aiohttp

            # The SDK sends through aiohttp when it is installed (a core dependency here).
            if isinstance(exc, aiohttp.ClientConnectionError | aiohttp.ClientPayloadError):
                return "transient"
        return kind

    def retry_after(self, exc: BaseException) -> float | None:
        if isinstance(exc, self._errors.APIError):
            return gemini_wire.retry_delay(gemini_wire.error_of(exc.details))
        return None

    async def aclose(self) -> None:
        await self._client.aio.aclose()
