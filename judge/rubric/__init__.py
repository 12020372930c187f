"""Rubrics: the YAML schema (`rubrics`), the prompt templates rendered from them
(`templates`), and reading a judge's reply back into a verdict (`parsing`, `verdict_forms`)."""

from judge.exports import lazy_exports

_EXPORTS = {
    "Rubric": "judge.rubric.rubrics",
    "Example": "judge.rubric.rubrics",
    "Provenance": "judge.rubric.rubrics",
    "NOTES_HEADING": "judge.rubric.rubrics",
    "load_rubric": "judge.rubric.rubrics",
    "builtin_rubrics": "judge.rubric.rubrics",
    "render_pairwise": "judge.rubric.rubrics",
    "render_absolute": "judge.rubric.rubrics",
    "parse_reply": "judge.rubric.parsing",
    "render_limits": "judge.rubric.templates",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
