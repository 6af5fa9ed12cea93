"""``tpguard check --policy FILE --tool NAME --args JSON`` — see the guard decide one call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import TpguardError
from ..guard import MODES, Guard
from ..policy._file import depth_exceeds
from ._console import EXIT_BLOCKED, EXIT_OK, fail, print_json, stdout_console

__all__ = ["check"]

#: Deepest JSON nesting ``--args`` may use (Python's own parser gives up near 1,000).
MAX_ARGS_DEPTH = 100


def check(
    policy: Annotated[Path, typer.Option("--policy", "-p", help="Policy file (YAML or JSON).")],
    tool: Annotated[str, typer.Option("--tool", "-t", help="Tool name.")],
    args: Annotated[str, typer.Option("--args", "-a", help="Tool arguments: a JSON object or @FILE.")],
    mode: Annotated[str, typer.Option("--mode", "-m", help="audit | enforce | redact")] = "enforce",
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON.")] = False,
) -> None:
    """Decide one tool call and print the decision.

    Exit codes: 0 allowed; 1 blocked; 2 input or usage error, one line on stderr.
    """
    from ._policy import load_or_exit

    if mode not in MODES:
        fail(f"--mode must be one of {', '.join(MODES)}")
    arguments = _parse_args(args)
    guard = Guard(load_or_exit(policy), mode=mode)  # type: ignore[arg-type]
    try:
        decision = guard.check(tool, arguments)
    except (TpguardError, RecursionError) as e:
        # The guard refused to read the arguments (a limit, a type): an input error, not a block.
        fail(f"--args: the guard could not read the arguments ({type(e).__name__})")
    if as_json:
        payload = decision.to_dict()
        payload["arguments"] = decision.arguments if decision.redacted else None
        print_json(payload)
    else:
        _print_decision(decision, tool, mode)
    raise typer.Exit(EXIT_BLOCKED if decision.blocked else EXIT_OK)


def _print_decision(decision: Any, tool: str, mode: str) -> None:
    out = stdout_console()
    colour = {"allow": "green", "block": "red", "redact": "yellow"}[decision.action]
    out.print(f"[bold {colour}]{decision.action.upper()}[/] {escape(tool)} ({mode})", highlight=False)
    if decision.findings:
        table = Table("atom", "type", "field", "method", "authorized")
        for f in decision.findings:
            table.add_row(escape(f.atom_id), escape(f.atom_type), escape(f.path), f.method,
                          "[green]yes[/]" if f.authorized else "[red]no[/]")
        out.print(table)
    if decision.message:
        out.print(decision.message, markup=False, highlight=False)
    if decision.redacted:
        print_json(decision.arguments)


def _parse_args(text: str) -> Any:
    """The ``--args`` JSON object; every failure is one line that never quotes the input."""
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            fail(f"--args: the @FILE is not UTF-8 text (byte {e.start})")
        except OSError as e:
            fail(f"--args: the @FILE cannot be read ({type(e).__name__})")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        fail(f"--args: expected a JSON object or @FILE (invalid JSON at line {e.lineno}, "
             f"column {e.colno}: {e.msg})")
    except RecursionError:
        fail(f"--args: expected at most {MAX_ARGS_DEPTH} levels of nesting")
    except ValueError:  # Python's int-string conversion limit (4,300 digits)
        fail("--args: expected numbers of at most 4300 digits")
    if not isinstance(value, dict):
        fail("--args: expected a JSON object of argument names to values")
    if depth_exceeds(value, MAX_ARGS_DEPTH):
        fail(f"--args: expected at most {MAX_ARGS_DEPTH} levels of nesting")
    return value

