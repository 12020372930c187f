"""Scrubbing speed: responses/s on a realistic mix, measured side by side in one run.

The mix is the bundled MT-Bench answers (930 assistant turns of 6 systems; turn 2 carries
turn 1 as context, as the pipeline sees it), repeated to --responses. Three variants:

* `mt-bench`: the answers as they are (about 1% contain a marker);
* `marker-heavy`: every 10th response gets a self-identification, a signature and a family
  name appended, so the slow path (regex passes) runs on 10% of responses;
* `blind_responses`: the end-to-end call on the plain mix (scrubbing + HMAC ids + records +
  shuffle), which is what a run pays per response.

    .venv/bin/python bench/scrub_speed.py [--responses 100000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

from judge.blinding import blind_responses, new_secret
from judge.scrubber import Scrubber
from judge.types import ChatMessage, Response

_DATA = Path(__file__).resolve().parents[1] / "data" / "mt_bench" / "judged_answers.jsonl.gz"
_MARKERS = (
    "\n\nI am ChatGPT, a large language model trained by OpenAI. Meta's Llama 2 would agree."
    "\n\nBest regards,\nClaude"
)


def _base() -> list[Response]:
    responses = []
    with gzip.open(_DATA, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            q1, a1, q2, a2 = (t["content"] for t in row["turns"])
            item = str(row["question_id"])
            responses.append(Response(item_id=f"{item}-1", system=row["model"], output=a1))
            responses.append(
                Response(
                    item_id=f"{item}-2",
                    system=row["model"],
                    output=a2,
                    context=(
                        ChatMessage(role="user", content=q1),
                        ChatMessage(role="assistant", content=a1),
                        ChatMessage(role="user", content=q2),
                    ),
                )
            )
    return responses


def _mix(base: list[Response], n: int, *, heavy: bool) -> list[Response]:
    out = []
    for i in range(n):
        r = base[i % len(base)]
        # Distinct ids so blind_responses accepts the repeated mix.
        output = r.output + _MARKERS if heavy and i % 10 == 0 else r.output
        out.append(r.model_copy(update={"item_id": f"{r.item_id}#{i}", "output": output}))
    return out


def _scrub_all(scrubber: Scrubber, responses: list[Response]) -> int:
    markers = 0
    for r in responses:
        markers += scrubber.scrub(r.output)[1].total()
        for m in r.context:
            if m.role == "assistant":
                markers += scrubber.scrub(m.content)[1].total()
    return markers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--responses", type=int, default=100_000)
    args = parser.parse_args()
    base = _base()
    systems = sorted({r.system for r in base})
    start = time.perf_counter()
    scrubber = Scrubber(systems)
    build_ms = (time.perf_counter() - start) * 1000
    chars = sum(len(r.output) + sum(len(m.content) for m in r.context) for r in base) / len(base)
    print(f"Scrubber({len(systems)} systems) built in {build_ms:.0f} ms")
    print(f"mix: {len(base)} distinct MT-Bench responses, {chars:.0f} chars each on average")
    print(f"{'variant':<22}{'responses':>10}{'markers':>9}{'seconds':>9}{'responses/s':>13}")
    for name, heavy in (("mt-bench", False), ("marker-heavy", True)):
        mix = _mix(base, args.responses, heavy=heavy)
        start = time.perf_counter()
        markers = _scrub_all(scrubber, mix)
        dt = time.perf_counter() - start
        print(f"{name:<22}{len(mix):>10}{markers:>9}{dt:>9.2f}{len(mix) / dt:>13,.0f}")
    mix = _mix(base, args.responses, heavy=False)
    start = time.perf_counter()
    _, _, report = blind_responses(mix, secret=new_secret(), seed=1, scrubber=scrubber)
    dt = time.perf_counter() - start
    name = "blind_responses"
    print(f"{name:<22}{len(mix):>10}{report.total:>9}{dt:>9.2f}{len(mix) / dt:>13,.0f}")


if __name__ == "__main__":
    main()
