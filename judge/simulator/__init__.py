"""A local judge simulator speaking the OpenAI and Anthropic wire formats (`judge simulate`).

It judges deterministically from a seed with planted, controllable behaviour (latency, faults,
position and verbosity bias, self-preference, noise) and counts what it served, so tests and
benchmarks can drive the real SDK clients over real HTTP.
"""

from judge.simulator.config import LatencyConfig, SimulatorConfig
from judge.simulator.fixture import SimulatorHandle, running_simulator, simulator_fixture
from judge.simulator.server import build_app, run, serve

__all__ = [
    "LatencyConfig",
    "SimulatorConfig",
    "SimulatorHandle",
    "build_app",
    "run",
    "running_simulator",
    "serve",
    "simulator_fixture",
]
