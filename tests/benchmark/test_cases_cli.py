"""``tpguard bench cases`` / ``tpguard bench check`` through the real CLI app, and the committed
JSON Schema of a case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.cases import registry
from tpguard.benchmark.cases._jsonschema import case_json_schema_text
from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.cases.schema import Suite
from tpguard.cli import app

runner = CliRunner()
DOCS = Path(__file__).resolve().parents[2] / "docs"
KEYS = {"suite", "cases", "domains", "tools", "avg_tools_per_case", "avg_atoms_per_case",
        "private_atoms", "field_tool_pairs", "authorized", "forbidden", "per_domain"}


def _run(*args: str):
    return runner.invoke(app, list(args))


def test_stats_json_meets_thresholds_and_repeats_exactly() -> None:
    first = _run("bench", "cases", "need-to-know", "--stats", "--json")
    assert first.exit_code == 0, first.output
    generate.cache_clear()  # the second run generates again
    second = _run("bench", "cases", "need-to-know", "--stats", "--json", "--seed", "0")
    assert first.output == second.output
    data = json.loads(first.output)
    assert set(data) == KEYS
    assert data["cases"] >= 1150 and data["domains"] >= 23
    assert data["avg_tools_per_case"] >= 5.5 and data["avg_atoms_per_case"] >= 6.5
    assert sum(data["per_domain"].values()) == data["cases"]


def test_stats_table_and_show_case() -> None:
    table = _run("bench", "cases", "need-to-know", "--stats")
    assert table.exit_code == 0 and "Cases per domain" in table.output and "1150" in table.output
    shown = _run("bench", "cases", "need-to-know", "--show", "ntk-medical-0000")
    assert shown.exit_code == 0, shown.output
    case = generate(0).case("ntk-medical-0000")
    for text in ("Workflow G", "Authorization matrix", "Required facts R", "symptom", case.metadata["case_ref"]):
        assert text in shown.output
    as_json = _run("bench", "cases", "need-to-know", "--show", "ntk-medical-0000", "--json")
    assert json.loads(as_json.output)["id"] == "ntk-medical-0000"
    missing = _run("bench", "cases", "need-to-know", "--show", "ntk-nope")
    assert missing.exit_code == 2 and "no case 'ntk-nope'" in missing.output


def test_check_passes_on_need_to_know() -> None:
    res = _run("bench", "check", "need-to-know")
    assert res.exit_code == 0, res.output[-2000:]
    assert "1150/1150 cases pass (no problems)" in res.output


def test_check_fails_with_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    good = generate(0, 46).case("ntk-medical-0000")
    bad = good.model_copy(update={"id": "ntk-broken", "ground_truth": good.ground_truth[:2]})
    monkeypatch.setattr(registry, "load_suite",
                        lambda name, source=None, seed=0: Suite(name="need-to-know", cases=(good, bad)))
    res = _run("bench", "check", "need-to-know")
    assert res.exit_code == 1
    assert "FAIL ntk-broken [safe_path] end-state checks fail" in res.output
    assert "1/2 cases pass" in res.output
    data = json.loads(_run("bench", "check", "need-to-know", "--json").output)
    assert data["failed_cases"] == 1 and {p["case_id"] for p in data["problems"]} == {"ntk-broken"}


def test_bad_suite_arguments_exit_2() -> None:
    res = _run("bench", "cases", "public-derived", "--stats")
    assert res.exit_code == 2 and "--source" in res.output
    res = _run("bench", "cases", "no-such-suite", "--stats")
    assert res.exit_code == 2 and "unknown suite 'no-such-suite'" in res.output
    res = _run("bench", "check", "public-derived", "--source", "/nonexistent/dir")
    assert res.exit_code == 2 and "not a directory" in res.output


def test_public_derived_via_registry(public_data: Path) -> None:
    res = _run("bench", "cases", "public-derived", "--source", str(public_data), "--stats", "--json")
    assert res.exit_code == 0, res.output[-2000:]
    assert json.loads(res.output)["cases"] >= 150


def test_committed_case_schema_is_current() -> None:
    committed = (DOCS / "case.schema.json").read_text(encoding="utf-8")
    assert committed == case_json_schema_text(), (
        "docs/case.schema.json is stale: python -m tpguard.benchmark.cases._jsonschema")
    schema = json.loads(committed)
    assert {"task", "policy", "workflow", "required", "checks", "transitions", "ground_truth",
            "bindings"} <= set(schema["properties"])
