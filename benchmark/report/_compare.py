"""``compare_runs(dir1, dir2)``: per (agent, guard, suite) row present in both runs, the change of
every summary key of the runs' suite (``run2 − run1``, in the keys' own units: FOR … for
ToolPrivacyBench, TCR/CER/PLR … for acquisition, ECR/OLF/TCR and per-channel coverage for
exposure, see :mod:`._families`); rows present in only one run are listed. Reads both runs without
writing to them (a stale summary is rebuilt in memory).

Runs of different suites are not compared (:class:`CompareRefused`): their keys measure different
things. Pairing: a difference means something only over the same case-runs, and a case-run is the
same when suite, seed and case agree. When a row's scored case-runs differ between the runs (other
``--limit``/``--domains``/``--seed``, or errored case-runs), the runs are *unpaired*: ``paired`` is
false, ``cases`` counts both sets and their intersection, and by default every such row is
recomputed over the case-runs scored in both (``common_only``; with no case-run in common, its
keys are undefined); with ``common_only=False`` the summaries are compared as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table as RichTable

from ..runner._errors import record_error
from ..runner._summary import summarize_records, summary_options
from ._families import TOOLPRIVACYBENCH, Family, family_of_suite, family_rows
from ._load import RunData, RunDirError, load_run

__all__ = ["KEY_GROUPS", "CompareRefused", "compare_runs", "comparison_table"]

#: How ``bench compare`` splits ToolPrivacyBench keys so each table fits a terminal.
KEY_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = TOOLPRIVACYBENCH.key_groups

RowKey = tuple[str, str, str]  # (agent, guard, suite)
CaseKey = tuple[str, int, str]  # (suite, seed, case_id): the same case-run in two runs


class CompareRefused(RunDirError):
    """The two runs cannot be compared (different suites)."""


def _key(row: dict[str, Any]) -> RowKey:
    return (str(row["agent"]), str(row["guard"]), str(row["suite"]))


def _seed(rec: dict[str, Any], data: RunData) -> int:
    cfg = data.run.get("config") if isinstance(data.run.get("config"), dict) else {}
    try:
        return int(rec.get("seed", (cfg or {}).get("seed", 0)) or 0)
    except (TypeError, ValueError):
        return 0


def _scored(data: RunData) -> dict[RowKey, dict[CaseKey, dict[str, Any]]]:
    """Per row, its measured case-runs (errored ones excluded) by (suite, seed, case)."""
    out: dict[RowKey, dict[CaseKey, dict[str, Any]]] = {}
    for rec in data.all_records or data.records:
        if record_error(rec) is None and isinstance(rec.get("score"), dict):
            case = (str(rec.get("suite")), _seed(rec, data), str(rec.get("case_id")))
            out.setdefault(_key(rec), {})[case] = rec
    return out


def _suites(data: RunData) -> list[str]:
    return sorted({str(r.get("suite")) for r in data.all_records or data.records if r.get("suite")})


def _family(a: RunData, b: RunData, dir1: str | Path, dir2: str | Path) -> Family:
    sa, sb = _suites(a), _suites(b)
    if sa and sb and sa != sb:
        raise CompareRefused(f"{dir1} holds the {', '.join(sa)} suite and {dir2} the "
                             f"{', '.join(sb)} suite: their metrics measure different things; "
                             "compare two runs of one suite")
    return family_of_suite((sa or sb or [""])[0])


def _rows(data: RunData, fam: Family) -> dict[RowKey, dict[str, Any]]:
    return {_key(r): r for r in family_rows(data.full_summary or data.summary, fam)}


def _common_rows(data: RunData, scored: dict[RowKey, dict[CaseKey, dict[str, Any]]],
                 common: dict[RowKey, set[CaseKey]], fam: Family) -> dict[RowKey, dict[str, Any]]:
    """The run's rows recomputed over the case-runs in ``common`` (no intervals: point values)."""
    records = [rec for key, cases in common.items() for c, rec in scored.get(key, {}).items()
               if c in cases]
    options = {**summary_options(data.run.get("config")), "bootstrap": 0}
    return {_key(r): r for r in family_rows(summarize_records(records, **options), fam)}


def _values(row: dict[str, Any] | None, keys: list[str]) -> dict[str, Any]:
    return {k: (row or {}).get(k) for k in keys}


def compare_runs(dir1: str | Path, dir2: str | Path, *, common_only: bool = True) -> dict[str, Any]:
    """``{run1, run2, suite, keys, groups, paired, cases, rows: [{agent, guard, suite, n1, n2,
    run1, run2, delta}], only_in_run1, only_in_run2, notes}`` — ``delta[k] = run2[k] − run1[k]``
    (``None`` if either is); ``cases = {run1, run2, common}`` counts distinct (suite, seed, case)
    scored in each run. :class:`CompareRefused` when the runs hold different suites."""
    a, b = load_run(dir1, write_summary=False), load_run(dir2, write_summary=False)
    fam = _family(a, b, dir1, dir2)
    rows1, rows2 = _rows(a, fam), _rows(b, fam)
    s1, s2 = _scored(a), _scored(b)
    cases1 = {c for v in s1.values() for c in v}
    cases2 = {c for v in s2.values() for c in v}
    shared = sorted(set(rows1) & set(rows2))
    paired = all(s1.get(k, {}).keys() == s2.get(k, {}).keys() for k in shared)
    keys = fam.keys([*rows1.values(), *rows2.values()])
    if common_only and not paired:
        common = {k: set(s1.get(k, {})) & set(s2.get(k, {})) for k in shared}
        rows1 = {**rows1, **{k: {"n": 0} for k in shared}, **_common_rows(a, s1, common, fam)}
        rows2 = {**rows2, **{k: {"n": 0} for k in shared}, **_common_rows(b, s2, common, fam)}
    rows = []
    for key in shared:
        v1, v2 = _values(rows1[key], keys), _values(rows2[key], keys)
        delta = {k: (None if v1[k] is None or v2[k] is None else v2[k] - v1[k]) for k in keys}
        rows.append({"agent": key[0], "guard": key[1], "suite": key[2], "n1": rows1[key].get("n"),
                     "n2": rows2[key].get("n"), "run1": v1, "run2": v2, "delta": delta})

    def only(x: dict[RowKey, Any], y: dict[RowKey, Any]) -> list[dict[str, str]]:
        return [{"agent": k[0], "guard": k[1], "suite": k[2]} for k in sorted(set(x) - set(y))]

    groups = [[name, list(g)] for name, g in fam.key_groups]
    extra = [k for k in keys if not any(k in g for _, g in groups)]
    if extra:
        groups.append(["per channel", extra])
    return {"run1": str(dir1), "run2": str(dir2), "suite": ", ".join(_suites(a) or _suites(b)),
            "keys": keys, "groups": groups, "rows": rows,
            "paired": paired, "common_only": common_only and not paired,
            "cases": {"run1": len(cases1), "run2": len(cases2), "common": len(cases1 & cases2)},
            "seeds": {"run1": sorted({c[1] for c in cases1}), "run2": sorted({c[1] for c in cases2})},
            "only_in_run1": only(rows1, rows2), "only_in_run2": only(rows2, rows1),
            "notes": [f"run1: {n}" for n in a.notes] + [f"run2: {n}" for n in b.notes]}


def _delta(v: float | None) -> str:
    if v is None:
        return "—"
    if abs(v) < 5e-3:
        return "0.00"
    return f"{v:+.2f}"


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
        table.add_row(label, n, *(_delta(r["delta"].get(k)) for k in keys))
    return table
