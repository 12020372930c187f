"""CI gates: a small, safe expression language over comparison statistics (never `eval`).

    gate       := or_expr END
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | "(" or_expr ")" | comparison
    comparison := operand (">=" | ">" | "<=" | "<" | "==" | "!=") operand
    operand    := NUMBER | stat | accessor "(" stat ")"
    stat       := "diff" "(" system "," system ")"      mean of a - b per item
                | "winrate" "(" system "," system ")"   share of items a wins, ties half
                | "score" "(" system ")"                mean score of one system
    accessor   := "ci_low" | "ci_high" | "p_value"
    system     := NAME | NUMBER | "quoted name"

A stat used as an operand means its point estimate; `p_value` is the context's (in
`calibration.compare`, a pair's Holm-adjusted p-value when the pair is among those compared).
Names may contain letters, digits and `_ . : / @ + -` (e.g. `gpt-4.1-mini`, `openai/gpt-4o`);
quote anything else. Examples:

    diff(candidate, baseline) >= -0.02
    ci_low(diff(a, b)) > 0 and winrate(a, b) > 0.5

The statistics come from a `GateContext`, so this module knows nothing of how they are computed.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

STATS: dict[str, int] = {"diff": 2, "winrate": 2, "score": 1}  # name -> number of systems
ACCESSORS = ("ci_low", "ci_high", "p_value")
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}
_KEYWORDS = ("and", "or", "not")
_MAX_NESTING = 50
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_ATOM = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.:/@+\-]*")


class GateSyntaxError(ValueError):
    """A gate expression that does not parse; `position` is the 0-based offending offset."""

    def __init__(self, expression: str, position: int, message: str) -> None:
        self.expression = expression
        self.position = position
        self.reason = message
        shown = expression if len(expression) <= 100 else expression[:97] + "..."
        super().__init__(f"gate {shown!r}: {message} at column {position + 1}")

    @property
    def pointer(self) -> str:
        """The expression with a caret under the offending column (two lines)."""
        return f"{self.expression}\n{' ' * self.position}^"


class GateError(ValueError):
    """A well-formed gate that cannot be evaluated (unknown system, statistic unavailable)."""


# --------------------------------------------------------------------------- tokens


@dataclass(frozen=True)
class _Token:
    kind: str  # number, name, string, op, (, ), ",", keyword, end
    text: str
    pos: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "(),":
            tokens.append(_Token(ch, ch, i))
            i += 1
        elif text.startswith((">=", "<=", "==", "!="), i):
            tokens.append(_Token("op", text[i : i + 2], i))
            i += 2
        elif ch in "<>":
            tokens.append(_Token("op", ch, i))
            i += 1
        elif ch == "=":
            raise GateSyntaxError(text, i, "'=' is not a comparison; use '==' or '>='")
        elif ch in "\"'":
            end = text.find(ch, i + 1)
            if end < 0:
                raise GateSyntaxError(text, i, f"unterminated quoted name (no closing {ch})")
            tokens.append(_Token("string", text[i + 1 : end], i))
            i = end + 1
        elif ch in "+-" and (m := _NUMBER.match(text, i)):
            tokens.append(_Token("number", m.group(), i))
            i = m.end()
        elif m := _ATOM.match(text, i):
            word = m.group()
            if _NUMBER.fullmatch(word):
                kind = "number"
            elif word.lower() in _KEYWORDS:
                kind, word = "keyword", word.lower()
            else:
                kind = "name"
            tokens.append(_Token(kind, word, i))
            i = m.end()
        else:
            raise GateSyntaxError(text, i, f"unexpected character {ch!r}")
    tokens.append(_Token("end", "", len(text)))
    return tokens


# --------------------------------------------------------------------------- syntax tree


@dataclass(frozen=True)
class Number:
    value: float
    pos: int

    def __str__(self) -> str:
        return f"{self.value:g}"


@dataclass(frozen=True)
class Stat:
    name: str
    systems: tuple[str, ...]
    pos: int

    def __str__(self) -> str:
        names = (n if _ATOM.fullmatch(n) else f'"{n}"' for n in self.systems)
        return f"{self.name}({', '.join(names)})"


@dataclass(frozen=True)
class Access:
    name: str
    stat: Stat
    pos: int

    def __str__(self) -> str:
        return f"{self.name}({self.stat})"


Operand = Number | Stat | Access


@dataclass(frozen=True)
class Compare:
    op: str
    left: Operand
    right: Operand


@dataclass(frozen=True)
class And:
    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    inner: Node


Node = Compare | And | Or | Not


@dataclass(frozen=True)
class Gate:
    expression: str
    root: Node


def _describe(tok: _Token) -> str:
    return "end of expression" if tok.kind == "end" else repr(tok.text)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def fail(self, expected: str, tok: _Token | None = None) -> GateSyntaxError:
        tok = tok or self.tok
        return GateSyntaxError(self.text, tok.pos, f"expected {expected}, found {_describe(tok)}")

    def take(self, kind: str, expected: str) -> _Token:
        if self.tok.kind != kind:
            raise self.fail(expected)
        tok = self.tok
        self.i += 1
        return tok

    def keyword(self, word: str) -> bool:
        if self.tok.kind == "keyword" and self.tok.text == word:
            self.i += 1
            return True
        return False

    def gate(self) -> Node:
        if self.tok.kind == "end":
            raise self.fail("a comparison such as diff(candidate, baseline) >= -0.02")
        node = self.or_expr()
        if self.tok.kind != "end":
            raise self.fail("'and', 'or' or the end of the expression")
        return node

    def or_expr(self) -> Node:
        parts = [self.and_expr()]
        while self.keyword("or"):
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def and_expr(self) -> Node:
        parts = [self.not_expr()]
        while self.keyword("and"):
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def not_expr(self) -> Node:
        # Each 'not' and '(' recurses: bounded, or "((((..." exhausts Python's stack.
        if self.depth >= _MAX_NESTING:
            raise GateSyntaxError(
                self.text, self.tok.pos, f"'(' and 'not' nested more than {_MAX_NESTING} deep"
            )
        self.depth += 1
        try:
            return self._not_expr()
        finally:
            self.depth -= 1

    def _not_expr(self) -> Node:
        if self.keyword("not"):
            return Not(self.not_expr())
        if self.tok.kind == "(":
            self.i += 1
            node = self.or_expr()
            self.take(")", "')' closing the group")
            return node
        return self.comparison()

    def comparison(self) -> Node:
        left = self.operand()
        if self.tok.kind != "op":
            raise self.fail(f"a comparison operator ({', '.join(_OPS)}) after {left}")
        op = self.tok.text
        self.i += 1
        return Compare(op, left, self.operand())

    def operand(self) -> Operand:
        tok = self.tok
        if tok.kind == "number":
            self.i += 1
            return Number(float(tok.text), tok.pos)
        if tok.kind != "name":
            raise self.fail(f"a number or a function ({', '.join([*STATS, *ACCESSORS])})")
        if tok.text in ACCESSORS:
            self.i += 1
            self.take("(", f"'(' after {tok.text}")
            if self.tok.kind != "name" or self.tok.text not in STATS:
                raise self.fail(f"a statistic ({', '.join(STATS)}) inside {tok.text}()")
            stat = self.stat()
            self.take(")", f"')' closing {tok.text}(")
            return Access(tok.text, stat, tok.pos)
        if tok.text in STATS:
            return self.stat()
        known = ", ".join([*STATS, *ACCESSORS])
        raise GateSyntaxError(self.text, tok.pos, f"unknown function {tok.text!r} (known: {known})")

    def stat(self) -> Stat:
        name = self.take("name", "a statistic")
        self.take("(", f"'(' after {name.text}")
        systems = [self.system()]
        while self.tok.kind == ",":
            self.i += 1
            systems.append(self.system())
        if self.tok.kind != ")":
            raise self.fail(f"',' or ')' in {name.text}(")
        arity = STATS[name.text]
        if len(systems) != arity:
            raise GateSyntaxError(
                self.text,
                name.pos,
                f"{name.text}() takes {arity} system name{'s' if arity > 1 else ''}, "
                f"got {len(systems)}",
            )
        self.i += 1
        return Stat(name.text, tuple(systems), name.pos)

    def system(self) -> str:
        if self.tok.kind in ("name", "number", "string", "keyword"):
            text = self.tok.text
            self.i += 1
            return text
        raise self.fail("a system name")


def parse_gate(expression: str) -> Gate:
    """Parse a gate expression; raises GateSyntaxError naming the column of the problem."""
    return Gate(expression, _Parser(expression).gate())


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class GateStatistic:
    """What a context returns for diff/winrate/score: the estimate and its interval."""

    value: float
    ci_low: float
    ci_high: float
    p_value: float | None = None  # None when the statistic has no null hypothesis
    ci: float = 0.95


class GateContext(Protocol):
    def statistic(self, name: str, systems: tuple[str, ...]) -> GateStatistic:
        """Return the statistic, or raise KeyError/ValueError with a message naming the fix."""
        ...


@dataclass(frozen=True)
class GateResult:
    expression: str
    passed: bool
    value: float | None  # left-hand value of the comparison that decided the outcome
    reason: str  # one line
    ci_low: float | None = None
    ci_high: float | None = None
    """The interval of the statistic `value` comes from (for `ci_low(diff(a, b))`, the interval
    of `diff(a, b)`); None when the left-hand side is a number."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "expression": self.expression,
            "passed": self.passed,
            "value": _finite(self.value),
            "ci_low": _finite(self.ci_low),
            "ci_high": _finite(self.ci_high),
            "reason": self.reason,
        }


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def _fmt(x: float) -> str:
    return "undefined" if x is None or not math.isfinite(x) else f"{x:.4g}"


