"""Rubric templates: Jinja in an immutable sandbox, rendered within a budget of text and time.

A rubric may come from a client of the service, so rendering it must neither hold a thread
(`{% for i in range(10**5) %}{% for j in range(10**5) %}...`) nor fill memory
(`{{ slot_a * 10**9 }}`, `{{ slot_a|replace('', slot_a) }}`). On top of Jinja's immutable
sandbox (no private attributes, no mutating methods, `range` capped at 100,000 items):

* Text: everything a template produces counts against the prompt's budget as it is produced:
  its output, including inside macros and `{% set %}`, `{% filter %}` and `{% call %}` blocks,
  and every string or list its filters, operators and calls build. Operations that could build
  a huge value in one step are estimated before they run and refused if it would not fit:
  `*`, `**`, `~`, and the filters center, indent, join, replace and wordwrap (with any filter
  argument larger than the budget). `%` formatting of text is refused, and of `str` methods
  only those whose result is no longer than the string are available.
* Time: a deadline is checked on every loop iteration, call, filter, attribute lookup and
  output, so a long loop stops within a few microseconds of it.

The budget is `RenderLimits.max_template_output_kb` plus four times the length of the values
the template is given: the template may show and transform its inputs, but what it adds of its
own is bounded whatever the data. Compiled templates are cached by source; the checks live in
the compiled code (the syntax tree is rewritten before compiling), so they cost nothing when a
template has no loops or filters.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import StrictUndefined, nodes
from jinja2.filters import FILTERS
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.visitor import NodeTransformer

from judge.config.limits import RenderLimits
from judge.errors import LimitError

_VALUE_SHARE = 4
"""Each character of the values a template is given allows this many characters of work."""
_MAX_INT_BITS = 1 << 16
"""Largest integer `**` may make (about 20,000 digits)."""

# Results no longer than their inputs (or a small multiple: escaping, JSON): counted after.
_PLAIN_FILTERS = (  # noqa: SIM905 (a list of words reads better as words)
    "abs attr batch capitalize count d default dictsort e escape filesizeformat first float "
    "forceescape groupby int items last length list lower map max min pprint reject rejectattr "
    "reverse round safe select selectattr slice sort string striptags sum title tojson trim "
    "truncate unique upper urlencode wordcount xmlattr"
).split()
# Left out: format (% formatting with widths), random (a prompt must be reproducible), urlize.

# `str` methods a template may call: none returns more text than the string holds.
_STR_METHODS = frozenset(
    (  # noqa: SIM905
        "capitalize casefold count endswith find index isalnum isalpha isdecimal isdigit "
        "islower isnumeric isspace istitle isupper lower lstrip partition removeprefix "
        "removesuffix rfind rindex rpartition rsplit rstrip split splitlines startswith strip "
        "swapcase title upper"
    ).split()
)


@dataclass
class _Run:
    """The limits in force, and the render time spent under them so far."""

    limits: RenderLimits
    spent_s: float = 0.0


_LIMITS: contextvars.ContextVar[_Run | None] = contextvars.ContextVar("judge_render_limits")
_ACTIVE: contextvars.ContextVar[_Guard | None] = contextvars.ContextVar("judge_render_guard")


@contextlib.contextmanager
def render_limits(limits: RenderLimits) -> Iterator[None]:
    """Render every template inside the block under `limits` (instead of the defaults); its
    `max_render_total_s` counts from here."""
    token = _LIMITS.set(_Run(limits))
    try:
        yield
    finally:
        _LIMITS.reset(token)


def render(sources: Mapping[str, str], values: Mapping[str, Any]) -> dict[str, str]:
    """Render each template (`{"system": source, "user": source}`) with `values`, together
    as one prompt: one budget of text and time. Raises `LimitError` when a limit is exceeded,
    `jinja2.TemplateError` for any other failure (a division by zero, infinite recursion)."""
    run = _LIMITS.get(None) or _Run(RenderLimits())
    guard = _Guard(run, values)
    token = _ACTIVE.set(guard)
    try:
        out = {}
        for key, source in sources.items():
            guard.key = key
            out[key] = guard.render(compile_template(source), values)
        return out
    except (LimitError, jinja2.TemplateError):
        raise
    except RecursionError:
        raise jinja2.TemplateRuntimeError("macros or loops recurse too deeply") from None
    except Exception as exc:  # 1/0, int('x'), ...: an error of the template, not of ours
        raise jinja2.TemplateRuntimeError(f"{type(exc).__name__}: {exc}") from None
    finally:
        _ACTIVE.reset(token)
        run.spent_s += time.monotonic() - guard.started


@functools.lru_cache(maxsize=256)
def compile_template(source: str) -> jinja2.Template:
    """The compiled template, its loops and `~` rewritten to check the budget. Cached here,
    not on the rubric: compiled code cannot be pickled, and rubrics travel to worker
    processes. Raises `jinja2.TemplateSyntaxError`."""
    tree = ENV.parse(source)
    return ENV.from_string(_Bounded().visit(tree))


class _Guard:
    """One prompt's budget; the hooks of `_Environment` report to the active one."""

    def __init__(self, run: _Run, values: Mapping[str, Any]) -> None:
        limits = run.limits
        given = sum(len(v) for v in values.values() if isinstance(v, str))
        self.kb = limits.max_template_output_kb
        self.given = given
        self.budget = int(self.kb * 1024) + _VALUE_SHARE * given
        self.produced = 0
        self.key = ""
        self.started = time.monotonic()
        self.deadline = self.started + limits.max_render_s
        self.total_limit = limits.max_render_total_s
        self.per_prompt = limits.max_render_s
        if self.total_limit is not None:
            left = self.total_limit - run.spent_s
            self.deadline = min(self.deadline, self.started + left)
        self.total_first = self.total_limit is not None and self.deadline < (
            self.started + limits.max_render_s
        )

    def render(self, template: jinja2.Template, values: Mapping[str, Any]) -> str:
        self.tick()
        # Output is counted by `finalize` as it is made, in buffers too: join what came out.
        return "".join(template.generate(**values))

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            if self.total_first:
                raise LimitError(
                    f"rendering this run's prompts took more than {self.total_limit:g} s in "
                    f"all (limit max_render_total_s = {self.total_limit:g}); use a simpler "
                    "rubric or fewer judge requests",
                    limit="max_render_total_s",
                    maximum=float(self.total_limit or 0),
                )
            raise LimitError(
                f"rendering the {self.key} template took more than {self.per_prompt:g} s for "
                f"one prompt (limit max_render_s = {self.per_prompt:g}): does it loop too long?",
                limit="max_render_s",
                maximum=self.per_prompt,
            )

    def room(self, size: int, what: str) -> None:
        """Refuse before building `size` characters that could not fit."""
        if self.produced + size > self.budget:
            self._too_much(what)

    def add(self, value: Any, what: str) -> Any:
        self.produced += _size(value)
        if self.produced > self.budget:
            self._too_much(what)
        return value

    def _too_much(self, what: str) -> None:
        raise LimitError(
            f"the {self.key} template produces more than {self.budget:,} characters for one "
            f"prompt ({what}): the limit is {self.kb:g} KB plus {_VALUE_SHARE} x the "
            f"{self.given:,} characters of text it renders (max_template_output_kb = "
            f"{self.kb:g}); does a loop or repetition run away?",
            limit="max_template_output_kb",
            maximum=self.kb,
        )


