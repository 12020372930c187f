"""The configuration reference (issue 14, item 4): docs/config.md generated from the models and
in sync with them, the JSON schema editors validate with, "did you mean" on unknown keys, and
the simulator's quality model in `judge simulate --help`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from calibration.gates import parse_gate
from judge.config.keys import config_keys
from judge.config.reference import REGENERATE, reference_markdown
from judge.config.run_config import JudgeSpec, RunConfig, format_validation_error, load_config
from judge.errors import ConfigError
from judge.simulator import SimulatorConfig
from tests.helpers import REPO, run_cli, run_cli_here

DOC = REPO / "docs" / "config.md"


def test_docs_config_md_is_up_to_date() -> None:
    expected = reference_markdown().splitlines()
    actual = DOC.read_text(encoding="utf-8").splitlines()
    if actual != expected:
        line = next(
            (i for i, (a, e) in enumerate(zip(actual, expected, strict=False)) if a != e),
            min(len(actual), len(expected)),
        )
        pytest.fail(
            f"docs/config.md is out of date (first difference at line {line + 1}); "
            f"regenerate it: {REGENERATE}"
        )


def _schema_paths(schema: dict[str, Any], node: dict[str, Any], prefix: str) -> set[str]:
    """Dotted key paths read from pydantic's own JSON schema: a reference independent of
    `config_keys`' walk over the model classes."""
    if "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    for combined in ("anyOf", "allOf"):
        for option in node.get(combined, []):
            if option.get("type") != "null":
                found = _schema_paths(schema, option, prefix)
                if found:
                    return found
    if node.get("type") == "array" and "items" in node:
        return _schema_paths(schema, node["items"], prefix + "[]")
    paths: set[str] = set()
    for name, sub in node.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        paths |= {path} | _schema_paths(schema, sub, path)
    return paths


def test_every_key_of_the_schema_is_in_the_reference_with_its_description() -> None:
    schema = RunConfig.model_json_schema()
    keys = config_keys(RunConfig)
    assert {k.path for k in keys} == _schema_paths(schema, schema, "")
    text = DOC.read_text(encoding="utf-8")
    for key in keys:
        assert f"| `{key.path}` |" in text, key.path
        assert key.field.description, f"{key.path} has no docstring"
    for path in (
        "judges[].timeout_s",
        "blinding.extra_markers",
        "simulator.latency.median_s",
        "canaries.threshold",
        "calibration.gate.ceiling_margin",
    ):
        assert f"| `{path}` |" in text


def test_an_undocumented_key_stops_the_generator() -> None:
    class Toy(BaseModel):
        model_config = ConfigDict(use_attribute_docstrings=True)
        documented: int = 0
        """Has a docstring."""
        bare: int = 0

    with pytest.raises(ValueError, match=r"config keys without a docstring: bare;.*config\.md"):
        reference_markdown(Toy)