class _GateRun:
    def __init__(self, gate: Gate, context: GateContext) -> None:
        self.gate = gate
        self.context = context

    def stat(self, node: Stat) -> GateStatistic:
        try:
            return self.context.statistic(node.name, node.systems)
        except (KeyError, ValueError) as exc:
            msg = exc.args[0] if exc.args else str(exc)
            raise GateError(
                f"gate {self.gate.expression!r}: {node} at column {node.pos + 1}: {msg}"
            ) from exc

    def operand(self, node: Operand) -> _Value:
        """Value, a description for the reason line, and the statistic's interval."""
        if isinstance(node, Number):
            return _Value(node.value, str(node), None)
        if isinstance(node, Stat):
            s = self.stat(node)
            ci = f"{round(s.ci * 100):g}% CI {_fmt(s.ci_low)} to {_fmt(s.ci_high)}"
            return _Value(s.value, f"{node} = {_fmt(s.value)} ({ci})", (s.ci_low, s.ci_high))
        s = self.stat(node.stat)
        value = {"ci_low": s.ci_low, "ci_high": s.ci_high, "p_value": s.p_value}[node.name]
        if value is None:
            raise GateError(
                f"gate {self.gate.expression!r}: {node.stat} has no p-value "
                f"(column {node.pos + 1}); gate on its interval instead"
            )
        text = f"{node} = {_fmt(value)} (estimate {_fmt(s.value)})"
        return _Value(value, text, (s.ci_low, s.ci_high))

    def run(self, node: Node) -> tuple[bool, list[str], _Value | None]:
        """Outcome, reason lines, and the left-hand value of the comparison that decided."""
        if isinstance(node, Compare):
            left = self.operand(node.left)
            right = self.operand(node.right)
            # NaN compares False under every operator, so an undefined statistic fails.
            ok = bool(_OPS[node.op](left.value, right.value))
            return ok, [f"{left.text} {'' if ok else 'is not '}{node.op} {right.text}"], left
        if isinstance(node, Not):
            ok, texts, value = self.run(node.inner)
            return not ok, [f"not ({'; '.join(texts)})"], value
        want = isinstance(node, Or)  # Or stops at the first True, And at the first False
        texts: list[str] = []
        first: _Value | None = None
        for part in node.parts:
            ok, t, value = self.run(part)
            if ok == want:
                return ok, t, value
            texts.extend(t)
            first = value if first is None else first
        return not want, texts, first


