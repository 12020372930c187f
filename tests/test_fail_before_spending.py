"""Every input a run reads after judging is checked before the first request (issue 31): a
mistake planted in the labels, a gate, a compare or calibration option, the canaries or the
published verdicts stops the run with an error naming it, and the simulator counts 0
requests. Before, a misspelt labels column failed after every request was paid."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge import load_config, prepare_run, run_pipeline
from judge.errors import ConfigError, DataError
from judge.simulator import SimulatorConfig, SimulatorHandle, simulator_fixture
from tests.test_runner import judge_entry, write_config, write_dataset

simulator = simulator_fixture(SimulatorConfig(seed=1), scope="module")

GOOD_LABELS = "item_id,system_a,system_b,winner\nq1,sys-a,sys-b,A\nq2,sys-b,sys-a,tie\n"


def _labels(root: Path, text: str, name: str = "labels.csv") -> str:
    path = root / name
    path.write_text(text)
    return str(path)


# Each case: the config keys it sets (given the test's directory) and what the error says.
CASES: dict[str, tuple[Callable[[Path], dict[str, Any]], str]] = {
    "labels column misspelt": (
        lambda r: {"calibration": {"human": _labels(r, GOOD_LABELS.replace("winner", "winer"))}},
        "lacks column(s) 'winner'",
    ),
    "labels of other systems": (
        lambda r: {
            "calibration": {"human": _labels(r, GOOD_LABELS.replace("sys-", "model-"))},
        },
        "none of which this run evaluates",
    ),
    "labels of the other kind": (
        lambda r: {"calibration": {"human": _labels(r, "item_id,system,score\nq1,sys-a,4\n")}},
        "the labels are absolute",
    ),
    "labels file missing": (
        lambda r: {"calibration": {"human": str(r / "nowhere.csv")}},
        "file not found",
    ),
    "gate syntax": (
        lambda r: {"compare": {"gates": ["ci_low(diff(sys-a, sys-b) >= 0"]}},
        "expected ')'",
    ),
    "gate naming an unknown system": (
        lambda r: {"compare": {"gates": ["ci_low(diff(sys-a, sys-c)) >= 0"]}},
        "unknown system 'sys-c'",
    ),
    "gate on scores in a pairwise run": (
        lambda r: {"compare": {"gates": ["score(sys-a) >= 3"]}},
        "score() needs a scores table",
    ),
    "compare stratum not an item column": (
        lambda r: {"compare": {"strata": ["categroy"]}},
        "compare.strata: 'categroy' is not an item column",
    ),
    "calibration stratum in neither table": (
        lambda r: {"calibration": {"human": _labels(r, GOOD_LABELS), "strata": ["categroy"]}},
        "calibration.strata: 'categroy'",
    ),
    "canaries against an unknown system": (
        lambda r: {"canaries": {"against": ["sys-c"]}},
        "canaries.against names sys-c",
    ),
    "published verdicts unreadable": (
        lambda r: {
            "calibration": {
                "human": _labels(r, GOOD_LABELS),
                "published": _labels(r, "item_id,system_a,winner\nq1,sys-a,A\n", "gpt4.csv"),
            }
        },
        "calibration.published",
    ),
}


def _config(root: Path, sim: SimulatorHandle, **overrides: Any) -> Path:
    items, responses = write_dataset(
        root, 6, {"sys-a": lambda i: f"Answer {i} from a.", "sys-b": lambda i: f"B says {i}."}
    )
    judges = [judge_entry(sim, "openai/sim-x")]
    return write_config(root, items, responses, judges=judges, **overrides)


@pytest.mark.parametrize("case", list(CASES))
def test_a_planted_mistake_stops_the_run_before_any_request(
    tmp_path: Path, simulator: SimulatorHandle, case: str
) -> None:
    simulator.reset()
    make, says = CASES[case]
    config = load_config(_config(tmp_path, simulator, **make(tmp_path)))
    with pytest.raises((ConfigError, DataError)) as caught:
        run_pipeline(config, tmp_path / "run")
    assert says in str(caught.value)
    assert simulator.stats()["requests"] == 0


def test_the_same_config_without_the_mistake_runs(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    """The control: every checked input present and right, the run judges and calibrates."""
    simulator.reset()
    labels = _labels(tmp_path, GOOD_LABELS)
    overrides = {
        "calibration": {"human": labels},
        "compare": {"gates": ["ci_low(diff(sys-a, sys-b)) >= -1"], "resamples": 200},
        "canaries": {"against": ["sys-b"]},
    }
    done = run_pipeline(load_config(_config(tmp_path, simulator, **overrides)), tmp_path / "run")
    assert simulator.stats()["requests"] > 0
    assert done.summary.analysed().calibration is not None


def test_labels_broken_after_prepare_stop_a_resumed_run(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    """A prepared run whose labels file was edited since: the inputs prepared are unchanged,
    so the prepare is not redone, and the labels are still checked before judging."""
    simulator.reset()
    labels = Path(_labels(tmp_path, GOOD_LABELS))
    path = _config(tmp_path, simulator, calibration={"human": str(labels)})
    prepare_run(load_config(path), tmp_path / "run")
    labels.write_text(GOOD_LABELS.replace("winner", "verdict"))
    with pytest.raises(DataError, match="lacks column"):
        run_pipeline(load_config(path), tmp_path / "run")
    assert simulator.stats()["requests"] == 0
