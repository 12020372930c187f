"""The trust gate on public data and on simulated judges of known quality: one table of
decisions, then each case's reasons. `python scripts/gate_table.py [--resamples N]`.

* MT-Bench (Zheng et al. 2023): GPT-4 pair verdicts vs the expert votes, and the same verdicts
  shuffled across keys (`shuffled_judge`, the negative control).
* PandaLM (Wang et al. 2024): GPT-3.5's verdicts vs the three annotators of its 999-item test set
  ("garbage" replies are verdicts missing, counted by the join).
* LLMBar (Zeng et al. 2024), Natural + Adversarial (419 instances): GPT-4 and ChatGPT (Vanilla)
  vs the gold label; calibrate combines both presentation orders by the runner's rule. One gold
  label per instance: no human ceiling, so the stand-in question has not enough evidence.
* Simulated, 400 items x 3 humans each right 70%, 85% or 95% of the time: a perfect judge, a
  human-level judge (one more human), a random judge, and the perfect judge shuffled.
Also the spread of the human-level judge's ceiling-gap interval over seeds, which sets the
default margin (calibration/trust_gate.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from calibration.calibrate import CalibrationReport, calibrate, shuffled_judge  # noqa: E402
from calibration.labels import load_mt_bench  # noqa: E402
from calibration.simulate import SimulatedJudge, simulated_labels  # noqa: E402

DATA = REPO / "data"
PANDALM = {"1": "a", "2": "b", "Tie": "tie", "0": "tie"}


def mt_bench() -> tuple[pd.DataFrame, pd.DataFrame]:
    mt = DATA / "mt_bench"
    return load_mt_bench(mt / "human.jsonl", mt / "gpt4_pair.jsonl")


def pandalm() -> tuple[pd.DataFrame, pd.DataFrame]:
    with gzip.open(DATA / "pandalm" / "testset-v1.json.gz", "rt") as f:
        items = json.load(f)
    with gzip.open(DATA / "pandalm" / "gpt-3.5-turbo-testset-v1.json.gz", "rt") as f:
        verdicts = {row["idx"]: row["gpt_result"] for row in json.load(f)}
    keys = pd.DataFrame(
        {
            "item_id": [str(r["idx"]) for r in items],
            "system_a": [r["cmp_key"].split("_")[0] for r in items],
            "system_b": [r["cmp_key"].split("_")[1] for r in items],
        }
    )
    judge = keys.assign(winner=[PANDALM.get(verdicts[r["idx"]]) for r in items])
    human = pd.concat(
        keys.assign(winner=[PANDALM[str(r[f"annotator{k}"])] for r in items], annotator=f"a{k}")
        for k in (1, 2, 3)
    )
    return judge, human


def llmbar(evaluator: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = pd.read_csv(DATA / "llmbar" / "evaluator_verdicts.csv.gz", dtype=str)
    rows = rows[
        (rows.evaluator == evaluator)
        & (rows.strategy == "Vanilla_NoRules")
        & rows.subset.str.startswith("LLMBar/")
    ]
    keys = pd.DataFrame(
        {"item_id": (rows.subset + "#" + rows.idx).to_numpy(), "system_a": "1", "system_b": "2"}
    )
    winner = {"1": "a", "2": "b"}
    # Both presentation orders, already in the original numbering: calibrate combines them.
    judge = pd.concat(
        keys.assign(order=order, winner=rows[column].map(winner).to_numpy())
        for order, column in (("AB", "winner_swap_false"), ("BA", "winner_swap_true"))
    )
    human = keys.assign(winner=rows["label"].map(winner).to_numpy(), annotator="gold")
    return judge, human


def cases(resamples: int) -> list[tuple[str, CalibrationReport]]:
    out = []

    def run(name: str, judge: pd.DataFrame, human: pd.DataFrame, seed: int = 0) -> None:
        report = calibrate(judge, human, kind="pairwise", resamples=resamples, seed=seed)
        out.append((name, report))

    judge, human = mt_bench()
    run("MT-Bench GPT-4 vs experts", judge, human)
    run("MT-Bench GPT-4 shuffled", shuffled_judge(judge, kind="pairwise", seed=1), human)
    run("PandaLM GPT-3.5 vs 3 annotators", *pandalm())
    for evaluator in ("GPT-4", "ChatGPT"):
        run(f"LLMBar {evaluator} vs gold", *llmbar(evaluator))
    kinds: tuple[SimulatedJudge, ...] = ("perfect", "human-level", "random")
    for accuracy in (0.70, 0.85, 0.95):
        for kind in kinds:
            judge, human = simulated_labels(400, [accuracy] * 3, kind, seed=1)
            run(f"sim {kind} judge, humans {accuracy:.0%}", judge, human, seed=1)
        judge, human = simulated_labels(400, [accuracy] * 3, "perfect", seed=1)
        shuffled = shuffled_judge(judge, kind="pairwise", seed=2)
        run(f"sim perfect judge shuffled, humans {accuracy:.0%}", shuffled, human, seed=1)
    # With humans right 95% of the time their alpha (~0.83) sits near 0.8: at 400 items its
    # lower bound may fall short; 1,200 items establish it.
    for kind in ("perfect", "human-level"):
        judge, human = simulated_labels(1200, [0.95] * 3, kind, seed=1)  # type: ignore[arg-type]
        run(f"sim {kind} judge, humans 95%, 1200 items", judge, human, seed=1)
    return out


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def table(reports: list[tuple[str, CalibrationReport]]) -> str:
    head = (
        f"| {'case':<46} | keys | judge alpha | gap to humans [95%]     | alt-test w     | "
        "human alpha | stand-in            | labels     | decision    |"
    )
    lines = [head, "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|"]
    for name, r in reports:
        g = r.gate
        alpha = r.overall.metrics["alpha"]
        gap = g.stand_in.non_inferiority.gap
        shown_gap = (
            "-" if gap is None else f"{_num(gap.value)} [{_num(gap.ci_low)}, {_num(gap.ci_high)}]"
        )
        alt = g.stand_in.annotators
        omega = (
            (
                alt.status
                if alt is None or alt.winning_rate is None
                else f"{alt.winning_rate:.2f} ({len(alt.annotators)})"
            )
            if alt is not None
            else "-"
        )
        human = g.labels.human_alpha
        lines.append(
            f"| {name:<46} | {r.overall.keys:>4} | {_num(alpha.value):>11} | {shown_gap:<23} | "
            f"{omega:<14} | {_num(human.value if human else None):>11} | "
            f"{g.stand_in.outcome:<19} | {g.labels.outcome:<10} | {g.verdict:<11} |"
        )
    return "\n".join(lines)


def margin_spread(seeds: int, resamples: int) -> str:
    """For a human-level judge (400 items x 3 humans, over seeds): the half-width of the
    ceiling gap's 95% interval, how often its lower bound clears -0.05 and -0.10, and how often
    the gate calls it human-level (both tests) and never untrusted."""
    lines = ["", f"Human-level judge, 400 items x 3 humans, {seeds} seeds"]
    for accuracy in (0.70, 0.85, 0.95):
        widths, lows, human_level, untrusted = [], [], 0, 0
        for seed in range(seeds):
            judge, human = simulated_labels(400, [accuracy] * 3, "human-level", seed=100 + seed)
            report = calibrate(judge, human, kind="pairwise", resamples=resamples, seed=seed)
            g = report.overall.ceiling.alpha_gap  # type: ignore[union-attr]
            widths.append((g.ci_high - g.ci_low) / 2)  # type: ignore[operator]
            lows.append(g.ci_low)
            human_level += report.gate.stand_in.outcome == "human-level"
            untrusted += report.gate.verdict == "untrusted"
        lows_a = np.array(lows)
        lines.append(
            f"  humans {accuracy:.0%}: gap half-width {np.mean(widths):.3f} "
            f"({min(widths):.3f}-{max(widths):.3f}); lower bound >= -0.05 in "
            f"{np.mean(lows_a >= -0.05):.0%}, >= -0.10 in {np.mean(lows_a >= -0.10):.0%}; "
            f"stand-in human-level in {human_level / seeds:.0%}, untrusted in "
            f"{untrusted / seeds:.0%}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--margin-seeds", type=int, default=40)
    args = parser.parse_args()
    reports = cases(args.resamples)
    print(table(reports))
    for name, r in reports:
        print(f"\n{name}: {r.gate.verdict.upper()}")
        for title, messages in (("why not better", r.gate.reasons), ("passed", r.gate.passed)):
            for m in messages:
                print(f"  {title}: {m}")
        for m in r.gate.notes:
            print(f"  note: {m}")
    print(margin_spread(args.margin_seeds, min(args.resamples, 500)))


if __name__ == "__main__":
    main()
