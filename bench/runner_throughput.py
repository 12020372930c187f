"""Runner throughput against the judge simulator at 200 ms latency: our runner vs the clients.

The simulator runs in its own process (fixed 200 ms latency), so its CPU is never counted as
the client's; each measurement runs in a fresh client process with a fresh run dir and a
fresh response cache (nothing is served from cache). For N judge requests (default 5,000:
2,500 items x 2 systems x 2 orders, short outputs, rendered by `prepare_run` outside the
timing) at each concurrency C (ideal = C / 0.2 s), per case:

  req/s       requests / wall time of the judging (the runner's judge phase; the whole
              gather for the plain clients)
  x ideal     req/s / (C / 0.2 s)
  cpu ms/req  client CPU per request over that phase: the client process and its worker
              children (getrusage SELF + CHILDREN; worker start-up included)
  own cpu     of that, the client process alone (the runner's event loop): the rest is its
              children's, the workers' and the prepare process's (which re-checks the
              prepared run beside the judging)
  e2e req/s   the runner only: the whole `run_pipeline` call (the re-check of the prepared
              run dir, judging, aggregation and outputs); e2e cpu ms/req likewise
  sim ms/req  the simulator's own CPU per request (from its /_stats), for context

Cases: runner-default (our runner, a judge config with no `transport` key: what a user gets),
runner-fresh (the same config on a run dir not yet prepared: the prepare runs beside the
judging, as `judge run` on new data does; the prepare's CPU is the client's too),
runner-http-w1/-w2 (our runner, `transport: http`, OpenAI wire format, workers=1 and
2), runner-sdk (our runner, `transport: sdk`, the openai SDK), openai-sdk (AsyncOpenAI default
client, asyncio.gather + semaphore), litellm (litellm.acompletion, same), aiohttp (a bare
aiohttp loop: the floor). Optional: runner-anthropic (our runner, `transport: http`, Anthropic
wire format, workers=1). The plain clients send the runner's rendered messages and
response_format, one request per planned judge request.

  proc cpu    whole client process CPU per request: interpreter start-up, imports, the run
              and its exit tail (the bench's own copy of the prepared run dir left out)
  load        the 1-minute load average when the measurement started (the machine is shared)

`--baseline-ref REF` adds `runner-default@REF` (and `runner-fresh@REF`): the same measurement
with the code of git commit REF (exported to a temporary directory; its run dirs prepared by
its own code), interleaved with this tree's cases, so the two are compared on the same machine
state.

At concurrency 32 every process spends more CPU per request than at 256, the simulator
included (measured ~1.5-1.8x): fewer requests share each event-loop wake-up. CPU per request
is the throughput limit only at high concurrency. `--pin` puts the simulator on the last CPU
and the clients on the others, so they never share a core (measured: no material change).

    .venv/bin/python bench/runner_throughput.py [--quick] [--repeat 3] [--requests 5000] [--pin]
        [--cases runner-default aiohttp] [--baseline-ref HEAD]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

# Keep module-level imports light: worker processes (spawn) re-import this file.

LATENCY_S = 0.2
MODEL = "openai/sim-bench"
CASES = (
    "runner-default",
    "runner-fresh",
    "runner-http-w1",
    "runner-http-w2",
    "runner-sdk",
    "openai-sdk",
    "litellm",
    "aiohttp",
)
OPTIONAL = ("runner-anthropic",)
COMPARED = ("runner-default", "runner-fresh")
"""The cases `--baseline-ref` measures with older code too, as `<case>@<ref>`."""
REPO = Path(__file__).resolve().parents[1]
_SERVER = (
    "from judge.simulator import SimulatorConfig, run; "
    f"run(SimulatorConfig(seed=1, latency={{'kind': 'fixed', 'median_s': {LATENCY_S}}}), "
    "host='127.0.0.1', port=0)"
)


# --- the orchestrating process ----------------------------------------------------------------


def write_dataset(directory: Path, items: int) -> tuple[Path, Path]:
    """`items` questions x 2 systems, short outputs (one judge request per pair and order)."""
    items_path, responses_path = directory / "items.jsonl", directory / "responses.jsonl"
    with items_path.open("w") as fh:
        for i in range(items):
            prompt = f"Question {i}: how does a hash map handle collisions?"
            fh.write(json.dumps({"item_id": f"q{i}", "prompt": prompt}) + "\n")
    with responses_path.open("w") as fh:
        for i in range(items):
            for system, text in (
                ("sys-a", f"Answer {i}: it chains colliding keys in a list per bucket."),
                ("sys-b", f"Answer {i}: open addressing probes for the next free slot."),
            ):
                row = {"item_id": f"q{i}", "system": system, "output": text}
                fh.write(json.dumps(row) + "\n")
    return items_path, responses_path


def start_simulator(cpu: int | None = None) -> tuple[subprocess.Popen[str], str]:
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    server = subprocess.Popen(
        [*pin, sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, text=True, bufsize=1
    )
    line = server.stdout.readline() if server.stdout else ""
    found = re.search(r"http://[\d.]+:\d+", line)
    if not found:
        server.terminate()
        raise SystemExit(f"the simulator did not start: {line!r}")
    return server, found.group(0)


def _template_key(case: str, concurrency: int) -> str:
    transports = {"runner-sdk": "sdk", "runner-default": "default", "runner-fresh": "default"}
    transport = transports.get(case, "http")
    provider = "anthropic" if case == "runner-anthropic" else "openai"
    return f"{provider}-{transport}-{concurrency}"


def export_ref(ref: str, into: Path) -> Path:
    """The code of git commit `ref` of this repository, exported to `into` (made here)."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def prepare_templates(
    root: Path, sim: str, keys: list[str], n: int, into: str = "templates"
) -> None:
    """Prepared run dirs (one per config key: provider, transport, concurrency) under
    `root/into`, that each runner measurement copies. Untimed."""
    from judge.run import prepare_run

    for key in keys:
        provider, transport, concurrency = key.split("-")
        config = _config(root, sim, transport, int(concurrency), provider)
        prepared = prepare_run(config, root / into / key)
        assert prepared.requests == n, (prepared.requests, n)


