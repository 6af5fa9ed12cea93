"""The ``tpguard`` command line (typer + rich).

``tpguard policy validate FILE`` · ``tpguard policy matrix FILE`` · ``tpguard check ...``; the
benchmark adds ``tpguard bench ...`` and ``tpguard audit ...`` when it is installed.
"""

from __future__ import annotations

import typer

from ._check import check
from ._policy import policy_app

__all__ = ["app", "main"]

app = typer.Typer(
    name="tpguard",
    help="Purpose-bound privacy guard for tool-using LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # tracebacks could show private values from local variables
)
app.add_typer(policy_app, name="policy")
app.command("check")(check)


def _add_benchmark() -> None:
    try:
        from tpguard.benchmark.cli import register
    except ImportError:  # the benchmark's own extras are missing; the core CLI still works
        return
    register(app)


_add_benchmark()


def main() -> None:
    app()
