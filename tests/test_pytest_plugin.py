"""The pytest plugin (issue 34, item 3): a `judge_eval` fixture, found by pytest through the
package's `pytest11` entry point, judges a system's outputs with `judge.evaluate` and gates on
the lower confidence bound of its win rate (the human-corrected estimate when labels are
given), never the point estimate; its runs persist in pytest's cache dir, so a second session
with unchanged inputs sends no request.

The sample project is a directory `pytester` makes, run by pytest in a subprocess as a user's
CI would run it; its judge is a simulator this test started, which counts what it served.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml

from judge.config.simulator import SimulatorConfig
from judge.errors import ConfigError
from judge.pytest_plugin import JudgedRun, win_rate_bound
from judge.run.evaluate import Result
from judge.simulator.fixture import SimulatorHandle, running_simulator
from judge.store.rundir import RunDir
from tests.helpers import REPO
from tests.support_bots import ITEMS, bots_config, write_bots

pytest_plugins = ["pytester"]

SAMPLE_TESTS = """
def test_bot_new_beats_bot_old(judge_eval):
    judge_eval("judge.yaml").require("bot-new", over="bot-old", at_least=0.8)


def test_bot_close_beats_bot_old(judge_eval):
    judge_eval("judge.yaml").require("bot-close", over="bot-old", at_least=0.5)
"""


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorHandle]:
    with running_simulator(SimulatorConfig(seed=1)) as handle:
        yield handle


def _failure(text: str) -> list[str]:
    """The failed gate's message as pytest printed it (its `E   ` lines)."""
    return [line[4:].strip() for line in text.splitlines() if line.startswith("E   ")]


def test_a_sample_project_passes_and_fails_on_the_lower_bound_and_a_rerun_sends_nothing(
    pytester: pytest.Pytester, sim: SimulatorHandle
) -> None:
    write_bots(pytester.path)
    judge = {"model": "openai/sim-judge", "base_url": sim.openai_base_url, "transport": "http"}
    (pytester.path / "judge.yaml").write_text(yaml.safe_dump(bots_config(judge)))
    pytester.makepyfile(test_bots=SAMPLE_TESTS)

    sim.reset()
    first = pytester.runpytest_subprocess()
    first.assert_outcomes(passed=1, failed=1)
    assert "FAILED test_bots.py::test_bot_close_beats_bot_old" in first.stdout.str()
    # Two pairs (each bot against bot-old) on every item, both orders, one judge; the two
    # tests share one run.
    assert sim.stats()["requests"] == 2 * 2 * ITEMS

    message = _failure(first.stdout.str())
    report = Path(next(m for line in message if (m := line.removeprefix("report: ")) != line))
    runs = pytester.path / ".pytest_cache" / "d" / "judge"
    assert report.parent.parent == runs and report.is_file()
    summary = RunDir(report.parent).read_summary()
    bound = win_rate_bound(summary, "bot-close", "bot-old")
    # Planted: better on 3 items of 5. The estimate clears 0.5, its lower bound does not.
    assert bound.source == "judge" and bound.ci_low is not None and bound.ci_high is not None
    assert bound.ci_low < 0.5 < bound.estimate  # type: ignore[operator]
    assert message[:3] == [
        "AssertionError: judge gate failed: win rate of bot-close over bot-old: lower bound "
        f"{bound.ci_low:.3f} < 0.500 required",
        f"estimate {bound.estimate:.3f}, 95% interval [{bound.ci_low:.3f}, {bound.ci_high:.3f}]",
        "from openai/sim-judge's verdicts, paired bootstrap over items (percentile, 1000 "
        f"resamples), {ITEMS} items; not calibrated against human labels (give labels= to gate "
        "on the corrected estimate)",
    ]
    assert message[3].startswith("the estimate alone would pass: the gate reads the interval's")
    # The interval is the paired comparison's, read on the win-rate scale.
    pair = next(c for c in summary.analysed().comparison.comparisons if c.a == "bot-close")
    assert (pair.b, bound.ci_low, bound.estimate) == (
        "bot-old",
        (1 + pair.ci_low) / 2,  # type: ignore[operator]
        (1 + pair.mean_diff) / 2,
    )
    new = win_rate_bound(summary, "bot-new", "bot-old")
    assert new.ci_low is not None and new.ci_low >= 0.8
    # Asked the other way round: one minus it, the bounds swapped.
    back = win_rate_bound(summary, "bot-old", "bot-close")
    assert (back.estimate, back.ci_low, back.ci_high) == pytest.approx(
        (1 - bound.estimate, 1 - bound.ci_high, 1 - bound.ci_low)  # type: ignore[operator]
    )

    # A second session, nothing changed: the same outcomes and message, no request sent.
    sim.reset()
    again = pytester.runpytest_subprocess()
    again.assert_outcomes(passed=1, failed=1)
    assert sim.stats()["requests"] == 0
    assert _failure(again.stdout.str()) == message

    # bot-close's replies reworded: a run dir of its own; the response cache beside the run
    # dirs answers bot-new's pair, so only bot-close's is judged again.
    write_bots(pytester.path, changed="bot-close")
    sim.reset()
    changed = pytester.runpytest_subprocess()
    changed.assert_outcomes(passed=1, failed=1)
    assert sim.stats()["requests"] == 2 * ITEMS
    assert len([p for p in runs.iterdir() if p.is_dir()]) == 2

    with pytest.raises(ConfigError, match="the run did not compare bot-new with bot-close"):
        win_rate_bound(summary, "bot-new", "bot-close")


