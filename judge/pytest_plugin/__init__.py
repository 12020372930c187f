"""The pytest plugin (entry point `pytest11: judge`): a `judge_eval` fixture that judges a
system's outputs with the pipeline and gates on the lower confidence bound of its win rate,
calibrated against human labels when they are given. An edge, like the CLI and the service:
it turns the library's typed outcome into an assertion, and holds no statistics of its own.
"""

from judge.exports import lazy_exports

_EXPORTS = {
    "JudgeEval": "judge.pytest_plugin.judged",
    "JudgedRun": "judge.pytest_plugin.judged",
    "gate_message": "judge.pytest_plugin.judged",
    "WinRateBound": "judge.summary.lower_bound",
    "win_rate_bound": "judge.summary.lower_bound",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
