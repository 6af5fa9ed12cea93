"""The report's acquisition section (``benchmark/report/_acquisition.py``) built from a summary of
real acquisition scores: two agents × three guards × 14 cases (7 behaviours × 2 domains), scored
by ``score_acquisition`` with tpguard's detector and summarized by ``summarize_acquisition``."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tpguard.benchmark.metrics.acquisition import (
    AcqEvidence,
    MatchItem,
    acquisition_row,
    score_acquisition,
    summarize_acquisition,
)
from tpguard.benchmark.report import build_reports
from tpguard.benchmark.report._acquisition import (
    acquisition_csv,
    acquisition_html,
    acquisition_markdown,
    acquisition_tables,
)

SECRET = "078-05-1120"
ITEM = MatchItem("ssn", (SECRET,), "ssn")
DOMAINS = ("healthcare", "retail")


def _evidence(agent: str, guard: str, i: int) -> AcqEvidence:
    """leaky/off over-fetches on even cases and the probe repeats it on every fourth; every guard
    returns the narrow view; oracle never over-fetches. Case 13 is not completed."""
    over = agent == "leaky" and guard == "off" and i % 2 == 0
    payload = {"heart_rate": 72, **({"ssn": SECRET} if over else {})}
    probe = f"SSN {SECRET}" if over and i % 4 == 0 else "I only saw the heart rate."
    return AcqEvidence(case_id=f"c{i}", domain=DOMAINS[i % 2], behaviour=i // 2 + 1,
                       completed=i != 13, observations=[("query_records", payload)],
                       k_acq=(ITEM,), k_disc=(ITEM,), response="Heart rate 72.",
                       probe_answer=probe, marker=i in (10, 11), agent=agent, guard=guard)


@pytest.fixture(scope="module")
def summary() -> dict[str, Any]:
    scores = [score_acquisition(_evidence(a, g, i)) for a in ("oracle", "leaky")
              for g in ("off", "enforce", "redact") for i in range(14)]
    part = summarize_acquisition(scores, n_resamples=100, n_permutations=20_000)  # 2¹⁴: exact
    return {"rows": [], "acquisition": part}


def _rows(table: Any, **where: str) -> list[dict[str, Any]]:
    out = [dict(zip(table.columns, r, strict=True)) for r in table.rows]
    return [r for r in out if all(r[k] == v for k, v in where.items())]


def test_tables_per_behaviour_domain_joint(summary: dict[str, Any]) -> None:
    tabs = acquisition_tables(summary)
    assert set(tabs) == {"main", "wilson", "joint", "vs_off", "behaviour", "domain", "marker"}
    (leaky_off,) = _rows(tabs["main"], Agent="leaky", Guard="off")
    # leaky/off: CER on c0, c2 … c12 = 7/14; PLR on c0, c4, c8, c12 = 4/14
    assert leaky_off["CER"] == pytest.approx(50.0) and leaky_off["PLR"] == pytest.approx(400 / 14)
    assert leaky_off["TCR"] == pytest.approx(1300 / 14)
    assert [r["Guard"] for r in _rows(tabs["main"], Agent="leaky")] == ["off", "enforce", "redact"]
    beh = _rows(tabs["behaviour"], Agent="leaky", Guard="off")
    assert [r["Behaviour"] for r in beh] == [
        "1 out-of-scope source", "2 field breadth", "3 file format", "4 time window",
        "5 other subjects", "6 confidentiality-marked items", "7 inferential evidence"]
    assert all(r["n"] == 2 and r["CER"] == 50.0 for r in beh)  # one even case per behaviour
    dom = {r["Domain"]: r for r in _rows(tabs["domain"], Agent="leaky", Guard="off")}
    assert dom["healthcare"]["CER"] == 100.0 and dom["retail"]["CER"] == 0.0
    assert dom["healthcare"]["PLR"] == pytest.approx(400 / 7)
    (joint,) = _rows(tabs["joint"], Agent="leaky", Guard="off")
    # c0, c4, c8, c12 → C1O0P1; c2, c6, c10 → C1O0P0 (no observed disclosure); 7 odd → C0O0P0
    assert joint["CER-positive probe"] == pytest.approx(400 / 14)
    assert joint["no observed disclosure"] == pytest.approx(300 / 14)
    assert joint["C0O0P0"] == pytest.approx(50.0) and joint["C1O1P1"] == 0.0
    (vs,) = _rows(tabs["vs_off"], Agent="leaky", Guard="enforce")
    assert vs["TCR (% of off)"] == pytest.approx(100.0)
    assert vs["ΔCER (pp)"] == pytest.approx(-50.0) and vs["p CER"] == pytest.approx(2 / 2**7)
    marker = {r["Subset"]: r for r in _rows(tabs["marker"], Agent="leaky", Guard="off")}
    assert marker["marker"]["n"] == 2 and marker["no marker"]["n"] == 12


def test_markdown_section(summary: dict[str, Any]) -> None:
    md = "\n".join(acquisition_markdown(summary))
    for heading in ("## Acquisition (PrivacyPeek)", "### Main results", "### Wilson 95 %",
                    "### Joint outcomes", "### Guards against off", "### Per acquisition behaviour",
                    "### Per application domain", "**CER by behaviour", "**PLR by domain"):
        assert heading in md, heading
    assert "| Behaviour | off | enforce | redact |" in md  # pivots split per agent
    assert re.search(r"\| 4 time window \| 50\.00 \| 0\.00 \| 0\.00 \|", md)
    assert "CER 6.77–51.95 %" in md  # the paper's reference range is stated


def test_html_section_has_no_literal_markdown(summary: dict[str, Any]) -> None:
    page = acquisition_html(summary)
    assert page.startswith("<h2>Acquisition (PrivacyPeek)</h2>")
    assert page.count("<table class='data'") == 7
    for literal in ("**", "|---", "](", "`", "\n_", "_</p>", "### "):
        assert literal not in page, literal
    assert "data-table='acquisition_behaviour'" in page and "7 inferential evidence" in page


def test_no_section_without_acquisition_rows() -> None:
    plain = {"rows": [{"agent": "oracle", "guard": "off", "suite": "need-to-know", "n": 3}]}
    assert acquisition_tables(plain) == {} and acquisition_csv(plain) == []
    assert acquisition_markdown(plain) == [] and acquisition_html(plain) == ""
    assert acquisition_tables({}) == {}


def test_rows_alone_still_give_main_and_intervals(summary: dict[str, Any]) -> None:
    rows = summary["acquisition"]["rows"]
    tabs = acquisition_tables({"rows": rows})
    assert set(tabs) == {"main", "wilson", "joint"}
    (r,) = _rows(tabs["wilson"], Agent="leaky", Guard="off")
    assert [r["CER lo"], r["CER hi"]] == pytest.approx(acquisition_row(
        [score_acquisition(_evidence("leaky", "off", i)) for i in range(14)])["ci"]["CER"])


def test_build_reports_writes_the_section_and_csvs(tmp_path: Path,
                                                  summary: dict[str, Any]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "records.jsonl").write_text("", encoding="utf-8")
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    st = (run / "records.jsonl").stat()
    os.utime(run / "summary.json", (st.st_atime + 1, st.st_mtime + 1))  # not stale
    written = build_reports(run, figures=False)
    for name in ("main", "wilson", "joint", "vs_off", "behaviour", "domain", "marker"):
        assert f"tables/acquisition_{name}.csv" in written
    with (run / "tables" / "acquisition_main.csv").open(encoding="utf-8") as fh:
        main = {(r["Agent"], r["Guard"]): r for r in csv.DictReader(fh)}
    assert float(main[("leaky", "off")]["PLR"]) == pytest.approx(400 / 14)  # full precision
    md = (run / "report.md").read_text(encoding="utf-8")
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "## Acquisition (PrivacyPeek)" in md and "<h2>Acquisition (PrivacyPeek)</h2>" in page
    for text in (md, page, *(p.read_text(encoding="utf-8") for p in (run / "tables").iterdir())):
        assert SECRET not in text and "078051120" not in text
