"""Judge simulator throughput: requests/s served at concurrency 64, latency 0.

The simulator runs in its own process (one event loop, one core); a raw aiohttp client in this
process drives it. Reported per route: achieved requests/s, the simulator's CPU-ms per request
(from its /_stats, so the client's CPU is not counted) and the capacity that implies for one
core. When the client is the bottleneck, the capacity column is the simulator's real ceiling.

    .venv/bin/python bench/simulator_throughput.py [--requests 20000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time

import aiohttp

_SERVER = (
    "from judge.simulator import SimulatorConfig, run; "
    "run(SimulatorConfig(seed=1, noise=0.05), host='127.0.0.1', port=0)"
)


def _payloads(route: str, n: int) -> list[bytes]:
    """Distinct pairwise judge requests, shaped like the rubric renders them."""
    bodies = []
    for i in range(n):
        user = (
            f"[QUESTION]Question {i}: explain how a hash map works.[/QUESTION]\n"
            f"[RESPONSE A]\nAnswer {i}, first system. {'detail ' * (i % 40)}\n[/RESPONSE A]\n"
            f"[RESPONSE B]\nAnswer {i}, second system. {'more ' * (i % 25)}\n[/RESPONSE B]\n"
            "Explain your reasoning first, then give the verdict as JSON."
        )
        system = "You are an impartial judge."
        turn = {"role": "user", "content": user}
        if route == "openai":
            messages = [{"role": "system", "content": system}, turn]
            body = {"model": "gpt-4.1-mini", "messages": messages, "max_tokens": 512}
        else:
            body = {"model": "claude-sonnet-4-5", "system": system, "messages": [turn]}
            body["max_tokens"] = 512
        bodies.append(json.dumps(body).encode())
    return bodies


async def _drive(base_url: str, route: str, n: int, concurrency: int) -> dict[str, float]:
    path = "/v1/chat/completions" if route == "openai" else "/v1/messages"
    headers = {
        "Content-Type": "application/json",
        "Authorization": "Bearer bench",
        "x-api-key": "bench",
    }
    bodies = _payloads(route, n)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(base_url, connector=connector) as session:
        await session.post("/_reset")
        queue = iter(bodies)
        failures = 0

        async def worker() -> None:
            nonlocal failures
            for body in queue:
                async with session.post(path, data=body, headers=headers) as response:
                    await response.read()
                    failures += response.status != 200

        cpu0, t0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed, client_cpu = time.perf_counter() - t0, time.process_time() - cpu0
        async with session.get("/_stats") as response:
            stats = await response.json()
    server_ms = 1000 * stats["cpu_s"] / n
    return {
        "rps": n / elapsed,
        "server_cpu_ms": server_ms,
        "server_capacity_rps": 1000 / server_ms,
        "client_cpu_ms": 1000 * client_cpu / n,
        "failures": failures,
        "served": stats["requests"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, text=True, bufsize=1
    )
    try:
        line = server.stdout.readline() if server.stdout else ""
        found = re.search(r"http://[\d.]+:\d+", line)
        if not found:
            raise SystemExit(f"the simulator did not start: {line!r}")
        base_url = found.group(0)
        print(f"simulator throughput: {args.requests} requests, concurrency {args.concurrency}")
        header = ("route", "req/s", "server ms/req", "server cap/s", "client ms/req")
        print("{:<10}{:>9}{:>15}{:>14}{:>15}".format(*header))
        for route in ("openai", "anthropic"):
            asyncio.run(
                _drive(base_url, route, min(2000, args.requests), args.concurrency)
            )  # warm-up
            r = asyncio.run(_drive(base_url, route, args.requests, args.concurrency))
            assert r["failures"] == 0 and r["served"] == args.requests, r
            print(
                f"{route:<10}{r['rps']:>9.0f}{r['server_cpu_ms']:>15.3f}"
                f"{r['server_capacity_rps']:>14.0f}{r['client_cpu_ms']:>15.3f}"
            )
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
