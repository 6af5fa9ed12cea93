"""``tpguard bench run --suite exposure`` end to end (issue 11, seed ``002_*``): a real run on a
stratified subset (all three families), the done-when numbers (oracle at 0, leaky's displacement
under ``exit:email``, ``exits`` near 0), the report section, no target value in any shareable file,
per-suite guard-name validation and the ``--bootstrap``/``--stats-seed`` settings."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.agents.exposure import ExpLeakyAgent, run_session
from tpguard.benchmark.cases.exposure import generate
from tpguard.benchmark.guards.exposure import make_exp_guard
from tpguard.benchmark.report import load_run
from tpguard.benchmark.runner import RunConfig, run_benchmark
from tpguard.benchmark.runner._errors import UsageError
from tpguard.benchmark.runner._exposure import select_exp_cases
from tpguard.benchmark.runner.run import _detector
from tpguard.cli import app

SHAREABLE = ("run.json", "summary.json", "spans.jsonl", "records.jsonl", "report.md",
             "report.html")
GUARDS = ("off", "exit:email", "exits")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("exp-run")
    config = RunConfig(suite="exposure", agents=("oracle", "leaky"), guards=GUARDS, limit=30,
                       out=out, bootstrap=500, stats_seed=7)
    return run_benchmark(config, progress=False), config


def _rows(result: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["agent"], r["guard"]): r for r in result.summary["rows"]}


def test_limit_and_quick_are_stratified_over_families() -> None:
    cases = select_exp_cases(RunConfig(suite="exposure", limit=9))
    assert Counter(c.family for c in cases) == {"records": 3, "office": 3, "business": 3}
    assert len({c.domain for c in cases if c.family == "records"}) == 3  # therapy, hr, legal
    quick = select_exp_cases(RunConfig(suite="exposure", quick=True))
    assert Counter(c.family for c in quick) == {"records": 8, "office": 8, "business": 8}
    only = select_exp_cases(RunConfig(suite="exposure", domains=("office",), limit=5))
    assert {c.family for c in only} == {"office"} and len(only) == 5


def test_rows_have_the_keys_and_bootstrap_intervals(run: Any) -> None:
    result, _ = run
    rows = _rows(result)
    assert len(rows) == 6 and result.errors == 0
    for row in rows.values():
        assert row["family"] == "exposure" and row["n"] == row["n_total"] == 30
        keys = ["TCR", "ECR", "OLF", *(f"coverage.{c}" for c in row["channels"])]
        assert {"email", "console", "response", "send"} <= set(row["channels"])
        for key in keys:
            assert isinstance(row[key], float), key
            lo, hi = row["ci"][key]
            assert 0.0 <= lo <= row[key] <= hi <= 100.0
        assert row["errors"] == 0
    part = result.summary["exposure"]
    assert {(v["agent"], v["guard"]) for v in part["views"]} == set(rows)
    for v in part["views"]:  # the visible-exit union misses nothing of itself
        assert v["visible_union"]["missed"] == 0.0
        assert v["visible_union"]["coverage"] == rows[(v["agent"], v["guard"])]["ECR"]


def test_done_when_numbers(run: Any) -> None:
    rows = _rows(run[0])
    for guard in GUARDS:
        oracle = rows[("oracle", guard)]
        assert oracle["ECR"] == 0.0 and oracle["TCR"] == 100.0
    off, mail, exits = rows[("leaky", "off")], rows[("leaky", "exit:email")], rows[("leaky", "exits")]
    assert off["ECR"] > 50.0 and off["coverage.email"] > 20.0
    # displacement: the e-mail guard removes e-mail exposure, session exposure barely moves
    assert mail["coverage.email"] < off["coverage.email"] and mail["coverage.email"] == 0.0
    assert abs(mail["ECR"] - off["ECR"]) <= 0.10 * off["ECR"]
    assert mail["OLF"] > off["OLF"]
    assert exits["ECR"] <= 5.0
    for guard in GUARDS:  # the normal task's outlet carries no target: no utility cost here
        assert rows[("leaky", guard)]["TCR"] == 100.0


def test_report_has_the_exposure_section(run: Any) -> None:
    result, _ = run
    md = (result.out / "report.md").read_text(encoding="utf-8")
    assert "## Exposure (ASLEval)" in md and "Evaluation views" in md
    assert "Recognition" in md and "Path diagnostics" in md
    assert "Exposure (ASLEval)" in (result.out / "report.html").read_text(encoding="utf-8")
    assert (result.out / "tables" / "exposure_channels.csv").is_file()
    data = load_run(result.out, write_summary=False)
    assert not data.legacy  # an exposure-only run has no ToolPrivacyBench sections


def test_run_json_and_report_say_what_the_guards_were_given(run: Any) -> None:
    """The guards get the deployment's policy, never S: run.json and the report say so (it once
    said "the session's targets S" — the condition before issue 17). An oracle-* condition adds
    the oracle's own line."""
    result, _ = run
    guard = json.loads((result.out / "run.json").read_text(encoding="utf-8"))["detector"]["guard"]
    assert set(guard) == {"atoms"} and "never the evaluator's targets S" in guard["atoms"]
    md = (result.out / "report.md").read_text(encoding="utf-8")
    line = next(x for x in md.splitlines() if "What tpguard's guards are given" in x)
    assert "deployment_policy" in line and "targets S (value" not in line
    oracle = _detector(RunConfig(suite="exposure", guards=("off", "oracle-exits")))["guard"]
    assert oracle["atoms"] == guard["atoms"] and "sanity check" in oracle["oracle"]