@dataclass(frozen=True)
class _Value:
    value: float
    text: str
    interval: tuple[float, float] | None


def evaluate_gate(gate: Gate | str, context: GateContext) -> GateResult:
    """Evaluate one gate; the reason names the deciding statistics with their intervals."""
    g = parse_gate(gate) if isinstance(gate, str) else gate
    ok, texts, left = _GateRun(g, context).run(g.root)
    low, high = (None, None) if left is None or left.interval is None else left.interval
    value = None if left is None else left.value
    return GateResult(g.expression, ok, value, "; ".join(texts), low, high)


class StatisticCache:
    """A `GateContext`: statistics for gates, computed on demand (`compute(name, a, b)`;
    `score(system)`, None for pairwise tables) with the report's seed, and cached."""

    def __init__(
        self,
        systems: Sequence[str],
        compute: Callable[..., GateStatistic],
        score: Callable[[str], GateStatistic] | None,
    ) -> None:
        self.systems = list(systems)
        self.compute = compute  # (name, a, b) -> GateStatistic
        self.score = score  # system -> GateStatistic, or None for pairwise tables
        self.cache: dict[tuple[str, tuple[str, ...]], GateStatistic] = {}

    def statistic(self, name: str, systems: tuple[str, ...]) -> GateStatistic:
        for s in systems:
            if s not in self.systems:
                raise KeyError(f"unknown system {s!r}; systems: {', '.join(self.systems)}")
        key = (name, systems)
        if key not in self.cache:
            if name == "score":
                if self.score is None:
                    raise ValueError("score() needs a scores table; use winrate(a, b)")
                self.cache[key] = self.score(systems[0])
            else:
                if systems[0] == systems[1]:
                    raise ValueError("compare two different systems")
                self.cache[key] = self.compute(name, *systems)
        return self.cache[key]


def gate_results(gates: Sequence[str], context: GateContext) -> tuple[GateResult, ...]:
    parsed = [parse_gate(g) for g in gates]  # all syntax errors before any statistic
    return tuple(evaluate_gate(g, context) for g in parsed)


def check_gates(gates: Sequence[str], systems: Sequence[str], *, scores: bool) -> None:
    """Raise what evaluating `gates` would raise for reasons the data cannot change: syntax,
    an unknown system, `score()` on a pairwise table, a p-value that does not exist. Run
    before any statistic is computed (before any judge is paid, in a pipeline), through the
    same evaluation as the real gates, so the two cannot disagree on what is valid."""

    def compute(_name: str, _a: str, _b: str) -> GateStatistic:
        return GateStatistic(0.0, 0.0, 0.0, 0.5)

    def score(_system: str) -> GateStatistic:
        return GateStatistic(0.0, 0.0, 0.0, None)

    gate_results(gates, StatisticCache(systems, compute, score if scores else None))
