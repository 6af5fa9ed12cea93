"""The report's tables, as plain data shaped like seed ``000_*`` Tables 7–10, B.12–B.14, D.15 and
the data behind Figure 7. Markdown, CSV and HTML all render these same :class:`Table` objects, so
every output carries the same numbers (CSV at full precision, markdown and HTML at 2 decimals).

Rows (Tables 7/8) are the ``summary.json`` rows; breakdowns (domain, atom type, sink, field) are
the summary's pooled breakdowns (``Σ leaks / Σ opportunities``, docs/metrics.md); the domain
TaskSuccess is the row-level geometric mean of that domain's macro Task, Workflow and GoldArg, as
in the main rows.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..metrics import KEYS, CaseScore, summary_row
from ._crosstab import Config, CrossTab
from ._load import RunData
from ._refs import ref

__all__ = [
    "MAIN_COLUMNS",
    "MAIN_GROUPS",
    "Table",
    "atom_sink_table",
    "atom_type_table",
    "ci_tables",
    "domain_table",
    "field_table",
    "fmt",
    "main_columns",
    "main_tables",
    "ordered_configs",
    "paths_table",
    "pivot",
    "sensitivity_table",
    "sink_table",
    "slug",
    "transitions_table",
    "write_csv",
]

#: Tables 7/8 column order, then the remaining summary keys.
MAIN_COLUMNS: tuple[str, ...] = ("Task", "Workflow", "GoldArg", "FOR", "SWLR", "ToolFOR",
                                 "FreeTextFOR", "MT-POI", "TaskSuccess", "SMTC", "LTCR",
                                 "FTSlotRate", "MidFOR")
#: Keys a row carries only from some runners/scorers on: shown when any row has them.
OPTIONAL_COLUMNS: tuple[tuple[str, str], ...] = (("FreeTextFOR_field", "FreeTextFOR"),
                                                 ("errors", ""), ("n_total", ""))
#: How wide tables are split for the page: (part title, columns); identity columns repeat.
MAIN_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("utility (↑ better)", ("n", "n_total", "errors", "Task", "Workflow", "GoldArg",
                            "TaskSuccess")),
    ("privacy (↓ better)", ("FOR", "SWLR", "ToolFOR", "FreeTextFOR", "FreeTextFOR_field",
                            "MidFOR")),
    ("combined and diagnostics", ("MT-POI", "SMTC", "LTCR", "FTSlotRate")),
)
_GUARD_ORDER = ("off", "audit", "enforce", "redact")


@dataclass
class Table:
    """``name`` is the CSV file stem; ``rows`` hold raw values (floats unrounded, ``None`` empty)."""

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""


def fmt(v: Any, column: str = "") -> str:
    """How the markdown and HTML print a cell: 2 decimals (p-values 2 significant digits),
    ``—`` for undefined."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2g}" if column.startswith("p ") else f"{v:.2f}"
    return str(v)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


def write_csv(table: Table, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{table.name}.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(table.columns)
        for row in table.rows:
            w.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in row])
    return path


def _guard_rank(guard: str) -> tuple[int, str]:
    return (_GUARD_ORDER.index(guard), "") if guard in _GUARD_ORDER else (len(_GUARD_ORDER), guard)


def ordered_configs(data: RunData) -> list[dict[str, Any]]:
    """Summary rows ordered by suite, agent, then off/audit/enforce/redact/baselines."""
    return sorted(data.summary.get("rows", []),
                  key=lambda r: (r["suite"], r["agent"], _guard_rank(r["guard"])))


def _suites(data: RunData) -> list[str]:
    return sorted({r["suite"] for r in data.summary.get("rows", [])})


def main_columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """:data:`MAIN_COLUMNS` plus the optional keys some row carries (after the key named)."""
    cols = list(MAIN_COLUMNS)
    for key, after in OPTIONAL_COLUMNS:
        if any(key in r for r in rows):
            cols.insert(cols.index(after) + 1 if after else 0, key)
    return cols


def main_tables(data: RunData) -> list[Table]:
    """Tables 7/8: one per suite, one row per agent × guard."""
    out = []
    for suite in _suites(data):
        suite_rows = [r for r in ordered_configs(data) if r["suite"] == suite]
        cols = main_columns(suite_rows)
        rows = [[r["agent"], r["guard"], r["n"], *(r.get(k) for k in cols)] for r in suite_rows]
        out.append(Table(f"main_{slug(suite)}", f"Overall results — {suite} — as the paper's {ref('Tables 7/8')}",
                         ["Agent", "Guard", "n", *cols], rows,
                         "Percentages; MT-POI and SMTC 0–100. ↓ better: FOR, SWLR, ToolFOR, "
                         "FreeTextFOR, MT-POI, LTCR, FTSlotRate, MidFOR. ↑ better: the rest."))
    return out


