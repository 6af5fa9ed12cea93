"""``tpguard check --policy FILE --tool NAME --args JSON`` — see the guard decide one call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ..guard import MODES, Guard

__all__ = ["check"]


def check(
    policy: Annotated[Path, typer.Option("--policy", "-p", help="Policy file (YAML or JSON).")],
    tool: Annotated[str, typer.Option("--tool", "-t", help="Tool name.")],
    args: Annotated[str, typer.Option("--args", "-a", help="Tool arguments: a JSON object or @FILE.")],
    mode: Annotated[str, typer.Option("--mode", "-m", help="audit | enforce | redact")] = "enforce",
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON.")] = False,
) -> None:
    """Decide one tool call and print the decision (exit 0 allowed, 1 blocked, 2 bad input)."""
    from ._policy import load_or_exit

    out, err = Console(), Console(stderr=True)
    if mode not in MODES:
        err.print(f"[red]--mode[/] must be one of {', '.join(MODES)} (got {mode!r})")
        raise typer.Exit(2)
    arguments = _parse_args(args, err)
    guard = Guard(load_or_exit(policy, err), mode=mode)  # type: ignore[arg-type]
    decision = guard.check(tool, arguments)
    if as_json:
        payload = decision.to_dict()
        payload["arguments"] = decision.arguments if decision.redacted else None
        out.print_json(json.dumps(payload))
    else:
        colour = {"allow": "green", "block": "red", "redact": "yellow"}[decision.action]
        out.print(f"[bold {colour}]{decision.action.upper()}[/] {tool} ({mode})", highlight=False)
        if decision.findings:
            table = Table("atom", "type", "field", "method", "authorized")
            for f in decision.findings:
                table.add_row(f.atom_id, f.atom_type, f.path, f.method,
                              "[green]yes[/]" if f.authorized else "[red]no[/]")
            out.print(table)
        if decision.message:
            out.print(decision.message, highlight=False)
        if decision.redacted:
            out.print_json(json.dumps(decision.arguments, default=str))
    raise typer.Exit(1 if decision.blocked else 0)


def _parse_args(text: str, err: Console) -> Any:
    try:
        if text.startswith("@"):
            text = Path(text[1:]).read_text(encoding="utf-8")
        value = json.loads(text)
    except (OSError, json.JSONDecodeError) as e:
        err.print(f"[red]--args[/] expected a JSON object or @FILE ({type(e).__name__}: "
                  f"{getattr(e, 'msg', 'unreadable')})", highlight=False)
        raise typer.Exit(2) from None
    if not isinstance(value, dict):
        err.print("[red]--args[/] expected a JSON object of argument names to values")
        raise typer.Exit(2)
    return value
