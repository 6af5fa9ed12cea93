"""The benchmark's ``audit`` row (issue 34): the guard's flags against the evaluator's forbidden
disclosures — recall and precision with Wilson intervals, by atom type, method, field and sink — in
summary.json, the terminal and the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.metrics._audit_recall import audit_rows
from tpguard.benchmark.report._audit_row import audit_row_markdown, audit_row_tables
from tpguard.benchmark.report._markdown import md_table
from tpguard.cli import app


def _record(guard: str, calls: list[str], disclosures: list[dict[str, Any]],
            flags: list[list[list[str]]]) -> dict[str, Any]:
    return {"agent": "a", "guard": guard, "suite": "s", "case_id": "c", "error": None, "score": {},
            "trajectory": {"calls": [{"tool": t} for t in calls]},
            "attempts": [{"tool": t, "atoms": f} for t, f in zip(calls, flags, strict=True)],
            "disclosures": disclosures}


def _leak(step: int, tool: str, atom: str, typ: str, path: str, method: str,
          authorized: bool = False) -> dict[str, Any]:
    return {"step": step, "tool": tool, "sink": "handoff" if tool == "handoff" else "record",
            "atom_id": atom, "atom_type": typ, "path": path, "method": method,
            "authorized": authorized}


def test_flagged_missed_and_falsely_flagged_are_counted_per_call_and_atom() -> None:
    rec = _record("audit", ["register", "handoff"], [
        _leak(1, "register", "name", "person_name", "patient", "exact", authorized=True),
        _leak(2, "handoff", "name", "person_name", "summary", "exact"),
        _leak(2, "handoff", "symptom", "medical", "summary", "semantic"),  # the guard misses it
    ], [[], [["name", "person_name", "summary", "exact"],
             ["phone", "phone", "notes[0].text", "fuzzy"]]])  # a false flag, keyed by its field
    (row,) = audit_rows([rec, {**rec, "guard": "off"}, {**rec, "error": {"type": "X"}}])
    assert (row["guard"], row["n"]) == ("audit", 1)
    assert (row["flagged"], row["missed"], row["false_flags"]) == (1, 1, 1)
    assert row["recall"] == pytest.approx(50.0) and row["precision"] == pytest.approx(50.0)
    lo, hi = row["recall_ci"]
    assert 0 < lo < 50 < hi < 100  # Wilson, 1 of 2
    by = {d: {r[d]: r for r in row["by"][d]} for d in row["by"]}
    assert by["method"]["semantic"]["missed"] == 1 and by["method"]["semantic"]["recall"] == 0.0
    assert by["method"]["fuzzy"]["false_flags"] == 1 and by["method"]["exact"]["precision"] == 100.0
    assert by["field"]["text"]["false_flags"] == 1 and by["field"]["summary"]["flagged"] == 1
    assert by["atom_type"]["medical"]["missed"] == 1 and by["sink"]["handoff"]["flagged"] == 1
    unaligned = _record("audit", ["register"], [], [[]])
    unaligned["trajectory"]["calls"] = [{"tool": "handoff"}]
    (row,) = audit_rows([unaligned])
    assert row["n"] == 0 and row["unaligned"] == 1  # counted, not compared


def test_no_audit_guard_no_audit_row() -> None:
    assert audit_rows([_record("enforce", ["x"], [], [[]])]) == []
    assert audit_row_tables({"rows": []}) == [] and audit_row_markdown({}, md_table) == []


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("run")
    res = CliRunner().invoke(app, ["bench", "run", "--agent", "leaky", "--guard", "off,audit",
                                   "--limit", "8", "--out", str(out)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return out, res.output


def test_bench_run_reports_the_guards_recall_and_precision(run: tuple[Path, str]) -> None:
    out, printed = run
    summary = json.loads((out / "summary.json").read_text())
    (row,) = summary["audit"]  # the audit guard only: off flags nothing
    assert row["guard"] == "audit" and row["n"] == 8 and row["unaligned"] == 0
    assert row["flagged"] > 0 and row["recall"] is not None and row["precision"] is not None
    assert row["recall_ci"][0] <= row["recall"] <= row["recall_ci"][1]
    methods = {r["method"]: r for r in row["by"]["method"]}
    # the guard is not given the semantic variants (the evaluator's answer key): it misses them
    assert all(r["flagged"] == 0 for m, r in methods.items() if m == "semantic")
    assert {"atom_type", "field", "method", "sink"} <= row["by"].keys()
    assert row["by"]["field"] and all("recall_ci" in r for r in row["by"]["field"])
    assert "Guard flags against the evaluator's forbidden disclosures" in printed
    assert "audit: by atom type" in printed and "audit: by field" in printed
    report = (out / "report.md").read_text()
    assert "## Audit mode: does the guard see what leaks?" in report and "### By field" in report
    assert "Audit mode: does the guard see what leaks?" in (out / "report.html").read_text()