def ci_tables(data: RunData) -> list[Table]:
    """Bootstrap 95 % percentile CIs of every key (case = resampling unit)."""
    out = []
    for suite in _suites(data):
        rows = []
        for r in ordered_configs(data):
            if r["suite"] != suite:
                continue
            ci = r.get("ci") or {}
            rows.append([r["agent"], r["guard"], *(
                v for k in KEYS for v in ((ci.get(k) or [None, None])[0],
                                          (ci.get(k) or [None, None])[1]))])
        cols = [c for k in KEYS for c in (f"{k} lo", f"{k} hi")]
        out.append(Table(f"ci_{slug(suite)}", f"95 % bootstrap intervals — {suite}",
                         ["Agent", "Guard", *cols], rows))
    return out


def _breakdown(data: RunData, cfg: Config, by: str) -> dict[str, dict[str, Any]]:
    for b in data.summary.get("breakdowns", []):
        if (b.get("agent"), b.get("guard"), b.get("suite")) == cfg:
            return dict(b.get(by) or {})
    return {}


_COUNTS = frozenset({"opportunities", "leaks", "slots", "n_cases"})


def _count(v: Any) -> Any:
    return int(v) if isinstance(v, float) and v.is_integer() else v


def _long(data: RunData, name: str, title: str, label: str, by: str,
          cols: Sequence[str], note: str = "") -> Table:
    rows = []
    for r in ordered_configs(data):
        cfg = (r["agent"], r["guard"], r["suite"])
        for key, v in _breakdown(data, cfg, by).items():
            rows.append([*cfg, key, *(_count(v.get(c)) if c in _COUNTS else v.get(c)
                                      for c in cols)])
    return Table(name, title, ["Agent", "Guard", "Suite", label, *cols], rows, note)


def sink_table(data: RunData) -> Table:
    return _long(data, "sinks", f"Leakage by information sink — as the paper's {ref('Figure 7a')}", "Sink", "sink",
                 ("FOR", "SWLR", "FreeTextFOR", "opportunities", "leaks"),
                 "Pooled over the calls to tools of each sink.")


def field_table(data: RunData) -> Table:
    return _long(data, "fields", f"Free-text fields — as the paper's {ref('Figure 7b')}", "Field", "field",
                 ("FTSlotRate", "FreeTextFOR", "slots", "opportunities", "leaks"),
                 "FTSlotRate: non-empty slots with ≥ 1 forbidden atom; FreeTextFOR over the "
                 "forbidden opportunities of the calls that have the field.")


def domain_table(data: RunData) -> Table:
    """Table 10a / B.12: pooled FOR, SWLR, FreeTextFOR and the row-level TaskSuccess per domain."""
    groups: dict[tuple[str, str, str, str], list[CaseScore]] = {}
    for s in data.scores:
        groups.setdefault((s.agent, s.guard, s.suite, s.domain), []).append(s)
    t = _long(data, "domains", f"Domain breakdown — as the paper's {ref('Table 10a')} and {ref('Table B.12')}", "Domain", "domain",
              ("n_cases", "FOR", "SWLR", "FreeTextFOR"))
    t.columns.append("TaskSuccess")
    for row in t.rows:
        scores = groups.get((row[0], row[1], row[2], row[3]), [])
        row.append(summary_row(scores, n_resamples=0)["TaskSuccess"] if scores else None)
    return t


def atom_type_table(data: RunData, tabs: dict[Config, CrossTab]) -> Table:
    """Table 10b / B.13–B.14, with the most common unauthorized sink of each atom type."""
    t = _long(data, "atom_types", f"Private-atom-type breakdown — as the paper's {ref('Table 10b')} and "
              f"{ref('Tables B.13–B.14')}",
              "Atom type", "atom_type", ("FOR", "SWLR", "FreeTextFOR", "opportunities", "leaks"))
    t.columns += ["Common unauthorized sink", "disclosures to it"]
    for row in t.rows:
        tab = tabs.get((row[0], row[1], row[2]))
        hit = tab.common_sink(row[3]) if tab else None
        row += [hit[0], hit[1]] if hit else [None, 0]
    return t


