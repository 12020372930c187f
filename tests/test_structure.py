"""The package's structure holds its rules (issues 11 and 30): one package per pipeline stage,
layers that import only downward, no import cycles, a short fixed list of top-level modules,
no file name used twice, short functions, one owner of the run directory's layout, a report
that reads typed fields.

Imports are read with `ast` from the source, module level and inside functions alike (a lazy
import still ties two modules together), except those under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import REPO

PACKAGES = ("judge", "calibration")

CORE = {"errors", "types", "hashing", "files", "untrusted", "yamlfile", "sqlite", "families"}
CORE |= {"normalise", "exports"}
"""The only modules directly in judge/ (besides `__init__`): what every stage may use. Text
folding (`normalise`) is core rather than blinding's because family detection folds names
too; `exports` is how a package declares its public names."""

LAYERS: dict[str, int] = {
    "core": 0,
    "config": 1,
    "inputs": 2,
    "blinding": 2,
    "rubric": 2,
    "summary": 3,
    "simulator": 3,
    "store": 4,
    "providers": 5,
    "judging": 6,
    "batch": 7,
    "cluster": 7,
    "analysis": 7,
    "report": 7,
    "run": 8,
    "labelling": 9,
    "exporters": 9,
    "service": 10,
    "cli": 11,
    "pytest_plugin": 11,
}
"""Each package of judge/ and its layer: a module imports only from its own package or from a
lower layer (core -> config -> stage libraries -> judging -> analysis/report -> run -> the
edges). Two packages of one layer do not import each other."""

FUNCTION_LINES = 80
"""A function's body, docstring left out, nested functions counted in."""

MODULE_LINES = 800
"""A soft ceiling: a module that grows past it is a concept that wants a package."""

RUN_DIR_FILES = {
    "store.sqlite",
    "blinding_key.json",
    "blinded.jsonl",
    "pairs.jsonl",
    "scrub_report.json",
    "judgments.jsonl",
    "judgments.parquet",
    "summary.json",
    "report.md",
    "report.html",
    "plots",
    "run.lock",
    "response_cache.sqlite",
    "dataframes",
    "alignment",
}
"""File names inside a run dir (and the cache beside it): only `judge/store/rundir.py` spells them
(and `judge/store/run_store.py` its own file's name)."""


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules `name` imports (a `from package import name` of a submodule counts
    as importing that submodule)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            # The longest known module the import names (a.b.c imports a.b.c or a.b).
            parts = target.split(".")
            for end in range(len(parts), 0, -1):
                candidate = ".".join(parts[:end])
                if candidate in known:
                    if candidate != name:
                        out.add(candidate)
                    break
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph = {name: _imports(name, path, known) for name, path in modules.items()}
    # A package's __init__ re-exporting its submodules is not a cycle with them: a submodule
    # importing a sibling goes through the package, but not through its __init__'s names.
    for name in graph:
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    return graph


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    graph = _graph()
    assert len(graph) > 60 and sum(map(len, graph.values())) > 150  # it read the package
    assert _cycles(graph) == []


def test_calibration_imports_nothing_from_judge() -> None:
    graph = _graph()
    leaks = {m: sorted(t for t in ts if t.startswith("judge")) for m, ts in graph.items()}
    assert {m: t for m, t in leaks.items() if m.startswith("calibration") and t} == {}


