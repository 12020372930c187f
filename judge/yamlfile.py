"""Reading a YAML file whose top level is a mapping (run configs, rubrics), with errors that
name the file and line.

PyYAML's safe loader lets through what a strict config must refuse, so the loader here refuses
it with the line: a key given twice in one mapping (PyYAML keeps the last value silently),
nesting deeper than `judge.untrusted.MAX_NESTING` (far deeper, PyYAML's recursive composer
runs out of stack), and lone surrogates (a double-quoted "\\ud800" decodes to text that cannot
be stored as UTF-8).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from judge.errors import ConfigError
from judge.untrusted import MAX_NESTING, lone_surrogate, nesting_problem, surrogate_problem

_MERGE_TAG = "tag:yaml.org,2002:merge"


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """The top-level mapping of `path`; `what` ("config", "rubric") words the errors."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{what} file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        raw = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise ConfigError(
            f"{path}: line {line}: invalid YAML: character U+{exc.character:04X} is not "
            "allowed (YAML allows no control characters)"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise ConfigError(f"{path}:{where} invalid YAML: {problem}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid YAML: {nesting_problem()}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping of {what} keys at the top level")
    return raw


class _StrictLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` refusing keys given twice, deep nesting and lone surrogates (see the
    module docstring), each as a YAML error with its line."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self._depth >= MAX_NESTING:
            raise ComposerError(None, None, nesting_problem(), self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                    continue  # keys merged in with `<<` may be overridden: that is their point
                key = (key_node.tag, key_node.value)
                if key in first:
                    raise ConstructorError(
                        None,
                        None,
                        f"key {key_node.value!r} appears twice in one mapping (first on line "
                        f"{first[key]}); give it once",
                        key_node.start_mark,
                    )
                first[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)

    def construct_scalar(self, node: Any) -> Any:
        value = super().construct_scalar(node)
        if isinstance(value, str) and (where := lone_surrogate(value)) is not None:
            raise ConstructorError(None, None, surrogate_problem(where), node.start_mark)
        return value
