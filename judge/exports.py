"""A package's public names, imported on first use (PEP 562).

A stage package declares what it offers in its `__init__` without importing it: `import
judge.store` must not load pandas, and a package whose `__init__` imported its modules would
tie every sibling import to all of them (and to their imports, in a cycle-prone order).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: each name of `names` (public name -> the
    module that defines it) is imported when first read, then kept as a plain attribute."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