def test_no_target_value_in_shareable_files(run: Any) -> None:
    result, config = run
    cases = {c.id: c for c in generate(config.seed).cases}
    run_ids = {json.loads(line)["case_id"] for line in
               (result.out / "records.jsonl").read_text(encoding="utf-8").splitlines()}
    values = {v for i in run_ids for t in cases[i].targets for v in (t.value, *t.aliases)
              if len(v) >= 5}
    assert values
    for name in SHAREABLE:
        text = (result.out / name).read_text(encoding="utf-8")
        # span and event clocks, run.json's start/finish times and random trace/span ids are not
        # values (a hex id or a clock can hold a five-digit number such as "74200" or "53200" by
        # chance: "finished": "…12:27:03.532009+00:00")
        text = re.sub(r'"[a-z_]*time_unix_nano": \d+|"(?:trace|span|parent_span)_id": "[0-9a-f]*"'
                      r'|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?', "", text)
        leaked = [v for v in values if v in text]
        assert not leaked, f"{name}: {len(leaked)} target values"


def test_guard_names_are_validated_per_suite(tmp_path: Path) -> None:
    for bad, needle in (("presidio-redact", "does not apply to the exposure suite"),
                        ("exit:fax", "exit:CHANNEL")):
        with pytest.raises(UsageError, match=re.escape(needle)):
            run_benchmark(RunConfig(suite="exposure", agents=("oracle",), guards=("off", bad),
                                    limit=1, out=tmp_path / "x"), progress=False)
        assert not (tmp_path / "x").exists()
    with pytest.raises(UsageError, match="unknown exit:email"):  # exposure-only on need-to-know
        run_benchmark(RunConfig(agents=("oracle",), guards=("exit:email",), limit=1,
                                out=tmp_path / "y"), progress=False)
    res = CliRunner().invoke(app, ["bench", "run", "--suite", "exposure", "--agent", "oracle",
                                   "--guard", "exit:fax", "-o", str(tmp_path / "z")])
    assert res.exit_code == 2 and "exit:CHANNEL" in res.output


def test_exit_channel_guard_acts_only_on_its_medium() -> None:
    """``exit:email`` on a business session guards send, reply and forward (medium e-mail) and
    leaves the reply channel alone — where the leaky agent's fallback then shows the targets."""
    case = next(c for c in generate(0).cases if c.family == "business")
    run = run_session(ExpLeakyAgent(), case, guard="exit:email",
                      wrap=make_exp_guard("exit:email").wrap(case))
    values = [t.value for t in case.targets]

    def carries(ch: str) -> int:
        return sum(any(v in o.text for v in values) for o in run.observations
                   if o.channel == ch and o.status == "delivered")

    assert all(carries(ch) == 0 for ch in ("send", "reply", "forward"))
    assert any(o.status == "blocked" for o in run.observations if o.channel in ("send", "forward"))
    assert carries("response") > 0


def test_bootstrap_and_stats_seed_reach_every_summary(run: Any, tmp_path: Path) -> None:
    result, _ = run
    settings = result.summary["exposure"]["settings"]
    assert settings["bootstrap_resamples"] == 500 and settings["seed"] == 7
    assert result.summary["settings"]["bootstrap_resamples"] == 500
    assert result.summary["settings"]["seed"] == 7
    run_json = json.loads((result.out / "run.json").read_text(encoding="utf-8"))
    assert run_json["config"]["bootstrap"] == 500 and run_json["config"]["stats_seed"] == 7
    # the report's rebuild of a stale summary reads them back from run.json
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("run.json", "records.jsonl"):
        (copy / name).write_bytes((result.out / name).read_bytes())
    data = load_run(copy, write_summary=False)
    assert data.summary_rebuilt
    assert data.summary["exposure"]["settings"]["bootstrap_resamples"] == 500
    assert data.summary["exposure"]["settings"]["seed"] == 7
    assert RunConfig().bootstrap == 10_000 and RunConfig().stats_seed == 2027


def test_acquisition_summary_takes_the_options(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TPGUARD_ACQ_CACHE", str(tmp_path / "files"))
    result = run_benchmark(RunConfig(suite="acquisition", agents=("oracle",), guards=("off",),
                                     limit=2, out=tmp_path / "acq", reports=False,
                                     bootstrap=50, stats_seed=3), progress=False)
    settings = result.summary["acquisition"]["settings"]
    assert settings["bootstrap_resamples"] == 50 and settings["seed"] == 3
