"""After judging at scale: wall time and peak memory of `write_outputs` (the judgments files and
the unanalysed summary) and of the whole finish (`finish_run`: outputs, analysis, report) on
synthetic finished runs of N judge requests.

Generated run: N/4 items answered by 2 systems (outputs of 30-120 words), one pair per item
judged in both orders by 2 judges (so a panel too); the judges' replies are recorded straight
into the store (a verdict with a 40-word reasoning; 2% unparseable replies, 1% errors). The
run is prepared once per size, by the oldest code measured, and copied for each measurement;
each code opens its copy once (its migrations) before it is timed. Each measurement runs in a
fresh process (peak RSS is a per-process high-water mark, `ru_maxrss`); the interpreter with
the modules imported is printed as `base` (Linux starts a child's mark at its parent's, so
this process compares the files only once every child has run).

`--baseline-ref REF` measures the code at a git ref beside the working tree's: its `judge`,
`calibration` and `rubrics` are extracted (`git archive`) to a temporary directory, put first
on the children's PYTHONPATH, and both codes' judgments files are compared once written.

    .venv/bin/python bench/after_judging.py [--sizes 10000,50000,200000]
        [--baseline-ref REF] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_WORDS = re.findall(
    r"[a-z]+",
    "the model answer shows a clear step by step reasoning about data cost latency and "
    "quality of results for every user who asks a question in plain words",
)
_JUDGES = [
    {"model": "openai/sim-gpt", "base_url": "http://127.0.0.1:9", "transport": "http"},
    {"model": "anthropic/sim-claude", "base_url": "http://127.0.0.1:9"},
]


def generate(directory: Path, requests: int, seed: int = 0) -> None:
    """Items, responses and the config of a run of `requests` judge requests."""
    rng = random.Random(seed)
    items_path, responses_path = directory / "items.jsonl", directory / "responses.jsonl"
    with items_path.open("w") as items, responses_path.open("w") as out:
        for i in range(max(1, requests // 4)):
            prompt = " ".join(rng.choices(_WORDS, k=rng.randint(8, 30))) + "?"
            items.write(json.dumps({"item_id": f"q{i}", "prompt": prompt, "category": f"c{i % 8}"}))
            items.write("\n")
            for system in ("sys-a", "sys-b"):
                text = " ".join(rng.choices(_WORDS, k=rng.randint(30, 120)))
                out.write(json.dumps({"item_id": f"q{i}", "system": system, "output": text}))
                out.write("\n")
    config = {
        "name": "after-judging",
        "data": {"items": str(items_path), "responses": str(responses_path)},
        "blinding": {"seed": 7, "secret": "ab" * 32},
        "rubric": "pairwise_general",
        "judges": _JUDGES,
        "orders": "both",
        "compare": {"resamples": 1000, "seed": 1},
    }
    (directory / "config.yaml").write_text(json.dumps(config))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _record(run: Path, seed: int = 1) -> None:
    """Replies for every request, recorded as a runner would (batches of 500)."""
    from judge import RunDir
    from judge.types import JudgeResponse, ParseFailure, Usage, Verdict

    rng = random.Random(seed)
    with RunDir(run).open_store() as store:
        ids = [rid for (rid,) in store.connection.execute("SELECT request_id FROM judge_requests")]
        batch: list = []
        for rid in ids:
            draw = rng.random()
            usage = Usage(input_tokens=900, output_tokens=120)
            latency = 0.5 + rng.random() * 3
            if draw < 0.01:
                batch.append((JudgeResponse(request_id=rid, error="timeout", attempts=3), None))
            else:
                reasoning = " ".join(rng.choices(_WORDS, k=40))
                label = rng.choice(["A", "B", "tie"])
                text = json.dumps({"reasoning": reasoning, "verdict": label})
                parsed: Verdict | ParseFailure = (
                    ParseFailure(reason="no verdict found", excerpt=text[:80])
                    if draw < 0.03
                    else Verdict(label=label, reasoning=reasoning)  # type: ignore[arg-type]
                )
                response = JudgeResponse(
                    request_id=rid, text=text, usage=usage, cost_usd=0.001, latency_s=latency
                )
                batch.append((response, parsed))
            if len(batch) == 500:
                store.record_responses(batch)
                batch = []
        store.record_responses(batch)


def child(what: str, directory: Path) -> None:
    """Runs in a fresh process: one step, one JSON line of measurements."""
    import judge
    from judge import RunDir, finish_run, load_config
    from judge.run.outputs import write_outputs

    config = load_config(directory / "config.yaml")
    run = directory / "run"
    base = _peak_mb()
    started, cpu = time.perf_counter(), time.process_time()
    if what == "build":
        from judge import prepare_run

        prepare_run(config, RunDir(run))
        _record(run)
    elif what == "open":  # the code's migrations, before anything is timed
        RunDir(run).open_store().close()
    elif what == "outputs":
        write_outputs(config, RunDir(run))
    elif what == "finish":
        finish_run(config, RunDir(run))
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - started,
                "cpu_s": time.process_time() - cpu,
                "base_mb": base,
                "peak_mb": _peak_mb(),
                "code": str(Path(judge.__file__).parent.parent),
            }
        )
    )


def _run_child(what: str, directory: Path, code: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", what, "--dir", str(directory)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"{what} in {directory} with {code} failed:\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(found["code"]).resolve() != code.resolve():
        raise SystemExit(f"the child imported judge from {found['code']}, not {code}")
    return found


def _extract(ref: str, target: Path) -> Path:
    """The code at `ref` (judge, calibration, rubrics) in `target`; the repository is only
    read (`git archive`), no worktree is registered."""
    shutil.rmtree(target, ignore_errors=True)  # a kept one from an earlier run
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "judge", "calibration", "rubrics"],
        check=True,
        capture_output=True,
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def _same_files(a: Path, b: Path) -> str:
    """Whether two runs' judgments files hold the same, read a batch at a time."""
    import filecmp

    import pyarrow.parquet as pq

    jsonl = filecmp.cmp(a / "judgments.jsonl", b / "judgments.jsonl", shallow=False)
    first, second = pq.ParquetFile(a / "judgments.parquet"), pq.ParquetFile(b / "judgments.parquet")
    batches = (f.iter_batches(batch_size=10_000) for f in (first, second))
    parquet = first.schema_arrow.equals(second.schema_arrow) and all(
        x.equals(y) for x, y in zip(*batches, strict=True)
    )
    return f"judgments.jsonl {'identical' if jsonl else 'DIFFERENT'}, judgments.parquet " + (
        "equal" if parquet else "DIFFERENT"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000,200000")
    parser.add_argument("--baseline-ref", help="a git ref to measure beside the working tree")
    parser.add_argument("--keep", type=Path, help="build the runs here and keep them")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.dir)
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    root = args.keep or Path(tempfile.mkdtemp(prefix="after-judging-"))
    codes = {"current": REPO}
    if args.baseline_ref:
        sha = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", args.baseline_ref],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        codes = {f"baseline {sha}": _extract(args.baseline_ref, root / f"code-{sha}"), **codes}
    print(f"python {sys.version.split()[0]}; runs in {root}; {os.cpu_count()} cpus")
    header = f"{'requests':>9} {'code':<17} {'step':<8} {'wall s':>8} {'us/req':>8} "
    print(header + f"{'base MB':>8} {'peak MB':>8}")
    runs: dict[int, dict[str, Path]] = {}
    try:
        for n in sizes:
            built = root / f"n{n}"
            if not (built / "run" / "store.sqlite").exists():
                built.mkdir(parents=True, exist_ok=True)
                generate(built, n)
                _run_child("build", built, next(iter(codes.values())))
            written: dict[str, Path] = {}
            for label, code in codes.items():
                work = root / f"n{n}-{label.split()[0]}"
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(built, work)
                _run_child("open", work, code)
                for step in ("outputs", "finish"):
                    m = _run_child(step, work, code)
                    print(
                        f"{n:>9} {label:<17} {step:<8} {m['seconds']:>8.2f} "
                        f"{m['seconds'] / n * 1e6:>8.1f} {m['base_mb']:>8.0f} {m['peak_mb']:>8.0f}",
                        flush=True,
                    )
                written[label] = work / "run"
            runs[n] = written
        # Compared once every measurement is done: reading them would raise this process's
        # high-water mark, which the children measured after it would start from.
        for n, written in runs.items():
            if len(written) == 2:
                print(f"{n:>9} same outputs: {_same_files(*written.values())}", flush=True)
            for work in written.values():
                shutil.rmtree(work.parent)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
