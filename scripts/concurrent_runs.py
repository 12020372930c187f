"""Two or three `judge run` started at once on one run dir: is anything paid twice?

    python scripts/concurrent_runs.py [--latency 0.02]

For 2 and 3 simultaneous commands, on a fresh dir and on a prepared one: the exit codes, what the
refused ones print, and the simulator's count of answered requests against the distinct
requests of the run (issue 11: answered <= distinct + in flight, no traceback).
The judge is one simulated OpenAI-compatible endpoint over real HTTP; the data is the bundled
MT-Bench answers, every system against vicuna-13b-v1.2 in both orders.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from judge import RunDir  # noqa: E402
from judge.simulator import SimulatorConfig, running_simulator  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.02)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    root = Path(tempfile.mkdtemp(prefix="concurrent-runs-"))
    data = REPO / "data" / "mt_bench"
    failures = 0
    knobs = SimulatorConfig(seed=1, latency={"kind": "fixed", "median_s": args.latency})
    with running_simulator(knobs) as sim:
        for n in (2, 3):
            for state in ("fresh", "prepared"):
                sim.reset()
                case = root / f"{n}-{state}"
                case.mkdir()
                config = case / "config.yaml"
                config.write_text(
                    yaml.safe_dump(
                        {
                            "name": "concurrent",
                            "data": {
                                "items": str(data / "items.jsonl"),
                                "responses": str(data / "responses.jsonl.gz"),
                                "allow_empty_outputs": True,
                            },
                            "pairs": {"mode": "baseline", "baseline": "vicuna-13b-v1.2"},
                            "rubric": "pairwise_general",
                            "judges": [
                                {
                                    "model": "openai/sim-qwen",
                                    "family": "alibaba",
                                    "base_url": sim.openai_base_url,
                                    "transport": "http",
                                    "max_connections": 32,
                                }
                            ],
                        }
                    ),
                    encoding="utf-8",
                )
                rundir = RunDir(case / "run")
                cmd = [sys.executable, "-m", "judge.cli"]
                tail = [str(config), "--run-dir", str(rundir.path)]
                if state == "prepared":
                    subprocess.run(
                        [*cmd, "prepare", *tail], env=env, check=True, capture_output=True
                    )
                procs = [
                    subprocess.Popen(
                        [*cmd, "run", *tail, "--quiet"],
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    )
                    for _ in range(n)
                ]
                results = [(p.wait(), p.communicate()[1]) for p in procs]
                answered = sim.stats()["answered"]
                with rundir.open_store() as store:
                    counts = store.counts()
                codes = sorted(code for code, _ in results)
                refused = [err.strip() for code, err in results if code == 2]
                traceback = any("Traceback" in err for _, err in results)
                ok = (
                    codes == [0] + [2] * (n - 1)
                    and counts["pending"] == 0
                    and answered <= counts["requests"] + 32
                    and not traceback
                )
                failures += not ok
                print(
                    f"{n} runs, {state} dir: exit codes {codes}; {counts['requests']} distinct "
                    f"requests, simulator answered {answered}; pending {counts['pending']}"
                    f"{'' if ok else '  FAILED'}"
                )
                for message in sorted(set(refused)):
                    print(f"    refused: {message.replace(str(root), '<tmp>')}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
