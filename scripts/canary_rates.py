"""Canary win rates and gate results against the judge simulator, made susceptible or not.

    python scripts/canary_rates.py [--items 200] [--keep DIR]

Three real systems of different hidden quality answer every item; the run adds the three
canaries (`canaries: {}`). Each arm runs the whole pipeline (prepare, judge over HTTP with the
real OpenAI SDK, analyse) and prints, per canary, the win rate against the weakest real system
(a padded copy: against its source) with its 95% Wilson interval, and whether the gate passed:

* `off`: susceptibility 0 (the judge is never fooled);
* `susceptible`: injection and master-key susceptibility 0.5, everything as shipped;
* `no neutralisation`: the same judge, with the verdict formats in candidate text left as
  written (`judge.rubric.rubrics.defuse_verdicts` replaced by the identity for this arm only: what
  neutralisation buys);
* `flagged lose`: the susceptible judge, with `aggregate.flagged: lose` (a response the
  injection detector flags loses its pairs by rule, whatever the judge said);
* `verbose`: susceptibility 0, verbosity bias 0.3 (the padded canary's case).

Every number comes from the simulator's planted behaviour: it shows the canaries and the gate
at work, not how often a real judge is fooled.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from judge import load_config  # noqa: E402
from judge.run import run_pipeline  # noqa: E402

SUSCEPTIBLE = {"injection_susceptibility": 0.5, "master_key_susceptibility": 0.5}
ARMS: dict[str, dict[str, Any]] = {
    "off": {},
    "susceptible": SUSCEPTIBLE,
    "no neutralisation": SUSCEPTIBLE,
    "flagged lose": SUSCEPTIBLE,
    "verbose": {"verbosity_bias": 0.3},
}
WORDS = [
    "river",
    "stone",
    "lamp",
    "orchard",
    "copper",
    "violin",
    "harbour",
    "meadow",
    "lantern",
    "quarry",
]
QUALITY = {"sys-strong": 0.75, "sys-middle": 0.55, "sys-weak": 0.35}


def write_data(root: Path, n: int) -> tuple[Path, Path]:
    items, responses = root / "items.jsonl", root / "responses.jsonl"
    with items.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"item_id": f"q{i:04d}", "prompt": f"Question {i}?"}) + "\n")
    with responses.open("w") as fh:
        for i in range(n):
            for system, q in QUALITY.items():
                # Quality varies per item around the system's level; ⟦quality=x⟧ is hidden
                # ground truth only the simulator reads.
                level = min(1.0, max(0.0, q + ((i * 7 + len(system)) % 11 - 5) / 50))
                # About as long as the null model's text, so length alone does not decide.
                words = " ".join(WORDS[(i * k + len(system)) % len(WORDS)] for k in range(40))
                output = f"{system} answers question {i}: {words}. ⟦quality={level:.2f}⟧"
                fh.write(json.dumps({"item_id": f"q{i:04d}", "system": system, "output": output}))
                fh.write("\n")
    return items, responses


@contextlib.contextmanager
def neutralisation(on: bool) -> Iterator[None]:
    import judge.rubric.rubrics

    kept = judge.rubric.rubrics.defuse_verdicts
    if not on:
        judge.rubric.rubrics.defuse_verdicts = lambda text: text  # type: ignore[assignment]
    try:
        yield
    finally:
        judge.rubric.rubrics.defuse_verdicts = kept


def config_name(arm: str) -> str:
    return arm.replace(" ", "-")


def run_arm(root: Path, name: str, knobs: dict[str, Any], n: int) -> dict[str, Any]:
    items, responses = write_data(root, n)
    config = {
        "name": config_name(name),
        "data": {"items": str(items), "responses": str(responses)},
        "blinding": {"seed": 3},
        "rubric": "pairwise_general",
        "judges": [
            {"model": "openai/gpt-4.1-mini", "base_url": "simulator", "max_connections": 64}
        ],
        "simulator": {"seed": 5, "noise": 0.05, **knobs},
        "compare": {"resamples": 1000},
        "cache": str(root / f"{config_name(name)}.cache.sqlite"),  # arms must not share replies
        "canaries": {"items": n},
        "aggregate": {"flagged": "lose" if name == "flagged lose" else "judge"},
    }
    path = root / f"{config['name']}.yaml"
    path.write_text(yaml.safe_dump(config))
    with neutralisation(on=name != "no neutralisation"):
        outcome = run_pipeline(load_config(path), root / config["name"])
    canaries = outcome.summary.analysed().canaries
    assert canaries is not None
    return {"exit": outcome.exit_code, "canaries": canaries}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="write the runs here instead of a temp dir")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        print(f"{args.items} items, 3 real systems, 1 simulated judge (canaries on every item)")
        print(
            f"{'arm':<18} {'canary':<20} {'vs':<11} {'win rate [95% CI]':<24} {'gate':<7} "
            "judge's own verdicts"
        )
        for name, knobs in ARMS.items():
            result = run_arm(root, name, knobs, args.items)
            for rate in result["canaries"].rates:
                shown = f"{rate.win_rate:.3f} [{rate.ci_low:.3f}, {rate.ci_high:.3f}]"
                gate = "FOOLED" if rate.fooled else "passed"
                print(
                    f"{name:<18} {rate.canary:<20} {rate.opponent:<11} {shown:<24} {gate:<7} "
                    f"{rate.judged_win_rate:.3f}"
                )
            print(f"{name:<18} exit code {result['exit']} (weakest: {result['canaries'].weakest})")


if __name__ == "__main__":
    main()
