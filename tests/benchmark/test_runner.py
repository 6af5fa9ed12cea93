"""``tpguard bench run``: outputs, resumability, sanity controls, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.metrics import KEYS
from tpguard.benchmark.runner import RunConfig, iter_records, run_benchmark
from tpguard.cli import app

GUARDS = ("off", "enforce", "redact", "drop-free-text")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    config = RunConfig(out=out, agents=("oracle", "leaky"), guards=GUARDS, quick=True, limit=12,
                       reports=False)
    result = run_benchmark(config, progress=False)
    assert result.executed == 12 * 2 * len(GUARDS) and result.skipped == 0
    return out


def rows(run_dir: Path) -> dict[tuple[str, str], dict]:
    summary = json.loads((run_dir / "summary.json").read_text())
    return {(r["agent"], r["guard"]): r for r in summary["rows"]}


def test_output_files(run_dir: Path) -> None:
    for name in ("run.json", "records.jsonl", "audit.sqlite", "spans.jsonl", "summary.json"):
        assert (run_dir / name).is_file(), name
    run = json.loads((run_dir / "run.json").read_text())
    assert run["config"]["guards"] == list(GUARDS) and "api_key" not in run["config"]
    assert run["detector"]["evaluator"]["semantic_variants"] is True
    assert run["versions"]["tpguard"] and run["finished"]
    records = list(iter_records(run_dir / "records.jsonl"))
    assert len(records) == 96
    r = records[0]
    assert {"trajectory", "attempts", "disclosures", "s_task", "score", "values"} <= set(r)


def test_summary_rows_have_every_key_as_percentages(run_dir: Path) -> None:
    for row in rows(run_dir).values():
        assert row["n"] == 12 and {"agent", "guard", "suite"} <= set(row)
        for key in ("Task", "Workflow", "GoldArg", "TaskSuccess", "FOR", "SWLR", "ToolFOR", "LTCR",
                    "FreeTextFOR", "FTSlotRate", "MidFOR", "MT-POI", "SMTC"):
            assert key in row and key in KEYS
            assert row[key] is None or 0.0 <= row[key] <= 100.0


def test_sanity_controls(run_dir: Path) -> None:
    r = rows(run_dir)
    for guard in ("off", "enforce", "redact"):
        assert r[("oracle", guard)]["TaskSuccess"] == pytest.approx(100.0)
        assert r[("oracle", guard)]["MT-POI"] == pytest.approx(0.0)
    assert r[("leaky", "off")]["FOR"] > 5
    for guard in ("enforce", "redact"):
        assert r[("leaky", guard)]["FOR"] < 0.5 * r[("leaky", "off")]["FOR"]


def test_blocked_calls_never_reach_the_audit_log(run_dir: Path) -> None:
    for rec in iter_records(run_dir / "records.jsonl"):
        blocked = sum(a["action"] == "block" for a in rec["attempts"])
        assert rec["trajectory"]["blocked"] == blocked
        assert len(rec["trajectory"]["calls"]) == len(rec["attempts"]) - blocked


def test_spans_one_per_attempt_without_values(run_dir: Path) -> None:
    from tpguard.benchmark.cases.need_to_know import generate

    spans = [json.loads(x) for x in (run_dir / "spans.jsonl").read_text().splitlines()]
    tool_spans = [s for s in spans if s["name"].startswith("execute_tool ")]
    attempts = sum(len(r["attempts"]) for r in iter_records(run_dir / "records.jsonl"))
    assert len(tool_spans) == attempts
    text = (run_dir / "spans.jsonl").read_text()
    suite = generate(0)
    ids = {r["case_id"] for r in iter_records(run_dir / "records.jsonl")}
    values = {a.value for c in suite.cases if c.id in ids for a in c.atoms if len(a.value) >= 6}
    assert values and not [v for v in values if v in text]


def test_resume_skips_finished_records(run_dir: Path) -> None:
    config = RunConfig(out=run_dir, agents=("oracle", "leaky"), guards=GUARDS, quick=True, limit=12,
                       reports=False)
    again = run_benchmark(config, progress=False)
    assert again.executed == 0 and again.skipped == 96
    assert len(list(iter_records(run_dir / "records.jsonl"))) == 96


def test_cli_run_and_bad_guard(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["bench", "run", "--agent", "oracle", "--guard", "off,enforce",
                              "--limit", "3", "--out", str(tmp_path / "r"), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "6 runs executed" in res.output
    res = runner.invoke(app, ["bench", "run", "--guard", "off,nope", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "unknown nope" in res.output
