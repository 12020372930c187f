"""The checks of one cell of an items or responses table (`judge.inputs.tables`): ids, amounts,
counts
and chat messages, each accepted as what it means or refused with a `Problem` naming the field."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from judge.inputs.sources import describe, is_pandas_missing, is_sequence
from judge.types import ChatMessage
from judge.untrusted import Problem, parse_json

MISSING = object()
"""A JSONL record without the key (as opposed to an explicit null)."""
_ROLES = ("system", "user", "assistant")


def identifier(value: Any) -> str:
    if type(value) is str:
        if value.strip():
            return value
    elif isinstance(value, int | np.integer) and not isinstance(value, bool):
        return str(int(value))
    raise Problem(f"expected an item id (text or integer), found {described(value)}", "item_id")


def amount(value: Any, field: str) -> float | None:
    # Exact type checks first: this runs for every response, and the numbers.Real check
    # (an ABC) costs more than the rest of the function.
    kind = type(value)
    number: float | None = None
    try:
        if kind is float or kind is int:
            number = float(value)
        elif kind is str:
            if not value:
                return None
            try:
                number = float(value)
            except ValueError:
                number = None
        elif is_missing(value):
            return None
        elif isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
            number = float(value)
    except OverflowError:  # an integer beyond the largest float
        number = math.inf
    if number is not None and math.isnan(number):
        return None  # NaN is how pandas and JSON writers spell "missing" in a number column
    if number is None or not 0 <= number < math.inf:
        raise Problem(f"expected a non-negative number, found {described(value)}", field)
    return number


def count(value: Any, field: str) -> int | None:
    kind = type(value)
    number: float | int | None = None
    if kind is int:
        number = value
    elif kind is str:
        if not value:
            return None
        try:
            number = int(value)
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                number = None
    elif is_missing(value):
        return None
    elif isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        number = value
    if isinstance(number, float | np.floating):
        if math.isnan(number):
            return None
        # 12.0 is accepted: float columns are how pandas writes integers next to missing values.
        number = int(number) if math.isfinite(number) and number.is_integer() else None
    if number is None or number < 0:
        raise Problem(f"expected a non-negative integer, found {described(value)}", field)
    return int(number)


def messages(value: Any, encoded: bool, *, prompt: bool = False) -> tuple[ChatMessage, ...]:
    """Chat messages: a list of {role, content}; in CSV and Parquet text cells, JSON-encoded.
    A prompt needs at least one message and must end with the user's turn."""
    field = "prompt" if prompt else "context"
    if isinstance(value, str) and encoded:
        try:
            value = parse_json(value)
        except Problem as problem:
            raise Problem(problem.message, field) from None
        except json.JSONDecodeError as exc:
            raise Problem(
                f"expected chat messages as a JSON list of {{role, content}} objects, found "
                f"malformed JSON ({exc.msg} at character {exc.pos + 1})",
                field,
            ) from None
    if not is_sequence(value):
        how = "a JSON-encoded list" if encoded else "a list"
        raise Problem(
            f"expected chat messages as {how} of {{role, content}} objects, "
            f"found {described(value)}",
            field,
        )
    messages = []
    for number, message in enumerate(value, start=1):
        if not isinstance(message, Mapping):
            raise Problem(
                f"message {number}: expected an object with role and content, "
                f"found {described(message)}",
                field,
            )
        extra = sorted(set(message) - {"role", "content"})
        if extra:
            raise Problem(
                f"message {number}: unexpected key {extra[0]!r}; a message has only role "
                "and content",
                field,
            )
        role = message.get("role", MISSING)
        if not isinstance(role, str) or role not in _ROLES:
            raise Problem(
                f"message {number}: expected role system, user or assistant, "
                f"found {described(role)}",
                field,
            )
        content = message.get("content", MISSING)
        if not isinstance(content, str):
            raise Problem(
                f"message {number}: expected content as text, found {described(content)}", field
            )
        messages.append(ChatMessage(role=role, content=content))
    if prompt:
        if not messages:
            raise Problem("expected at least one chat message, found an empty list", field)
        if messages[-1].role != "user":
            raise Problem(
                f"the last message must be the user's turn, found role {messages[-1].role!r} "
                f"(message {len(messages)})",
                field,
            )
    return tuple(messages)


def is_missing(value: Any) -> bool:
    return (
        value is None
        or value is MISSING
        or is_pandas_missing(value)
        or (isinstance(value, float) and math.isnan(value))
    )


def is_blank(value: Any) -> bool:
    """Missing, or an empty cell (CSV cannot tell an empty string from a missing value)."""
    return is_missing(value) or (isinstance(value, str) and not value)


def described(value: Any) -> str:
    if value is MISSING:
        return "nothing (the key is absent)"
    return describe(value)
