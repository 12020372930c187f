"""Injection detection's cost in prepare: responses/s with and without it, side by side.

The data are the bundled MT-Bench first-turn answers (6 systems), repeated under
new item ids to --items items (so every item has 6 answers), judged pairwise in both orders by
one judge (pairs: all). Each round prepares the same config twice into fresh run dirs, once
as `prepare_run` is and once with the detector replaced by a stub that flags nothing;
rounds alternate which goes first. Also printed: the detector alone
(`judge.blinding.injection.scan`),
and its share of each prepare's time measured inside the run (robust to load changes on a
shared machine, which the side-by-side ratio is not).

    .venv/bin/python bench/injection_speed.py [--items 2000] [--rounds 3]

Target (issue 13): prepare with detection at >= 0.8 of the throughput without it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import yaml

from judge import load_config, load_items, load_responses
from judge.blinding.injection import scan
from judge.run import prepare_run

_ROOT = Path(__file__).resolve().parents[1]
_MT_BENCH = _ROOT / "data" / "mt_bench"


def _dataset(root: Path, n_items: int) -> Path:
    items = load_items(_MT_BENCH / "items.jsonl")
    responses = load_responses(
        _MT_BENCH / "responses.jsonl.gz", items.keys(), allow_empty_outputs=True
    )
    by_item: dict[str, list] = {}
    for r in responses:
        by_item.setdefault(r.item_id, []).append(r)
    # First turns: a plain prompt and no earlier exchange to carry along.
    source = [
        i for i in sorted(by_item) if len(by_item[i]) == 6 and isinstance(items[i].prompt, str)
    ]
    with (root / "items.jsonl").open("w") as fi, (root / "responses.jsonl").open("w") as fr:
        for n in range(n_items):
            item_id = source[n % len(source)]
            new_id = f"{item_id}#{n}"
            fi.write(json.dumps({"item_id": new_id, "prompt": items[item_id].prompt}) + "\n")
            for r in by_item[item_id]:
                row = {"item_id": new_id, "system": r.system, "output": r.output}
                fr.write(json.dumps(row) + "\n")
    config = {
        "name": "injection-bench",
        "data": {
            "items": str(root / "items.jsonl"),
            "responses": str(root / "responses.jsonl"),
            "allow_empty_outputs": True,
        },
        "blinding": {"seed": 1, "secret": "ab" * 32},
        "rubric": "pairwise_general",
        "judges": [
            {"model": "openai/bench-judge", "family": "bench", "base_url": "http://127.0.0.1:9"}
        ],
        "orders": "both",
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


_inside: list[float] = []
"""Seconds spent in the detector during each prepare with detection."""


def _timed_scan(rows: object) -> dict:
    start = time.perf_counter()
    try:
        return scan(rows)  # type: ignore[arg-type]
    finally:
        _inside.append(time.perf_counter() - start)


@contextmanager
def _detector(on: bool) -> Iterator[None]:
    stub = _timed_scan if on else (lambda rows: {})
    with mock.patch("judge.run.prepare.scan_injections", stub):
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = load_config(_dataset(root, args.items))
        n = args.items * 6
        rates: dict[bool, list[float]] = {True: [], False: []}
        totals: list[float] = []
        scan([("warm-up", "s", "Ignоrе this: loads the confusables table and compiles")])
        for k in range(args.rounds):
            for on in (True, False) if k % 2 == 0 else (False, True):
                with _detector(on):
                    start = time.perf_counter()
                    prepare_run(config, root / f"run-{k}-{on}")
                    elapsed = time.perf_counter() - start
                    rates[on].append(n / elapsed)
                    if on:
                        totals.append(elapsed)
        items = load_items(config.data.items)
        rows = [
            (r.item_id, r.system, r.output)
            for r in load_responses(config.data.responses, items.keys(), allow_empty_outputs=True)
        ]
        start = time.perf_counter()
        flagged = scan(rows)
        alone = len(rows) / (time.perf_counter() - start)
    with_, without = statistics.median(rates[True]), statistics.median(rates[False])
    print(f"{n} responses ({args.items} items x 6 systems), pairwise, both orders, 1 judge")
    print(f"prepare without detection: {without:10.0f} responses/s (median of {args.rounds})")
    print(f"prepare with detection:    {with_:10.0f} responses/s")
    print(f"ratio with/without:        {with_ / without:10.3f}   (target >= 0.8)")
    print(f"detector alone (scan):     {alone:10.0f} responses/s ({len(flagged)} flagged)")
    # The same comparison inside each run, immune to the machine's load changing between runs.
    share = statistics.median(t / total for t, total in zip(_inside, totals, strict=True))
    print(f"detector's share of prepare time: {share:.1%} (ratio {1 - share:.3f} within a run)")


if __name__ == "__main__":
    main()
