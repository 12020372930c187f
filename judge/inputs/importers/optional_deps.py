"""The optional packages some importers read with, imported when an import needs them, with
the install command in the error when they are missing (STYLE.md 3)."""

from __future__ import annotations

import importlib
from types import ModuleType

from judge.errors import ConfigError

EXTRAS = {"inspect_ai": "inspect", "ijson": "promptfoo", "huggingface_hub": "hf"}
"""Module -> the `judge-pipeline` extra that installs it (pyproject.toml)."""


def optional(module: str, what: str) -> ModuleType:
    """`module`, imported; `ConfigError` naming the pip command when it is not installed.
    `what` says what needs it ("reading Inspect AI logs")."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise  # the package is there but broken: its own error says more
        raise ConfigError(
            f"{what} needs the {top} package, which is not installed: "
            f"pip install 'judge-pipeline[{EXTRAS[top]}]'"
        ) from None
