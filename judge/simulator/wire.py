"""The three wire formats: request validation and normalisation, error bodies (replies are in
`replies`).

Only as much of the OpenAI chat-completions, Anthropic messages and Gemini generateContent APIs
as judge requests use, validated closely enough that the official SDKs see what a real server
would send.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Route = Literal["openai", "anthropic", "gemini"]
OutputMode = Literal["text", "json_object", "json_schema", "tool"]
ROUTE_PATHS: dict[Route, str] = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/{model}:generateContent",
}
# Fields that are the judged content (hashed separately) or transport details, not parameters.
_CONTENT_FIELDS = frozenset({"model", "messages", "system", "stream", "contents"})
_GEMINI_CONTENT = frozenset({"systemInstruction", "system_instruction"})
_GEMINI_ROLES = {"user": "user", "model": "assistant"}
# Built once: json.dumps with non-default options builds a new encoder on every call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SORTED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
_MAX_BREAKPOINTS = 4


class BadRequest(Exception):
    """A request a real API would answer with 400 (message names the offending field)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


@dataclass(frozen=True, slots=True)
class JudgeCall:
    """One validated request, normalised so both routes hash the same content alike."""

    route: Route
    model: str
    user_text: str
    """Text of the last user message: where the candidates are."""
    system_text: str
    """The system instructions (absolute rubrics read the score range and criteria there)."""
    content_digest: bytes
    """sha256 of the canonical messages (system included): seeds the verdict."""
    content_key: str
    """Hex hash of model, messages and other parameters: what counts as the same request for
    retries and duplicates."""
    prompt: bytes
    """The prompt as the provider's prompt cache sees it, in its prefix order (OpenAI: the
    messages as serialized; Anthropic: tools, system, messages): its length / 4 is the
    request's prompt tokens."""
    output_mode: OutputMode = "text"
    schema: dict[str, Any] | None = None
    tool_name: str | None = None
    breakpoints: tuple[int, ...] = ()
    """Anthropic: where in `prompt` each `cache_control` breakpoint's prefix ends, in order."""

    @property
    def input_chars(self) -> int:
        return len(self.prompt)


def parse_openai(payload: Any) -> JudgeCall:
    _require_object(payload)
    _require_model(payload)
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' is required and must be a non-empty array", "messages")
    if payload.get("stream"):
        raise BadRequest("the simulator does not stream; send stream=false", "stream")
    normalised = [
        _message(m, i, system_roles=("system", "developer")) for i, m in enumerate(messages)
    ]
    mode: Literal["text", "json_object", "json_schema"] = "text"
    schema = None
    response_format = payload.get("response_format")
    if isinstance(response_format, dict):
        kind = response_format.get("type")
        if kind == "json_object":
            mode = "json_object"
        elif kind == "json_schema":
            mode = "json_schema"
            spec = response_format.get("json_schema")
            schema = spec.get("schema") if isinstance(spec, dict) else None
    return _call("openai", payload, normalised, mode, schema, None, None)


def parse_anthropic(payload: Any) -> JudgeCall:
    _require_object(payload)
    _require_model(payload)
    if not isinstance(payload.get("max_tokens"), int) or isinstance(payload["max_tokens"], bool):
        raise BadRequest("max_tokens: Field required", "max_tokens")
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: Field required (a non-empty array)", "messages")
    if payload.get("stream"):
        raise BadRequest("the simulator does not stream; send stream=false", "stream")
    normalised = [_message(m, i, system_roles=()) for i, m in enumerate(messages)]
    system = payload.get("system")
    if system:
        normalised.insert(0, ["system", _text_of(system, "system")])
    mode: Literal["text", "json_schema", "tool"] = "text"
    schema = tool_name = None
    tool = _forced_tool(payload)
    if isinstance(tool, dict):
        mode, tool_name = "tool", tool.get("name")
        schema = tool.get("input_schema")
    else:
        output_config = payload.get("output_config")
        output_format = (
            output_config.get("format") if isinstance(output_config, dict) else None
        ) or payload.get("output_format")
        if isinstance(output_format, dict) and output_format.get("type") == "json_schema":
            mode, schema = "json_schema", output_format.get("schema")
    return _call(
        "anthropic", payload, normalised, mode, schema, tool_name, _anthropic_prompt(payload)
    )


