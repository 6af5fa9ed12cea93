"""Wide tables cut to fit a page: column groups that repeat the identity columns, and CI tables
read as one ``lo–hi`` cell per key. Views only — the CSVs keep the full tables."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from ._tables import Table, fmt

__all__ = ["COMPARISON_GROUPS", "by_agent", "ci_view", "split"]

#: The guard-vs-off table as three narrower ones.
COMPARISON_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("leakage", ("FOR off", "FOR", "ΔFOR (pp)", "ΔFOR (%)", "p FOR")),
    ("utility", ("TaskSuccess off", "TaskSuccess", "ΔTaskSuccess (%)", "p TaskSuccess")),
    ("other keys", ("ΔFreeTextFOR (pp)", "p FreeTextFOR", "ΔMT-POI", "p MT-POI", "ΔSMTC",
                    "p SMTC")),
)


def split(table: Table, groups: Sequence[tuple[str, Sequence[str]]],
          keep: Sequence[str] = ("Agent", "Suite", "Guard")) -> list[Table]:
    """A wide table as narrower ones that fit a page: one per group of columns (those present),
    each repeating the identity columns ``keep`` (``Suite`` only when it varies)."""
    idx = {c: i for i, c in enumerate(table.columns)}
    ids = [c for c in keep if c in idx and (
        c != "Suite" or len({row[idx[c]] for row in table.rows}) > 1)]
    out = []
    for label, cols in groups:
        present = [c for c in cols if c in idx]
        if present:
            pick = [idx[c] for c in (*ids, *present)]
            out.append(Table(table.name, label, [*ids, *present],
                             [[row[i] for i in pick] for row in table.rows]))
    return out


def ci_view(table: Table) -> Table:
    """A CI table with one ``lo–hi`` cell per key (for reading; the CSV keeps lo and hi)."""
    keys = [c[:-3] for c in table.columns if c.endswith(" lo")]
    ids = [c for c in table.columns if not c.endswith((" lo", " hi"))]
    idx = {c: i for i, c in enumerate(table.columns)}

    def cell(row: list[Any], k: str) -> str | None:
        lo, hi = row[idx[f"{k} lo"]], row[idx[f"{k} hi"]]
        return None if lo is None or hi is None else f"{fmt(lo)}–{fmt(hi)}"

    return Table(table.name, table.title, [*ids, *keys],
                 [[*(row[idx[c]] for c in ids), *(cell(row, k) for k in keys)]
                  for row in table.rows], table.note)


def by_agent(table: Table) -> list[Table]:
    """A pivot whose columns are ``agent/guard`` as one table per agent, columns = guards (the
    agent is in the title). Guard names hold no ``/``; agent specs may."""
    first, cols = table.columns[0], table.columns[1:]
    agents = list(dict.fromkeys(c.rsplit("/", 1)[0] for c in cols))
    if len(agents) <= 1 or any("/" not in c for c in cols):
        return [table]
    out = []
    for agent in agents:
        pick = [i + 1 for i, c in enumerate(cols) if c.rsplit("/", 1)[0] == agent]
        rows = [[row[0], *(row[i] for i in pick)] for row in table.rows]
        rows = [r for r in rows if any(v is not None for v in r[1:])]
        out.append(Table(table.name, f"agent `{agent}`",
                         [first, *(table.columns[i].rsplit("/", 1)[1] for i in pick)], rows))
    return out


# the two renderings of one table, here below every section that renders tables
def md_cell(v: Any, column: str = "") -> str:
    return fmt(v, column).replace("|", "\\|").replace("\n", " ")


def md_table(table: Table, *, columns: Sequence[str] | None = None,
             where: dict[str, Any] | None = None, drop: Sequence[str] = ()) -> str:
    """A GitHub table of ``table`` (optionally some columns, rows matching ``where``)."""
    cols = [c for c in (columns or table.columns) if c not in drop]
    idx = [table.columns.index(c) for c in cols]
    rows = [row for row in table.rows
            if not where or all(row[table.columns.index(k)] == v for k, v in where.items())]
    if not rows:
        return "_No rows._"
    numeric = [all(r[i] is None or isinstance(r[i], int | float) for r in rows) for i in idx]
    lines = ["| " + " | ".join(md_cell(c) for c in cols) + " |",
             "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(md_cell(row[i], table.columns[i]) for i in idx) + " |"
              for row in rows]
    return "\n".join(lines)


def html_table(table: Table, *, where: dict[str, str] | None = None,
               drop: Sequence[str] = ()) -> str:
    cols = [c for c in table.columns if c not in drop]
    idx = [table.columns.index(c) for c in cols]
    body = []
    for row in table.rows:
        if where and any(row[table.columns.index(k)] != v for k, v in where.items()):
            continue
        cells = "".join(f"<td>{html.escape(fmt(row[i], table.columns[i]))}</td>" for i in idx)
        body.append(f"<tr>{cells}</tr>")
    if not body:
        return "<p class='note'>No rows.</p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    return (f"<table class='data' data-table='{html.escape(table.name)}'><thead><tr>{head}</tr>"
            f"</thead><tbody>{''.join(body)}</tbody></table>")
