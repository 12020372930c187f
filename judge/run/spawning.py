"""Starting the run's helper processes (the prepare child, the worker pool) without running
the caller's script again.

A spawned interpreter imports the parent's `__main__` before it runs its target: from the
script's path, or by module name. A notebook has no such path, but a plain script calling
`judge.evaluate` at module level, with no `if __name__ == "__main__":` guard, would start
the whole evaluation again in the child, which then finds the run dir locked by its parent.
The children here need nothing of `__main__` (their targets and arguments are judge's own), so
while one starts, `__main__` shows neither its path nor its module name.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

_MISSING = object()
_guard = threading.Lock()


@contextlib.contextmanager
def main_left_behind() -> Iterator[None]:
    """For the block (which starts spawned processes): `__main__` without `__file__` and
    `__spec__`, so a child started in it does not import the caller's script."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    with _guard:
        saved = {name: main.__dict__.get(name, _MISSING) for name in ("__file__", "__spec__")}
        main.__dict__.pop("__file__", None)
        main.__dict__["__spec__"] = None
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is _MISSING:
                    main.__dict__.pop(name, None)
                else:
                    main.__dict__[name] = value
