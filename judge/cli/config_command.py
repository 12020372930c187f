"""`judge config ...`: the run config's JSON schema. Registered on the main CLI in
`judge/cli/main.py`; pydantic and the models load inside the command, so `judge --help` stays fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

config_app = typer.Typer(
    help="The run config: its JSON schema (the reference is docs/config.md).",
    no_args_is_help=True,
    add_completion=False,
)


@config_app.command("schema")
def schema(
    simulator: Annotated[
        bool,
        typer.Option(
            "--simulator", help="The schema of a `judge simulate --config` knobs file instead."
        ),
    ] = False,
) -> None:
    """Print the run config's JSON schema (draft-07) for editors.

    Save it with `judge config schema > run-config.schema.json`, then start a config with

    # yaml-language-server: $schema=run-config.schema.json

    and the editor completes keys, shows what they do, and marks unknown keys and wrong types
    (docs/config.md)."""
    from judge.config.reference import config_schema_json
    from judge.config.run_config import RunConfig
    from judge.config.simulator import SimulatorConfig

    typer.echo(config_schema_json(SimulatorConfig if simulator else RunConfig), nl=False)
