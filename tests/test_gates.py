"""The gate grammar: parsing, precedence, evaluation, and errors that name the column.

Reference: the grammar in calibration/gates.py's docstring; expected values are worked by hand
from the fixed statistics of the fake context below.
"""

from __future__ import annotations

import math

import pytest

from calibration.gates import (
    And,
    Compare,
    GateError,
    GateStatistic,
    GateSyntaxError,
    Not,
    Or,
    evaluate_gate,
    parse_gate,
)

_STATS = {
    ("diff", ("candidate", "baseline")): GateStatistic(-0.031, -0.052, -0.010, 0.003),
    ("diff", ("a", "b")): GateStatistic(0.04, 0.01, 0.07, 0.01),
    ("winrate", ("a", "b")): GateStatistic(0.55, 0.505, 0.595, 0.01),
    ("score", ("gpt-4.1-mini",)): GateStatistic(4.2, 4.0, 4.4),
    ("score", ("Llama 2 (70B)",)): GateStatistic(math.nan, math.nan, math.nan),
}
_SYSTEMS = {"candidate", "baseline", "a", "b", "gpt-4.1-mini", "Llama 2 (70B)"}


class _Context:
    """Fixed statistics, e.g. diff(candidate, baseline) = -0.031 [-0.052, -0.010]."""

    def statistic(self, name: str, systems: tuple[str, ...]) -> GateStatistic:
        unknown = [s for s in systems if s not in _SYSTEMS]
        if unknown:
            raise KeyError(f"unknown system {unknown[0]!r}; systems: {', '.join(sorted(_SYSTEMS))}")
        return _STATS[(name, systems)]


def _eval(expr: str) -> tuple[bool, float | None, str]:
    r = evaluate_gate(expr, _Context())
    return r.passed, r.value, r.reason


def test_the_issue_example_fails_with_a_one_line_reason() -> None:
    ok, value, reason = _eval("diff(candidate, baseline) >= -0.02")
    assert not ok and value == -0.031
    assert reason == ("diff(candidate, baseline) = -0.031 (95% CI -0.052 to -0.01) is not >= -0.02")


@pytest.mark.parametrize(
    ("expr", "passed", "value"),
    [
        ("winrate(a, b) > 0.5", True, 0.55),
        ("ci_low(diff(a,b)) > 0", True, 0.01),
        ("ci_high(diff(candidate, baseline)) < 0", True, -0.010),
        ("p_value(diff(a, b)) < 0.05", True, 0.01),
        ("diff(a, b) > 0 and winrate(a, b) > 0.6", False, 0.55),  # and: first failure decides
        ("diff(candidate, baseline) > 0 or winrate(a, b) > 0.5", True, 0.55),
        ("not diff(candidate, baseline) >= 0", True, -0.031),
        # "and" binds tighter than "or": False or (True and True)
        ("diff(candidate, baseline) > 0 or diff(a, b) > 0 and winrate(a, b) > 0.5", True, 0.04),
        ("(diff(candidate, baseline) > 0 or diff(a, b) > 0) and winrate(a, b) > 0.9", False, 0.55),
        ("score(gpt-4.1-mini) >= 4", True, 4.2),
        ("0.5 < winrate(a, b)", True, 0.5),
        ("winrate(a, b) >= ci_low(winrate(a, b))", True, 0.55),
        ("diff(a, b) != 0", True, 0.04),
        ("diff(a, b) >= 1e-2", True, 0.04),
    ],
)
def test_evaluation(expr: str, passed: bool, value: float) -> None:
    ok, got, reason = _eval(expr)
    assert ok is passed and got == pytest.approx(value)
    assert "\n" not in reason


def test_precedence_in_the_tree() -> None:
    root = parse_gate("diff(a,b) > 0 or diff(a,b) > 1 and not diff(a,b) > 2").root
    assert isinstance(root, Or)
    assert isinstance(root.parts[0], Compare) and isinstance(root.parts[1], And)
    assert isinstance(root.parts[1].parts[1], Not)


def test_undefined_statistic_fails_the_gate() -> None:
    ok, _, reason = _eval('score("Llama 2 (70B)") > 0')
    assert not ok and 'score("Llama 2 (70B)") = undefined' in reason


@pytest.mark.parametrize(
    ("expr", "column", "fragment"),
    [
        ("diff(a b) >= 0", 8, "expected ',' or ')'"),
        ("diff(a, b) = 0", 12, "use '==' or '>='"),
        ("dif(a, b) > 0", 1, "unknown function 'dif'"),
        ("diff(a) > 0", 1, "diff() takes 2 system names, got 1"),
        ("diff(a, b) >", 13, "found end of expression"),
        ("(diff(a, b) > 0", 16, "')' closing the group"),
        ("diff(a, b) > 0 and", 19, "expected a number or a function"),
        ("diff(a, b) > 0 x", 16, "expected 'and', 'or'"),
        ("diff(a, b)", 11, "comparison operator"),
        ("", 1, "expected a comparison"),
        ('diff(a, "b) > 0', 9, "unterminated quoted name"),
        ("diff(a, b) $ 0", 12, "unexpected character '$'"),
        ("ci_low(0.5) > 0", 8, "a statistic (diff, winrate, score) inside ci_low()"),
        # Not Python: no attribute access, calls of arbitrary names, or subscripts.
        ("__import__('os').system('true') > 0", 1, "unknown function '__import__'"),
        ("diff(a, b)[0] > 0", 11, "unexpected character '['"),
    ],
)
def test_syntax_errors_name_the_column(expr: str, column: int, fragment: str) -> None:
    with pytest.raises(GateSyntaxError) as info:
        parse_gate(expr)
    err = info.value
    assert err.position == column - 1 and f"at column {column}" in str(err)
    assert fragment in str(err)
    assert "\n" not in str(err) and err.pointer.splitlines()[1] == " " * (column - 1) + "^"


def test_unknown_system_is_an_evaluation_error() -> None:
    with pytest.raises(GateError, match=r"diff\(cand, baseline\) at column 1: unknown system"):
        evaluate_gate("diff(cand, baseline) > 0", _Context())
    with pytest.raises(GateError, match="has no p-value"):
        evaluate_gate("p_value(score(gpt-4.1-mini)) < 0.05", _Context())


def test_names_with_punctuation_and_quotes() -> None:
    gate = parse_gate("diff(openai/gpt-4o, 'Llama 2 (70B)') >= -0.02")
    assert isinstance(gate.root, Compare)
    assert gate.root.left.systems == ("openai/gpt-4o", "Llama 2 (70B)")  # type: ignore[union-attr]
    assert str(gate.root.left) == 'diff(openai/gpt-4o, "Llama 2 (70B)")'
