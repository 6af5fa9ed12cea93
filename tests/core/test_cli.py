"""The tpguard CLI: policy validate/matrix and check."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tpguard.cli import app

runner = CliRunner()


def test_help_lists_commands() -> None:
    out = runner.invoke(app, ["--help"])
    assert out.exit_code == 0 and "policy" in out.output and "check" in out.output


def test_validate_ok_and_bad(healthcare_policy_path: Path, tmp_path: Path) -> None:
    ok = runner.invoke(app, ["policy", "validate", str(healthcare_policy_path)])
    assert ok.exit_code == 0 and "7 atoms, 5 tools" in ok.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("tools:\n  - {name: x, sink: fax}\n")
    res = runner.invoke(app, ["policy", "validate", str(bad)])
    assert res.exit_code == 2 and "tools[0].sink" in res.output and "Traceback" not in res.output


def test_matrix_table(healthcare_policy_path: Path) -> None:
    out = runner.invoke(app, ["policy", "matrix", str(healthcare_policy_path)], env={"COLUMNS": "200"})
    assert out.exit_code == 0 and "team_handoff" in out.output and "◐" in out.output


def test_check_json_block_and_allow(healthcare_policy_path: Path) -> None:
    args = json.dumps({"summary": "Maria Gonzalez 415-555-0199"})
    res = runner.invoke(app, ["check", "-p", str(healthcare_policy_path), "-t", "team_handoff",
                              "-a", args, "--json"])
    assert res.exit_code == 1
    data = json.loads(res.output)
    assert data["action"] == "block" and {f["atom_id"] for f in data["forbidden"]} == {"name", "phone"}
    res2 = runner.invoke(app, ["check", "-p", str(healthcare_policy_path), "-t", "team_handoff",
                               "-a", args, "--mode", "redact", "--json"])
    assert res2.exit_code == 0
    assert json.loads(res2.output)["arguments"]["summary"] == "[PERSON_NAME_1] [PHONE_1]"


def test_check_bad_input_exits_2(healthcare_policy_path: Path) -> None:
    res = runner.invoke(app, ["check", "-p", str(healthcare_policy_path), "-t", "x", "-a", "{not json"])
    assert res.exit_code == 2 and "expected a JSON object" in res.output
    res = runner.invoke(app, ["check", "-p", str(healthcare_policy_path), "-t", "x", "-a", "{}", "-m", "nope"])
    assert res.exit_code == 2
