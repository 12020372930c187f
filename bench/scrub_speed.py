"""Scrubbing speed: responses/s on a realistic mix, measured side by side in one run.

The mix is the bundled MT-Bench answers (930 assistant turns of 6 systems; turn 2 carries
turn 1 as context, as the pipeline sees it), repeated to --responses. Three variants:

* `mt-bench`: the answers as they are (about 1% contain a marker);
* `marker-heavy`: every 10th response gets a self-identification, a signature and a family
  name appended, so the slow path (regex passes) runs on 10% of responses;
* `blind_responses`: the end-to-end call on the plain mix (scrubbing + HMAC ids + records +
  shuffle), which is what a run pays per response.

    .venv/bin/python bench/scrub_speed.py [--responses 100000] [--baseline-ref main]

With `--baseline-ref REF`, the same measurement also runs on the scrubber of git commit REF
(exported to a temporary directory, run in a subprocess, interleaved with this tree's runs)
and the table prints both side by side with their ratio.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

from judge import Scrubber, blind_responses, new_secret
from judge.types import ChatMessage, Response

_ROOT = Path(__file__).resolve().parents[1]
_DATA = _ROOT / "data" / "mt_bench" / "judged_answers.jsonl.gz"
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


def _measure(n: int) -> dict[str, tuple[int, float]]:
    """Variant -> (markers, seconds) on this interpreter's `judge`."""
    base = _base()
    scrubber = Scrubber(sorted({r.system for r in base}))
    out = {}
    for name, heavy in (("mt-bench", False), ("marker-heavy", True)):
        mix = _mix(base, n, heavy=heavy)
        start = time.perf_counter()
        markers = _scrub_all(scrubber, mix)
        out[name] = (markers, time.perf_counter() - start)
    mix = _mix(base, n, heavy=False)
    start = time.perf_counter()
    _, _, report = blind_responses(mix, secret=new_secret(), seed=1, scrubber=scrubber)
    out["blind_responses"] = (report.total, time.perf_counter() - start)
    return out


def _baseline(ref: str, n: int, workdir: Path) -> dict[str, tuple[int, float]]:
    archive = subprocess.run(
        ["git", "-C", str(_ROOT), "archive", ref, "judge", "calibration"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(workdir, filter="data")
    env = {**os.environ, "PYTHONPATH": str(workdir)}
    out = subprocess.run(
        [sys.executable, __file__, "--responses", str(n), "--json"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    return {k: (v[0], v[1]) for k, v in json.loads(out.splitlines()[-1]).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--baseline-ref", help="git commit to compare with, e.g. main")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(_measure(args.responses)))
        return
    base = _base()
    systems = sorted({r.system for r in base})
    start = time.perf_counter()
    Scrubber(systems)
    build_ms = (time.perf_counter() - start) * 1000
    chars = sum(len(r.output) + sum(len(m.content) for m in r.context) for r in base) / len(base)
    print(f"Scrubber({len(systems)} systems) built in {build_ms:.0f} ms")
    print(f"mix: {len(base)} distinct MT-Bench responses, {chars:.0f} chars each on average")
    if not args.baseline_ref:
        print(f"{'variant':<22}{'responses':>10}{'markers':>9}{'seconds':>9}{'responses/s':>13}")
        for name, (markers, dt) in _measure(args.responses).items():
            rate = args.responses / dt
            print(f"{name:<22}{args.responses:>10}{markers:>9}{dt:>9.2f}{rate:>13,.0f}")
        return
    # Interleaved (baseline, this tree, baseline, this tree) so drift on a shared machine
    # hits both; the best of two runs each.
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for _ in range(2):
            runs.append(
                (_baseline(args.baseline_ref, args.responses, Path(tmp)), _measure(args.responses))
            )
    ref = args.baseline_ref
    print(
        f"{'variant':<18}{'responses':>10}{'markers ' + ref:>16}{'markers here':>14}"
        f"{'resp/s ' + ref:>16}{'resp/s here':>13}{'here/' + ref:>12}"
    )
    for name in runs[0][0]:
        old_m, old_t = runs[0][0][name][0], min(r[0][name][1] for r in runs)
        new_m, new_t = runs[0][1][name][0], min(r[1][name][1] for r in runs)
        n = args.responses
        print(
            f"{name:<18}{n:>10}{old_m:>16}{new_m:>14}{n / old_t:>16,.0f}{n / new_t:>13,.0f}"
            f"{old_t / new_t:>12.2f}"
        )


if __name__ == "__main__":
    main()
