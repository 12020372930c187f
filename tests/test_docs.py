"""The docs (issue 30, item 4): the MkDocs site builds strictly (broken links, missing anchors
and pages left out of the nav fail it), its generated references name every CLI command and
option and every rubric field, and the README stays short, with blocks that are a valid rubric
and a valid config, and links that resolve."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml
from pydantic import BaseModel

from judge.cli.main import app
from judge.config.reference import field_docstrings
from judge.config.run_config import config_from_mapping
from judge.rubric import Rubric, load_rubric
from tests.helpers import REPO

README = REPO / "README.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def _text(page: Path) -> str:
    """A built page's text: tags dropped, entities decoded, so code spans read as typed."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def _commands(command: Any, ctx: Any) -> list[tuple[str, Any]]:
    """Every command, as `--help` lists them. (Typer bundles its own click, so its classes are
    not the `click` package's: duck typing, as the docs hook does.)"""
    found = [(ctx.command_path, command)]
    for name in command.list_commands(ctx) if hasattr(command, "list_commands") else []:
        sub = command.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            found += _commands(sub, sub.context_class(sub, info_name=name, parent=ctx))
    return found


def test_the_cli_page_names_every_command_and_option(site: Path) -> None:
    page = _text(site / "cli" / "index.html")
    root = typer.main.get_command(app)
    commands = _commands(root, root.context_class(root, info_name="judge"))
    assert len(commands) > 15
    missing, options = [], 0
    for path, command in commands:
        if path not in page:
            missing.append(path)
        for param in command.params:
            if param.param_type_name == "option" and not getattr(param, "hidden", False):
                options += 1
                missing += [f"{path} {o}" for o in param.opts if o not in page]
    assert options > 60 and missing == []


def _models(model: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []
    todo = [model]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        for field in current.model_fields.values():
            for arg in _flatten(field.annotation):
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    todo.append(arg)
    return seen


def _flatten(annotation: Any) -> list[Any]:
    args = getattr(annotation, "__args__", None)
    return [annotation] if not args else [a for arg in args for a in _flatten(arg)]


def test_the_rubric_page_documents_every_rubric_field(site: Path) -> None:
    page = _text(site / "rubrics" / "index.html")
    models = _models(Rubric)
    assert {m.__name__ for m in models} >= {"Rubric", "Criterion", "OutputSpec", "PairwiseScale"}
    for model in models:
        for name, doc in field_docstrings(model).items():
            assert name in page, f"{model.__name__}.{name} is not on the rubrics page"
            first = re.sub(r"[`*]", "", doc).split("\n")[0][:40]
            assert first in page, f"{model.__name__}.{name}'s description is not on the page"


def test_the_python_api_page_documents_the_public_calls(site: Path) -> None:
    page = _text(site / "python-api" / "index.html")
    for name in ("judge.evaluate", "judge.calibrate", "judge.compare", "Result"):
        assert name in page


def test_the_readme_is_short_and_its_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert links, "the README links to the docs"
    broken = [link for link in links if "://" not in link and not (REPO / link).exists()]
    assert broken == []
    for command in ("make demo", "make test", "judge run", "--dry-run", "judge.evaluate"):
        assert command in text


def test_the_readme_rubric_and_config_are_valid(tmp_path: Path) -> None:
    blocks = re.findall(r"```yaml\n(.*?)\n```", README.read_text(encoding="utf-8"), re.S)
    rubric_text, config_text = blocks
    (tmp_path / "support.yaml").write_text(rubric_text + "\n")
    rubric = load_rubric(tmp_path / "support.yaml")
    assert rubric.kind == "pairwise"
    config = config_from_mapping(yaml.safe_load(config_text), tmp_path, source="README.md")
    assert config.data.columns["system"] == "model_name"
    assert {j.provider for j in config.judges} == {"openai", "anthropic"}
