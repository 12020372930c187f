"""The run config's reference, generated from its pydantic models: docs/config.md and the JSON
schema (`judge config schema`).

    python -m judge.config.reference > docs/config.md

The descriptions are the fields' docstrings in `judge/config/run_config.py`,
`judge/config/batch.py`, `judge/config/simulator.py`
and `calibration/trust_gate.py`; tests/test_config_reference.py fails when docs/config.md
differs from what this prints. `model_reference` writes the same kind of tables for any model
and the models nested in it (the docs site's rubric schema, through docs/hooks.py).
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
import types
from itertools import pairwise
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from judge.config.keys import ConfigKey, bounds, config_keys, default_text, type_name
from judge.config.quality_model import QUALITY_MODEL
from judge.config.run_config import RunConfig
from judge.config.simulator import SimulatorConfig

REGENERATE = "python -m judge.config.reference > docs/config.md"

_INTRO = f"""\
# Run config reference

<!-- Generated from the models (judge/config/run_config.py, judge/config/batch.py,
judge/config/simulator.py, calibration/trust_gate.py) by `{REGENERATE}`.
Edit their docstrings, not this file. -->

A run config is a YAML file (`judge run CONFIG`; `configs/` has examples). Keys are strict: an
unknown key is an error naming the closest known ones (`judges.0.timeout: unknown key (did you
mean timeout_s?)`), and so is a key given twice. Relative paths are resolved against the
directory of the config file. `judges[].timeout_s` is the key `timeout_s` of an entry of the
list `judges`.

```yaml
name: my-eval
question: Can we replace model-x with model-y?
data: {{items: data/items.jsonl, responses: data/responses.jsonl}}
rubric: pairwise_general
judges:
  - {{model: openai/gpt-4.1-mini, api_key_env: OPENAI_API_KEY}}
compare:
  gates: ["ci_low(diff(model-y, model-x)) >= -0.02"]
```

**API keys belong in environment variables**, named by `api_key_env` (or the SDK's default,
e.g. `OPENAI_API_KEY`), never in a config file, which gets shared and committed. (`api_key`
exists for local servers that want a dummy key.)

## Checking a config in your editor

`judge config schema` prints the run config's JSON schema (`judge config schema --simulator`:
that of a `judge simulate --config` file). Save it, and point the YAML language server (VS
Code's YAML extension by Red Hat; Neovim, Helix and other editors running
`yaml-language-server`) at it with a comment on the first line of the config:

```sh
judge config schema > run-config.schema.json
```

```yaml
# yaml-language-server: $schema=run-config.schema.json
name: my-eval
```

