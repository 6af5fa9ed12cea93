"""Reports and CLI of the acquisition and exposure suites as a newcomer meets them (issue 29 item 6):
a true summary in the suite's own terms, ``records`` right, "How to read" defining the suite's own
metrics, ``bench compare`` with non-empty tables that refuses two suites and pairs case-runs only
on (suite, seed, case), ``--source`` refused for every suite, one suite per run directory.

Real runs of the reference agents through ``tpguard bench run`` (small limits, few resamples)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpguard.cli import app

runner = CliRunner()


def _bench(*args: str):
    return runner.invoke(app, ["bench", *args])


def _run(out: Path, suite: str, limit: int, guards: str, *extra: str) -> Path:
    res = _bench("run", "--suite", suite, "--agent", "oracle,leaky", "--guard", guards,
                 "--limit", str(limit), "--bootstrap", "50", "--out", str(out), *extra)
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("suites")
    return {
        "exposure": _run(root / "exp", "exposure", 6, "off,exits,enforce"),
        "exposure-less": _run(root / "exp-less", "exposure", 6, "off,exits"),
        "exposure-seed1": _run(root / "exp-s1", "exposure", 6, "off,exits", "--seed", "1"),
        "acquisition": _run(root / "acq", "acquisition", 7, "off,enforce,directive"),
    }


def _section(md: str, heading: str) -> str:
    return md.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_exposure_summary_says_what_ran_in_its_own_terms(runs: dict[str, Path]) -> None:
    md = (runs["exposure"] / "report.md").read_text()
    summary = _section(md, "Summary")
    assert summary.strip().startswith(
        "This run scored 2 agents (`oracle`, `leaky`) under 3 guards (`off`, `exits`, `enforce`) "
        "on 6 sessions of the exposure suite (seed 0, limit 6): 36 session-runs.")
    rows = {(r["agent"], r["guard"]): r
            for r in json.loads((runs["exposure"] / "summary.json").read_text())["exposure"]["rows"]}
    off, exits = rows[("leaky", "off")], rows[("leaky", "exits")]
    line = next(s for s in summary.splitlines() if s.startswith("- `exits`"))
    assert f"ECR from {off['ECR']:.2f} % to {exits['ECR']:.2f} %" in line and "`leaky`" in line
    assert next(s for s in summary.splitlines() if s.startswith("- `enforce`"))
    assert "Where tpguard loses:" in summary
    for word in ("TaskSuccess", " FOR ", "baseline has a higher", "0 agents"):
        assert word not in summary, word  # nothing of need-to-know, nothing that did not run
    assert "- **records**: 36" in md


def test_how_to_read_defines_the_suites_own_metrics(runs: dict[str, Path]) -> None:
    exp = _section((runs["exposure"] / "report.md").read_text(), "How to read this report")
    for term in ("ECR (exposure coverage rate)", "OLF (outlet-loss fraction)", "coverage.<channel>",
                 "TCR (task completion rate)", "Agent-R"):
        assert term in exp, term
    assert "TaskSuccess" not in exp and "forbidden (atom, tool)" not in exp
    acq_md = (runs["acquisition"] / "report.md").read_text()
    acq = _section(acq_md, "How to read this report")
    for term in ("CER —", "PLR (probe leakage rate)", "OLR —", "HCER / HPLR", "TCR (task completion"):
        assert term in acq, term
    assert "TaskSuccess" not in acq and "- **records**: 42" in acq_md
    assert _section(acq_md, "Summary").strip().startswith(
        "This run scored 2 agents (`oracle`, `leaky`) under 3 guards (`off`, `enforce`, "
        "`directive`) on 7 cases of the acquisition suite")


def test_a_stopped_run_says_so_on_its_first_screen(runs: dict[str, Path], tmp_path: Path) -> None:
    """A run stopped part-way (or still going) names how many of its planned cases and case-runs
    have a record, not only what it scored."""
    import shutil

    stopped = tmp_path / "stopped"
    shutil.copytree(runs["acquisition"], stopped)
    lines = (stopped / "records.jsonl").read_text().splitlines(keepends=True)
    (stopped / "records.jsonl").write_text("".join(lines[:10]))  # case-major: 6 runs per case
    (stopped / "summary.json").unlink()
    res = _bench("report", str(stopped), "--no-figures")
    assert res.exit_code == 0, res.output
    summary = _section((stopped / "report.md").read_text(), "Summary")
    assert "on 2 of 7 cases of the acquisition suite (seed 0, limit 7): 10 case-runs." in summary
    assert "**The run is incomplete: 10 of its 42 case-runs have a record**" in summary
    # a guard with fewer cases than off is compared with it on the cases both ran, not rate to rate
    ns = {(r["agent"], r["guard"]): r["n"] for r in
          json.loads((stopped / "summary.json").read_text())["acquisition"]["rows"]}
    short = sorted({a for (a, g), n in ns.items() if g != "off" and n != ns[(a, "off")]})
    assert short, ns  # the truncation leaves some agent's guards short of its off
    for agent in short:
        assert re.search(rf"on the 1 case both ran: PLR [+-]\d+\.\d\d pp, CER [+-]\d+\.\d\d pp, "
                         rf"TCR [+-]\d+\.\d\d pp for `{re.escape(agent)}`", summary), summary
    full = _section((runs["acquisition"] / "report.md").read_text(), "Summary")
    assert "incomplete" not in full and "on 7 cases of" in full and "both ran" not in full


def test_html_opens_with_the_same_summary(runs: dict[str, Path]) -> None:
    page = (runs["exposure"] / "report.html").read_text()
    assert "This run scored 2 agents (<code>oracle</code>, <code>leaky</code>)" in page
    assert "0 case-runs" not in page


def test_compare_exposure_runs_gives_non_empty_tables(runs: dict[str, Path]) -> None:
    res = _bench("compare", str(runs["exposure"]), str(runs["exposure-less"]), "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["paired"] is True and data["suite"] == "exposure"
    assert {(r["agent"], r["guard"]) for r in data["rows"]} == {
        (a, g) for a in ("oracle", "leaky") for g in ("off", "exits")}
    leaky_off = next(r for r in data["rows"] if (r["agent"], r["guard"]) == ("leaky", "off"))
    assert leaky_off["run1"]["ECR"] is not None and leaky_off["delta"]["ECR"] == 0.0
    assert "coverage.email" in data["keys"]
    table = runner.invoke(app, ["bench", "compare", str(runs["exposure"]),
                                str(runs["exposure-less"])], env={"COLUMNS": "250"})
    assert "ΔECR" in table.output and "leaky / exits" in table.output
    assert "only in run1: leaky / enforce" in table.output


def test_compare_acquisition_with_itself(runs: dict[str, Path]) -> None:
    res = _bench("compare", str(runs["acquisition"]), str(runs["acquisition"]), "--json")
    data = json.loads(res.stdout)
    assert res.exit_code == 0 and len(data["rows"]) == 6
    assert all(r["run1"]["PLR"] is not None and r["delta"]["PLR"] == 0.0 for r in data["rows"])


def test_compare_refuses_two_suites(runs: dict[str, Path]) -> None:
    res = _bench("compare", str(runs["exposure"]), str(runs["acquisition"]))
    assert res.exit_code == 2
    assert "holds the exposure suite" in res.output and "acquisition suite" in res.output


def test_different_seeds_are_unpaired(runs: dict[str, Path]) -> None:
    res = _bench("compare", str(runs["exposure-less"]), str(runs["exposure-seed1"]), "--json")
    assert res.exit_code == 0, res.output
    assert "seeds differ (A: 0, B: 1)" in res.output
    data = json.loads(res.stdout)
    assert data["paired"] is False and data["cases"]["common"] == 0
    assert all(r["n1"] == r["n2"] == 0 and r["delta"]["ECR"] is None for r in data["rows"])
    whole = _bench("compare", str(runs["exposure-less"]), str(runs["exposure-seed1"]), "--json",
                   "--unpaired")
    assert all(r["n1"] == r["n2"] == 6 for r in json.loads(whole.stdout)["rows"])


@pytest.mark.parametrize("suite", ["need-to-know", "public-derived", "acquisition", "exposure"])
@pytest.mark.parametrize("where", ["missing", "empty"])
def test_source_that_holds_nothing_is_refused(tmp_path: Path, suite: str, where: str) -> None:
    source = tmp_path / "src"
    if where == "empty":
        source.mkdir()
    out = tmp_path / "out"
    res = _bench("run", "--suite", suite, "--source", str(source), "--limit", "1", "--out",
                 str(out))
    assert res.exit_code == 2, res.output
    assert "--source" in res.output or "no public source" in res.output
    assert not out.exists()


def test_a_run_directory_holds_one_suite(runs: dict[str, Path]) -> None:
    res = _bench("run", "--suite", "acquisition", "--limit", "1", "--out", str(runs["exposure"]),
                 "--append", "--no-report")
    assert res.exit_code == 2
    assert re.search(r"holds a run of the exposure suite; a run\s+directory holds one suite",
                     res.output)


@pytest.mark.parametrize(("name", "title", "y"), [
    ("exposure", "ASLEval (seed 002)", "ECR"), ("acquisition", "PrivacyPeek (seed 001)", "PLR")])
def test_report_opens_with_the_privacy_utility_chart(runs: dict[str, Path], name: str, title: str,
                                                     y: str) -> None:
    md = (runs[name] / "report.md").read_text()
    headings = re.findall(r"^## (.+)$", md, re.M)
    assert headings[:2] == ["Summary", f"Privacy–utility trade-off — {title}"]
    chart = _section(md, headings[1])
    assert f"x = TCR (%, task completion rate), y = {y} (%" in chart
    assert "(figures/scatter.png)" in chart
    assert (runs[name] / "figures" / "scatter.png").read_bytes()[:4] == b"\x89PNG"
    page = (runs[name] / "report.html").read_text()
    assert page.index("id=\"tradeoff-chart\"") < page.index("<h2>Run</h2>")
    rows = json.loads((runs[name] / "summary.json").read_text())[name]["rows"]
    scatter = page.split("Scatter data", 1)[1].split("</details>", 1)[0]
    for r in rows:  # one point per agent × guard, at the summary's values
        assert f"<td>{r['agent']} / {r['guard']}</td>" in scatter
        assert f"<td>{r['TCR']:.2f}</td>" in scatter and f"<td>{r[y]:.2f}</td>" in scatter


def test_need_to_know_summary_names_only_guards_that_ran(tmp_path: Path) -> None:
    out = tmp_path / "ntk"
    res = _bench("run", "--agent", "oracle", "--guard", "off,enforce", "--limit", "2",
                 "--bootstrap", "20", "--out", str(out))
    assert res.exit_code == 0, res.output
    md = (out / "report.md").read_text()
    summary = _section(md, "Summary")
    assert "no baseline ran in this run" in summary and "redact" not in summary
    assert re.findall(r"^## (.+)$", md, re.M)[1].startswith("Privacy–utility trade-off")


def test_oracle_condition_is_labelled_a_sanity_check_and_never_a_guard_result() -> None:
    from tpguard.benchmark.report import RunData
    from tpguard.benchmark.report._families import EXPOSURE
    from tpguard.benchmark.report._family_overview import family_losses, family_sentences

    def row(guard: str, ecr: float, tcr: float = 100.0) -> dict[str, object]:
        return {"agent": "leaky", "guard": guard, "suite": "exposure", "family": "exposure",
                "n": 10, "ECR": ecr, "OLF": 0.0, "TCR": tcr}

    rows = [row("off", 90.0), row("oracle-exits", 0.0), row("exits", 30.0),
            row("return-min", 3.0, 0.0)]
    data = RunData(Path("."), {}, [], [], {"rows": []})
    sentences = family_sentences(data, EXPOSURE, rows)
    oracle = next(s for s in sentences if s.startswith("`oracle-exits`"))
    assert "sanity check" in oracle and "not a guard result" in oracle
    losses = " ".join(family_losses(EXPOSURE, rows))
    assert "oracle-exits" not in losses  # a ceiling is not a baseline tpguard loses to
    assert "`return-min` leaks less than every tpguard guard" in losses


def test_where_tpguard_loses_speaks_only_of_guards_that_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    from tpguard.benchmark.report import RunData
    from tpguard.benchmark.report import _family_overview as fo
    from tpguard.benchmark.report._families import EXPOSURE

    def row(guard: str, ecr: float) -> dict[str, object]:
        return {"agent": "leaky", "guard": guard, "suite": "exposure", "family": "exposure",
                "n": 10, "ECR": ecr, "OLF": 0.0, "TCR": 100.0}

    data = RunData(Path("."), {}, [], [], {"rows": []})
    for rows, said in (([row("off", 90.0), row("oracle-exits", 0.0)], "no tpguard guard that acts ran"),
                       ([row("exits", 0.0)], "`off` did not run")):
        monkeypatch.setattr(fo, "family_rows", lambda _summary, _fam, rows=rows: rows)
        loss = fo.family_overview(data, EXPOSURE)[-1]
        assert said in loss and "costs TCR against `off`" not in loss


def test_a_cost_on_the_first_screen_carries_its_paired_test() -> None:
    """A guard that completes fewer sessions than ``off`` is named as a cost, with the paired test
    beside it — the first real-model exposure run lost completions only in sessions where the
    guard never acted (server noise), and 3 of 12 sessions is not a finding."""
    from tpguard.benchmark.report._families import EXPOSURE
    from tpguard.benchmark.report._family_overview import family_losses

    def row(guard: str, ecr: float, tcr: float) -> dict[str, object]:
        return {"agent": "a", "guard": guard, "suite": "exposure", "family": "exposure",
                "n": 12, "ECR": ecr, "OLF": 0.0, "TCR": tcr}

    rows = [row("off", 16.9, 33.3), row("exits", 0.0, 8.3)]
    test = {"n": 12, "mean_diff": -25.0, "p_value": 0.375, "test": "paired sign-flip over sessions"}
    said = " ".join(family_losses(EXPOSURE, rows, {("a", "exposure", "exits", "TCR"): test}))
    assert ("`exits` costs TCR for `a`: 8.30 % vs 33.30 % under `off` (paired sign-flip over "
            "sessions: p = 0.38 — within chance at this size).") in said
    sure = {("a", "exposure", "exits", "TCR"): {**test, "p_value": 0.01}}
    said = " ".join(family_losses(EXPOSURE, rows, sure))
    assert "(paired sign-flip over sessions: p = 0.01)." in said
    assert "under `off`." in " ".join(family_losses(EXPOSURE, rows))  # no test: no clause
