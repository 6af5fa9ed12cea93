"""``tpguard bench calibrate``: the leaky agent's fitted-vs-paper table (seed 000 Table 8,
Figure 7a/b, Table 9, Table 10). The tight tolerances (±3 per sink and field) are the full
command's (``docs/agents.md``); on a small stratified subset this test holds the ordering of the
sinks and a loose ±8 bound per sink, so a drift of the fitted propensities still fails it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.agents.leaky._paper import DOMAIN_FOR, FIELDS, SINKS, TRANSITIONS
from tpguard.benchmark.agents.leaky.calibrate import calibration, render_markdown, stratified
from tpguard.benchmark.cases.need_to_know import generate
from tpguard.cli import app


@pytest.fixture(scope="module")
def subset() -> dict[str, Any]:
    cases = stratified(generate(seed=0).cases, 115)
    return calibration(cases, profiles=("default",))


def test_stratified_subset_takes_every_domain_equally() -> None:
    cases = stratified(generate(seed=0).cases, 115)
    per = {c.domain for c in cases}
    assert len(cases) == 115 and len(per) == 23


def test_sinks_keep_the_paper_ordering_and_a_loose_bound(subset: dict[str, Any]) -> None:
    rows = {(r.group, r.name, r.metric): r for r in subset["rows"]}
    fors = {s: rows[("sink", s, "FOR")].fitted for s in SINKS}
    assert max(fors, key=lambda s: fors[s]) == "ticket" and min(fors, key=lambda s: fors[s]) == "record"
    assert fors["handoff"] > fors["notification"] and fors["comment"] > fors["notification"]
    for sink, (p_for, _swlr, _ftf) in SINKS.items():
        assert abs(fors[sink] - p_for) <= 8.0, (sink, fors[sink], p_for)
    # Table 8: FreeText FOR (per field opportunity) above FOR, Gold Arg in the paper's range
    row = subset["profiles"]["default"]
    assert row["FreeTextFOR_field"] > row["FOR"] >= row["FreeTextFOR"]
    assert 88.0 <= row["GoldArg"] <= 95.0 and row["Task"] >= 92.0
    # the low-risk transition stays low where it is observed, the risky ones risky
    assert rows[("transition", "record → ticket", "RiskyTransitionRate")].fitted >= 85.0
    assert rows[("domain", "Table B.12 domains", "Spearman ρ (FOR)")].fitted >= 0.6


def test_command_json_has_every_row_and_check_exits_by_tolerance() -> None:
    result = CliRunner().invoke(app, ["bench", "calibrate", "--cases", "46", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    keys = {(r["group"], r["name"], r["metric"]) for r in data["rows"]}
    for sink in SINKS:
        assert {("sink", sink, "FOR"), ("sink", sink, "FreeTextFOR_field")} <= keys
    for field in FIELDS:
        assert {("field", field, "FreeTextFOR_field"), ("field", field, "FTSlotRate")} <= keys
    for kind in TRANSITIONS:
        assert ("transition", kind, "RiskyTransitionRate") in keys
    for domain in DOMAIN_FOR:
        assert ("domain", domain, "FOR") in keys
    assert {("profile", p, "FOR") for p in ("careful", "default", "leaky")} <= keys
    assert any(r["metric"] == "FOR ordering" for r in data["rows"])
    assert data["cases"] == 46 and set(data["profiles"]) == {"careful", "default", "leaky"}
    for r in data["rows"]:
        if r["paper"] is not None and r["fitted"] is not None:
            assert r["deviation"] == pytest.approx(r["fitted"] - r["paper"])
    failed = sum(r["passed"] is False for r in data["rows"])
    assert data["failed"] == failed
    checked = CliRunner().invoke(app, ["bench", "calibrate", "--cases", "46", "--check"])
    assert checked.exit_code == (1 if failed else 0)
    assert "| group | row | metric | paper | fitted | deviation |" in checked.output


def test_markdown_names_failing_rows(subset: dict[str, Any]) -> None:
    text = render_markdown(subset)
    judged = [r for r in subset["rows"] if r.passed is not None]
    assert f"/{len(judged)} judged rows pass" in text
    for r in judged:
        if not r.passed:
            assert f"{r.group} {r.name} {r.metric}" in text


def test_tolerances_are_n_aware_and_failures_say_why() -> None:
    from tpguard.benchmark.agents.leaky._compare import _judged, sampling_band

    assert sampling_band(50.0, 100) == pytest.approx(9.8)
    assert sampling_band(50.0, 0) == 0.0
    small = _judged("sink", "ticket", "FOR", 51.43, 48.08, 3.0, 137)  # the 230-case default
    assert small.passed and small.tolerance == "±3 (n-aware ±8.4)" and small.note == ""
    big = _judged("sink", "ticket", "FOR", 51.43, 48.08, 3.0, 5000)  # enough cases: ±3 holds
    assert big.passed is False and big.tolerance == "±3"
    assert "off by -3.35 points" in big.note and "not sampling noise" in big.note
    text = render_markdown({"rows": [big], "cases": 5000, "seed": 0})
    assert "- sink ticket FOR: off by -3.35 points" in text


def test_acquisition_calibration_judges_behaviour_domain_marker_and_delta_c() -> None:
    result = CliRunner().invoke(app, ["bench", "calibrate", "--suite", "acquisition", "--cases",
                                      "140", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["suite"] == "acquisition" and data["cases"] == 140
    rows = {(r["group"], r["name"], r["metric"]): r for r in data["rows"]}
    for key in ("CER", "PLR", "TCR", "ΔC = HCER − CER"):
        assert ("overall", "leaky", key) in rows
    seven = rows[("behaviour", "7 inferential evidence", "PLR")]
    assert seven["paper"] == 53.29 and "n-aware" in seven["tolerance"]  # 20 cases: wide band
    assert {("domain", d, "PLR") for d in ("social_media", "healthcare", "legal", "finance",
                                           "retail", "engineering", "logistics")} <= set(rows)
    assert ("marker", "marker − no marker", "ΔPLR") in rows
    assert data["failed"] == sum(r["passed"] is False for r in data["rows"])
    assert all(r["note"] for r in data["rows"] if r["passed"] is False)  # every failure says why
    bad = CliRunner().invoke(app, ["bench", "calibrate", "--suite", "exposure"])
    assert bad.exit_code == 2 and "need-to-know or acquisition" in bad.output
