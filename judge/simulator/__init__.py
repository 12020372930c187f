"""A local judge simulator speaking the OpenAI, Anthropic and Gemini wire formats
(`judge simulate`).

It judges deterministically from a seed with planted, controllable behaviour (latency, faults,
position and verbosity bias, self-preference, noise) and counts what it served, so tests and
benchmarks can drive the real SDK clients over real HTTP. It also serves the providers' batch
APIs (OpenAI Files + Batch, Anthropic Message Batches, Gemini Files + Batch), judging each
batched request as it would the same request sent on its own, and a prompt cache reported as
each provider does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge.exports import lazy_exports

DEFAULT_PORT = 8001
"""Where `judge simulate` listens unless told: not `judge serve`'s 8000, so both can run side
by side on one machine."""

# Lazy: `judge.config.run_config` imports SimulatorConfig, and should not pay for aiohttp.
_LAZY = {
    "LatencyConfig": "judge.config.simulator",
    "SimulatorConfig": "judge.config.simulator",
    "SimulatorHandle": "judge.simulator.fixture",
    "running_simulator": "judge.simulator.fixture",
    "simulator_fixture": "judge.simulator.fixture",
    "build_app": "judge.simulator.server",
    "run": "judge.simulator.server",
    "serve": "judge.simulator.server",
}

__all__ = [
    "DEFAULT_PORT",
    "LatencyConfig",
    "SimulatorConfig",
    "SimulatorHandle",
    "build_app",
    "run",
    "running_simulator",
    "serve",
    "simulator_fixture",
]

if TYPE_CHECKING:
    from judge.config.simulator import LatencyConfig, SimulatorConfig
    from judge.simulator.fixture import SimulatorHandle, running_simulator, simulator_fixture
    from judge.simulator.server import build_app, run, serve

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
