"""Error hierarchy. Every message names the fix; the CLI turns these into one line and exit 2."""

from __future__ import annotations

from typing import Any


class JudgeError(Exception):
    """Base class for errors a user can act on (bad config, bad data, provider trouble)."""

    def __reduce__(self) -> tuple[Any, ...]:
        # As it is, with its fields: a prepare in another process hands its error back pickled,
        # and keyword-only constructor arguments would not survive the default.
        return (_rebuilt, (type(self), self.args, self.__dict__))


def _rebuilt(cls: type[JudgeError], args: tuple[Any, ...], state: dict[str, Any]) -> JudgeError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class ConfigError(JudgeError):
    """A run config, rubric or judge spec is invalid."""


class LimitError(ConfigError):
    """A run asks for more work than a limit allows (judge requests per run, a rubric
    template's output or render time). `limit` names the limit, `maximum` is its value and
    `actual` what was asked, when known."""

    def __init__(
        self, message: str, *, limit: str, maximum: float, actual: float | None = None
    ) -> None:
        super().__init__(message)
        self.limit = limit
        self.maximum = maximum
        self.actual = actual


class DataError(JudgeError):
    """An input table is invalid. The message names the file, the line or row, and the field."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.row = row
        self.field = field
        self.detail = message
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        elif row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")

    def renamed(self, old: str, new: str) -> DataError:
        """The same error naming file `new` where it named `old` (a copy of the user's file
        was read: the message names the file the user gave)."""
        path = new if self.path == old else self.path
        detail = self.detail.replace(old, new)
        return DataError(detail, path=path, line=self.line, row=self.row, field=self.field)


class ProviderError(JudgeError):
    """A judge provider failed in a way retries cannot fix (auth, missing SDK, bad model)."""


class StoreError(JudgeError):
    """A run store cannot be used as asked (written by newer code, conflicting content, ...)."""


class ParseError(JudgeError):
    """A judge reply could not be turned into a verdict."""


class RunDirBusy(JudgeError):
    """Another process holds the run directory's lock (a second `judge run` on one run dir
    would pay for every request twice)."""

    def __init__(self, message: str, *, pid: int | None = None) -> None:
        self.pid = pid
        super().__init__(message)
