"""The lean transport (`transport: http`, the default for openai, anthropic, vllm and ollama
judges): the OpenAI chat-completions and Anthropic messages wire formats spoken directly over one
shared aiohttp session.

Why it exists: the SDKs spend several ms of CPU per request building typed request and response
objects, which caps one core at ~150 requests/s; a judge needs four fields of the reply. Here a
request is one `json.dumps`, one POST on a kept-alive connection and one `json.loads` into plain
dicts. Errors are this module's own small types (or aiohttp's and asyncio's, passed through),
classified the same way as the SDKs'.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import ssl
import urllib.request
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

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
    openai_messages,
    openai_response_format,
    openai_usage,
    redact,
    resolve_api_key,
    retry_after_from,
    split_system,
)
from judge.providers.base import ErrorKind, Provider, ProviderCall, ProviderReply

ANTHROPIC_VERSION = "2023-06-01"
_MESSAGE_CHARS = 300
"""How much of a server's error message an `HTTPStatusError` keeps."""


class HTTPStatusError(Exception):
    """The server answered with an error status. `message` is the server's own error message
    (shortened, API key removed); never a request header."""

    def __init__(self, status: int, retry_after: float | None, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}" if message else f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after
        self.message = message


class InvalidResponseError(Exception):
    """A success status whose body is not valid JSON or not a reply (truncated by a proxy, a
    connection cut mid-body): transient, worth another attempt."""


class _HTTPProvider(Provider):
    bounds_timeout = True
    """aiohttp's total timeout (`call.timeout_s`) covers connecting, sending and reading."""
    _default_base_url: str
    _base_url_env: str
    _env_headers: tuple[tuple[str, str], ...] = ()
    """(header, environment variable) pairs the provider's SDK sends when the variable is set."""
    _path: str

    def __init__(self, spec: JudgeSpec, default_key_env: str | None) -> None:
        super().__init__(spec)
        try:
            import aiohttp
        except ImportError:
            raise ProviderError(
                f"judge {spec.model} (transport: http) needs aiohttp: pip install 'aiohttp>=3.9'"
            ) from None
        self._aiohttp = aiohttp
        self._key = resolve_api_key(spec, default_key_env)
        # As the SDK resolves it: the config's base_url, else the SDK's own variable.
        env_url = os.environ.get(self._base_url_env, "").strip() if default_key_env else ""
        self._url = (spec.base_url or env_url or self._default_base_url).rstrip("/") + self._path
        # As the SDKs' httpx client: HTTP(S)_PROXY and NO_PROXY are honoured. Resolved once
        # here: aiohttp's trust_env looks them up again for every request (~0.1 ms of CPU).
        self._proxy = _env_proxy(self._url)
        # Built here, not with the session: loading the certificates takes ~20 ms, which the
        # runner's first requests would wait for (`judge run` builds its providers while the
        # prepare reads the input, and the context is shared by every provider).
        self._tls = _tls_context()
        self._headers = self._auth_headers(self._key)
        if default_key_env:
            # The headers the SDK adds from its variables (e.g. OpenAI's organisation and
            # project); never for a self-hosted server, which has no use for them.
            for header, variable in self._env_headers:
                value = os.environ.get(variable, "").strip()
                if value:
                    self._headers[header] = value
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timeouts: dict[float, Any] = {}

    def _auth_headers(self, key: str) -> dict[str, str]:
        raise NotImplementedError

    def payload(self, call: ProviderCall) -> dict[str, Any]:
        raise NotImplementedError

    def reply(self, data: dict[str, Any]) -> ProviderReply:
        raise NotImplementedError

    def body(self, call: ProviderCall) -> bytes:
        """The request body: `payload` as JSON."""
        return json.dumps(self.payload(call)).encode()

    async def complete(self, call: ProviderCall) -> ProviderReply:
        session = self._session
        if session is None or self._loop is not asyncio.get_running_loop() or session.closed:
            session = self._open_session()
        body = self.body(call)
        # allow_redirects=False: a redirected POST turns into a GET; better a final 3xx error.
        async with session.post(
            self._url,
            data=body,
            timeout=self._timeout(call.timeout_s),
            allow_redirects=False,
            proxy=self._proxy,
        ) as response:
            raw = await response.read()
            status = response.status
            if status >= 300:
                raise self._status_error(status, response.headers, raw)
        try:
            data = json.loads(raw)
            return self.reply(data)
        except (ValueError, LookupError, TypeError, AttributeError):
            # ValueError covers JSONDecodeError and undecodable bytes; the others a body that
            # is JSON but not a reply (e.g. a proxy's error page served with status 200).
            raise InvalidResponseError(
                f"HTTP {status} from {self.spec.model}: the body ({len(raw)} bytes) is not a "
                "complete reply (truncated or invalid JSON)"
            ) from None

    def _open_session(self) -> Any:
        aiohttp = self._aiohttp
        # The runner bounds concurrency per connection key; the connector only must not be a
        # second, lower bound. Keep-alive spares a TCP (and TLS) handshake per request.
        connector = aiohttp.TCPConnector(
            limit=max(256, 2 * self.spec.max_connections),
            limit_per_host=0,
            keepalive_timeout=30,
            ttl_dns_cache=300,
            ssl=self._tls,
        )
        # One session per event loop: a session is bound to the loop that created it, and a
        # worker process (or a test) may run several loops in turn.
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers=self._headers,
            timeout=self._timeout(self.spec.timeout_s),
            skip_auto_headers=("User-Agent",),
        )
        self._loop = asyncio.get_running_loop()
        return self._session

    def _status_error(self, status: int, headers: Mapping[str, str], raw: bytes) -> HTTPStatusError:
        """The exception for an error status. Gemini overrides it: its 429s say how long to
        wait only in the body."""
        return HTTPStatusError(status, retry_after_from(headers), self._error_message(raw))

    def _timeout(self, seconds: float) -> Any:
        timeout = self._timeouts.get(seconds)
        if timeout is None:
            timeout = self._timeouts[seconds] = self._aiohttp.ClientTimeout(total=seconds)
        return timeout

    def _error_message(self, raw: bytes) -> str:
        try:
            data = json.loads(raw)
            message = data["error"]["message"] if isinstance(data, dict) else None
        except (ValueError, LookupError, TypeError):
            message = None
        if not isinstance(message, str):
            message = raw[:_MESSAGE_CHARS].decode("utf-8", errors="replace")
        # Servers sometimes echo the key they rejected.
        return " ".join(redact(message, self._key).split())[:_MESSAGE_CHARS]

    def classify_error(self, exc: BaseException) -> ErrorKind | None:
        if isinstance(exc, InvalidResponseError):
            return "transient"
        kind = classify_common(exc)
        # ServerTimeoutError and ServerDisconnectedError are ClientConnectionErrors; a payload
        # error is a body cut off mid-transfer.
        if kind is None and isinstance(
            exc, self._aiohttp.ClientConnectionError | self._aiohttp.ClientPayloadError
        ):
            return "transient"
        return kind

    def retry_after(self, exc: BaseException) -> float | None:
        return exc.retry_after if isinstance(exc, HTTPStatusError) else None

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, as
    urllib reads them), or None."""
    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return str(proxy)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The certificates the SDKs trust: SSL_CERT_FILE / SSL_CERT_DIR when set, else certifi's
    bundle (httpx's default), else the system's."""
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context()  # OpenSSL reads both variables
    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


