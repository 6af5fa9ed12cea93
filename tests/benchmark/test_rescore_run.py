"""Re-checkable runs (issue 29 item 4): exposure and acquisition runs keep every observation in
``audit.sqlite``, ``rescore_run`` re-adjudicates a run from it alone, and ``tpguard audit --run``
reports the agreement (exit 0) or the case-runs that differ (exit 1)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.audit.rescore import RescoreError, rescore_run
from tpguard.benchmark.backends import AuditLog
from tpguard.benchmark.runner import RunConfig, run_benchmark
from tpguard.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def exp_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exp-rescore")
    run_benchmark(RunConfig(suite="exposure", agents=("leaky",), guards=("off", "exits"),
                            limit=6, out=out, bootstrap=0), progress=False)
    return out


@pytest.fixture(scope="module")
def acq_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("acq-rescore")
    run_benchmark(RunConfig(suite="acquisition", agents=("leaky:eager",), guards=("off",),
                            limit=24, out=out, bootstrap=0), progress=False)
    return out


def test_exposure_runs_store_every_observation(exp_run: Path) -> None:
    with AuditLog(exp_run / "audit.sqlite") as audit:
        rows = audit.observations()
    records = [json.loads(x) for x in (exp_run / "records.jsonl").read_text().splitlines()]
    assert len(records) == 12 and {r["suite"] for r in rows} == {"exposure"}
    for r in records:
        mine = [o for o in rows if o["run_id"] == f"{r['agent']}/{r['guard']}"
                and o["case_id"] == r["case_id"] and o["kind"] == "observation"]
        shape = r["trajectory"]["observations"]
        assert [(o["channel"], o["recipient"], o["visible"], o["status"]) for o in mine] == \
            [(s["channel"], s["recipient"], s["visible"], s["status"]) for s in shape]
        assert any(o["visible"] and o["text"] for o in mine)


def test_a_stored_run_rescores_to_its_recorded_scores(exp_run: Path, acq_run: Path) -> None:
    exp, acq = rescore_run(exp_run), rescore_run(acq_run)
    assert exp.agree and acq.agree and exp.missing == acq.missing == 0
    off = next(r for r in exp.rows if r["guard"] == "off")
    assert off["n"] == 6 and off["ecr.recorded"] == off["ecr.rescored"] > 50
    assert acq.rows[0]["plr.recorded"] == acq.rows[0]["plr.rescored"] > 0


def test_the_rescore_reads_the_stored_text(exp_run: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(exp_run, copy)
    db = sqlite3.connect(copy / "audit.sqlite")
    db.execute("UPDATE observations SET text = 'nothing here' WHERE visible = 1 "
               "AND run_id = 'leaky/off'")
    db.commit()
    db.close()
    res = rescore_run(copy)
    off = next(r for r in res.rows if r["guard"] == "off")
    assert not res.agree and off["ecr.rescored"] == 0 and len(off["differ"]) == 6
    cli = runner.invoke(app, ["audit", "--run", str(copy)])
    assert cli.exit_code == 1 and "differ" in cli.stderr


def test_audit_run_cli_agrees_and_refuses_what_it_cannot_rescore(exp_run: Path,
                                                                 tmp_path: Path) -> None:
    res = runner.invoke(app, ["audit", "--run", str(exp_run), "--json"])
    assert res.exit_code == 0, res.output
    data: dict[str, Any] = json.loads(res.stdout)
    assert data["agree"] and data["suite"] == "exposure"
    bad = runner.invoke(app, ["audit", "--run", str(tmp_path)])
    assert bad.exit_code == 2 and "not a run directory" in bad.stderr
    with pytest.raises(RescoreError, match="not a run directory"):
        rescore_run(tmp_path)
    assert runner.invoke(app, ["audit"]).exit_code == 2  # neither --case nor --run
