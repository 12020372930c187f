"""The keys of a config model, read from its pydantic fields: dotted paths, types, defaults.

One walk over the models serves the configuration reference (`judge.config.reference`) and the
"did you mean" of an unknown key (in run configs and rubrics), so the two cannot disagree about
what a key is called or where it goes.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo


@dataclass(frozen=True)
class ConfigKey:
    """One key of a config, e.g. `judges[].timeout_s`."""

    path: str
    """Dotted path; `[]` marks a list of mappings (`judges[].model`)."""
    name: str
    field: FieldInfo
    section: type[BaseModel] | None
    """The model this key opens (`blinding`, `judges[]`), or None for a plain value."""

    @property
    def section_path(self) -> str:
        """The prefix of the keys inside this one (`judges[]` for `judges`)."""
        return self.path + ("[]" if _is_list(self.field.annotation) else "")


def config_keys(model: type[BaseModel], prefix: str = "") -> list[ConfigKey]:
    """Every key of `model`, depth-first in declaration order (a section, then its keys)."""
    keys = []
    for name, field in model.model_fields.items():
        key = ConfigKey(f"{prefix}{name}", name, field, section_of(field.annotation))
        keys.append(key)
        if key.section is not None:
            keys += config_keys(key.section, key.section_path + ".")
    return keys


def section_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds: itself, optional, or as list items; None for plain values (and
    for a union of several models)."""
    models = _models_in(annotation)
    return models[0] if len(models) == 1 else None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if get_origin(annotation) is Annotated:
        return _models_in(get_args(annotation)[0])
    if get_origin(annotation) in (list, tuple) or _is_union(annotation):
        found = [m for arg in get_args(annotation) for m in _models_in(arg)]
        return list(dict.fromkeys(found))
    return []


def unknown_key(model: type[BaseModel], loc: Sequence[str | int]) -> str:
    """The message for an unknown key at `loc` of `model`, with what it may have meant."""
    hint = did_you_mean(model, loc)
    return f"unknown key ({hint})" if hint else "unknown key"


def did_you_mean(model: type[BaseModel], loc: Sequence[str | int]) -> str:
    """For an unknown key at `loc` (the last part): the closest keys at that level, or the
    places the key belongs when it exists elsewhere; "" when nothing is close."""
    *parents, unknown = loc
    known = _keys_at(model, parents)
    if known is None or not isinstance(unknown, str):
        return ""
    close = _closest(unknown, known)
    if not close:
        # A right key at the wrong level (`timeout_s` at the top instead of under a judge).
        close = [k.path for k in config_keys(model) if k.name == unknown][:3]
    return f"did you mean {' or '.join(close)}?" if close else ""


def _closest(word: str, known: list[str]) -> list[str]:
    """The best match, and a second one only when it is about as good (`judgez`: `judges`, not
    also `budget`)."""
    scored = sorted(
        ((difflib.SequenceMatcher(None, word, k).ratio(), k) for k in known), reverse=True
    )
    best = scored[0][0] if scored else 0.0
    return [k for ratio, k in scored[:2] if ratio >= max(0.6, best - 0.05)]


def _keys_at(model: type[BaseModel], parents: Sequence[str | int]) -> list[str] | None:
    """The keys allowed under `parents`; those of every model a union there may hold."""
    models = [model]
    for part in parents:
        if isinstance(part, int):  # a list index: the list's items are the level's model
            continue
        fields = [m.model_fields[part] for m in models if part in m.model_fields]
        if not fields and len(models) > 1:
            continue  # the tag pydantic puts in a tagged union's path (a rubric's `scale.absolute`)
        models = [found for f in fields for found in _models_in(f.annotation)]
        if not models:
            return None
    return list(dict.fromkeys(name for m in models for name in m.model_fields))


def type_name(annotation: Any) -> str:
    """The type in words: `float or null`, `list of string`, `` `all` or `baseline` ``."""
    if annotation is type(None):
        return "null"
    if get_origin(annotation) is Literal:
        return _either([f"`{_yaml_value(v)}`" for v in get_args(annotation)])
    if _is_union(annotation):
        return _either(list(dict.fromkeys(type_name(arg) for arg in get_args(annotation))))
    if get_origin(annotation) is list:
        item = get_args(annotation)[0]
        return "list of mappings" if section_of(item) else f"list of {type_name(item)}"
    if get_origin(annotation) is dict:
        key, value = get_args(annotation)
        return f"mapping of {type_name(key)} to {type_name(value)}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    name = getattr(annotation, "__name__", str(annotation))
    return _SIMPLE.get(name, name)


def _either(options: list[str]) -> str:
    return options[0] if len(options) == 1 else f"{', '.join(options[:-1])} or {options[-1]}"


_SIMPLE = {"str": "string", "Path": "path", "SecretStr": "string (secret)", "float": "number"}


def bounds(field: FieldInfo) -> str:
    """The field's numeric bounds, e.g. `0 ≤ x ≤ 1`, or ""."""
    low = high = ""
    for rule in field.metadata:
        if getattr(rule, "ge", None) is not None:
            low = f"{_yaml_value(rule.ge)} ≤ "
        elif getattr(rule, "gt", None) is not None:
            low = f"{_yaml_value(rule.gt)} < "
        elif getattr(rule, "le", None) is not None:
            high = f" ≤ {_yaml_value(rule.le)}"
        elif getattr(rule, "lt", None) is not None:
            high = f" < {_yaml_value(rule.lt)}"
    return f"{low}x{high}" if low or high else ""


def default_text(field: FieldInfo) -> str:
    """The default as YAML would write it; "required" when there is none."""
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "(its keys' defaults)"
    return _yaml_value(value)


def _yaml_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _is_list(annotation: Any) -> bool:
    if _is_union(annotation):
        return any(_is_list(arg) for arg in get_args(annotation))
    return get_origin(annotation) in (list, tuple)
