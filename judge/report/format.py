"""Every number reaches the page through these formatters, which note the value they were given
and the text they made: `traced` collects that ledger so a test can check each value is one of
the summary's and that the page holds no number the formatters did not write."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge.summary.run_summary import Agreement, Estimate, SharedAgreement

_ledger: ContextVar[list[tuple[Any, str]] | None] = ContextVar("report_ledger", default=None)


@contextmanager
def traced() -> Iterator[list[tuple[Any, str]]]:
    """Collect (value, text) of every number formatted inside the block."""
    ledger: list[tuple[Any, str]] = []
    token = _ledger.set(ledger)
    try:
        yield ledger
    finally:
        _ledger.reset(token)


def _noted(value: Any, text: str) -> str:
    ledger = _ledger.get()
    if ledger is not None:
        ledger.append((value, text))
    return text


def label(x: object) -> str:
    """A name that may look like a number (a stratum value "1", a version "2.14.0")."""
    return _noted(x, str(x))


def count(x: int | float) -> str:
    """An integer (or a value shown as given, e.g. a parameter)."""
    return _noted(x, str(x))


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun, singular for one: "1 item", "6 items" ("about 1 items" reads as
    a mistake)."""
    return f"{count(n)} {noun if n == 1 else plural or noun + 's'}"


def pct(x: float | None) -> str:
    return "n/a" if x is None else _noted(x, f"{100 * x:.1f}%")


def pct0(x: float | None) -> str:
    return "n/a" if x is None else _noted(x, f"{100 * x:.0f}%")


def points(x: float | None) -> str:
    """A signed difference of two rates, in percentage points."""
    return "n/a" if x is None else _noted(x, f"{100 * x:+.1f} pts")


def level(x: float) -> str:
    """A confidence level: 0.95 -> 95%."""
    return _noted(x, f"{100 * x:g}%")


def num(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    text = f"{x:.{digits}f}"
    # A bootstrap bound of -1e-17 is zero: "-0.00" would read as a sign it does not have.
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]
    return _noted(x, text)


def pvalue(x: float | None, below: bool = False) -> str:
    """A p-value: three decimals, two significant digits under 0.001 (exact and asymptotic
    p-values reach far below it). `below`: x is a bound the p-value lies under (the
    bootstrap's floor 1/(B+1), or Holm's adjustment of it), written "< x"."""
    if x is None:
        return "n/a"
    text = f"{x:.3f}" if x >= 0.001 else f"{x:.2g}"
    return ("< " if below else "") + _noted(x, text)


def short(x: float | None) -> str:
    return num(x, 2)


def usd(x: float | None, digits: int = 2, missing: str = "n/a") -> str:
    return missing if x is None else "$" + num(x, digits)


def seconds(x: float | None) -> str:
    return "n/a" if x is None else num(x, 3) + " s"


Style = Callable[[float | None], str]


def interval(value: float | None, low: float | None, high: float | None, style: Style = num) -> str:
    if value is None:
        return "n/a"
    if low is None or high is None:
        return style(value)
    return f"{style(value)} [{style(low)}, {style(high)}]"


def estimate(e: Estimate | None, style: Style = num) -> str:
    if e is None:
        return "n/a"
    return interval(e.value, e.ci_low, e.ci_high, style)


def share(m: Agreement | SharedAgreement) -> str:
    return f"{pct(m.value)} ({count(m.agree)}/{count(m.comparisons)})"


def stratum_name(stratum: dict[str, str]) -> str:
    return ", ".join(f"{k} = {label(v)}" for k, v in stratum.items()) or "all"
