"""Streaming 1M responses: throughput and peak RSS of `iter_responses`, against file size.

Writes one responses table per format (JSONL, CSV, Parquet) into a temporary directory, then
streams each through `judge.inputs.tables.iter_responses` in a fresh process (peak RSS is a
per-process high-water mark) and, for contrast, materialises the JSONL table with
`load_responses`. Prints rows/s and peak RSS next to the file size.

    .venv/bin/python bench/load_memory.py [--rows 1000000] [--chunk-rows 50000]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

_WORDS = re.findall(
    r"[a-z]+",
    "the model answer shows a clear step by step reasoning about data cost latency and "
    "quality of results for every user who asks a question in plain words",
)


def _rows(count: int, seed: int = 0) -> Iterator[dict[str, object]]:
    """Responses of 1,000 systems to count/1000 items, outputs of 10-110 words (~360 B)."""
    rng = random.Random(seed)
    systems = 1_000
    for index in range(count):
        words = rng.choices(_WORDS, k=rng.randint(10, 110))
        yield {
            "item_id": f"q{index // systems}",
            "system": f"system-{index % systems}",
            "output": " ".join(words),
            "latency_s": round(rng.uniform(0.1, 9.0), 3),
            "cost_usd": round(rng.uniform(0.0, 0.01), 6),
            "tokens": len(words) * 4 // 3,
        }


def _paths(directory: Path) -> dict[str, Path]:
    return {
        "jsonl": directory / "responses.jsonl",
        "csv": directory / "responses.csv",
        "parquet": directory / "responses.parquet",
    }


def _write_all(directory: Path, count: int) -> None:
    """Runs in a child process, like the measurements (see `main`). The Parquet file is
    written as pandas' `to_parquet` writes it: one row group of up to 1Mi rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = _paths(directory)
    fields = ["item_id", "system", "output", "latency_s", "cost_usd", "tokens"]
    columns: dict[str, list[object]] = {name: [] for name in fields}
    with (
        paths["jsonl"].open("w", encoding="utf-8") as jsonl_file,
        paths["csv"].open("w", encoding="utf-8", newline="") as csv_file,
    ):
        writer = csv.DictWriter(csv_file, fieldnames=fields)
        writer.writeheader()
        for row in _rows(count):
            jsonl_file.write(json.dumps(row) + "\n")
            writer.writerow(row)
            for name in fields:
                columns[name].append(row[name])
    pq.write_table(pa.table(columns), paths["parquet"])


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(path: Path, count: int, chunk_rows: int, materialise: bool) -> None:
    """Runs in a child process; prints one JSON line of measurements."""
    from judge import iter_responses, load_responses

    items = {f"q{index}" for index in range((count + 999) // 1000)}
    baseline = _peak_rss_mb()
    start = time.perf_counter()
    if materialise:
        loaded = len(load_responses(path, items))
    else:
        loaded = sum(1 for _ in iter_responses(path, items, chunk_rows=chunk_rows))
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {"rows": loaded, "seconds": seconds, "baseline_mb": baseline, "peak_mb": _peak_rss_mb()}
        )
    )


def _run_child(path: Path, count: int, chunk_rows: int, materialise: bool) -> dict[str, float]:
    command = [sys.executable, __file__, "--measure", str(path), "--rows", str(count)]
    command += ["--chunk-rows", str(chunk_rows)] + (["--materialise"] if materialise else [])
    result = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--chunk-rows", type=int, default=50_000)
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--materialise", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write is not None:
        _write_all(args.write, args.rows)
        return
    if args.measure is not None:
        _measure(args.measure, args.rows, args.chunk_rows, args.materialise)
        return

    # ru_maxrss survives exec, so a child starts with its parent's high-water mark: this
    # process stays small (no pandas, no data) and leaves the writing to a child too.
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp:
        start = time.perf_counter()
        command = [sys.executable, __file__, "--write", tmp, "--rows", str(args.rows)]
        subprocess.run(command, check=True)
        print(f"wrote {args.rows:,} responses per format in {time.perf_counter() - start:.0f} s")
        print(
            f"chunk_rows={args.chunk_rows:,}; base RSS = after imports, in each child "
            f"(parent: {_peak_rss_mb():.0f} MB); RSS in MiB"
        )
        print(
            f"{'format':<22}{'file MiB':>9}{'rows/s':>10}{'seconds':>9}"
            f"{'base RSS':>10}{'peak RSS':>10}{'peak-base':>11}{'/file':>7}"
        )
        paths = _paths(Path(tmp))
        runs = [(name, path, False) for name, path in paths.items()]
        runs.append(("jsonl, load_responses", paths["jsonl"], True))
        for name, path, materialise in runs:
            result = _run_child(path, args.rows, args.chunk_rows, materialise)
            if result["rows"] != args.rows:
                raise SystemExit(f"{name}: loaded {result['rows']} of {args.rows} rows")
            size = path.stat().st_size / 2**20
            grown = result["peak_mb"] - result["baseline_mb"]
            print(
                f"{name:<22}{size:>9.0f}{result['rows'] / result['seconds']:>10,.0f}"
                f"{result['seconds']:>9.1f}{result['baseline_mb']:>10.0f}"
                f"{result['peak_mb']:>10.0f}{grown:>11.0f}{grown / size:>7.2f}"
            )


if __name__ == "__main__":
    main()
