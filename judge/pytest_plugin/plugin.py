"""What pytest loads (`[project.entry-points.pytest11] judge`): the `--judge-run-dir` option
and the `judge_eval` fixture. Loaded by every pytest session where the package is installed,
so it imports nothing of the pipeline until a test asks for the fixture.

    def test_the_new_bot_is_better(judge_eval):
        run = judge_eval("evals/support.yaml")
        run.require("bot-new", over="bot-old", at_least=0.5)

The runs live under pytest's cache directory (`.pytest_cache/d/judge/`, which `--cache-clear`
empties) unless `--judge-run-dir` or the `judge_run_dir` ini key say otherwise; keep that
directory between CI runs and a run with unchanged inputs sends no request.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from judge.pytest_plugin.judged import JudgeEval

_RUN_DIR_HELP = (
    "Directory of the judge's run dirs and response cache (default: pytest's cache dir, "
    ".pytest_cache/d/judge)."
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("judge", "judge-pipeline: gates judged by the pipeline")
    group.addoption("--judge-run-dir", dest="judge_run_dir", metavar="DIR", help=_RUN_DIR_HELP)
    parser.addini("judge_run_dir", _RUN_DIR_HELP + " Relative to the ini file.", default="")


def run_root(config: pytest.Config) -> Path:
    """Where `judge_eval` keeps its runs: `--judge-run-dir` (relative to where pytest was
    started), else the ini key (relative to the ini file), else pytest's cache dir."""
    given = config.getoption("judge_run_dir")
    if given:
        return (config.invocation_params.dir / given).resolve()
    ini = str(config.getini("judge_run_dir") or "")
    if ini:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return (base / ini).resolve()
    cache = getattr(config, "cache", None)
    if cache is None:
        raise pytest.UsageError(
            "judge_eval keeps its runs in pytest's cache dir, and the cache provider is "
            "disabled (-p no:cacheprovider): give --judge-run-dir DIR"
        )
    return Path(cache.mkdir("judge"))


@pytest.fixture(scope="session")
def judge_eval(pytestconfig: pytest.Config) -> JudgeEval:
    """`judge_eval(config, items=, responses=, labels=, columns=, max_cost_usd=)`: the
    arguments of `judge.evaluate`, relative paths against pytest's rootdir. Returns a
    `JudgedRun`: `.require(system, over=, at_least=)` asserts on the lower bound of the win
    rate, `.win_rate(system, over=)` gives the bound, `.result` the `judge.Result`."""
    from judge.pytest_plugin.judged import JudgeEval

    return JudgeEval(run_root(pytestconfig), base=pytestconfig.rootpath)
