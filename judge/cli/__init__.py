"""The `judge` command: `main` registers the commands (each module one group of them), `console`
and `progress` print, `trail` explains where a number came from."""

from judge.exports import lazy_exports

_EXPORTS = {
    "app": "judge.cli.main",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