def _active() -> _Guard:
    guard = _ACTIVE.get(None)
    if guard is None:
        # Only the compiler evaluates expressions outside `render`, to fold constants: make
        # it leave them to run time, where they are counted.
        raise nodes.Impossible()
    return guard


def _size(value: Any) -> int:
    """Characters (and items) a value holds, one level deep."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) + sum(len(v) for v in value if isinstance(v, str))
    if isinstance(value, dict):
        texts = [*value.keys(), *value.values()]
        return len(value) + sum(len(v) for v in texts if isinstance(v, str))
    return 0


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox, with every operation that can take time or build text reported to the
    active `_Guard`."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, str) and attr not in _STR_METHODS:
            return False
        return super().is_safe_attribute(obj, attr, value)

    def wrap_str_format(self, value: Any) -> None:
        # Jinja hands out a sandboxed `str.format` before asking `is_safe_attribute`; a
        # width of 10**9 in it would still build a gigabyte. Not wrapped, it is refused.
        return None

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        guard = _active()
        guard.tick()
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(times, int) and _size(seq):
                    guard.room(_size(seq) * max(times, 0), f"'*' repeats a value {times:,} times")
        elif operator == "**" and isinstance(left, int) and isinstance(right, int):
            if right > 0 and abs(left) > 1 and right * left.bit_length() > _MAX_INT_BITS:
                raise SecurityError(f"{left} ** {right} is too large a number")
        elif operator == "%" and isinstance(left, str):
            raise SecurityError("'%' formatting of text is not available in rubric templates")
        return guard.add(super().call_binop(context, operator, left, right), f"'{operator}'")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        guard = _active()
        guard.tick()
        result = super().call(__context, __obj, *args, **kwargs)
        return guard.add(result, "a call")

    def getattr(self, obj: Any, attribute: str) -> Any:
        _active().tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        _active().tick()
        return super().getitem(obj, argument)


def _finalize(value: Any) -> str:
    """Every piece of output, literal text included (see `_Bounded`), passes here."""
    guard = _active()
    guard.tick()
    text = str(value)
    guard.add(text, "its output")
    return text


class _Bounded(NodeTransformer):
    """Rewrites a parsed template so that the budget sees what the compiler would not show it:
    each loop's items, each `~`, and literal text (made a constant, so it passes `finalize`)."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _filter(node.iter, "_bounded_loop", node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _filter(nodes.List(node.nodes, lineno=node.lineno), "_bounded_concat", node.lineno)

    def visit_TemplateData(self, node: nodes.TemplateData) -> nodes.Node:
        return nodes.Const(node.data, lineno=node.lineno)


