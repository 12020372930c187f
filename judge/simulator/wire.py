"""The two wire formats: request validation and normalisation, reply and error bodies.

Only as much of the OpenAI chat-completions and Anthropic messages APIs as judge requests use,
validated closely enough that the official SDKs see what a real server would send.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Literal

Route = Literal["openai", "anthropic"]
ROUTE_PATHS: dict[Route, str] = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
# Fields that are the judged content (hashed separately) or transport details, not parameters.
_CONTENT_FIELDS = frozenset({"model", "messages", "system", "stream"})
# Built once: json.dumps with non-default options builds a new encoder on every call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SORTED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


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
    input_chars: int
    output_mode: Literal["text", "json_object", "json_schema", "tool"] = "text"
    schema: dict[str, Any] | None = None
    tool_name: str | None = None


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
    return _call("openai", payload, normalised, mode, schema, None)


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
    return _call("anthropic", payload, normalised, mode, schema, tool_name)


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
) -> JudgeCall:
    canonical = _COMPACT.encode(normalised).encode()
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
        input_chars=len(canonical),
        output_mode=mode,
        schema=schema if isinstance(schema, dict) else None,
        tool_name=tool_name,
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


def new_id(prefix: str) -> str:
    return prefix + os.urandom(12).hex()


def _tokens(chars: int) -> int:
    return max(1, chars // 4)


def openai_completion(call: JudgeCall, text: str, *, refusal: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if refusal and call.output_mode == "json_schema":
        # Structured-output refusals come in their own field; the text is kept in `content`
        # too so a client reading only `content` still sees an unparseable reply.
        message["refusal"] = text
    message["annotations"] = []
    prompt_tokens, completion_tokens = _tokens(call.input_chars), _tokens(len(text))
    return {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": call.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
        "service_tier": "default",
        "system_fingerprint": "fp_simulator",
    }


def anthropic_message(
    call: JudgeCall, text: str, tool_input: dict[str, Any] | None = None
) -> dict[str, Any]:
    if tool_input is not None:
        content: list[dict[str, Any]] = [
            {
                "type": "tool_use",
                "id": new_id("toolu_"),
                "name": call.tool_name,
                "input": tool_input,
            }
        ]
        stop_reason = "tool_use"
    else:
        content, stop_reason = [{"type": "text", "text": text}], "end_turn"
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": call.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": _tokens(call.input_chars), "output_tokens": _tokens(len(text))},
    }


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
}


def error_status(kind: str, route: Route) -> int:
    status = _ERRORS[kind][0]
    # Anthropic signals overload with its own non-standard status.
    return 529 if kind == "overloaded" and route == "anthropic" else status


def error_body(
    kind: str, route: Route, request_id: str, message: str = "", param: str | None = None
) -> bytes:
    _, openai_type, code, anthropic_type, default = _ERRORS[kind]
    text = message or default
    if route == "anthropic":
        body: dict[str, Any] = {
            "type": "error",
            "error": {"type": anthropic_type, "message": text},
            "request_id": request_id,
        }
    else:
        body = {"error": {"message": text, "type": openai_type, "param": param, "code": code}}
    return json.dumps(body).encode()
