"""``tpguard bench perf [--json] [--quick] [--check]``: the guard's cost and scaling, one run."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

__all__ = ["perf"]


def perf(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    quick: Annotated[bool, typer.Option(
        "--quick", help="Smaller sizes (10→10k atoms, 1 KB→100 KB, 1k→5k leaves; about a minute). "
        "Same ratio keys, marked quick.")] = False,
    check: Annotated[bool, typer.Option(
        "--check", help="Exit 1 when a ratio misses its target (default: exit 0, a report).")] = False,
    sizes: Annotated[str | None, typer.Option("--sizes", hidden=True,
                                              help="full | quick | tiny (tests).")] = None,
) -> None:
    """Measure the guard's cost per tool call beside a bare LangChain call and the PII baselines,
    and how it scales with atoms, text length, nesting and sessions (median of repeats, each
    call capped so a slow core reports a timeout instead of hanging). See docs/perf.md."""
    from ..perf import SIZES, ratios, render, run_perf, to_json

    err = Console(stderr=True)
    name = sizes or ("quick" if quick else "full")
    if name not in SIZES:
        err.print(f"[red]error:[/] --sizes must be one of {', '.join(SIZES)}", highlight=False)
        raise typer.Exit(2)
    with err.status("measuring…") as status:
        run = run_perf(SIZES[name], progress=lambda what: status.update(f"measuring {what}…"))
    if as_json:
        typer.echo(json.dumps(to_json(run), indent=2))
    else:
        out = Console()
        render(run, out if out.is_terminal else Console(width=120))  # logs: no wrapped names
    if check and not all(r.ok for r in ratios(run)):
        raise typer.Exit(1)
