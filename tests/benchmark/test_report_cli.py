"""``tpguard bench report`` and ``tpguard bench compare`` through typer's CliRunner, on a Typer app
built with ``benchmark.cli._report.register`` and a small real run (see ``test_report.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from test_report import AGENTS, make_run
from typer.testing import CliRunner

from tpguard.benchmark.cli._report import register


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    bench = typer.Typer(no_args_is_help=True, add_completion=False)
    register(bench)
    return bench


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli_run")
    make_run(d, guards=("off", "enforce"))
    return d


def test_report_prints_every_path_written(app: typer.Typer, run_dir: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(run_dir), "--no-figures"])
    assert res.exit_code == 0, res.output
    printed = [Path(line) for line in res.output.splitlines() if line.strip()]
    assert run_dir / "report.md" in printed and run_dir / "report.html" in printed
    assert run_dir / "tables" / "main_need-to-know.csv" in printed
    assert all(p.is_file() for p in printed)
    assert not (run_dir / "figures").exists()
    again = CliRunner().invoke(app, ["report", str(run_dir), "--no-figures"])
    assert again.exit_code == 0 and "summary.json" not in again.output  # now up to date


def test_compare_table_and_json(app: typer.Typer, run_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    make_run(other, guards=("off", "redact"))
    res = CliRunner().invoke(app, ["compare", str(run_dir), str(other), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert {(r["agent"], r["guard"]) for r in data["rows"]} == {(a, "off") for a in AGENTS}
    assert all(v in (None, 0.0) for r in data["rows"] for v in r["delta"].values())
    assert {r["guard"] for r in data["only_in_run1"]} == {"enforce"}
    assert {r["guard"] for r in data["only_in_run2"]} == {"redact"}
    table = CliRunner().invoke(app, ["compare", str(run_dir), str(other)], env={"COLUMNS": "300"})
    assert table.exit_code == 0, table.output
    assert "ΔFOR" in table.output and "only in run2: leaky:unit / redact" in table.output


def test_not_a_run_directory_exits_2(app: typer.Typer, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "no records.jsonl" in res.output
    res = CliRunner().invoke(app, ["compare", str(tmp_path), str(tmp_path)])
    assert res.exit_code == 2


def test_compare_unpaired_runs_says_so_and_compares_common_cases(
        app: typer.Typer, run_dir: Path, tmp_path: Path) -> None:
    records = [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines() if x]
    ids = sorted({r["case_id"] for r in records})
    fewer = tmp_path / "fewer"
    fewer.mkdir()
    (fewer / "run.json").write_text((run_dir / "run.json").read_text())
    (fewer / "records.jsonl").write_text("".join(
        json.dumps(r) + "\n" for r in records if r["case_id"] in ids[:4]))
    res = CliRunner().invoke(app, ["compare", str(run_dir), str(fewer), "--json"])
    assert res.exit_code == 0, res.output
    assert (f"unpaired: the runs cover different case sets (A: {len(ids)}, B: 4, common: 4); "
            "comparing the 4 common cases only") in res.output
    data = json.loads(res.stdout)
    assert data["paired"] is False and data["cases"] == {"run1": len(ids), "run2": 4, "common": 4}
    assert all(r["n1"] == r["n2"] == 4 for r in data["rows"])
    assert all(v in (None, 0.0) for r in data["rows"] for v in r["delta"].values())  # same cases
    whole = CliRunner().invoke(app, ["compare", str(run_dir), str(fewer), "--json", "--unpaired"])
    assert "comparing the whole runs (--unpaired)" in whole.output
    rows = json.loads(whole.stdout)["rows"]
    assert {(r["n1"], r["n2"]) for r in rows} == {(len(ids), 4)}
    assert any(v not in (None, 0.0) for r in rows for v in r["delta"].values())
    paired = CliRunner().invoke(app, ["compare", str(run_dir), str(run_dir), "--json"])
    assert "unpaired" not in paired.output and json.loads(paired.stdout)["paired"] is True
