"""`make test` time of two trees on a noisy machine: every test file run in one tree, then at
once in the other (alternating which goes first), so that drift in machine speed hits both
sides of each pair alike. Prints per-file and total times (pytest's own, and wall).

    python scripts/test_time_paired.py OLD_TREE [NEW_TREE] [--out times.jsonl]

OLD_TREE is a checkout (e.g. `git worktree add /tmp/old REV`); both trees run with this
interpreter and their own directory first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path


def _pytest_seconds(output: str) -> float | None:
    found = re.findall(r" in ([\d.]+)s", output)
    return float(found[-1]) if found else None


def _run(tree: Path, test_file: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tree)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return {
        "wall_s": time.perf_counter() - started,
        "pytest_s": _pytest_seconds(done.stdout),
        "rc": done.returncode,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=Path(__file__).parent.parent)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    files = sorted(
        {str(p.relative_to(t)) for t in trees.values() for p in t.glob("tests/**/test_*.py")}
    )
    totals = {name: {"wall_s": 0.0, "pytest_s": 0.0} for name in trees}
    sink = args.out.open("a", encoding="utf-8") if args.out else None
    for i, test_file in enumerate(files):
        order = ["old", "new"] if i % 2 == 0 else ["new", "old"]
        line = [f"{test_file:<45}"]
        for name in order:
            if not (trees[name] / test_file).exists():
                line.append(f"{name}: -")
                continue
            row = _run(trees[name], test_file)
            totals[name]["wall_s"] += row["wall_s"]
            totals[name]["pytest_s"] += row["pytest_s"] or 0.0
            line.append(f"{name}: {row['pytest_s']} s (rc {row['rc']})")
            if sink:
                sink.write(json.dumps({"file": test_file, "tree": name, **row}) + "\n")
                sink.flush()
        print("  ".join(line), flush=True)
    for name, total in totals.items():
        print(f"{name}: pytest {total['pytest_s']:.1f} s, wall {total['wall_s']:.1f} s")


if __name__ == "__main__":
    main()
