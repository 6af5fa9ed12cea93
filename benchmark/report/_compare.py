"""``compare_runs(dir1, dir2)``: per (agent, guard, suite) row present in both runs, the change of
every summary key (``run2 − run1``, in the keys' own units); rows present in only one run are
listed. Reads both runs without writing to them (a stale summary is rebuilt in memory).

Pairing: a difference means something only over the same cases. When a row's scored cases differ
between the runs (other ``--limit``/``--domains``/seed, or errored case-runs), the runs are
*unpaired*: ``paired`` is false, ``cases`` counts both case sets and their intersection, and by
default every such row is recomputed over the cases scored in both (``common_only``); with
``common_only=False`` the summaries are compared as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table as RichTable

from ..metrics import KEYS, CaseScore, summary_row
from ..runner import record_error
from ._load import RunData, load_run

__all__ = ["KEY_GROUPS", "compare_runs", "comparison_table"]


def _key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (str(row["agent"]), str(row["guard"]), str(row["suite"]))


CaseKey = tuple[str, str]  # (suite, case_id)


def _scored(data: RunData) -> dict[tuple[str, str, str], dict[CaseKey, CaseScore]]:
    """Per row, the scores of its measured case-runs (errored ones excluded)."""
    out: dict[tuple[str, str, str], dict[CaseKey, CaseScore]] = {}
    for rec, score in zip(data.records, data.scores, strict=True):
        if record_error(rec) is None:
            out.setdefault(_key(rec), {})[(str(rec["suite"]), str(rec["case_id"]))] = score
    return out


def _common_row(scores: dict[CaseKey, CaseScore], common: set[CaseKey],
                key: tuple[str, str, str]) -> dict[str, Any]:
    if not common:
        return {"n": 0, **dict.fromkeys(KEYS)}
    return summary_row([scores[c] for c in sorted(common)], agent=key[0], guard=key[1],
                       suite=key[2])


def compare_runs(dir1: str | Path, dir2: str | Path, *, common_only: bool = True) -> dict[str, Any]:
    """``{run1, run2, keys, paired, cases, rows: [{agent, guard, suite, n1, n2, run1, run2,
    delta}], only_in_run1, only_in_run2}`` — ``delta[k] = run2[k] − run1[k]`` (``None`` if either
    is); ``cases = {run1, run2, common}`` counts distinct (suite, case) scored in each run."""
    a, b = load_run(dir1, write_summary=False), load_run(dir2, write_summary=False)
    rows1 = {_key(r): r for r in a.summary.get("rows", [])}
    rows2 = {_key(r): r for r in b.summary.get("rows", [])}
    s1, s2 = _scored(a), _scored(b)
    cases1 = {c for v in s1.values() for c in v}
    cases2 = {c for v in s2.values() for c in v}
    paired = all(s1.get(k, {}).keys() == s2.get(k, {}).keys() for k in set(rows1) & set(rows2))
    rows = []
    for key in sorted(set(rows1) & set(rows2)):
        r1, r2 = rows1[key], rows2[key]
        common = s1.get(key, {}).keys() & s2.get(key, {}).keys()
        if common_only and s1.get(key, {}).keys() != s2.get(key, {}).keys():
            r1, r2 = (_common_row(s.get(key, {}), common, key) for s in (s1, s2))
        v1 = {k: r1.get(k) for k in KEYS}
        v2 = {k: r2.get(k) for k in KEYS}
        delta = {k: (None if v1[k] is None or v2[k] is None else v2[k] - v1[k]) for k in KEYS}
        rows.append({"agent": key[0], "guard": key[1], "suite": key[2], "n1": r1.get("n"),
                     "n2": r2.get("n"), "run1": v1, "run2": v2, "delta": delta})

    def only(x: dict[tuple[str, str, str], Any], y: dict[tuple[str, str, str], Any]
             ) -> list[dict[str, str]]:
        return [{"agent": k[0], "guard": k[1], "suite": k[2]} for k in sorted(set(x) - set(y))]

    return {"run1": str(dir1), "run2": str(dir2), "keys": list(KEYS), "rows": rows,
            "paired": paired, "common_only": common_only and not paired,
            "cases": {"run1": len(cases1), "run2": len(cases2), "common": len(cases1 & cases2)},
            "only_in_run1": only(rows1, rows2), "only_in_run2": only(rows2, rows1),
            "notes": [f"run1: {n}" for n in a.notes] + [f"run2: {n}" for n in b.notes]}


def _delta(v: float | None) -> str:
    if v is None:
        return "—"
    if abs(v) < 5e-3:
        return "0.00"
    return f"{v:+.2f}"


#: How ``bench compare`` splits the keys so each table fits a terminal.
KEY_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("utility", ("Task", "Workflow", "GoldArg")),
    ("combined", ("TaskSuccess", "MT-POI", "SMTC")),
    ("privacy", ("FOR", "SWLR", "ToolFOR", "LTCR")),
    ("free text and mid-workflow", ("FreeTextFOR", "FTSlotRate", "MidFOR")),
)


def comparison_table(result: dict[str, Any], keys: tuple[str, ...] | None = None,
                     title: str | None = None) -> RichTable:
    """The deltas of ``keys`` (default: all) as a rich table, one line per row in both runs."""
    keys = tuple(result["keys"]) if keys is None else keys
    multi_suite = len({r["suite"] for r in result["rows"]}) > 1
    table = RichTable(title=title or f"Δ = {result['run2']} − {result['run1']}")
    table.add_column("agent / guard", no_wrap=True)
    table.add_column("n", no_wrap=True, justify="right")
    for k in keys:
        table.add_column(f"Δ{k}", justify="right", min_width=max(6, len(k) + 1))
    for r in result["rows"]:
        label = f"{r['agent']} / {r['guard']}" + (f" ({r['suite']})" if multi_suite else "")
        n = str(r["n1"]) if r["n1"] == r["n2"] else f"{r['n1']}→{r['n2']}"
        table.add_row(label, n, *(_delta(r["delta"][k]) for k in keys))
    return table
