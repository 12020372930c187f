"""One rate budget across the shards of a `--executor ray` run: a judge limited to N requests a
minute, judged by 2+ shard actors on a local Ray cluster, against a simulator that refuses
(429) anything over 1.1 N a minute. Printed: the requests the simulator received in each
second, their mean rate, and its 429s (0 when the budget held).

    .venv/bin/python scripts/ray_rate_limit.py [--rpm 600] [--requests 400] [--actors 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.synthetic import write_config, write_inputs  # noqa: E402
from judge import load_config  # noqa: E402
from judge.cluster import RayCluster  # noqa: E402
from judge.run import run_pipeline  # noqa: E402
from judge.simulator import SimulatorConfig, running_simulator  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rpm", type=float, default=600)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--actors", type=int, default=2)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ray-rate-"))
    n = args.requests // 4
    items, responses = write_inputs(root, n, text="Answer {i}, in a few words.")
    burst = max(1, round(args.rpm / 60 * 1.2))
    guard = SimulatorConfig(seed=1, latency={"median_s": 0.05}, rpm_capacity=args.rpm * 1.1,
                            rpm_burst=burst)  # fmt: skip
    with running_simulator(guard) as sim:
        judge = {
            "model": "openai/sim-alpha",
            "base_url": sim.openai_base_url,
            "requests_per_minute": args.rpm,
            "max_connections": 64,
        }
        config = write_config(root, "rate", items, responses, [judge])
        cluster = RayCluster(actors=args.actors, shard_requests=max(4, n // (4 * args.actors)))
        outcome = run_pipeline(load_config(config), root / "run", cluster=cluster)
        stats = sim.stats()
    seconds = sorted((int(s), c) for s, c in stats["requests_by_second"].items())
    start = seconds[0][0]
    span = seconds[-1][0] - start + 1
    print(f"limit {args.rpm:.0f}/minute = {args.rpm / 60:.1f}/s, {args.actors} shard actors:")
    print("  requests per second: " + " ".join(str(c) for _, c in seconds))
    print(
        f"  {stats['requests']} requests in {span} s: {stats['requests'] / span:.2f}/s; "
        f"whole seconds past the first: max {max(c for _, c in seconds[1:-1])}/s; "
        f"429s from the simulator's guard: {stats['by_outcome'].get('429', 0)}; "
        f"complete: {outcome.complete}"
    )


if __name__ == "__main__":
    main()
