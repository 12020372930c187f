"""`make_provider(spec)`: the adapter for a judge's `provider/model` and transport.

Importing this module imports no SDK: each builder imports its adapter (and the adapter its
SDK) only when a judge of that kind is configured.

Providers:
- `openai/<model>`: the OpenAI API, or any OpenAI-compatible server with `base_url`.
- `anthropic/<model>`: the Anthropic API.
- `google/<model>`: the Gemini API (Developer API; key in GOOGLE_API_KEY or GEMINI_API_KEY);
  `transport: sdk` needs the google-genai SDK (`pip install 'judge-pipeline[gemini]'`).
- `vllm/<model>`, `ollama/<model>`: aliases of `openai` for self-hosted OpenAI-compatible
  servers. They need `base_url`, and never fall back to OPENAI_API_KEY (a real OpenAI key must
  not be sent to another server by default): the key is `api_key` / `api_key_env`, else a
  dummy, which such servers accept unless started with a key.
- `litellm/<litellm model>`: everything LiteLLM reaches (optional extra).
- `recorded/<name>`: replays recorded verdicts (`judge.providers.recorded.RecordedProvider`).

`transport: http` (the default where it applies, `JudgeSpec.transport`) selects the lean aiohttp
client for openai (and its aliases), anthropic and google; `transport: sdk` the official SDKs.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from judge.config.run_config import JudgeSpec
from judge.errors import ConfigError
from judge.providers.base import Provider

_SELF_HOSTED_URLS = {"vllm": "http://localhost:8000/v1", "ollama": "http://localhost:11434/v1"}


def _openai(spec: JudgeSpec) -> Provider:
    if spec.transport == "http":
        from judge.providers.http import OpenAIHTTPProvider

        return OpenAIHTTPProvider(spec)
    from judge.providers.openai_sdk import OpenAIProvider

    return OpenAIProvider(spec)


def _self_hosted(spec: JudgeSpec) -> Provider:
    if not spec.base_url:
        raise ConfigError(
            f"judge {spec.model}: {spec.provider} needs base_url, the server's OpenAI-compatible "
            f"endpoint, e.g. base_url: {_SELF_HOSTED_URLS[spec.provider]}"
        )
    if spec.transport == "http":
        from judge.providers.http import OpenAIHTTPProvider

        return OpenAIHTTPProvider(spec, default_key_env=None)
    from judge.providers.openai_sdk import OpenAIProvider

    return OpenAIProvider(spec, default_key_env=None)


def _anthropic(spec: JudgeSpec) -> Provider:
    if spec.transport == "http":
        from judge.providers.http import AnthropicHTTPProvider

        return AnthropicHTTPProvider(spec)
    from judge.providers.anthropic_sdk import AnthropicProvider

    return AnthropicProvider(spec)


def _google(spec: JudgeSpec) -> Provider:
    if spec.transport == "http":
        from judge.providers.gemini_http import GeminiHTTPProvider

        return GeminiHTTPProvider(spec)
    from judge.providers.gemini_sdk import GeminiProvider

    return GeminiProvider(spec)


def _litellm(spec: JudgeSpec) -> Provider:
    if spec.transport == "http":
        raise ConfigError(
            f"judge {spec.model}: transport 'http' speaks the OpenAI, Anthropic and Gemini wire "
            "formats only; remove it for litellm, or use openai/<model> with base_url for an "
            "OpenAI-compatible server"
        )
    from judge.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider(spec)


def _recorded(spec: JudgeSpec) -> Provider:
    try:
        module = import_module("judge.providers.recorded")
    except ModuleNotFoundError as exc:
        if exc.name != "judge.providers.recorded":
            raise
        raise ConfigError(
            f"judge {spec.model}: the recorded provider is not available in this version"
        ) from None
    provider: Provider = module.RecordedProvider(spec)
    return provider


BUILDERS: dict[str, Callable[[JudgeSpec], Provider]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "google": _google,
    "vllm": _self_hosted,
    "ollama": _self_hosted,
    "litellm": _litellm,
    "recorded": _recorded,
}
"""Provider prefix -> builder."""


def make_provider(spec: JudgeSpec) -> Provider:
    """The provider for `spec`. Raises `ConfigError` for an unknown provider or a spec it
    cannot serve, `ProviderError` for a missing SDK or API key (naming the fix)."""
    if not spec.model_name.strip():
        raise ConfigError(f"judge '{spec.model}' has no model name after '{spec.provider}/'")
    builder = BUILDERS.get(spec.provider)
    if builder is None:
        known = ", ".join(BUILDERS)
        raise ConfigError(
            f"judge '{spec.model}': unknown provider '{spec.provider}'; known providers: "
            f"{known} (litellm/<model> reaches most others, e.g. litellm/groq/llama-3.1-8b)"
        )
    return builder(spec)


_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def key_problem(spec: JudgeSpec) -> str | None:
    """Why `spec` would fail for want of an API key, as its adapter would say it (naming the
    variable, never a value); None when it has one or needs none. Looked up before anything
    is prepared or sent, so a dry run can say so."""
    from judge.errors import ProviderError
    from judge.providers._common import resolve_api_key

    if spec.stand_in is not None:
        return None  # the simulator (on this machine) and recorded verdicts need no key
    if spec.provider == "litellm" and not spec.api_key_env:
        return None  # LiteLLM reads its own per-provider variables
    variable = _KEY_VARIABLES.get(spec.provider)
    if spec.provider == "google":
        from judge.providers.gemini_wire import key_variable

        variable = key_variable()  # one of two, as the SDK looks them up
    try:
        resolve_api_key(spec, variable)
    except ProviderError as exc:
        return str(exc)
    return None
