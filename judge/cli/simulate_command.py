"""`judge simulate`: the local judge simulator as a command (registered by `judge.cli.main`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.config.quality_model import QUALITY_MODEL
from judge.errors import ConfigError
from judge.simulator import DEFAULT_PORT as SIMULATOR_PORT

SIMULATE_HELP = (
    "Run the local judge simulator (OpenAI- and Anthropic-compatible) until Ctrl-C.\n\n"
    "It judges with planted, controllable behaviour (biases, noise, latency, faults; the knobs: "
    "docs/config.md, section simulator); GET /_stats counts what it served.\n\n" + QUALITY_MODEL
)


def simulate(
    port: Annotated[
        int,
        typer.Option(
            help="Port (0 = any free port; `judge serve` defaults to 8000).", min=0, max=65535
        ),
    ] = SIMULATOR_PORT,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    config: Annotated[
        Path | None, typer.Option(help="YAML file of simulator knobs (SimulatorConfig).")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed for every draw.")] = None,
) -> None:
    from pydantic import ValidationError

    from judge.config.run_config import format_validation_error
    from judge.simulator import SimulatorConfig, run
    from judge.yamlfile import read_yaml_mapping

    knobs: dict = {}
    if config is not None:
        knobs = read_yaml_mapping(config, "simulator config")
    if seed is not None:
        knobs["seed"] = seed
    try:
        cfg = SimulatorConfig.model_validate(knobs)
    except ValidationError as exc:
        raise ConfigError(
            f"{config or 'simulator'}: {format_validation_error(exc, SimulatorConfig)}"
        ) from None
    run(cfg, host=host, port=port)