def _string_constants(path: Path) -> list[tuple[int, str]]:
    """String literals in code (docstrings left out: prose may name a file)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            out.append((node.lineno, node.value))
    return out


def _names_a_run_dir_file(text: str) -> bool:
    if text.startswith("/v1/"):
        return False  # an API route, not a file
    return any(
        text == name or text.endswith("/" + name) or text.startswith(name + "/")
        for name in RUN_DIR_FILES
    )


def test_only_rundir_names_run_dir_files() -> None:
    owners = {REPO / "judge" / "store" / "rundir.py", REPO / "judge" / "store" / "run_store.py"}
    offenders = [
        f"{path.relative_to(REPO)}:{line}: {text!r}"
        for path in _modules().values()
        if path not in owners
        for line, text in _string_constants(path)
        if _names_a_run_dir_file(text)
    ]
    assert offenders == []


def test_the_run_dir_file_check_would_catch_a_file_name() -> None:
    assert _names_a_run_dir_file("summary.json")
    assert _names_a_run_dir_file("runs/x/store.sqlite")
    assert not _names_a_run_dir_file("write the summary.json of a run")


def test_only_rundir_and_the_store_open_sqlite_files() -> None:
    allowed = {"judge.sqlite", "judge.store.run_store", "judge.store.migrations"}
    users = sorted(
        name
        for name, path in _modules().items()
        if name not in allowed and "sqlite3.connect(" in path.read_text(encoding="utf-8")
    )
    assert users == []


def test_the_report_reads_fields_not_dict_keys() -> None:
    """No `.get("key")` in the report: it reads the typed summary's fields, so a renamed field
    is an error in a test, not "n/a" on a page."""
    sources = sorted((REPO / "judge" / "report").glob("*.py"))
    calls = [
        f"{path.relative_to(REPO)}:{node.lineno}"
        for path in sources
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        # A key spelled out: a dict walked by its keys (`summary.get("comparison")`).
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ]
    assert len(sources) >= 4 and calls == []


def _stage(module: str) -> str | None:
    """The layer name of a judge module (None outside judge/)."""
    parts = module.split(".")
    if parts[0] != "judge":
        return None
    if len(parts) == 1 or parts[1] in CORE:
        return "core"
    return parts[1]


def _upward(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in graph.items():
        here = _stage(module)
        if here is None:
            continue
        for target in targets:
            there = _stage(target)
            if there is None or there == here:
                continue
            if LAYERS[there] >= LAYERS[here]:
                found.append(
                    f"{module} -> {target} ({here} {LAYERS[here]}, {there} {LAYERS[there]})"
                )
    return sorted(found)


def test_the_layer_check_catches_an_upward_import() -> None:
    graph = {
        "judge.store.rundir": {"judge.labelling.label_store", "judge.errors"},
        "judge.inputs.tables": {"judge.blinding.scrubber"},
        "judge.run.prepare": {"judge.store.rundir", "judge.run.staging"},
    }
    assert _upward(graph) == [
        "judge.inputs.tables -> judge.blinding.scrubber (inputs 2, blinding 2)",
        "judge.store.rundir -> judge.labelling.label_store (store 4, labelling 9)",
    ]


def test_layers_import_only_downward() -> None:
    graph = _graph()
    assert sum(len(t) for m, t in graph.items() if _stage(m) == "run") > 20  # it read them
    assert _upward(graph) == []


def test_every_package_has_a_layer_and_judge_holds_only_the_core() -> None:
    judge = REPO / "judge"
    packages = {p.parent.name for p in judge.glob("*/__init__.py")}
    modules = {p.stem for p in judge.glob("*.py")} - {"__init__"}
    assert packages == set(LAYERS) - {"core"}
    assert modules == CORE


def test_each_package_declares_its_public_names() -> None:
    import importlib

    for name in sorted(set(LAYERS) - {"core"}):
        package = importlib.import_module(f"judge.{name}")
        assert package.__all__, name
        for public in package.__all__:
            assert getattr(package, public) is not None, f"judge.{name}.{public}"


def test_no_file_name_is_used_twice() -> None:
    """A module is found by its name: judge/ and calibration/ give each name once."""
    seen: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if path.name not in ("__init__.py", "__main__.py"):
                seen.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    assert len(seen) > 150
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


def _long_functions(path: Path, limit: int) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            first = body[0]
            docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            start = body[1].lineno if docstring and len(body) > 1 else first.lineno
            lines = (node.end_lineno or node.lineno) - start + 1
            if lines > limit:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({lines})")
    return found


def test_the_function_check_counts_the_body() -> None:
    source = REPO / "tests" / "test_structure.py"
    assert any("_upward" in f for f in _long_functions(source, 10))
    assert not any("_upward" in f for f in _long_functions(source, 30))


def test_functions_stay_short() -> None:
    long = [f for path in _modules().values() for f in _long_functions(path, FUNCTION_LINES)]
    assert long == []


def test_modules_stay_under_the_ceiling() -> None:
    sizes = {
        str(path.relative_to(REPO)): len(path.read_text(encoding="utf-8").splitlines())
        for path in _modules().values()
    }
    # Word lists are data, not logic: the lexicon may grow with the markers it knows.
    exempt = {"judge/blinding/lexicon.py"}
    assert {p: n for p, n in sizes.items() if n > MODULE_LINES and p not in exempt} == {}


def test_finishing_a_run_does_not_load_scipy_stats() -> None:
    """scipy.stats costs about half a second of CPU to import (its distributions' docstrings
    are built on import); the analysis and report of every run need only scipy.special's
    functions, so a regression here is half a second on every `judge run`, `judge report`
    and `judge calibrate` (bench: `judge report` 2.86 -> 2.37 s CPU, medians of 5)."""
    import subprocess
    import sys

    code = (
        "import sys, judge.run.lifecycle, judge.run.analyse, judge.report, calibration.calibrate,"
        " calibration.compare, calibration.cascade; print('scipy.stats' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