def _filter(node: nodes.Expr, name: str, lineno: int) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=lineno)


class _Loop:
    """A loop's items, checking the deadline before each one (and keeping `len`, so
    `loop.length` works as before)."""

    def __init__(self, items: Any, guard: _Guard) -> None:
        self._items = items
        self._guard = guard

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        for item in self._items:
            self._guard.tick()
            yield item


def _bounded_loop(items: Any) -> _Loop:
    return _Loop(items, _active())


def _bounded_concat(parts: list[Any]) -> str:
    guard = _active()
    texts = [str(p) for p in parts]
    guard.room(sum(len(t) for t in texts), "'~' joins")
    return guard.add("".join(texts), "'~'")


# Estimates of a filter's result, in characters, from its arguments (after the value).
def _indent_size(s: Any, width: Any = 4, *_: Any, **__: Any) -> int:
    text = str(s)
    step = width if isinstance(width, int) else len(str(width))
    return len(text) + (text.count("\n") + 1) * max(step, 0)


def _replace_size(s: Any, old: Any, new: Any, count: Any = None, *_: Any) -> int:
    text, old, new = str(s), str(old), str(new)
    times = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    return len(text) + times * max(len(new) - len(old), 0)


def _join_size(items: list[Any], d: Any = "", *_: Any, **__: Any) -> int:
    separators = max(len(items) - 1, 0) * len(str(d))
    return separators + sum(len(x) if isinstance(x, str) else 1 for x in items)


def _wordwrap_size(s: Any, width: Any = 79, _long: Any = True, wrap: Any = None, *_: Any) -> int:
    text = str(s)
    lines = len(text) // max(int(width), 1) + len(text.split()) + 1
    return len(text) + lines * len(str(wrap) if wrap is not None else "\n")


def _center_size(s: Any, width: Any = 80, *_: Any) -> int:
    return max(len(str(s)), int(width))


_ESTIMATES: dict[str, Callable[..., int]] = {
    "center": _center_size,
    "indent": _indent_size,
    "join": _join_size,
    "replace": _replace_size,
    "wordwrap": _wordwrap_size,
}


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    passes_first = getattr(func, "jinja_pass_arg", None) is not None
    estimate = _ESTIMATES.get(name)

    @functools.wraps(func)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        guard = _active()
        guard.tick()
        head, (value, *rest) = (args[:1], args[1:]) if passes_first else ((), args)
        for arg in (*rest, *kwargs.values()):
            if isinstance(arg, int) and not isinstance(arg, bool) and arg > guard.budget:
                guard.room(arg, f"filter '{name}' is given {arg:,}")
        if name == "join" and not isinstance(value, str | jinja2.Undefined):
            value = list(value)  # a generator would be used up by the estimate
        if estimate is not None:
            guard.room(estimate(value, *rest, **kwargs), f"filter '{name}'")
        return guard.add(func(*head, value, *rest, **kwargs), f"filter '{name}'")

    return bounded


def _environment() -> _Environment:
    env = _Environment(
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters = {name: _bounded_filter(name, FILTERS[name]) for name in _PLAIN_FILTERS}
    env.filters.update({name: _bounded_filter(name, FILTERS[name]) for name in _ESTIMATES})
    env.filters["_bounded_loop"] = _bounded_loop
    env.filters["_bounded_concat"] = _bounded_concat
    env.globals.pop("lipsum", None)  # a thousand paragraphs of Python loop per call
    return env


ENV = _environment()
"""The environment rubric templates compile in (parse with it to inspect a template)."""

__all__ = ["ENV", "compile_template", "render", "render_limits"]