def parse_gemini(payload: Any, model: str) -> JudgeCall:
    """A generateContent body; `model` comes from the URL (`models/` prefix dropped)."""
    _require_object(payload)
    model = model.removeprefix("models/")
    if not model:
        raise BadRequest("the model name in the URL is empty", "model")
    contents = payload.get("contents")
    if not isinstance(contents, list) or not contents:
        raise BadRequest("* GenerateContentRequest.contents: contents is not specified", "contents")
    normalised = [_gemini_turn(turn, i) for i, turn in enumerate(contents)]
    system = _either(payload, "systemInstruction")
    if system is not None:
        parts = system.get("parts") if isinstance(system, dict) else None
        normalised.insert(0, ["system", _text_of(parts, "systemInstruction.parts")])
    config = _either(payload, "generationConfig") or {}
    if not isinstance(config, dict):
        raise BadRequest("generationConfig: expected an object", "generationConfig")
    mode: Literal["text", "json_object", "json_schema"] = "text"
    schema = None
    if _either(config, "responseMimeType") == "application/json":
        mode = "json_object"
        raw = _either(config, "responseSchema") or _either(config, "responseJsonSchema")
        if isinstance(raw, dict):
            mode, schema = "json_schema", _json_schema(raw)
    params = {k: v for k, v in payload.items() if k not in _GEMINI_CONTENT}
    return _call("gemini", {**params, "model": model}, normalised, mode, schema, None, None)


def _either(fields: dict[str, Any], camel: str) -> Any:
    """A field by its JSON name or its proto name: Google's servers read both (the SDK sends
    some nested fields, e.g. `property_ordering`, in snake case)."""
    if camel in fields:
        return fields[camel]
    return fields.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def _gemini_turn(turn: Any, index: int) -> list[str]:
    where = f"contents[{index}]"
    if not isinstance(turn, dict) or not isinstance(turn.get("parts"), list):
        raise BadRequest(f"{where}.parts: must not be empty", where)
    role = turn.get("role", "user")
    if role not in _GEMINI_ROLES:
        raise BadRequest(f"{where}.role: please use a valid role: user, model", where)
    return [_GEMINI_ROLES[role], _text_of(turn["parts"], f"{where}.parts")]


def _json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Gemini's `responseSchema` (OpenAPI subset, upper-case types, `propertyOrdering`) as the
    JSON schema the simulated judge fills: lower-case types, properties in the asked order."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            order = _either(schema, "propertyOrdering")
            names = [n for n in order if n in value] if isinstance(order, list) else []
            names += [n for n in value if n not in names]
            out[key] = {n: _json_schema(value[n]) for n in names}
        elif key == "items" and isinstance(value, dict):
            out[key] = _json_schema(value)
        elif key not in ("propertyOrdering", "property_ordering"):
            out[key] = value
    return out


