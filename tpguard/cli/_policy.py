"""``tpguard policy validate|matrix FILE``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ..errors import PolicyError
from ..policy import PolicyKB

__all__ = ["load_or_exit", "policy_app"]

policy_app = typer.Typer(help="Validate and inspect policy files.", no_args_is_help=True)
PolicyFile = Annotated[Path, typer.Argument(help="Policy file (YAML or JSON).")]
_SYMBOL = {"authorized": "[green]✓[/]", "forbidden": "[red]−[/]", "conditional": "[yellow]◐[/]"}


def load_or_exit(path: Path, err: Console) -> PolicyKB:
    try:
        return PolicyKB.from_file(path)
    except PolicyError as e:
        err.print(f"[red]invalid policy[/] {e}", markup=True, highlight=False)
        raise typer.Exit(2) from None


@policy_app.command("validate")
def validate(file: PolicyFile) -> None:
    """Check a policy file against the canonical shape; exit 2 with the problem if it is not."""
    out, err = Console(), Console(stderr=True)
    kb = load_or_exit(file, err)
    counts = kb.matrix().counts()
    out.print(
        f"[green]ok[/] {file}: {len(kb.atoms)} atoms, {len(kb.tools)} tools, "
        f"{len(kb.authorizations)} authorizations, {len(kb.rules)} rules; matrix "
        f"{counts['authorized']} authorized, {counts['forbidden']} forbidden, "
        f"{counts['conditional']} conditional", highlight=False,
    )


@policy_app.command("matrix")
def matrix(file: PolicyFile) -> None:
    """Print the field–tool authorization matrix A (atoms × tools) and which rule decided each cell."""
    out, err = Console(), Console(stderr=True)
    kb = load_or_exit(file, err)
    m = kb.matrix()
    table = Table(title=f"Authorization matrix — {file.name}", show_lines=False)
    table.add_column("atom (type)")
    for t in m.tools:
        table.add_column(t, justify="center")
    for a in kb.atoms:
        table.add_row(f"{a.id} ({a.type})", *(_cell(m[(a.id, t)]) for t in m.tools))
    out.print(table)
    out.print("✓ authorized  − forbidden  ◐ conditional (fields/forms)", highlight=False)


def _cell(access) -> str:
    sym = _SYMBOL[access.state]
    if access.state == "conditional":
        cond = ",".join((*access.fields, *access.forms))
        return f"{sym} {cond}"
    return sym
