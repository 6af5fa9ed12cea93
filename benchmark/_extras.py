"""Optional dependencies: one line that names the extra to install, instead of a traceback.

    require_extra("plotly", "bench")                       # raises MissingExtra if absent
    require_extra("opentelemetry.exporter.otlp.proto.http", "otlp", what="--otlp-endpoint")
    missing_modules(BENCH_MODULES)                          # ["faker", "scipy"] or []

``find_spec`` looks the module up without importing it (for a dotted name, only its parents are
imported), so a check costs microseconds and never runs the optional package's import side effects.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

__all__ = ["BENCH_MODULES", "MissingExtra", "missing_modules", "require_bench", "require_extra"]

#: What every ``tpguard bench`` command imports beyond the core (the ``bench`` extra).
BENCH_MODULES = ("faker", "numpy", "scipy", "plotly", "matplotlib", "langchain", "langgraph",
                 "presidio_analyzer", "docx", "openpyxl", "pypdf", "fpdf")  # the last four: acquisition files


class MissingExtra(ImportError):
    """An optional dependency is not installed; ``str(e)`` is one line naming the extra."""

    def __init__(self, extra: str, modules: Iterable[str], what: str = "") -> None:
        self.extra = extra
        self.modules = tuple(modules)
        subject = what or "this command"
        super().__init__(f"{subject} needs the '{extra}' extra (missing: {', '.join(self.modules)})"
                         f": pip install 'tpguard[{extra}]'")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing, or the name is malformed
        return False


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported, in order."""
    return [m for m in modules if not _installed(m)]


def require_extra(module: str | Iterable[str], extra: str, *, what: str = "") -> None:
    """Raise :class:`MissingExtra` (an ``ImportError``) unless every module is importable."""
    missing = missing_modules([module] if isinstance(module, str) else module)
    if missing:
        raise MissingExtra(extra, missing, what)


def require_bench(what: str = "tpguard bench") -> None:
    """The check every ``tpguard bench`` / ``tpguard audit`` command makes before its imports."""
    require_extra(BENCH_MODULES, "bench", what=what)
