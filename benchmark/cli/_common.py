"""Shared pieces of the ``tpguard bench`` commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ..cases.schema import Suite

__all__ = ["SeedOpt", "SourceOpt", "SuiteArg", "load_or_exit"]

SuiteArg = Annotated[str, typer.Argument(help="need-to-know | public-derived")]
SourceOpt = Annotated[
    Path | None, typer.Option("--source", help="Public data folder (public-derived suite).")
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Generator seed (need-to-know suite).")]


def load_or_exit(name: str, source: Path | None, seed: int, err: Console) -> Suite:
    """Load a suite, or print why not and exit 2."""
    from ..cases.registry import SuiteError, load_suite

    try:
        return load_suite(name, source=source, seed=seed)
    except (SuiteError, OSError) as e:
        err.print(f"[red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except ValueError as e:  # a builder's own data errors (pydantic, bad files)
        err.print(f"[red]error:[/] could not build suite {escape(name)!r}: {escape(_describe(e))}",
                  highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _describe(e: ValueError) -> str:
    """The error without input values (a pydantic error would otherwise echo private data)."""
    errors = getattr(e, "errors", None)
    if callable(errors):
        try:
            items = errors(include_input=False, include_url=False)
            return "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in items[:5])
        except TypeError:
            pass
    return f"{type(e).__name__}: {e}"
