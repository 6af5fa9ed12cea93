"""``tpguard policy validate|matrix FILE [--json]``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import PolicyError
from ..policy import Access, PolicyKB
from ._console import EXIT_INPUT, EXIT_TEXT, fail, print_json, stdout_console

__all__ = ["load_or_exit", "policy_app"]

policy_app = typer.Typer(help=f"Validate and inspect policy files.\n\n{EXIT_TEXT}",
                         no_args_is_help=True)
PolicyFile = Annotated[Path, typer.Argument(help="Policy file (YAML or JSON).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
_SYMBOL = {"authorized": "[green]✓[/]", "forbidden": "[red]−[/]", "conditional": "[yellow]◐[/]"}


def load_or_exit(path: Path, *, as_json: bool = False) -> PolicyKB:
    """The policy in ``path``, or one stderr line naming the first problem and exit 2.

    With ``as_json`` every problem is also printed on stdout as ``{"ok": false, "errors": [...]}``.
    """
    try:
        return PolicyKB.from_file(path)
    except PolicyError as e:
        if as_json:
            print_json({"ok": False, "file": str(path),
                        "errors": [{"path": p, "expected": m} for p, m in e.problems]})
        more = len(e.problems) - 1
        tail = f" (and {more} more problem{'s' * (more > 1)}: tpguard policy validate --json)" if more else ""
        first = PolicyError(e.source, e.path, e.expected)
        fail(f"invalid policy: {first}{tail}", EXIT_INPUT)


@policy_app.command("validate")
def validate(file: PolicyFile, as_json: AsJson = False) -> None:
    """Check a policy file and print its counts.

    Checked: the canonical shape, plain YAML (no anchors, aliases or duplicate keys), quoted atom
    values, values long enough to detect, one decision per atom and tool. Exit 0 when valid; 2 with
    one line naming the first problem otherwise (--json lists every problem on stdout).
    """
    kb = load_or_exit(file, as_json=as_json)
    counts = kb.matrix().counts()
    if as_json:
        print_json({"ok": True, "file": str(file), "atoms": len(kb.atoms), "tools": len(kb.tools),
                    "authorizations": len(kb.authorizations), "rules": len(kb.rules),
                    "matrix": counts, "errors": []})
        return
    stdout_console().print(
        f"[green]ok[/] {escape(str(file))}: {len(kb.atoms)} atoms, {len(kb.tools)} tools, "
        f"{len(kb.authorizations)} authorizations, {len(kb.rules)} rules; matrix "
        f"{counts['authorized']} authorized, {counts['forbidden']} forbidden, "
        f"{counts['conditional']} conditional", highlight=False,
    )


@policy_app.command("matrix")
def matrix(file: PolicyFile, as_json: AsJson = False) -> None:
    """Print the field–tool authorization matrix A (atoms × tools) and which rule decided each cell."""
    kb = load_or_exit(file, as_json=as_json)
    m = kb.matrix()
    if as_json:
        print_json({
            "file": str(file),
            "atoms": [{"id": a.id, "type": a.type} for a in kb.atoms],
            "tools": list(m.tools),
            "matrix": {a: {t: _cell_json(m[(a, t)]) for t in m.tools} for a in m.atoms},
            "counts": m.counts(),
        })
        return
    table = Table(title=f"Authorization matrix — {escape(file.name)}", show_lines=False)
    table.add_column("atom (type)")
    for t in m.tools:
        table.add_column(escape(t), justify="center")
    for a in kb.atoms:
        table.add_row(escape(f"{a.id} ({a.type})"), *(_cell(m[(a.id, t)]) for t in m.tools))
    out = stdout_console()
    out.print(table)
    out.print("✓ authorized  − forbidden  ◐ conditional (fields/forms)", highlight=False)


def _cell(access: Access) -> str:
    sym = _SYMBOL[access.state]
    if access.state == "conditional":
        return f"{sym} {escape(','.join((*access.fields, *access.forms)))}"
    return sym


def _cell_json(access: Access) -> dict[str, Any]:
    return {"state": access.state, "level": access.level, "binary": access.binary,
            "fields": list(access.fields), "forms": list(access.forms)}