The editor then completes keys, shows these descriptions on hover and marks unknown keys and
wrong types as you type. The path is relative to the config file (or a URL). JetBrains IDEs
take the schema file under Settings, JSON Schema Mappings. Rules between keys
(`pairs.baseline` needs `mode: baseline`, fault rates adding up to at most 1, ...) are checked
by `judge prepare CONFIG`, which sends nothing.
"""

_SIMULATOR = """\
`judge simulate` serves the same simulator on its own (`--config` takes a YAML file of these
keys, without `simulator.`); `POST /_config` changes knobs of a running one."""


def reference_markdown(model: type[BaseModel] = RunConfig) -> str:
    """docs/config.md: one table per section, in declaration order."""
    keys = config_keys(model)
    _check_documented(keys)
    out = [_INTRO, "## Top level\n", _one_line(model.__doc__ or ""), "", *_table(keys, "")]
    for section in (k for k in keys if k.section is not None):
        out += ["", f"## `{section.section_path}`", "", _one_line(section.section.__doc__ or "")]
        if section.section is SimulatorConfig:
            out += ["", _SIMULATOR, "", "### How the simulated judge decides", "", QUALITY_MODEL]
            out += ["", "### Knobs"]
        out += ["", *_table(keys, section.section_path + ".")]
    return "\n".join(out) + "\n"


def _table(keys: list[ConfigKey], prefix: str) -> list[str]:
    """The keys directly under `prefix`."""
    rows = ["| key | type | default | description |", "|---|---|---|---|"]
    for key in keys:
        if key.path == prefix + key.name:
            rows.append("| " + " | ".join(_cell(c) for c in _row(key)) + " |")
    return rows


def _row(key: ConfigKey) -> tuple[str, str, str, str]:
    kind = type_name(key.field.annotation)
    limit = bounds(key.field)
    if limit:
        kind = f"{kind}, {limit}"
    description = key.field.description or ""
    if key.section is not None:
        description += f" See `{key.section_path}` below."
    return f"`{key.path}`", kind, f"`{default_text(key.field)}`", description


def _cell(text: str) -> str:
    # A Markdown table cell is one line, and `|` would end it.
    return _one_line(text).replace("|", "\\|")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _check_documented(keys: list[ConfigKey]) -> None:
    missing = [k.path for k in keys if not k.field.description]
    if missing:
        raise ValueError(
            f"config keys without a docstring: {', '.join(missing)}; document each field with "
            "a docstring under it, then run " + REGENERATE
        )


def model_reference(model: type[BaseModel], heading: str = "###") -> str:
    """Markdown reference of `model` and of every model its fields hold, in the order first met:
    per model a heading (its name, which the type column links to), its docstring, and a table
    of its fields (key, type, default, description). An undocumented field is an error."""
    out: list[str] = []
    for found in _nested_models(model):
        docs = field_docstrings(found)
        missing = [f"{found.__name__}.{name}" for name, text in docs.items() if not text]
        if missing:
            raise ValueError(f"fields without a docstring: {', '.join(missing)}")
        out += [f"{heading} {found.__name__}", ""]
        if found.__doc__:
            out += [_one_line(found.__doc__), ""]
        out += ["| key | type | default | description |", "|---|---|---|---|"]
        for name, field in found.model_fields.items():
            kind = ", ".join(filter(None, [_kind(field.annotation), _constraints(field)]))
            cells = (f"`{name}`", kind, f"`{default_text(field)}`", docs[name])
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        out.append("")
    return "\n".join(out)


def field_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """Each field's description: its pydantic `description`, else the docstring written under
    it in the class body (pydantic reads those itself only with `use_attribute_docstrings`)."""
    written: dict[str, str] = {}
    for cls in reversed(model.__mro__):  # a subclass's docstring wins
        if not issubclass(cls, BaseModel) or cls is BaseModel:
            continue
        try:
            body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
        except (OSError, TypeError):  # no source (built dynamically): descriptions only
            continue
        statements = body.body if isinstance(body, ast.ClassDef) else []
        for node, after in pairwise(statements):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                written[node.target.id] = inspect.cleandoc(after.value.value)
    return {
        name: field.description or written.get(name, "")
        for name, field in model.model_fields.items()
    }


def _nested_models(model: type[BaseModel]) -> list[type[BaseModel]]:
    found = [model]
    for found_model in found:  # grows while it is walked: breadth first, each model once
        for field in found_model.model_fields.values():
            found += [m for m in _models(field.annotation) if m not in found]
    return found


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models(arg)]


def _kind(annotation: Any) -> str:
    """`type_name`, with models named (and linked to their tables), tuples read as lists and
    tagged unions of models read through."""
    if get_origin(annotation) is Annotated:
        return _kind(get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[`{annotation.__name__}`](#{annotation.__name__.lower()})"
    if get_origin(annotation) is tuple:
        items = [a for a in get_args(annotation) if a is not Ellipsis]
        if len(items) == 1:
            return f"list of {_kind(items[0])}"
    if get_origin(annotation) in (Union, types.UnionType) and _models(annotation):
        return " or ".join(dict.fromkeys(_kind(arg) for arg in get_args(annotation)))
    return type_name(annotation)


def _constraints(field: FieldInfo) -> str:
    rules = [bounds(field)]
    for rule in field.metadata:
        if getattr(rule, "pattern", None):
            rules.append(f"matching `{rule.pattern}`")
        if getattr(rule, "min_length", None) == 1:
            rules.append("not empty")
    return ", ".join(filter(None, rules))


def config_schema(model: type[BaseModel] = RunConfig) -> dict[str, Any]:
    """The JSON schema of `model`, as draft-07: what editors' YAML language servers validate
    fully (VS Code's warns that 2020-12, pydantic's dialect, is "not yet fully supported")."""
    schema = model.model_json_schema(ref_template="#/definitions/{model}")
    definitions = schema.pop("$defs", {})
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", **schema}
    if definitions:
        schema["definitions"] = definitions
    return _draft7(schema)


def _draft7(node: Any) -> Any:
    """Descriptions on one line; a `$ref` with siblings wrapped in `allOf`, since draft-07
    ignores whatever stands beside a `$ref` (the description shown on hover, the default)."""
    if isinstance(node, list):
        return [_draft7(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: _one_line(v) if k == "description" and isinstance(v, str) else _draft7(v)
        for k, v in node.items()
    }
    if "$ref" in out and len(out) > 1:
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return out


def config_schema_json(model: type[BaseModel] = RunConfig) -> str:
    return json.dumps(config_schema(model), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(reference_markdown(), end="")
