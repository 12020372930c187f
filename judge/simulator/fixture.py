"""Run the simulator in a background thread: a context manager and a pytest fixture factory.

    with running_simulator(SimulatorConfig(seed=1, rate_429=0.1)) as sim:
        client = openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="sk-test")
        ...
        assert sim.stats()["duplicates"] == 0

The server gets its own thread and event loop, so sync and async callers alike can use it and
a slow test client never slows the simulator's loop.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from judge.config.simulator import SimulatorConfig
from judge.simulator.server import serve

_START_TIMEOUT_S = 10.0


class SimulatorHandle:
    """A running simulator: its URLs and its control routes."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.base_url = f"http://{host}:{port}"
        """Anthropic and Gemini `base_url` (the SDKs append /v1/messages, /v1beta/...)."""
        self.openai_base_url = f"{self.base_url}/v1"
        """OpenAI `base_url` (the SDK appends /chat/completions)."""

    def stats(self, *, hashes: bool = False) -> dict[str, Any]:
        """`GET /_stats`; `hashes=True` adds per-content-hash attempt and answer counts."""
        return self._call("GET", "/_stats?hashes=1" if hashes else "/_stats")

    def reset(self) -> None:
        """Zero the counters, the attempt history and the rate bucket (knobs are kept)."""
        self._call("POST", "/_reset", {})

    def update(self, **knobs: Any) -> SimulatorConfig:
        """Change knobs at runtime (`latency` may be partial); returns the new config."""
        body = {k: v.model_dump() if hasattr(v, "model_dump") else v for k, v in knobs.items()}
        return SimulatorConfig.model_validate(self._call("POST", "/_config", body))

    def config(self) -> SimulatorConfig:
        return SimulatorConfig.model_validate(self._call("GET", "/_config"))

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            raise ValueError(f"simulator {method} {path} failed ({exc.code}): {detail}") from None


@contextmanager
def running_simulator(
    config: SimulatorConfig | None = None, host: str = "127.0.0.1"
) -> Iterator[SimulatorHandle]:
    """Serve `config` on a free loopback port until the block exits."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    outcome: dict[str, Any] = {}

    def _thread() -> None:
        asyncio.set_event_loop(loop)
        try:
            runner, port = loop.run_until_complete(serve(config, host, 0))
        except BaseException as exc:  # reported to the caller's thread below
            outcome["error"] = exc
            started.set()
            loop.close()
            return
        outcome["port"] = port
        started.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(runner.cleanup())
            loop.close()

    thread = threading.Thread(target=_thread, name="judge-simulator", daemon=True)
    thread.start()
    if not started.wait(_START_TIMEOUT_S):
        raise RuntimeError(f"the judge simulator did not start within {_START_TIMEOUT_S:g} s")
    if "error" in outcome:
        raise RuntimeError(f"the judge simulator failed to start: {outcome['error']}")
    try:
        yield SimulatorHandle(host, outcome["port"])
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_START_TIMEOUT_S)


def simulator_fixture(
    config: SimulatorConfig | None = None, *, scope: str = "function", name: str | None = None
) -> Callable[..., Any]:
    """A pytest fixture yielding a `SimulatorHandle`; assign it at module level:

        simulator = simulator_fixture(SimulatorConfig(seed=3))

    With a wider `scope`, tests share one server: call `.reset()` / `.update()` as needed.
    """
    import pytest  # a dev dependency: only needed by whoever asks for a fixture

    def _simulator() -> Iterator[SimulatorHandle]:
        with running_simulator(config) as handle:
            yield handle

    return pytest.fixture(scope=scope, name=name)(_simulator)  # type: ignore[call-overload]
