"""The package's shape (issue 32): layers that read bottom-up, no import cycle, short files.

The import graph is read from the source with :mod:`ast` — every ``import`` and ``from … import``
wherever it stands (inside functions too), only ``if TYPE_CHECKING:`` blocks aside — over the three
folders that make up the ``tpguard`` namespace (``tpguard/``, ``adapters/`` → ``tpguard.adapters``,
``benchmark/`` → ``tpguard.benchmark``). import-linter's graph library (grimp) reads one folder per
package and so does not see the two mapped ones; cycles are found with the standard library's
:mod:`graphlib`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"tpguard": "tpguard", "adapters": "tpguard.adapters", "benchmark": "tpguard.benchmark"}

#: the guard's layers, bottom first: a module may import its own layer and the ones below it only
LAYERS = (
    "tpguard.errors",
    "tpguard.detect",      # finding atoms in text
    "tpguard.policy",      # what the policy says (checks its values with the detector's rule)
    "tpguard.redaction",   # rewriting findings to placeholders
    "tpguard.telemetry",   # spans and what they may record
    "tpguard.decision",    # the one Decision shape, the interception handle
    "tpguard.stages",      # arguments, results, exits; the session
    "tpguard.guard",       # the facade
    "tpguard.adapters",    # LangChain, smolagents, MCP
    "tpguard.decorator",   # ``@purpose_bound``: hands a framework's tool to its adapter
)
#: above every layer: the package's front door, the CLI, test helpers, the benchmark
TOP = ("tpguard", "tpguard.cli", "tpguard.testing", "tpguard.benchmark")
MAX_TOP_LEVEL = 12
MAX_LINES = 400
MAX_GUARD_LINES = 300


def _modules() -> dict[str, tuple[Path, bool]]:
    mods: dict[str, tuple[Path, bool]] = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [*package.split("."), *path.relative_to(ROOT / folder).with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            mods[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return mods


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imported(module: str, is_package: bool, tree: ast.AST) -> list[str]:
    """Every name ``module`` imports, absolute (``pkg.mod`` or ``pkg.mod.attr``)."""
    names: list[str] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
                continue
            if isinstance(child, ast.Import):
                names += [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    here = module.split(".")[: None if is_package else -1]
                    here = here[: len(here) - (child.level - 1)]
                    base = ".".join([*here, base] if base else here)
                names += [f"{base}.{a.name}" for a in child.names]
            stack.append(child)
    return names


def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def owner(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, (path, is_package) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = {t for n in _imported(module, is_package, tree)
                         if (t := owner(n)) is not None and t != module}
    return graph


GRAPH = _graph()


def _layer(module: str) -> int | None:
    for rank, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None


def test_the_graph_is_read() -> None:
    """The reader sees what it must: function-level imports, relative imports, the mapped
    folders — and not what it must not (a ``TYPE_CHECKING`` import)."""
    assert "tpguard.detect.detector" in GRAPH["tpguard.policy._rules"]
    assert "tpguard.guard" in GRAPH["tpguard.adapters._smolagents_tool"]
    assert "tpguard.benchmark.report" in GRAPH["tpguard.benchmark.runner.run"]  # inside a function
    assert "tpguard.adapters.langchain" in GRAPH["tpguard.decorator"]  # inside a function
    assert "tpguard.policy.kb" not in GRAPH["tpguard.detect.detector"]  # TYPE_CHECKING only
    assert len(GRAPH) > 300


def test_no_import_cycle() -> None:
    try:
        tuple(TopologicalSorter(GRAPH).static_order())
    except CycleError as err:
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")


def test_lower_layers_never_import_higher_ones() -> None:
    wrong = []
    for module, targets in GRAPH.items():
        rank = _layer(module)
        if rank is None:
            assert module in TOP or module.startswith(tuple(p + "." for p in TOP)), module
            continue
        for target in targets:
            if target.startswith("tpguard") and (_layer(target) is None or _layer(target) > rank):
                wrong.append(f"{module} -> {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_tree_shows_the_layers() -> None:
    core = ROOT / "tpguard"
    top = sorted(p.name for p in core.iterdir()
                 if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file())
    assert len(top) <= MAX_TOP_LEVEL, top
    long = {str(p.relative_to(ROOT)): n for p in core.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long
    assert len((core / "guard.py").read_text(encoding="utf-8").splitlines()) <= MAX_GUARD_LINES


def test_import_tpguard_loads_only_the_guard() -> None:
    """No model runtime, HTTP or test server, framework or benchmark behind ``import tpguard``."""
    code = textwrap.dedent("""
        import sys
        import tpguard
        heavy = ("tpguard.benchmark", "tpguard.testing", "tpguard.adapters", "tpguard.cli",
                 "llama_cpp", "http.server", "socketserver", "langchain", "smolagents", "mcp")
        print(sorted(m for m in sys.modules if m.startswith(heavy)))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
