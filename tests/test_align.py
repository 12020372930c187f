"""Aligning how a judge's two orders are read with human labels (calibration.align, `judge
align`; issue 32, item 4, first part): a misreading planted in the data is learned on the
training items and gains on the held-out ones, with an interval above 0; shuffled training
labels gain nothing; nothing depends on which system a row names first; and on a real run the
command prints what it measured."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calibration.align import align, canonical_patterns, fit
from calibration.labels import normalise
from tests.helpers import run_cli_here as run_cli


def _planted(seed: int, items: int = 400) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One pair per item, named either way round at random (as a run's pairs are). The judge
    is right in both orders on half the keys; on the rest one order says `tie` and the other
    names a winner, and that winner is the WRONG one on 90% of those keys: the runner reads
    the pattern as a tie, the humans (3 per key, 90% right) as the other system, and a fitted
    rule should too."""
    rng = np.random.default_rng(seed)
    flip = {"a": "b", "b": "a", "tie": "tie"}
    truth = rng.choice(["a", "b"], size=items)
    other = np.array([flip[t] for t in truth])
    weak = rng.random(items) < 0.5
    named = np.where(rng.random(items) < 0.9, other, truth)  # the lone winner, mostly wrong
    tie_first = rng.random(items) < 0.5
    ab = np.where(weak, np.where(tie_first, "tie", named), truth)
    ba = np.where(weak, np.where(tie_first, named, "tie"), truth)
    swapped = rng.random(items) < 0.5
    judge = pd.DataFrame(
        {
            "item_id": [f"q{i}" for i in range(items)],
            "system_a": np.where(swapped, "y", "x"),
            "system_b": np.where(swapped, "x", "y"),
            # Named the other way round: labels swap, and so do the orders.
            "ab": [flip[b] if s else a for a, b, s in zip(ab, ba, swapped, strict=True)],
            "ba": [flip[a] if s else b for a, b, s in zip(ab, ba, swapped, strict=True)],
        }
    )
    votes = np.where(rng.random((items, 3)) < 0.9, truth[:, None], other[:, None])
    human = pd.DataFrame(
        {
            "item_id": np.repeat(judge["item_id"], 3),
            "system_a": "x",
            "system_b": "y",
            "winner": votes.ravel(),
            "annotator": np.tile(["h1", "h2", "h3"], items),
        }
    )
    return judge, normalise(human, "pairwise", "human")


def test_a_planted_misreading_is_learned_and_gains_on_held_out_items() -> None:
    judge, human = _planted(1)
    result = align(judge, human, seed=1, resamples=1000)
    assert result.train_keys + result.heldout_keys == 400
    assert result.alignment.rules.get(("a", "tie")) == "b"  # the lone winner read as the other
    assert result.gain > 0.1 and result.gain_low > 0
    # Shuffled training labels keep how often humans give each label and lose which pattern
    # they go with: whatever that rule gains comes from the frequencies alone (here: humans
    # never say tie, where the runner reads a lone winner beside a tie), and the fitted rule
    # gains more.
    assert result.gain > result.control_gain + 0.05
    print("\n".join(result.lines()))


def test_naming_a_pair_the_other_way_round_changes_nothing() -> None:
    """Rows written (y, x) with their labels and orders turned read as the same keys."""
    judge, human = _planted(2)
    flip = {"a": "b", "b": "a", "tie": "tie"}
    turned = judge.assign(
        system_a=judge["system_b"],
        system_b=judge["system_a"],
        ab=judge["ba"].map(flip),
        ba=judge["ab"].map(flip),
    )
    pd.testing.assert_frame_equal(canonical_patterns(judge), canonical_patterns(turned))
    one, two = (align(t, human, seed=3, resamples=500, gate=False) for t in (judge, turned))
    assert one == two


def test_a_pattern_that_is_its_own_mirror_keeps_the_runners_reading() -> None:
    """(a, b): each order picked the response shown first; any label but a tie would depend on
    which system is named first, however the humans voted."""
    patterns = [("a", "b")] * 50
    fitted = fit(patterns, ["a"] * 50)
    assert fitted.rules == {} and fitted.label(("a", "b")) == "tie"


def test_judge_align_on_a_run_prints_the_measurements(tmp_path: Path) -> None:
    from judge import load_config, run_pipeline
    from judge.simulator import SimulatorConfig, running_simulator
    from tests.test_runner import judge_entry, write_config, write_dataset

    items, responses = write_dataset(
        tmp_path, 40, {"x": lambda i: f"Answer {i} from x.", "y": lambda i: f"Y says {i}."}
    )
    labels = tmp_path / "labels.csv"
    rows = [f"q{i},x,y,{'a' if i % 3 else 'b'},h{k}" for i in range(40) for k in range(2)]
    labels.write_text("item_id,system_a,system_b,winner,annotator\n" + "\n".join(rows) + "\n")
    with running_simulator(SimulatorConfig(seed=4, position_bias=0.8)) as sim:
        config = write_config(
            tmp_path,
            items,
            responses,
            judges=[judge_entry(sim, "openai/sim-x")],
            calibration={"human": str(labels)},
            compare={"resamples": 200},
        )
        run_pipeline(load_config(config), tmp_path / "run")
    result = run_cli("align", str(tmp_path / "run"), "--seed", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("fitted on ") and "held-out keys (split by item, seed 3)" in lines[0]
    assert lines[2].startswith("held-out agreement with the human majority: ")
    assert "fitted on shuffled training labels" in lines[3] and "over 40 shuffles" in lines[3]
    assert lines[4].startswith("trust gate on the held-out keys: ")


def test_a_share_outside_0_and_1_is_refused() -> None:
    with pytest.raises(ValueError, match="share must lie between 0 and 1"):
        align(*_planted(3, items=20), share=1.0)
