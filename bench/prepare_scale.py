"""Prepare and blind at scale: wall time and peak memory of `judge prepare` and `judge blind`
at 10^4 .. 10^6 responses (10^7 with `--sizes` and the disk for it).

Generated data: N responses of 2 systems to N/2 items (outputs of 30-120 words, a category
per item), judged pairwise in both orders by one judge: N judge requests. Each measurement
runs in a fresh process (peak RSS is a per-process high-water mark, `ru_maxrss`) with a fresh
run dir; the interpreter and imports alone are printed as the baseline. Printed per size:
wall seconds, microseconds per response, peak RSS, and both relative to the smallest size
of at least 10^5 (the issue's "flat from 10^5 up").

    .venv/bin/python bench/prepare_scale.py [--sizes 10000,100000,1000000] [--only prepare]
        [--keep DIR]

Target (issue 15): peak RSS flat within 2x from 10^5 up and <= 1 GB at 10^6; time per
response flat within 1.5x.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORDS = re.findall(
    r"[a-z]+",
    "the model answer shows a clear step by step reasoning about data cost latency and "
    "quality of results for every user who asks a question in plain words",
)


def generate(directory: Path, responses: int, seed: int = 0) -> tuple[Path, Path]:
    """Items and responses tables (JSONL) of `responses` answers by 2 systems."""
    rng = random.Random(seed)
    items_path, responses_path = directory / "items.jsonl", directory / "responses.jsonl"
    # Written under temporary names and renamed when complete: `--keep` reuses the files, and
    # an interrupted generation must not leave a cut table behind to be measured.
    items_part, responses_part = (
        p.with_suffix(".jsonl.part") for p in (items_path, responses_path)
    )
    with items_part.open("w") as items, responses_part.open("w") as out:
        for i in range(responses // 2):
            prompt = " ".join(rng.choices(_WORDS, k=rng.randint(8, 30))) + "?"
            items.write(json.dumps({"item_id": f"q{i}", "prompt": prompt, "category": f"c{i % 8}"}))
            items.write("\n")
            for system in ("sys-a", "sys-b"):
                text = " ".join(rng.choices(_WORDS, k=rng.randint(30, 120)))
                out.write(json.dumps({"item_id": f"q{i}", "system": system, "output": text}))
                out.write("\n")
    items_part.replace(items_path)
    responses_part.replace(responses_path)
    return items_path, responses_path


def _config(directory: Path, items: Path, responses: Path) -> Path:
    path = directory / "config.yaml"
    path.write_text(
        json.dumps(
            {
                "name": "scale",
                "data": {"items": str(items), "responses": str(responses)},
                "blinding": {"seed": 7},
                "rubric": "pairwise_general",
                "judges": [
                    {
                        "model": "openai/sim-gpt",
                        "base_url": "http://127.0.0.1:9",
                        "transport": "http",
                    }
                ],
                "orders": "both",
            }
        )
    )
    return path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(what: str, directory: Path) -> None:
    """Runs in a fresh process: one prepare (or blind), one JSON line of measurements."""
    from judge import RunDir, load_config, prepare_run
    from judge.run.blind_tables import blind_tables

    baseline = _peak_mb()
    started, cpu = time.perf_counter(), time.process_time()
    if what == "imports":
        pass
    elif what == "prepare":
        prepare_run(load_config(directory / "config.yaml"), directory / "run")
    else:
        blind_tables(
            directory / "items.jsonl",
            directory / "responses.jsonl",
            RunDir(directory / "blinded"),
            seed=7,
            mode="all",
            baseline=None,
        )
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - started,
                "cpu_s": time.process_time() - cpu,
                "baseline_mb": baseline,
                "peak_mb": _peak_mb(),
            }
        )
    )


def measure(what: str, directory: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", what, "--dir", str(directory)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--only", choices=["prepare", "blind"], default=None)
    parser.add_argument("--keep", type=Path, help="generate data here and keep it")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.dir)
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    kinds = [args.only] if args.only else ["prepare", "blind"]
    root = args.keep or Path(tempfile.mkdtemp(prefix="prepare-scale-"))
    print(f"python {sys.version.split()[0]}; data in {root}")
    rows: dict[str, list[tuple[int, dict[str, float]]]] = {k: [] for k in kinds}
    try:
        for n in sizes:
            directory = root / f"n{n}"
            directory.mkdir(parents=True, exist_ok=True)
            if not (directory / "responses.jsonl").exists():
                items, responses = generate(directory, n)
            else:
                items, responses = directory / "items.jsonl", directory / "responses.jsonl"
            _config(directory, items, responses)
            for what in kinds:
                for stale in ("run", "blinded"):
                    shutil.rmtree(directory / stale, ignore_errors=True)
                result = measure(what, directory)
                rows[what].append((n, result))
                print(
                    f"{what:8} {n:>10,} responses: {result['seconds']:8.1f} s "
                    f"({1e6 * result['seconds'] / n:6.0f} us/response), peak RSS "
                    f"{result['peak_mb']:7.0f} MB (imports {result['baseline_mb']:.0f} MB)",
                    flush=True,
                )
            for stale in ("run", "blinded"):
                shutil.rmtree(directory / stale, ignore_errors=True)
        print()
        for what, measured in rows.items():
            reference = next(((n, r) for n, r in measured if n >= 100_000), measured[0])
            n0, r0 = reference
            print(f"{what}: relative to {n0:,} responses")
            for n, r in measured:
                per = (r["seconds"] / n) / (r0["seconds"] / n0)
                memory = r["peak_mb"] / r0["peak_mb"]
                print(
                    f"  {n:>10,}: time/response x{per:4.2f}, peak RSS x{memory:4.2f}"
                    f" ({r['peak_mb']:.0f} MB)"
                )
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