def atom_sink_table(data: RunData, tabs: dict[Config, CrossTab]) -> Table:
    kinds = {tab.kind for tab in tabs.values()}
    value = "FOR" if kinds == {"FOR"} else "unauthorized disclosures"
    rows = []
    for r in ordered_configs(data):
        cfg = (r["agent"], r["guard"], r["suite"])
        tab = tabs.get(cfg)
        if tab is None:
            continue
        for typ in tab.atom_types:
            for sink in tab.sinks:
                opp = tab.opportunities.get((typ, sink), 0)
                leaks = tab.leaks.get((typ, sink), 0)
                if opp or leaks:
                    rows.append([*cfg, typ, sink, tab.value(typ, sink), opp, leaks])
    return Table("atom_type_sink", f"Atom type × sink ({value})",
                 ["Agent", "Guard", "Suite", "Atom type", "Sink", value, "opportunities", "leaks"],
                 rows)


def paths_table(data: RunData) -> Table:
    rows = []
    for r in ordered_configs(data):
        p = r.get("paths") or {}
        rows.append([r["agent"], r["guard"], r["suite"], p.get("n"), p.get("leaky_trajectories"),
                     p.get("LeakyTrajectoryRate"), p.get("FirstLeakStep"),
                     p.get("LeakPropagationDepth")])
    return Table("paths", f"Workflow path diagnostics — as the paper's {ref('§7.5')}",
                 ["Agent", "Guard", "Suite", "trajectories", "leaky", "LeakyTrajectoryRate",
                  "FirstLeakStep", "LeakPropagationDepth"], rows)


def transitions_table(data: RunData) -> Table:
    """Table 9: per transition type, FirstLeak frequency, propagation depth, risky rate."""
    rows = []
    for r in ordered_configs(data):
        for kind, v in ((r.get("paths") or {}).get("transitions") or {}).items():
            rows.append([r["agent"], r["guard"], r["suite"], kind, v.get("n"),
                         v.get("FirstLeakFreq"), v.get("LeakPropagationDepth"),
                         v.get("RiskyTransitionRate")])
    return Table("transitions", f"Workflow path analysis by transition type — as the paper's {ref('Table 9')}",
                 ["Agent", "Guard", "Suite", "Transition", "n", "FirstLeakFreq",
                  "LeakPropagationDepth", "RiskyTransitionRate"], rows,
                 "FirstLeakFreq and RiskyTransitionRate in % of the observed transitions of the "
                 "type; depth in steps (— : no first leak arrived through that type).")


def sensitivity_table(data: RunData) -> Table:
    """Appendix D.2 / Table D.15: Spearman ρ of MT-POI rankings under alternative weightings."""
    ws = data.summary.get("weight_sensitivity") or {}
    per = ws.get("per_suite") or {}
    suites = sorted(per)
    names = list((ws.get("mean") or {}).keys())
    rows = [[n, *(per[s].get(n) for s in suites), (ws.get("mean") or {}).get(n)] for n in names]
    return Table("weight_sensitivity", f"MT-POI weight sensitivity — as the paper's Appendix D.2, {ref('Table D.15')}",
                 ["Weighting", *(f"ρ {s}" for s in suites), "ρ mean"], rows,
                 "Spearman ρ between the agent × guard ranking by default MT-POI and by each "
                 "alternative weighting (— : undefined, e.g. fewer than two rows).")


def pivot(table: Table, row_key: str, value: str, *, title: str, name: str,
          where: Callable[[dict[str, Any]], bool] | None = None,
          order: Iterable[str] | None = None) -> Table:
    """Wide view of a long table: one row per ``row_key``, one column per agent/guard (suite)."""
    idx = {c: i for i, c in enumerate(table.columns)}
    multi_suite = len({r[idx["Suite"]] for r in table.rows}) > 1
    cols: list[str] = []
    cells: dict[str, dict[str, Any]] = {}
    for r in table.rows:
        d = dict(zip(table.columns, r, strict=True))
        if where is not None and not where(d):
            continue
        col = f"{d['Agent']}/{d['Guard']}" + (f" ({d['Suite']})" if multi_suite else "")
        if col not in cols:
            cols.append(col)
        cells.setdefault(str(d[row_key]), {})[col] = d[value]
    keys = list(order) if order is not None else sorted(cells)
    rows = [[k, *(cells.get(k, {}).get(c) for c in cols)] for k in keys if k in cells]
    return Table(name, title, [row_key, *cols], rows)
