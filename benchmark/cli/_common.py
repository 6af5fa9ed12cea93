"""Shared pieces of the ``tpguard bench`` commands."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..cases.schema import Suite

__all__ = ["SeedOpt", "SourceOpt", "SuiteArg", "fail", "load_or_exit", "out_console", "progress"]

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


def out_console() -> Console:
    """The stdout console: the terminal's width on a terminal; when stdout is a file or a pipe,
    wide enough that no table wraps (``COLUMNS`` still wins when set)."""
    console = Console()
    if console.is_terminal or "COLUMNS" in os.environ:
        return console
    return Console(width=1000)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` as one line on stderr; ``raise fail(...)`` exits with ``code``."""
    Console(stderr=True).print(f"[red]error:[/] {escape(message)}", highlight=False,
                               soft_wrap=True)
    return typer.Exit(code)


def require_bench_extra(what: str = "tpguard bench") -> None:
    """Exit 2 with one line naming the ``bench`` extra when its packages are missing (a bare
    ``pip install tpguard`` has the guard, not the benchmark)."""
    from .._extras import MissingExtra, require_bench

    try:
        require_bench(what)
    except MissingExtra as e:
        raise fail(str(e)) from None


def progress(label: str) -> Progress:
    """A rich progress bar on stderr, shown only when stderr is a terminal."""
    console = Console(stderr=True)
    return Progress(TextColumn(f"[bold]{escape(label)}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, disable=not console.is_terminal,
                    transient=True)
