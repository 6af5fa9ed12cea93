"""Render one case for a person (rich): task, tools, atoms, authorization matrix, answer key.

Values are shown: a benchmark case is synthetic or public data, and its task text states them.
"""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from ..cases.schema import Case

__all__ = ["render_case"]

_CELL = {"authorized": "[green]✓[/]", "conditional": "[yellow]~[/]", "forbidden": "[dim]−[/]"}


def render_case(case: Case, out: Console) -> None:
    out.print(Panel(case.task, title=f"{case.id} · {case.domain} · {case.suite}", expand=False))
    tools = Table("#", "tool", "stage", "sink", "purpose", "free text", "backend", title="Workflow G")
    stages = {s.tool: s for s in case.workflow}
    for i, t in enumerate(case.tools, 1):
        s = stages.get(t.name)
        b = case.bindings.get(t.name)
        stage = (s.stage + (" (optional)" if s.optional else "")) if s else "—"
        tools.add_row(str(i), t.name, stage, t.sink, t.purpose, ", ".join(t.free_text),
                      f"{b.primitive}.{b.operation}" if b else "—")
    out.print(tools)
    categories = case.metadata.get("atom_categories", {})
    atoms = Table("atom", "type", "category", "severity", "value", "aliases / variants / masked",
                  title="Private atoms P")
    for a in case.atoms:
        extra = [*a.aliases, *a.variants, *a.masked]
        atoms.add_row(a.id, a.type, str(categories.get(a.id, "")), f"{a.severity:g}", a.value,
                      "; ".join(extra))
    out.print(atoms)
    matrix = case.matrix()
    grid = Table("atom", *[t.split("_", 1)[-1] for t in matrix.tools],
                 title="Authorization matrix A (✓ authorized, ~ conditional, − forbidden)")
    for atom_id in matrix.atoms:
        grid.add_row(atom_id, *[_CELL[matrix[(atom_id, t)].state] for t in matrix.tools])
    out.print(grid)
    out.print(f"[bold]Required facts R[/] ({len(case.required)}): " + ", ".join(
        f"{r.atom}→{r.tool}{'.' + r.field if r.field else ''}" for r in case.required), highlight=False)
    out.print(f"[bold]End-state checks[/] ({len(case.checks)}): " + ", ".join(c.id for c in case.checks),
              highlight=False)
    out.print("[bold]Transitions[/]: " + ", ".join(
        f"{t.from_tool}→{t.to_tool} ({t.type})" for t in case.transitions), highlight=False)
