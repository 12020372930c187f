"""What the JSON and YAML parsers accept but nothing after them can use: the checks shared by
the table readers (`judge.inputs.sources`), the recorded-verdicts reader and the config reader
(`judge.yamlfile`). No pandas here: the recorded provider runs in spawned worker processes.

- Nesting: a document nested thousands of levels deep exhausts Python's recursion limit in the
  parser, or later in whatever walks the value (hashing, `json.dumps`, SQLite). A record or a
  config needs a few levels; `MAX_NESTING` is far above that and far below the limit.
- Lone surrogates: the escape `"\\ud800"` without its pair is valid JSON (and YAML) and decodes
  to a `str` holding U+D800, which is not a character: encoding it as UTF-8 fails, so the value
  would crash the first write to SQLite or to a file, long after the file was read. Such text
  is refused, free text included: no reader can tell what character was meant.
- Keys given twice in one JSON object: `json` keeps the last value and drops the other.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

__all__ = [
    "MAX_NESTING",
    "Problem",
    "lone_surrogate",
    "nesting_problem",
    "parse_json",
    "printable",
    "surrogate_problem",
]

MAX_NESTING = 100
"""Deepest nesting of lists and objects (mappings) accepted in a JSON record or a YAML file."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """Where `text` holds a lone surrogate ("\\ud800 at character 4"), or None."""
    found = _LONE_SURROGATE.search(text)
    if found is None:
        return None
    return f"\\u{ord(found.group()):04x} at character {found.start() + 1}"


def surrogate_problem(where: str, what: str = "text") -> str:
    """The message for a lone surrogate found at `where` (from `lone_surrogate`) in `what`."""
    return (
        f"{what} holds a lone surrogate ({where}), half of a UTF-16 pair: not a character, and "
        "not storable as UTF-8; fix the program that wrote the file"
    )


def nesting_problem() -> str:
    """The message for a value nested deeper than `MAX_NESTING`."""
    return (
        f"lists and objects nested more than {MAX_NESTING} levels deep; expected text, numbers, "
        "or shallow lists and objects"
    )


_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
"""Control characters (newline and tab apart), line separators and bidi controls."""


def inert(text: str) -> str:
    """`text` with every character that could drive a terminal (colours, cursor moves, a new
    window title) or reorder what follows it (bidi overrides) written as a visible escape,
    `\\x{1b}`: for text nobody vetted, printed or written where a terminal may show it."""
    return _CONTROL.sub(lambda m: f"\\x{{{ord(m.group()):x}}}", text)


def printable(text: str) -> str:
    """`text` safe to print in an error message: lone surrogates as `\\udxxx` escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class Problem(Exception):
    """A bad value in one row, raised by `parse_json` and the row checks in
    `judge.inputs.tables`; the reader that produced the row adds where it is
    (`judge.inputs.sources.Source.error`)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def parse_json(text: str) -> Any:
    """One JSON document (a JSONL line, a JSON-encoded cell) as `json.loads` reads it, refusing
    with a `Problem` what `json.loads` lets through and nothing after it can use: a key given
    twice in one object (`json` would keep one value and drop the other silently), nesting
    deeper than `MAX_NESTING`, and lone surrogates (see the module docstring). The problem's field
    is the top-level key where it is. Malformed JSON raises `json.JSONDecodeError`."""
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise Problem(nesting_problem(), _top_key(text)) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        limit = sys.get_int_max_str_digits()
        digits = re.search(rf"\d{{{limit + 1},}}", text)
        raise Problem(
            f"a number with more than {limit} digits; expected a number of usual size",
            _top_key(text, digits.start() if digits else len(text)),
        ) from None
    if _may_hold_trouble(text):
        _check_value(value, None, 0)
    return value


def _may_hold_trouble(text: str) -> bool:
    """Whether the document `text` parsed into could nest too deep or hold a lone surrogate:
    a few scans of the text at C speed, instead of walking every value in Python. Surrogates
    come from `\\ud...` escapes (or are in the text itself); nesting needs that many brackets."""
    return (
        text.count("[") + text.count("{") > MAX_NESTING
        or "\\ud" in text
        or "\\uD" in text
        or (not text.isascii() and _LONE_SURROGATE.search(text) is not None)
    )


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record = dict(pairs)
    if len(record) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                name = printable(key)
                raise Problem(f"key {name!r} appears twice in one object; give each key once", name)
            seen.add(key)
    return record


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:]')


def _check_value(value: Any, field: str | None, depth: int) -> None:
    """Nesting and lone surrogates in a parsed document, in document order. Exact type tests:
    this runs on every record, and most strings are ASCII (`isascii` costs nothing)."""
    kind = type(value)
    if kind is str:
        if not value.isascii() and (where := lone_surrogate(value)) is not None:
            raise Problem(surrogate_problem(where), field)
    elif kind is list or kind is dict:
        if depth >= MAX_NESTING:
            raise Problem(nesting_problem(), field)
        if kind is list:
            for item in value:
                _check_value(item, field, depth + 1)
            return
        for key, item in value.items():
            if not key.isascii() and (where := lone_surrogate(key)) is not None:
                raise Problem(surrogate_problem(where, "a key"), field or printable(key))
            _check_value(item, key if depth == 0 else field, depth + 1)


def _top_key(text: str, end: int | None = None) -> str | None:
    """The top-level key in force at character `end` of a document that could not be parsed
    (default: where it first nests deeper than `MAX_NESTING`)."""
    depth, key, last = 0, None, None
    for match in _JSON_TOKEN.finditer(text, 0, len(text) if end is None else end):
        token = match.group()
        if token[0] == '"':
            last = token
        elif token == ":":
            key = last if depth == 1 else key
        elif token in "[{":
            depth += 1
            if end is None and depth > MAX_NESTING:
                break
        else:
            depth -= 1
    try:
        return None if key is None else printable(json.loads(key))
    except ValueError:
        return None
