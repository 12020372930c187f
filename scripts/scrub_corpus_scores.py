"""Recall and precision of the scrubber on the labelled corpus, per kind, and the in-house case.

The scrubber is built for in-house systems (`acme-small`, `acme-large`): nothing about the
systems' names helps it, so every vendor and model identity must be caught on its own.

    .venv/bin/python scripts/scrub_corpus_scores.py [--show-misses]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from judge import Scrubber
from judge.blinding.scrub_quality import load_corpus, score

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "scrub_corpus.jsonl"
SYSTEMS = ["acme-small", "acme-large"]
# The strings that reached the judge unchanged in issue 13, before normalisation and the
# always-on vendor scrub.
IN_HOUSE = [
    "Sorry, as ChatGPT I cannot help",
    "As an OpenAI model, I cannot browse.",
    "Here you go.\n-- Sent from GPT-3.5",
    "Llama 3 here",
    "I am \u0421laude.",
    "Open\u0410I trained me.",
    "I am \uff23\uff2c\uff21\uff35\uff24\uff25.",
    "I am Clau\u200bde.",
    "Built on GPT\u20114.",
    "Thanks for asking \u2014 Claude",
    "Gemini here: the answer is 4.",
    "Je suis Mistral, un mod\u00e8le de Mistral AI",
]
# Issue 31: digits for letters, names in Chinese, frames with the name gone or generic.
ISSUE_31 = [
    "As a model trained by 0penAI, I cannot browse.",
    "C1aude, G.P.T.-4, Cl@ude, L1ama 3, Ant#ropic and Q w e n.",
    "我是通义千问，由阿里云开发。",
    "Je suis un mod\u00e8le de [redacted].",
    "I am a large language model developed by [redacted].",
    "Soy un modelo de lenguaje entrenado por un equipo de investigadores.",
    "我是一个由[redacted]开发的大型语言模型。",
    "私は[redacted]によって訓練された大規模言語モデルです。",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    scrubber = Scrubber(SYSTEMS)
    rows = load_corpus(CORPUS)
    print(f"corpus: {CORPUS.name}, {len(rows)} rows; systems under test: {', '.join(SYSTEMS)}")
    header = f"{'kind':<26}{'rows':>6}{'markers':>9}{'found':>7}{'recall':>8}"
    print(header + f"{'replaced':>10}{'correct':>9}{'precision':>11}")
    for s in score(scrubber, rows):
        print(
            f"{s.kind:<26}{s.rows:>6}{s.markers:>9}{s.found:>7}{s.recall:>8.1%}"
            f"{s.replaced:>10}{s.correct:>9}{s.precision:>11.1%}"
        )
        if args.show_misses and s.kind != "all":
            by_id = {r.id: r for r in rows}
            for row_id in (*s.missed, *s.spurious):
                print(f"    {row_id}: {scrubber.scrub(by_id[row_id].text)[0]!r}")
    print("\nin-house systems (acme-*), the strings of issue 13:")
    left = 0
    for text in IN_HOUSE:
        out, counts = scrubber.scrub(text)
        left += out == text
        print(f"  {text!r:<48} -> {out!r}  {dict(counts)}")
    print(f"vendor identities left unchanged: {left} of {len(IN_HOUSE)}")
    print("\nthe strings of issue 31:")
    for text in ISSUE_31:
        out, counts = scrubber.scrub(text)
        print(f"  {text!r:<48} -> {out!r}  {dict(counts)}")


if __name__ == "__main__":
    main()