def test_the_reference_example_is_a_valid_config() -> None:
    example = re.search(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert example is not None
    config = RunConfig.model_validate(yaml.safe_load(example.group(1)))
    for gate in config.compare.gates:
        parse_gate(gate)
    assert config.judges[0].api_key is None  # keys belong in env vars, not in examples


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = run_cli_here("config", "schema")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_schema_is_draft_07_and_accepts_every_shipped_config(schema: dict[str, Any]) -> None:
    validator_class = jsonschema.validators.validator_for(schema)
    assert validator_class is jsonschema.Draft7Validator
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    configs = sorted((REPO / "configs").glob("**/*.yaml"))
    assert len(configs) >= 5
    for path in configs:
        errors = [
            e.message
            for e in validator.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8")))
        ]
        assert not errors, (path.name, errors)
    # What the loader refuses, the editor marks too: an unknown key in a judge, a wrong type
    # two levels down (through `$ref`s), a missing required key.
    bad = yaml.safe_load((REPO / "configs" / "simulated.yaml").read_text(encoding="utf-8"))
    bad["judges"][0]["timeout"] = 30
    bad["simulator"]["latency"] = {"median_s": "slow"}
    del bad["rubric"]
    errors = list(validator.iter_errors(bad))
    assert len(errors) == 3, [e.message for e in errors]
    messages = [e.message for e in _leaves(errors)]
    assert any("'timeout' was unexpected" in m for m in messages)
    assert any("'slow' is not of type 'number'" in m for m in messages)
    assert any("'rubric' is a required property" in m for m in messages)
    hover = schema["definitions"]["JudgeSpec"]["properties"]["timeout_s"]["description"]
    assert hover == " ".join(str(JudgeSpec.model_fields["timeout_s"].description).split())


def _leaves(errors: list[jsonschema.ValidationError]) -> list[jsonschema.ValidationError]:
    """The innermost errors (an `anyOf` such as "mapping or null" nests its branches')."""
    return [leaf for e in errors for leaf in (_leaves(e.context) if e.context else [e])]


def test_simulator_schema_is_the_knobs_file() -> None:
    result = run_cli_here("config", "schema", "--simulator")
    assert result.returncode == 0, result.stderr
    assert set(json.loads(result.stdout)["properties"]) == set(SimulatorConfig.model_fields)


# -- did you mean -------------------------------------------------------------------------


def _error(data: dict[str, Any], model: type[BaseModel] = RunConfig) -> str:
    with pytest.raises(ValidationError) as err:
        model.model_validate(data)
    return format_validation_error(err.value, model)


BASE = {"name": "t", "data": {"items": "a.jsonl", "responses": "b.jsonl"}, "rubric": "r"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"judges": [{"model": "openai/x"}, {"model": "openai/y", "timeout": 3}]},
            "judges.1.timeout: unknown key (did you mean timeout_s?)",
        ),
        (
            {"blinding": {"extra_marker": ["x"]}},
            "blinding.extra_marker: unknown key (did you mean extra_markers?)",
        ),
        (
            {"simulator": {"latency": {"median": 1}}},
            "simulator.latency.median: unknown key (did you mean median_s?)",
        ),
        (
            {"calibration": {"gate": {"ceiling": 0.1}}},
            "calibration.gate.ceiling: unknown key (did you mean ceiling_margin?)",
        ),
        # The right key at the wrong level: where it belongs.
        ({"max_attempts": 3}, "max_attempts: unknown key (did you mean judges[].max_attempts?)"),
        # Nothing close: no guess.
        ({"colour": "blue"}, "colour: unknown key"),
    ],
)
def test_unknown_key_names_the_closest_known_key(extra: dict, message: str) -> None:
    assert _error({**BASE, **extra}) == message


def test_unknown_simulator_knob_in_a_knobs_file(tmp_path: Path) -> None:
    assert _error({"nosie": 0.1}, SimulatorConfig) == "nosie: unknown key (did you mean noise?)"
    knobs = tmp_path / "knobs.yaml"
    knobs.write_text("position_bais: 0.7\n")
    result = run_cli_here("simulate", "--config", str(knobs), "--port", "0")
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {knobs}: position_bais: unknown key (did you mean position_bias?)\n"
    )


def test_did_you_mean_through_the_cli_is_one_line_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "name: x\ndata: {items: a.jsonl, responses: b.jsonl}\nrubric: pairwise_general\n"
        "judges:\n  - {model: openai/gpt-4.1-mini, timeout: 30}\n"
    )
    with pytest.raises(ConfigError, match=r"did you mean timeout_s\?"):
        load_config(config)
    result = run_cli("prepare", str(config))  # the real entry point, in its own process
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"error: {config}: judges.0.timeout: unknown key (did you mean timeout_s?)\n"
    )


def test_simulate_help_explains_the_quality_model() -> None:
    result = run_cli_here("simulate", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for phrase in (
        "hidden `⟦quality=x⟧` marker",
        "pseudo-quality hashed from the text",
        "the ranking is therefore random",
        "`tie_margin`",
        "`position_bias`",
        "`self_preference`",
        "`injection_susceptibility`",
    ):
        assert phrase in text, phrase
