"""Layout promises: adapters/ and benchmark/ install only under tpguard.*, and tpguard works bare."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]


def _package_dirs() -> set[str]:
    found = set()
    for top, dotted in (("tpguard", "tpguard"), ("adapters", "tpguard.adapters"),
                        ("benchmark", "tpguard.benchmark")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            found.add(".".join([dotted, *rel.parts]))
    return found


def test_every_package_folder_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert _package_dirs() == listed


def test_installed_import_paths_map_into_tpguard(tmp_path: Path) -> None:
    import tpguard.adapters
    import tpguard.benchmark

    assert Path(tpguard.adapters.__file__).parent.name == "adapters"
    assert Path(tpguard.benchmark.__file__).parent.name == "benchmark"
    # From a neutral directory (pytest puts tests/ on sys.path, where tests/adapters would look
    # like a namespace package), nothing installed answers to the top-level names.
    code = ("import importlib.util as u; "
            "print(u.find_spec('adapters') is None and u.find_spec('benchmark') is None)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "True", out.stderr


@pytest.mark.slow
def test_wheel_has_no_top_level_adapters_or_benchmark(tmp_path: Path) -> None:
    pytest.importorskip("setuptools")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    wheel = next(tmp_path.glob("tpguard-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert "adapters" not in tops and "benchmark" not in tops
    assert "tpguard/adapters/__init__.py" in names and "tpguard/benchmark/__init__.py" in names
    assert "tpguard/py.typed" in names
    # the licence travels with the wheel (license-files), and the wheel's version is the package's
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    import tpguard

    assert wheel.name.startswith(f"tpguard-{tpguard.__version__}-")
    assert any(n.startswith("tpguard/benchmark/cases/") for n in names)


def test_the_version_has_one_source() -> None:
    """pyproject.toml holds the version; ``tpguard.__version__`` reads it from the installed
    metadata, so the two cannot disagree (a package rebuilt with a new version says the new one)."""
    from importlib.metadata import version

    import tpguard

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"].get("dynamic", [])
    assert version("tpguard") == tpguard.__version__ == project["project"]["version"]
    assert "__version__ =" not in (ROOT / "tpguard" / "__init__.py").read_text()
    assert (ROOT / "LICENSE").read_text().lstrip().startswith("Apache License")


def test_core_imports_and_works_without_any_extra() -> None:
    """Block every optional framework and run the core, the decorator and the CLI."""
    code = textwrap.dedent(
        """
        import sys, importlib.abc
        BLOCKED = ("langchain", "langchain_core", "langgraph", "smolagents", "presidio_analyzer",
                   "spacy", "faker", "scipy", "plotly", "openinference", "langchain_openai")
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError(f"blocked {name}")
        sys.meta_path.insert(0, Block())
        from tpguard import Guard, PolicyKB, PrivateAtom, ToolSpec, purpose_bound
        import tpguard.cli, tpguard.adapters
        g = Guard(PolicyKB(atoms=[PrivateAtom(id="p", type="phone", value="415-555-0199")]),
                  mode="enforce")
        @purpose_bound(purpose="notify", sink="notification", free_text=["m"], guard=g)
        def notify(m: str) -> str:
            return m
        assert notify("hello") == "hello"
        assert g.check("notify", {"m": "415 555 0199"}).blocked
        assert not [m for m in sys.modules if m.split(".")[0] in BLOCKED]
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
