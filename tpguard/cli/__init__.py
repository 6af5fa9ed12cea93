"""The ``tpguard`` command line (typer + rich).

``tpguard policy validate FILE`` · ``tpguard policy matrix FILE`` · ``tpguard check ...`` ·
``tpguard models list|fetch`` · ``tpguard serve-model MODEL`` · ``tpguard mcp-proxy ... -- CMD``; the
benchmark adds ``tpguard bench ...`` and ``tpguard audit ...`` when it is installed. Exit codes and
one-line errors: :mod:`tpguard.cli._console`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ._check import check
from ._console import EXIT_TEXT, OneLineErrors
from ._local import models_app, serve_model
from ._mcp import mcp_proxy
from ._policy import policy_app

__all__ = ["app", "main"]

app = typer.Typer(
    name="tpguard",
    cls=OneLineErrors,
    help=f"Purpose-bound privacy guard for tool-using LLM agents.\n\n{EXIT_TEXT}",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # tracebacks could show private values from local variables
)
app.add_typer(policy_app, name="policy")
app.command("check")(check)
app.add_typer(models_app, name="models")
app.command("serve-model")(serve_model)
app.command("mcp-proxy")(mcp_proxy)


def _print_version(value: bool) -> None:
    if value:
        from tpguard import __version__

        typer.echo(f"tpguard {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print the version and exit.",
    )] = False,
) -> None:
    """Purpose-bound privacy guard for tool-using LLM agents."""


def _add_benchmark() -> None:
    try:
        from tpguard.benchmark.cli import register
    except ImportError:  # the benchmark's own extras are missing; the core CLI still works
        return
    register(app)


_add_benchmark()


def main() -> None:
    app()
