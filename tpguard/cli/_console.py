"""What every ``tpguard`` command shares: exit codes, one-line errors, consoles, JSON output.

Exit codes (documented in ``tpguard --help`` and ``docs/policy.md``):

- ``0`` — allowed (``check``) or ok;
- ``1`` — blocked: ``tpguard check`` withheld the call, and nothing else;
- ``2`` — an input or usage error, reported as exactly one line on stderr, never a traceback.

Error lines name options, files and paths inside files, never the values given to them: an
argument on the command line may be the very secret the guard protects.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import typer
from rich.console import Console
from typer.core import TyperGroup

__all__ = [
    "EXIT_BLOCKED",
    "EXIT_INPUT",
    "EXIT_OK",
    "EXIT_TEXT",
    "OneLineErrors",
    "fail",
    "print_json",
    "stdout_console",
]

EXIT_OK, EXIT_BLOCKED, EXIT_INPUT = 0, 1, 2
EXIT_TEXT = ("Exit codes: 0 allowed or ok; 1 blocked (tpguard check only); 2 input or usage "
             "error, one line on stderr.")
_OPTION = re.compile(r"--?[A-Za-z][\w-]*")  # an option name, known or mistyped: safe to echo
#: Width of the console when stdout is not a terminal: tables are never wrapped in a pipe or file.
_PIPE_WIDTH = 10_000


def stdout_console() -> Console:
    """A rich console on stdout, at full width when stdout is not a terminal (unless COLUMNS says)."""
    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(width=_PIPE_WIDTH)


def print_json(payload: Any) -> None:
    """Machine-readable output: plain JSON on stdout, never wrapped or coloured."""
    typer.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))


def one_line(message: str) -> str:
    return " ".join(message.split())


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    """Print ``tpguard: error: MESSAGE`` as one line on stderr and exit with ``code``."""
    typer.echo(f"tpguard: error: {one_line(message)}", err=True)
    raise typer.Exit(code)


class OneLineErrors(TyperGroup):
    """The root command: usage errors become one stderr line (exit 2) with argument values removed.

    Click prints a usage block and typer a rich panel, and both quote the offending value
    (``Invalid value for '--mode': 'SECRET' is not one of …``); here every command-line word of
    three characters or more that is not a command name or shaped like an option is replaced by
    ``<value>``.
    """

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            rv = super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.Abort:
            typer.echo("tpguard: aborted", err=True)
            sys.exit(130)
        except typer.TyperException as e:  # typer's (vendored) click exceptions
            if type(e).__name__ == "NoArgsIsHelpError":
                typer.echo(e.ctx.get_help())  # type: ignore[attr-defined]
                sys.exit(EXIT_INPUT)
            ctx = getattr(e, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            message = _scrub(getattr(e, "format_message", e.__str__)(), argv, _names(self))
            typer.echo(f"tpguard: error: {one_line(message)}{hint}", err=True)
            sys.exit(getattr(e, "exit_code", EXIT_INPUT))
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


def _names(command: Any) -> set[str]:
    """Every command and option name under ``command`` (words that are safe to echo)."""
    names: set[str] = set()
    stack = [command]
    while stack:
        cmd = stack.pop()
        names.add(cmd.name or "")
        for param in cmd.params:
            names.update(param.opts, param.secondary_opts)
        stack.extend(getattr(cmd, "commands", {}).values())
    return names


def _scrub(message: str, argv: Iterable[str], names: set[str]) -> str:
    words: set[str] = set()
    for arg in argv:
        head, eq, tail = arg.partition("=")
        for word in ((tail,) if eq and head in names else (arg,)):
            if len(word) >= 3 and word not in names and not _OPTION.fullmatch(word):
                words.add(word)
    for word in sorted(words, key=len, reverse=True):
        message = message.replace(word, "<value>")
    return message