def test_with_human_labels_the_gate_reads_the_corrected_estimate(demo: Path) -> None:
    """The MT-Bench demo is calibrated against the experts' votes: the bound is the PPI++
    estimate of what they would say, turned round when the pair is stored the other way."""
    rundir = RunDir(demo)
    summary = rundir.read_summary()
    calibration = summary.analysed().calibration
    assert calibration is not None
    stored = next(c for c in calibration.corrected if set(c.systems) == {"gpt-4", "claude-v1"})
    assert stored.systems == ["claude-v1", "gpt-4"] and stored.ci_low is not None

    behind = win_rate_bound(summary, "claude-v1", "gpt-4")
    ahead = win_rate_bound(summary, "gpt-4", "claude-v1")
    assert behind.source == ahead.source == "corrected"
    assert (behind.estimate, behind.ci_low, behind.ci_high, behind.n) == (
        stored.value,
        stored.ci_low,
        stored.ci_high,
        stored.n,
    )
    assert (ahead.estimate, ahead.ci_low, ahead.ci_high) == pytest.approx(
        (1 - stored.value, 1 - stored.ci_high, 1 - stored.ci_low)  # type: ignore[operator]
    )
    # Not the judge's own estimate: the labels moved it.
    judged = next(c for c in summary.analysed().comparison.comparisons if c.a == "gpt-4")
    assert ahead.estimate != pytest.approx((1 + judged.mean_diff) / 2)

    run = JudgedRun(Result(rundir, rundir.stored_config(), summary, exit_code=0))
    assert run.require("gpt-4", over="claude-v1", at_least=0.5) == ahead
    with pytest.raises(AssertionError) as failed:
        run.require("gpt-4", over="claude-v1", at_least=0.99)
    lines = str(failed.value).splitlines()
    assert lines[0].startswith("judge gate failed: win rate of gpt-4 over claude-v1: lower bound")
    assert lines[2] == (
        f"from the human-corrected estimate of recorded/gpt-4's verdicts ({stored.method}; "
        f"{stored.n} human-labelled of {stored.n_judged} judged)"
    )
    assert lines[-1] == f"report: {rundir.report_html}"

    with pytest.raises(ConfigError, match=r"gpt-5 is not a system of the run \(alpaca-13b, "):
        win_rate_bound(summary, "gpt-5", "gpt-4")


def test_the_run_dir_is_pytests_cache_unless_an_option_or_the_ini_says(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        def test_root(judge_eval):
            print("ROOT", judge_eval.root, "BASE", judge_eval.base)
        """
    )
    here = pytester.path.resolve()

    def roots(*args: str) -> tuple[str, str]:
        done = pytester.runpytest("-s", *args)
        done.assert_outcomes(passed=1)
        found = re.search(r"ROOT (\S+) BASE (\S+)", done.stdout.str())
        assert found is not None
        return found[1], found[2]

    assert roots() == (str(here / ".pytest_cache" / "d" / "judge"), str(here))
    assert roots("--judge-run-dir", "judged")[0] == str(here / "judged")
    pytester.makeini("[pytest]\njudge_run_dir = ci/judge\n")
    assert roots()[0] == str(here / "ci" / "judge")
    pytester.makeini("[pytest]\n")
    done = pytester.runpytest("-p", "no:cacheprovider")
    assert done.ret != 0
    assert "give --judge-run-dir DIR" in done.stdout.str() + done.stderr.str()


def test_pytest_finds_the_plugin_by_the_projects_entry_point() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]
    installed = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert declared["pytest11"] == {"judge": "judge.pytest_plugin.plugin"}
    assert installed["judge"] == "judge.pytest_plugin.plugin"
