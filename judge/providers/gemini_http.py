"""`google/<model>` with `transport: http` (the default): Gemini's generateContent spoken over
the lean transport's shared aiohttp session (`judge.providers.http`), request and reply built
by `gemini_wire`.

Gemini's 429s carry how long to wait in the body (`RetryInfo`), not in a Retry-After header,
and may name a per-day quota: the status error is built from the body (`_status_error`), so
the runner waits as long as the server asked and does not retry a quota that resets in hours.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judge.config.run_config import JudgeSpec
from judge.providers import gemini_wire
from judge.providers._common import redact, retry_after_from
from judge.providers.base import ErrorKind, ProviderCall, ProviderReply
from judge.providers.http import HTTPStatusError, _HTTPProvider

_MESSAGE_CHARS = 300


class GeminiStatusError(HTTPStatusError):
    """An error status from the Gemini API, with what its body said beyond the message."""

    def __init__(
        self, status: int, retry_after: float | None, message: str, *, daily_quota: bool
    ) -> None:
        super().__init__(status, retry_after, message)
        self.daily_quota = daily_quota
        """A per-day quota is exhausted: final for this run."""


class GeminiHTTPProvider(_HTTPProvider):
    """POST {base_url}/v1beta/models/{model}:generateContent (the base URL as the SDK takes
    it, without the version)."""

    _default_base_url = gemini_wire.DEFAULT_BASE_URL
    _base_url_env = gemini_wire.BASE_URL_ENV

    def __init__(self, spec: JudgeSpec) -> None:
        # Per judge, not per class: Gemini names the model in the path.
        self._path = f"/{gemini_wire.API_VERSION}/models/{spec.model_name}:generateContent"
        super().__init__(spec, gemini_wire.key_variable())

    def _auth_headers(self, key: str) -> dict[str, str]:
        return {"x-goog-api-key": key, "Content-Type": "application/json"}

    def payload(self, call: ProviderCall) -> dict[str, Any]:
        return gemini_wire.payload(self.spec, call)

    def reply(self, data: dict[str, Any]) -> ProviderReply:
        return gemini_wire.reply(data)

    def _status_error(self, status: int, headers: Mapping[str, str], raw: bytes) -> HTTPStatusError:
        error = gemini_wire.error_of(raw)
        delay = gemini_wire.retry_delay(error)
        if delay is None:
            delay = retry_after_from(headers)
        message = error.get("message")
        if isinstance(message, str):
            kind = error.get("status")
            text = f"{kind}: {message}" if isinstance(kind, str) and kind else message
            text = " ".join(redact(text, self._key).split())[:_MESSAGE_CHARS]
        else:
            text = self._error_message(raw)
        return GeminiStatusError(status, delay, text, daily_quota=gemini_wire.daily_quota(error))

    def classify_error(self, exc: BaseException) -> ErrorKind | None:
        if isinstance(exc, GeminiStatusError) and exc.daily_quota:
            return None
        return super().classify_error(exc)