def write_payloads(root: Path, key: str) -> None:
    """What the plain clients send: the rendered messages of the template `key`, and the
    response format the runner sends with them."""
    from judge import RunStore, load_rubric
    from judge.providers._common import openai_messages, openai_response_format
    from judge.rubric.parsing import output_schema

    with RunStore.open(root / "templates" / key) as store:
        messages = [openai_messages(r.messages) for r in store.pending_requests()]
    fmt = openai_response_format(output_schema(load_rubric("pairwise_general")))
    payloads = {"model": MODEL.split("/", 1)[1], "messages": messages, "response_format": fmt}
    (root / "payloads.json").write_text(json.dumps(payloads))


def _code_env(code: Path | None) -> dict[str, Any]:
    """subprocess arguments running `code`'s `judge` (None: this tree's)."""
    if code is None:
        return {}
    # The child is this script (its directory first on sys.path, no `judge` in it); the
    # working directory matters to the `-c` of a prepare child.
    return {"env": {**os.environ, "PYTHONPATH": str(code)}, "cwd": str(code)}


def prepare_baseline(root: Path, sim: str, code: Path, keys: list[str], n: int) -> None:
    """`prepare_templates` for the baseline case, by the baseline's own code (its prepare may
    write what this tree's would not), in a process of its own."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--prepare-baseline", *keys]
    cmd += ["--requests", str(n), "--sim", sim, "--root", str(root)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **_code_env(code))
    if done.returncode != 0:
        raise SystemExit(f"preparing the baseline failed:\n{done.stderr[-3000:]}")


def run_case(
    case: str,
    concurrency: int,
    args: argparse.Namespace,
    sim: str,
    root: Path,
    baseline: Path | None = None,
) -> dict:
    """One measurement in a fresh client process; returns its JSON result."""
    own, _, ref = case.partition("@")
    is_baseline = bool(ref)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        own,
        "--concurrency",
        str(concurrency),
        "--requests",
        str(args.requests),
        "--sim",
        sim,
        "--root",
        str(root),
    ]
    if is_baseline:
        cmd += ["--templates", "templates-baseline"]
    if args.pin:
        cmd.append("--pin")
    load = os.getloadavg()[0]
    started = time.perf_counter()
    code = _code_env(baseline if is_baseline else None)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **code)
    if done.returncode != 0:
        raise SystemExit(f"{case} at {concurrency} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result.update(case=case, case_s=time.perf_counter() - started, load=load)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 1,000 requests")
    parser.add_argument("--requests", type=int, default=None, help="judge requests (even)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--repeat", type=int, default=1, help="repetitions (medians reported)")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES + OPTIONAL)
    parser.add_argument("--pin", action="store_true", help="simulator on its own CPU")
    parser.add_argument("--baseline-ref", help="also measure the default config at this commit")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    parser.add_argument("--child", choices=CASES + OPTIONAL, help=argparse.SUPPRESS)
    parser.add_argument("--templates", default="templates", help=argparse.SUPPRESS)
    parser.add_argument("--prepare-baseline", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--sim", help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.requests is None:
        args.requests = 1000 if args.quick else 5000
    args.requests -= args.requests % 2
    cpus = sorted(os.sched_getaffinity(0))
    if args.pin and len(cpus) < 2:
        raise SystemExit("--pin needs at least 2 CPUs")
    if args.prepare_baseline:
        prepare_templates(args.root, args.sim, args.prepare_baseline, args.requests, BASE_DIR)
        return
    if args.child:
        if args.pin:
            os.sched_setaffinity(0, cpus[:-1])  # the simulator has the last one
        result = child(
            args.child, args.concurrency[0], args.requests, args.sim, args.root, args.templates
        )
        print(json.dumps(result))
        return

    started = time.perf_counter()
    server, sim = start_simulator(cpus[-1] if args.pin else None)
    try:
        with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp:
            results = _measure_all(args, sim, Path(tmp), cpus)
    finally:
        server.terminate()
        server.wait(10)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    report(results, args)
    print(f"\n(bench took {time.perf_counter() - started:.0f} s)")


BASE_DIR = "templates-baseline"


def _measure_all(
    args: argparse.Namespace, sim: str, root: Path, cpus: list[int]
) -> list[dict[str, Any]]:
    """Every case at every concurrency, `args.repeat` times, interleaved."""
    write_dataset(root, args.requests // 2)
    runners = [c for c in args.cases if c.startswith("runner")]
    keys = sorted({_template_key(c, k) for c in runners for k in args.concurrency})
    payload_key = f"openai-http-{args.concurrency[0]}"
    prepare_templates(root, sim, sorted({*keys, payload_key}), args.requests)
    write_payloads(root, payload_key)
    baseline = None
    if args.baseline_ref:
        baseline = export_ref(args.baseline_ref, root / "baseline")
        if "runner-default" in args.cases:
            base_keys = [_template_key("runner-default", k) for k in args.concurrency]
            prepare_baseline(root, sim, baseline, base_keys, args.requests)
        # Each right after this tree's case: the pairs whose ratios are reported.
        cases = []
        for case in args.cases:
            cases += [case, f"{case}@{args.baseline_ref}"] if case in COMPARED else [case]
        args.cases = cases
    pinned = f", simulator pinned to CPU {cpus[-1]}" if args.pin else ""
    print(
        f"runner throughput: {args.requests} judge requests, simulator latency "
        f"{LATENCY_S * 1000:.0f} ms (own process{pinned}), {len(cpus)} CPUs, "
        f"{args.repeat} repetition(s); load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    if args.baseline_ref:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", args.baseline_ref],
            capture_output=True,
            text=True,
        ).stdout.strip()
        print(f"baseline: {args.baseline_ref} = commit {commit}", flush=True)
    results: list[dict[str, Any]] = []
    for rep in range(args.repeat):
        for concurrency in args.concurrency:
            for case in args.cases:
                r = run_case(case, concurrency, args, sim, root, baseline)
                r["rep"] = rep
                results.append(r)
                print(
                    f"  rep {rep} c={concurrency:<4} {case:<24} {r['rps']:7.0f} req/s "
                    f"{r['cpu_ms']:6.2f} cpu ms/req {r['proc_cpu_ms']:6.2f} proc "
                    f"(load {r['load']:.1f}, {r['case_s']:.0f} s)",
                    flush=True,
                )
    return results


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else None


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    reps = args.repeat
    print(f"\nmedians of {reps} repetition(s); ideal = concurrency / {LATENCY_S:g} s")
    head = ("case", "conc", "req/s", "x ideal", "cpu ms/req", "own cpu", "e2e req/s", "e2e cpu")
    head += ("proc cpu", "sim ms/req", "load")
    print("{:<25}{:>5}{:>8}{:>9}{:>12}{:>9}{:>11}{:>9}{:>10}{:>12}{:>6}".format(*head))
    fmt = "{:<25}{:>5}{:>8.0f}{:>9.2f}{:>12.2f}{:>9}{:>11}{:>9}{:>10.2f}{:>12.2f}{:>6.1f}"
    for concurrency in args.concurrency:
        for case in args.cases:
            rows = [r for r in results if r["case"] == case and r["concurrency"] == concurrency]
            if not rows:
                continue
            e2e, e2e_cpu = _median(rows, "e2e_rps"), _median(rows, "e2e_cpu_ms")
            own = _median(rows, "own_cpu_ms")
            print(
                fmt.format(
                    case,
                    concurrency,
                    _median(rows, "rps"),
                    _median(rows, "rps") / (concurrency / LATENCY_S),
                    _median(rows, "cpu_ms"),
                    "-" if own is None else f"{own:.2f}",
                    "-" if e2e is None else f"{e2e:.0f}",
                    "-" if e2e_cpu is None else f"{e2e_cpu:.2f}",
                    _median(rows, "proc_cpu_ms"),
                    _median(rows, "sim_cpu_ms"),
                    _median(rows, "load"),
                )
            )
    # Ratios within each repetition (measured side by side), then their median.
    print("\nratios (median over repetitions of same-run ratios)")
    ref = args.baseline_ref
    pairs = [
        *((c, "aiohttp") for c in COMPARED),
        *((f"{c}@{ref}", "aiohttp") for c in COMPARED if ref),
        *((c, f"{c}@{ref}") for c in COMPARED if ref),
        ("runner-http-w1", "aiohttp"),
        ("runner-http-w2", "aiohttp"),
        ("runner-anthropic", "aiohttp"),
        ("runner-http-w1", "openai-sdk"),
        ("runner-http-w2", "openai-sdk"),
        ("runner-sdk", "openai-sdk"),
        ("openai-sdk", "litellm"),
    ]
    for concurrency in args.concurrency:
        for a, b in pairs:
            rps, cpu = [], []
            for rep in range(reps):
                ra = _pick(results, a, concurrency, rep)
                rb = _pick(results, b, concurrency, rep)
                if ra and rb:
                    rps.append(ra["rps"] / rb["rps"])
                    cpu.append(ra["cpu_ms"] / rb["cpu_ms"])
            if rps:
                print(
                    f"  c={concurrency:<4} {a:>24} / {b:<24} req/s x{statistics.median(rps):5.2f}"
                    f"   cpu/req x{statistics.median(cpu):5.2f}"
                )


def _pick(results: list[dict[str, Any]], case: str, concurrency: int, rep: int) -> dict | None:
    for r in results:
        if r["case"] == case and r["concurrency"] == concurrency and r["rep"] == rep:
            return r
    return None


# --- one measurement (a fresh client process) ---------------------------------------------


def _cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _sim(base: str, path: str, body: bytes | None = None) -> dict[str, Any]:
    request = urllib.request.Request(base + path, data=body, method="POST" if body else "GET")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _config(
    root: Path, sim: str, transport: str, concurrency: int, provider: str = "openai"
) -> Any:
    from judge import RunConfig

    model = MODEL if provider == "openai" else f"anthropic/{MODEL.split('/', 1)[1]}"
    return RunConfig.model_validate(
        {
            "name": "bench",
            "data": {"items": root / "items.jsonl", "responses": root / "responses.jsonl"},
            "blinding": {"seed": 1, "secret": "ab" * 32},
            "rubric": "pairwise_general",
            "orders": "both",
            "judges": [
                {
                    "model": model,
                    "base_url": f"{sim}/v1" if provider == "openai" else sim,
                    "max_connections": concurrency,
                    "timeout_s": 60,
                    # "default": the key left out, as a config copied from the README has it.
                    **({} if transport == "default" else {"transport": transport}),
                }
            ],
        }
    )


def child(
    case: str, concurrency: int, n: int, sim: str, root: Path, templates: str = "templates"
) -> dict[str, Any]:
    result: dict[str, Any] = {"case": case, "concurrency": concurrency, "requests": n}
    copying = 0.0
    if case.startswith("runner"):
        key = _template_key(case, concurrency)
        provider, transport, _ = key.split("-")
        config = _config(root, sim, transport, concurrency, provider)
        work = Path(tempfile.mkdtemp(prefix=f"{case}-{concurrency}-", dir=root))
        # A fresh copy of the prepared run dir (none for runner-fresh: prepared as it judges)
        # and a fresh cache: nothing served from cache.
        if case != "runner-fresh":
            before = sum(_cpu())
            shutil.copytree(root / templates / key, work / "run")
            copying = sum(_cpu()) - before  # the bench's, not the client's
        _sim(sim, "/_reset", b"{}")
        result.update(_measure_runner(case, config, work / "run", work / "cache.sqlite", n))
    else:
        payloads = json.loads((root / "payloads.json").read_text())
        _sim(sim, "/_reset", b"{}")
        result.update(_measure_client(case, payloads, concurrency, n, sim))
    # Everything this process did since it started (imports included), but the copy above.
    result["proc_cpu_ms"] = 1000 * (sum(_cpu()) - copying) / n
    stats = _sim(sim, "/_stats")
    result["sim_requests"] = stats["requests"]
    result["sim_cpu_ms"] = 1000 * stats["cpu_s"] / max(1, stats["requests"])
    assert stats["requests"] == n and stats["duplicates"] == 0, stats
    return result


def _measure_runner(case: str, config: Any, run_dir: Path, cache: Path, n: int) -> dict[str, Any]:
    import aiohttp  # noqa: F401  - warm imports, as in a long-lived process
    import openai  # noqa: F401

    from judge.run import run_pipeline

    workers = 2 if case.endswith("-w2") else 1
    marks: dict[str, Any] = {}

    def log(message: str) -> None:
        if message.startswith("judging"):
            marks["start"] = (time.perf_counter(), _cpu())

    def progress(_p: Any) -> None:
        marks["end"] = (time.perf_counter(), _cpu())

    t0, cpu0 = time.perf_counter(), _cpu()
    outcome = run_pipeline(
        config, run_dir, workers=workers, cache_path=cache, log=log, on_progress=progress
    )
    t1, cpu1 = time.perf_counter(), _cpu()
    counts = outcome.summary.counts
    assert counts.responses == n and counts.errors == 0 and counts.cached == 0, counts
    assert outcome.stats.sent == n, outcome.stats
    (ts, (self_s, _)), (te, (self_e, _)) = marks["start"], marks["end"]
    # Worker children are reaped when the pool closes, after the judge phase's last mark.
    children = cpu1[1] - cpu0[1]
    return {
        "rps": n / (te - ts),
        "cpu_ms": 1000 * (self_e - self_s + children) / n,
        "own_cpu_ms": 1000 * (self_e - self_s) / n,
        "children_cpu_ms": 1000 * children / n,
        "e2e_rps": n / (t1 - t0),
        "e2e_cpu_ms": 1000 * (sum(cpu1) - sum(cpu0)) / n,
        "verdicts": counts.verdicts,
    }


def _measure_client(
    case: str, payloads: dict[str, Any], concurrency: int, n: int, sim: str
) -> dict[str, Any]:
    import asyncio

    model, messages, fmt = payloads["model"], payloads["messages"], payloads["response_format"]
    assert len(messages) == n, (len(messages), n)
    base = f"{sim}/v1"
    if case == "openai-sdk":
        import openai

        async def main() -> list[str | None]:
            client = openai.AsyncOpenAI(base_url=base, api_key="sk-bench", max_retries=0)
            semaphore = asyncio.Semaphore(concurrency)

            async def one(msgs: list[dict[str, str]]) -> str | None:
                async with semaphore:
                    r = await client.chat.completions.create(
                        model=model,
                        messages=msgs,  # type: ignore[arg-type]
                        response_format=fmt,  # type: ignore[arg-type]
                    )
                return r.choices[0].message.content

            try:
                return await _timed(asyncio.gather(*(one(m) for m in messages)))
            finally:
                await client.close()

    elif case == "litellm":
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        import litellm

        async def main() -> list[str | None]:
            semaphore = asyncio.Semaphore(concurrency)

            async def one(msgs: list[dict[str, str]]) -> str | None:
                async with semaphore:
                    r = await litellm.acompletion(
                        model=MODEL,
                        messages=msgs,
                        api_base=base,
                        api_key="sk-bench",
                        response_format=fmt,
                        num_retries=0,
                        max_retries=0,
                    )
                return r.choices[0].message.content

            return await _timed(asyncio.gather(*(one(m) for m in messages)))

    else:
        import aiohttp

        async def main() -> list[str | None]:
            connector = aiohttp.TCPConnector(limit=concurrency)
            headers = {"Authorization": "Bearer sk-bench", "Content-Type": "application/json"}
            url = f"{base}/chat/completions"
            semaphore = asyncio.Semaphore(concurrency)
            async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

                async def one(msgs: list[dict[str, str]]) -> str | None:
                    body = json.dumps({"model": model, "messages": msgs, "response_format": fmt})
                    async with semaphore, session.post(url, data=body.encode()) as response:
                        raw = await response.read()
                        assert response.status == 200, raw[:200]
                    return json.loads(raw)["choices"][0]["message"]["content"]

                return await _timed(asyncio.gather(*(one(m) for m in messages)))

    texts = asyncio.run(main())
    assert len(texts) == n and all(texts), "missing replies"
    elapsed, cpu = _TIMING["elapsed"], _TIMING["cpu"]
    return {"rps": n / elapsed, "cpu_ms": 1000 * cpu / n}


_TIMING: dict[str, float] = {}


async def _timed(work: Any) -> Any:
    t0, cpu0 = time.perf_counter(), sum(_cpu())
    result = await work
    _TIMING["elapsed"] = time.perf_counter() - t0
    _TIMING["cpu"] = sum(_cpu()) - cpu0
    return result


if __name__ == "__main__":
    main()
