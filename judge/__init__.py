"""judge: a blinded LLM-as-judge pipeline.

The public surface is re-exported here lazily: `import judge` stays cheap (no pandas, no SDKs,
never litellm) and each name is imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from judge.errors import (
    ConfigError,
    DataError,
    JudgeError,
    LimitError,
    ParseError,
    ProviderError,
    StoreError,
)

DISTRIBUTION = "judge-pipeline"
"""The name pip knows this package by (pyproject.toml's `name`)."""


def _installed_version() -> str:
    """The installed distribution's version (pyproject.toml is its one source)."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


__version__ = _installed_version()

_LAZY = {
    "RunConfig": "judge.config",
    "JudgeSpec": "judge.config",
    "load_config": "judge.config",
    "load_items": "judge.data",
    "load_responses": "judge.data",
    "iter_responses": "judge.data",
    "Scrubber": "judge.scrubber",
    "blind_responses": "judge.blinding",
    "make_pairs": "judge.blinding",
    "new_secret": "judge.blinding",
    "Rubric": "judge.rubrics",
    "load_rubric": "judge.rubrics",
    "render_pairwise": "judge.rubrics",
    "render_absolute": "judge.rubrics",
    "parse_reply": "judge.parsing",
    "RunStore": "judge.store",
    "family_of": "judge.families",
    "eligible_judges": "judge.families",
    "prepare_run": "judge.run",
    "run_pipeline": "judge.run",
    "finish_run": "judge.run",
    "RunDir": "judge.rundir",
    "RenderLimits": "judge.limits",
    "render_limits": "judge.templates",
}

__all__ = [
    "ConfigError",
    "DataError",
    "JudgeError",
    "JudgeSpec",
    "LimitError",
    "ParseError",
    "ProviderError",
    "RenderLimits",
    "Rubric",
    "RunConfig",
    "RunDir",
    "RunStore",
    "Scrubber",
    "StoreError",
    "__version__",
    "blind_responses",
    "eligible_judges",
    "family_of",
    "finish_run",
    "iter_responses",
    "load_config",
    "load_items",
    "load_responses",
    "load_rubric",
    "make_pairs",
    "new_secret",
    "parse_reply",
    "prepare_run",
    "render_absolute",
    "render_limits",
    "render_pairwise",
    "run_pipeline",
]

if TYPE_CHECKING:
    from judge.blinding import blind_responses, make_pairs, new_secret
    from judge.config import JudgeSpec, RunConfig, load_config
    from judge.data import iter_responses, load_items, load_responses
    from judge.families import eligible_judges, family_of
    from judge.limits import RenderLimits
    from judge.parsing import parse_reply
    from judge.rubrics import Rubric, load_rubric, render_absolute, render_pairwise
    from judge.run import finish_run, prepare_run, run_pipeline
    from judge.rundir import RunDir
    from judge.scrubber import Scrubber
    from judge.store import RunStore
    from judge.templates import render_limits


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judge' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
