"""The panel frontier (calibration.panels) on LLMBar's bundled verdicts: every majority panel of
up to 3 of the 6 published evaluators (one strategy, both orders combined: agreeing orders give
that output, disagreeing ones a tie), its Krippendorff alpha with the gold labels (interval),
its cost relative to GPT-4 alone, the frontier, and the recommendation.

Cost per judgment: two requests (both orders) of ~500 input tokens (LLMBar's instruction and
outputs average 1,212 characters, plus the prompt) and ~8 output tokens, priced by
judge.judging.pricing from LiteLLM's table (gpt-4-0613, gpt-3.5-turbo-1106, Bedrock's Llama 2 70B
chat); ChatGPT-0301 at OpenAI's list price for gpt-3.5-turbo-0301 ($2 per million tokens in
and out), which the table lacks; PaLM 2 and Falcon have no price here: unknown, never 0.

    .venv/bin/python scripts/panels_llmbar.py [--strategy Vanilla_NoRules] [--subsets LLMBar]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from calibration.panels import panel_frontier  # noqa: E402
from judge import JudgeSpec  # noqa: E402
from judge.judging.pricing import price  # noqa: E402
from judge.types import Usage  # noqa: E402

PRICED = {
    "GPT-4": JudgeSpec(model="openai/gpt-4-0613"),
    "ChatGPT": JudgeSpec(model="openai/gpt-3.5-turbo-1106"),
    "ChatGPT-0301": JudgeSpec(
        model="openai/gpt-3.5-turbo-0301", input_cost_per_mtok=2.0, output_cost_per_mtok=2.0
    ),
    "LLaMA2": JudgeSpec(model="litellm/meta.llama2-70b-chat-v1"),
}
USAGE = Usage(input_tokens=500, output_tokens=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategy", default="Vanilla_NoRules")
    parser.add_argument("--subsets", default="LLMBar", help="prefix of the subsets to use")
    parser.add_argument("--max-size", type=int, default=3)
    args = parser.parse_args()
    d = pd.read_csv(REPO / "data" / "llmbar" / "evaluator_verdicts.csv.gz")
    d = d[d["subset"].str.startswith(args.subsets) & (d["strategy"] == args.strategy)].copy()
    d["unit"] = d["subset"] + "#" + d["idx"].astype(str)
    gold = dict(zip(d["unit"], d["label"].astype(int).astype(str), strict=True))

    def combined(a: float, b: float) -> str | None:
        if pd.isna(a) or pd.isna(b):
            return None  # an unparsable verdict: the judge abstains on this unit
        return str(int(a)) if a == b else "tie"

    orders = zip(d["winner_swap_false"], d["winner_swap_true"], strict=True)
    labels = [combined(a, b) for a, b in orders]
    verdicts = pd.DataFrame({"unit": d["unit"], "judge": d["evaluator"], "label": labels})
    costs: dict[str, float | None] = {j: None for j in verdicts["judge"].unique()}
    for judge, spec in PRICED.items():
        one = price(spec.model, USAGE, spec)
        costs[judge] = None if one is None else 2 * one
    frontier = panel_frontier(verdicts, gold, costs, max_size=args.max_size)
    unit = costs["GPT-4"] or 1.0
    print(
        f"LLMBar ({args.subsets}*, {frontier.units} pairs), strategy {args.strategy}: "
        f"{len(frontier.panels)} panels of up to {args.max_size}; best {'+'.join(frontier.best)}, "
        f"recommended {'+'.join(frontier.recommended or ('none',))}"
    )
    print(f"  {'panel':<34} {'alpha':>6} {'95% interval':>16} {'acc':>6} {'cost':>6}  frontier  p")
    for p in frontier.panels:
        cost = "?" if p.cost is None else f"{p.cost / unit:.3f}"
        interval = f"[{p.ci_low:.3f}, {p.ci_high:.3f}]" if p.ci_low is not None else ""
        print(
            f"  {'+'.join(p.judges):<34} {p.alpha or float('nan'):6.3f} {interval:>16} "
            f"{p.accuracy:6.3f} {cost:>6}  {'yes' if p.on_frontier else '':<8}  "
            f"{'' if p.p_vs_best is None else f'{p.p_vs_best:.3f}'}"
        )
    print("  cost: per judgment, relative to GPT-4 alone (? = no price)")


if __name__ == "__main__":
    main()