class OpenAIHTTPProvider(_HTTPProvider):
    """`openai/<model>` with `transport: http`: POST {base_url}/chat/completions."""

    _default_base_url = "https://api.openai.com/v1"
    _base_url_env = "OPENAI_BASE_URL"
    _env_headers = (
        ("OpenAI-Organization", "OPENAI_ORG_ID"),
        ("OpenAI-Project", "OPENAI_PROJECT_ID"),
    )
    _path = "/chat/completions"

    def __init__(self, spec: JudgeSpec, *, default_key_env: str | None = "OPENAI_API_KEY") -> None:
        super().__init__(spec, default_key_env)
        self._static: tuple[dict[str, Any] | None, bytes] | None = None
        """(the reply schema, the body's encoded members after the messages)."""

    def _auth_headers(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def payload(self, call: ProviderCall) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.spec.model_name,
            "messages": openai_messages(call.messages),
            **self.spec.params,
        }
        if self.spec.structured_output and call.schema is not None:
            payload["response_format"] = openai_response_format(call.schema)
        return payload

    def body(self, call: ProviderCall) -> bytes:
        # Everything but the messages is the same in every call of a run: encoded once per
        # reply schema (its nesting cost more to encode than the messages' text).
        cached = self._static
        if cached is None or cached[0] is not call.schema:
            rest = self.payload(replace(call, messages=()))
            if rest.pop("messages") != []:  # params named "messages": no splicing
                return super().body(call)
            inner = json.dumps(rest)[1:-1]
            cached = self._static = (call.schema, (", " + inner if inner else "").encode())
        messages = json.dumps(openai_messages(call.messages)).encode()
        return b'{"messages": ' + messages + cached[1] + b"}"

    def reply(self, data: dict[str, Any]) -> ProviderReply:
        choices = data["choices"]
        text = None
        if choices:
            message = choices[0]["message"]
            # See OpenAIProvider: a refusal becomes the text, so it is recorded as one.
            text = message.get("content") or message.get("refusal") or None
        return ProviderReply(
            text=text,
            usage=openai_usage(data.get("usage")),
            provider_request_id=data.get("id") or None,
        )


class AnthropicHTTPProvider(_HTTPProvider):
    """`anthropic/<model>` with `transport: http`: POST {base_url}/v1/messages (the base URL
    as the SDK takes it, without /v1)."""

    _default_base_url = "https://api.anthropic.com"
    _base_url_env = "ANTHROPIC_BASE_URL"
    _path = "/v1/messages"

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec, "ANTHROPIC_API_KEY")

    def _auth_headers(self, key: str) -> dict[str, str]:
        return {
            "x-api-key": key,
            "anthropic-version": ANTHROPIC_VERSION,
            "Content-Type": "application/json",
        }

    def payload(self, call: ProviderCall) -> dict[str, Any]:
        system, turns = split_system(call.messages)
        payload: dict[str, Any] = {
            "model": self.spec.model_name,
            "max_tokens": DEFAULT_ANTHROPIC_MAX_TOKENS,
            "messages": turns,
            **self.spec.params,
        }
        if system is not None:
            payload["system"] = anthropic_system(system, cache=self.spec.prompt_cache)
        if self.spec.structured_output and call.schema is not None:
            payload["tools"] = [anthropic_tool(call.schema)]
            payload["tool_choice"] = ANTHROPIC_TOOL_CHOICE
        return payload

    def reply(self, data: dict[str, Any]) -> ProviderReply:
        blocks = data["content"]
        text = None
        for block in blocks:
            if block.get("type") == "tool_use" and block.get("name") == TOOL_NAME:
                text = json.dumps(block.get("input"), ensure_ascii=False)
                break
        else:
            parts = [b["text"] for b in blocks if b.get("type") == "text"]
            text = "".join(parts) if parts else None
        return ProviderReply(
            text=text,
            usage=anthropic_usage(data.get("usage")),
            provider_request_id=data.get("id") or None,
        )
