"""What ``tpguard bench cases`` does the same way for the suites with their own case types
(acquisition, exposure): print one case as JSON, or the statistics as JSON."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from ._case_list import CaseList

__all__ = ["echo_case", "echo_json", "print_problems"]


def echo_case(suite: CaseList, case_id: str) -> None:
    """Print case ``case_id`` as JSON; one line on stderr and exit 2 when the suite lacks it."""
    try:
        case = suite.case(case_id)
    except KeyError:
        Console(stderr=True).print(f"[red]error:[/] no case {escape(repr(case_id))} in suite "
                                   f"{suite.name!r}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    typer.echo(case.model_dump_json(indent=2))


def echo_json(data: dict[str, Any]) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def print_problems(out: Console, problems: Sequence[Any], total: int, failed: int, *,
                   unit: str = "cases", checks: int | None = None) -> None:
    """One ``FAIL`` line per problem, then ``passed/total {unit} pass [the N checks] (summary)``."""
    for p in problems:
        out.print(f"[red]FAIL[/] {escape(f'{p.case_id} [{p.check}] {p.message}')}",
                  highlight=False, soft_wrap=True)
    by = Counter(p.check for p in problems)
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(by.items())) or "no problems"
    colour = "red" if failed else "green"
    which = f" the {checks} checks" if checks is not None else ""
    out.print(f"[bold {colour}]{total - failed}/{total} {unit} pass[/]{which} ({summary})",
              highlight=False)
