"""The ``audit`` row in the terminal, the markdown and the HTML report (issue 34, item 5): does the
guard see what leaks? Its flags against the evaluator's forbidden disclosures, from
``summary["audit"]`` (:func:`~tpguard.benchmark.metrics._audit_recall.audit_rows`).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from ..metrics._audit_recall import AUDIT_DIMENSIONS
from ._tables import Table

__all__ = ["audit_row_html", "audit_row_markdown", "audit_row_tables", "print_audit_rows"]

_TITLE = "Audit mode: does the guard see what leaks?"
_NOTE = ("A forbidden disclosure is an (executed call, atom) the evaluator found in what the "
         "backend received and the policy forbids there; the guard *flagged* it when its audit-mode "
         "decision on that call named the atom forbidden. Recall = flagged / (flagged + missed), "
         "precision = flagged / (flagged + falsely flagged), Wilson 95 % intervals. Missed units "
         "are keyed by the evaluator's method and field, flagged ones by the guard's.")
_COLUMNS = ["flagged", "missed", "false flags", "recall", "recall 95% CI", "precision",
            "precision 95% CI"]


def _ci(v: list[float] | None) -> str:
    return f"{v[0]:.1f}–{v[1]:.1f}" if v else "—"


def _cells(r: dict[str, Any]) -> list[Any]:
    return [r["flagged"], r["missed"], r["false_flags"], r["recall"], _ci(r["recall_ci"]),
            r["precision"], _ci(r["precision_ci"])]


def audit_row_tables(summary: dict[str, Any]) -> list[Table]:
    """The totals (one row per agent × audit guard × suite), then one table per dimension."""
    rows = summary.get("audit") or []
    if not rows:
        return []
    tables = [Table("audit_recall", "Guard flags against the evaluator's forbidden disclosures",
                    ["agent", "guard", "suite", "n", *_COLUMNS],
                    [[r["agent"], r["guard"], r["suite"], r["n"], *_cells(r)] for r in rows], _NOTE)]
    for dim in AUDIT_DIMENSIONS:
        tables.append(Table(f"audit_recall_{dim}", f"By {dim.replace('_', ' ')}",
                            ["agent", "guard", dim, *_COLUMNS],
                            [[r["agent"], r["guard"], b[dim], *_cells(b)]
                             for r in rows for b in r["by"][dim]]))
    return tables


def audit_row_markdown(summary: dict[str, Any], md_table: Callable[[Table], str]) -> list[str]:
    """The section for ``report.md``; ``md_table`` is the report's own table renderer."""
    tables = audit_row_tables(summary)
    if not tables:
        return []
    parts = ["", f"## {_TITLE}", "", _NOTE, ""]
    unaligned = sum(r.get("unaligned", 0) for r in summary["audit"])
    if unaligned:
        parts += [f"{unaligned} case-run(s) whose attempts and received calls did not align were "
                  "not compared.", ""]
    for t in tables:
        parts += [f"### {t.title}", "", md_table(t), ""]
    return parts


def audit_row_html(summary: dict[str, Any], html_table: Callable[[Table], str]) -> str:
    """The section for ``report.html``; ``html_table`` is the page's own table renderer."""
    tables = audit_row_tables(summary)
    if not tables:
        return ""
    body = [f"<h2>{html.escape(_TITLE)}</h2>", f"<p class='note'>{html.escape(_NOTE)}</p>"]
    body += [f"<h3>{html.escape(t.title)}</h3>{html_table(t)}" for t in tables]
    return "\n".join(body)


def print_audit_rows(summary: dict[str, Any], console: Console,
                     dims: tuple[str, ...] = ("atom_type", "field")) -> None:
    """The terminal's audit row: totals, then recall and precision per atom type and field."""
    for t in audit_row_tables(summary):
        if t.name != "audit_recall" and t.name.removeprefix("audit_recall_") not in dims:
            continue
        table = RichTable(title=f"audit: {t.title.lower()}" if t.name != "audit_recall" else t.title)
        for c in t.columns:
            table.add_column(c, justify="left" if c in ("agent", "guard", "suite", *dims) else "right")
        for row in t.rows:
            table.add_row(*(escape(f"{v:.1f}" if isinstance(v, float) else "—" if v is None else str(v))
                            for v in row))
        console.print(table)