def _forced_tool(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The tool the judge answers through: the named one, or the first when any is allowed."""
    tools = payload.get("tools")
    if not isinstance(tools, list) or not tools:
        return None
    choice = payload.get("tool_choice")
    choice = choice if isinstance(choice, dict) else {"type": "auto"}
    kind = choice.get("type")
    if kind == "none":
        return None
    named = [t for t in tools if isinstance(t, dict) and t.get("name") == choice.get("name")]
    if kind == "tool" and not named:
        raise BadRequest(f"tool_choice names unknown tool {choice.get('name')!r}", "tool_choice")
    return named[0] if named else tools[0]


def _call(
    route: Route,
    payload: dict[str, Any],
    normalised: list[list[str]],
    mode: Any,
    schema: Any,
    tool_name: str | None,
    layout: tuple[bytes, tuple[int, ...]] | None,
) -> JudgeCall:
    canonical = _COMPACT.encode(normalised).encode()
    prompt, breakpoints = layout or (canonical, ())
    digest = hashlib.sha256(canonical).digest()
    # The same messages with other parameters (output schema, temperature) are another
    # request, as they are for the runner's cache; the verdict ignores them.
    params = {k: v for k, v in payload.items() if k not in _CONTENT_FIELDS}
    params_json = _SORTED.encode(params).encode()
    model = payload["model"]
    users = [text for role, text in normalised if role == "user"]
    # A repair turn ("answer again with the JSON only") comes after the prompt that holds the
    # candidates: judge from the last user message that has any.
    user_text = next(
        (text for text in reversed(users) if "[RESPONSE" in text or "[SUMMARY" in text),
        users[-1] if users else "",
    )
    system_text = "\n".join(text for role, text in normalised if role == "system")
    return JudgeCall(
        route=route,
        model=model,
        user_text=user_text,
        system_text=system_text,
        content_digest=digest,
        content_key=hashlib.sha256(
            model.encode() + b"\0" + digest + b"\0" + params_json
        ).hexdigest(),
        prompt=prompt,
        output_mode=mode,
        schema=schema if isinstance(schema, dict) else None,
        tool_name=tool_name,
        breakpoints=breakpoints,
    )


def _require_object(payload: Any) -> None:
    if not isinstance(payload, dict):
        raise BadRequest("the request body must be a JSON object")


def _require_model(payload: dict[str, Any]) -> str:
    model = payload.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required and must be a string", "model")
    return model


def _message(message: Any, index: int, *, system_roles: tuple[str, ...]) -> list[str]:
    where = f"messages.{index}"
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise BadRequest(f"{where}: each message needs a 'role' and 'content'", where)
    role = "system" if message["role"] in system_roles else message["role"]
    return [role, _text_of(message.get("content"), f"{where}.content")]


def _text_of(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    raise BadRequest(f"{where}: expected a string or an array of text blocks", where)


def _anthropic_prompt(payload: dict[str, Any]) -> tuple[bytes, tuple[int, ...]]:
    """The prompt in Anthropic's cache prefix order (tools, system, messages), and the end of
    each prefix a `cache_control` block closes. Called after the messages were validated."""
    parts: list[bytes] = []
    ends: list[int] = []
    size = 0

    def add(piece: bytes, block: Any = None, where: str = "") -> None:
        nonlocal size
        parts.append(piece)
        size += len(piece)
        if isinstance(block, dict) and block.get("cache_control") is not None:
            _check_cache_control(block["cache_control"], f"{where}.cache_control")
            ends.append(size)

    tools = payload.get("tools")
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        add(_block_bytes(tool), tool, f"tools.{i}")
    system = payload.get("system")
    if isinstance(system, str):
        add(system.encode())
    elif isinstance(system, list):
        for i, block in enumerate(system):
            add(_block_bytes(block), block, f"system.{i}")
    for i, message in enumerate(payload["messages"]):
        add(f"\n\n{message['role']}: ".encode())
        content = message.get("content")
        if isinstance(content, str):
            add(content.encode())
            continue
        for j, block in enumerate(content):
            add(_block_bytes(block), block, f"messages.{i}.content.{j}")
    if len(ends) > _MAX_BREAKPOINTS:
        raise BadRequest(
            f"A maximum of {_MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(ends)}."
        )
    return b"".join(parts), tuple(ends)


def _block_bytes(block: Any) -> bytes:
    if isinstance(block, dict) and isinstance(block.get("text"), str):
        return block["text"].encode()
    if isinstance(block, dict):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return _SORTED.encode(block).encode()


def _check_cache_control(value: Any, where: str) -> None:
    if not isinstance(value, dict) or value.get("type") != "ephemeral":
        raise BadRequest(f"{where}.type: Input should be 'ephemeral'", where)
    if value.get("ttl", "5m") not in ("5m", "1h"):
        raise BadRequest(f"{where}.ttl: Input should be '5m' or '1h'", where)


def new_id(prefix: str) -> str:
    return prefix + os.urandom(12).hex()


def has_key(headers: Mapping[str, str], route: Route) -> bool:
    """Whether a request carries an API key the way the route's SDK sends it."""
    if route == "gemini":
        return bool(headers.get("x-goog-api-key", "").strip())
    authorization = headers.get("Authorization", "")
    if authorization.startswith("Bearer ") and authorization[7:].strip():
        return True
    return route == "anthropic" and bool(headers.get("x-api-key", "").strip())


# (status, OpenAI error type/code, Anthropic error type, message) per failure kind.
_ERRORS: dict[str, tuple[int, str, str | None, str, str]] = {
    "bad_request": (400, "invalid_request_error", None, "invalid_request_error", ""),
    "unauthorized": (
        401,
        "invalid_request_error",
        "invalid_api_key",
        "authentication_error",
        "Missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'.",
    ),
    "not_found": (404, "invalid_request_error", None, "not_found_error", "Unknown route."),
    "429": (
        429,
        "requests",
        "rate_limit_exceeded",
        "rate_limit_error",
        "Rate limit reached for requests (simulated). Please retry after the Retry-After delay.",
    ),
    "500": (
        500,
        "server_error",
        None,
        "api_error",
        "The server had an error while processing your request (simulated).",
    ),
    "overloaded": (
        503,
        "server_error",
        None,
        "overloaded_error",
        "The engine is currently overloaded, please try again later (simulated).",
    ),
    "shutting_down": (503, "server_error", None, "api_error", "The simulator is shutting down."),
    "conflict": (409, "invalid_request_error", None, "invalid_request_error", ""),
    "too_large": (
        413,
        "invalid_request_error",
        None,
        "request_too_large",
        "Request exceeds the maximum allowed number of bytes.",
    ),
}


def error_status(kind: str, route: Route) -> int:
    status = _ERRORS[kind][0]
    # Anthropic signals overload with its own non-standard status.
    return 529 if kind == "overloaded" and route == "anthropic" else status


_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
_GOOGLE_MESSAGES = {
    "unauthorized": "Method doesn't allow unregistered callers: send 'x-goog-api-key: <key>'.",
    "429": "Resource has been exhausted (e.g. check quota) (simulated).",
    "500": "An internal error has occurred. Please retry or report (simulated).",
    "overloaded": "The model is overloaded. Please try again later (simulated).",
}


def error_body(
    kind: str,
    route: Route,
    request_id: str,
    message: str = "",
    param: str | None = None,
    retry_s: float | None = None,
) -> bytes:
    """`retry_s`: Gemini says how long to wait in the body (a `RetryInfo` detail), not in a
    header."""
    status, openai_type, code, anthropic_type, default = _ERRORS[kind]
    text = message or default
    if route == "gemini":
        return json.dumps(_google_error(kind, status, message, retry_s)).encode()
    if route == "anthropic":
        body: dict[str, Any] = {
            "type": "error",
            "error": {"type": anthropic_type, "message": text},
            "request_id": request_id,
        }
    else:
        body = {"error": {"message": text, "type": openai_type, "param": param, "code": code}}
    return json.dumps(body).encode()


def _google_error(kind: str, status: int, message: str, retry_s: float | None) -> dict[str, Any]:
    error: dict[str, Any] = {
        "code": status,
        "message": message or _GOOGLE_MESSAGES.get(kind) or _ERRORS[kind][4],
        "status": _GOOGLE_STATUS.get(status, "UNKNOWN"),
    }
    if retry_s is not None:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_s:g}s"}
        ]
    return {"error": error}
