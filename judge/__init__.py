"""judge: a blinded LLM-as-judge pipeline.

The public surface is re-exported here lazily: `import judge` stays cheap (no pandas, no SDKs,
never litellm) and each name is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge.errors import (
    ConfigError,
    DataError,
    JudgeError,
    LimitError,
    ParseError,
    ProviderError,
    StoreError,
)
from judge.exports import lazy_exports

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
    "evaluate": "judge.run.evaluate",
    "calibrate": "judge.run.evaluate",
    "compare": "judge.run.evaluate",
    "Result": "judge.run.evaluate",
    "RunConfig": "judge.config.run_config",
    "JudgeSpec": "judge.config.run_config",
    "load_config": "judge.config.run_config",
    "load_items": "judge.inputs.tables",
    "load_responses": "judge.inputs.tables",
    "iter_responses": "judge.inputs.tables",
    "Scrubber": "judge.blinding.scrubber",
    "blind_responses": "judge.blinding.blind",
    "make_pairs": "judge.blinding.blind",
    "new_secret": "judge.blinding.blind",
    "Rubric": "judge.rubric.rubrics",
    "load_rubric": "judge.rubric.rubrics",
    "render_pairwise": "judge.rubric.rubrics",
    "render_absolute": "judge.rubric.rubrics",
    "parse_reply": "judge.rubric.parsing",
    "RunStore": "judge.store.run_store",
    "family_of": "judge.families",
    "eligible_judges": "judge.families",
    "prepare_run": "judge.run",
    "run_pipeline": "judge.run",
    "finish_run": "judge.run",
    "RunDir": "judge.store.rundir",
    "RenderLimits": "judge.config.limits",
    "render_limits": "judge.rubric.templates",
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
    "Result",
    "Rubric",
    "RunConfig",
    "RunDir",
    "RunStore",
    "Scrubber",
    "StoreError",
    "__version__",
    "blind_responses",
    "calibrate",
    "compare",
    "eligible_judges",
    "evaluate",
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
    from judge.blinding.blind import blind_responses, make_pairs, new_secret
    from judge.blinding.scrubber import Scrubber
    from judge.config.limits import RenderLimits
    from judge.config.run_config import JudgeSpec, RunConfig, load_config
    from judge.families import eligible_judges, family_of
    from judge.inputs.tables import iter_responses, load_items, load_responses
    from judge.rubric.parsing import parse_reply
    from judge.rubric.rubrics import Rubric, load_rubric, render_absolute, render_pairwise
    from judge.rubric.templates import render_limits
    from judge.run import finish_run, prepare_run, run_pipeline
    from judge.run.evaluate import Result, calibrate, compare, evaluate
    from judge.store.run_store import RunStore
    from judge.store.rundir import RunDir

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
