"""The CLI's contract: exit 0 ok, 1 blocked only, 2 with one stderr line for any input or usage
error — never a traceback, never an argument's value."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpguard import __version__
from tpguard.cli import app

runner = CliRunner()
SECRET = "415-555-0199"


def _one_line_error(res, *, secret: str = SECRET) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("tpguard: error: ") and "Traceback" not in res.output
    assert secret not in res.output
    return lines[0]


def _nested(depth: int) -> str:
    return '{"a": ' + "[" * depth + "1" + "]" * depth + "}"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (_nested(10_000), "at most 100 levels of nesting"),
        (_nested(500), "at most 100 levels of nesting"),
        ('{"a": ' + "9" * 5000 + "}", "numbers of at most 4300 digits"),
        (f'{{"a": "{SECRET}"', "invalid JSON at line 1"),
        (f'["{SECRET}"]', "expected a JSON object of argument names"),
    ],
)
def test_bad_args_exit_2_with_one_line(healthcare_policy_path: Path, args: str, expected: str) -> None:
    res = runner.invoke(app, ["check", "-p", str(healthcare_policy_path), "-t", "notify_patient",
                              "-a", args])
    assert expected in _one_line_error(res)


def test_bad_args_file(healthcare_policy_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "args.json"
    bad.write_bytes(b'{"note": "' + SECRET.encode() + b'\xff\xfe"}')
    base = ["check", "-p", str(healthcare_policy_path), "-t", "notify_patient", "-a"]
    assert "the @FILE is not UTF-8 text" in _one_line_error(runner.invoke(app, [*base, f"@{bad}"]))
    missing = runner.invoke(app, [*base, f"@{tmp_path / 'nope.json'}"])
    assert "the @FILE cannot be read (FileNotFoundError)" in _one_line_error(missing)
    deep = tmp_path / "deep.json"
    deep.write_text(_nested(10_000))
    assert "levels of nesting" in _one_line_error(runner.invoke(app, [*base, f"@{deep}"]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "the file is empty"),
        ('a: &x ["lol", "lol"]\nb: [*x, *x]\n', "anchors and aliases are not allowed"),
        ("x: " + "[" * 10_000 + "]" * 10_000 + "\n", "nesting depth"),
        ("atoms:\n  - {id: a, type: t, value: 0042}\n", "quote it"),
    ],
)
def test_bad_policy_exits_2_from_check_and_validate(tmp_path: Path, text: str, expected: str) -> None:
    p = tmp_path / "policy.yaml"
    p.write_text(text)
    for argv in (["policy", "validate", str(p)], ["policy", "matrix", str(p)],
                 ["check", "-p", str(p), "-t", "x", "-a", "{}"]):
        line = _one_line_error(runner.invoke(app, argv))
        assert "invalid policy" in line and expected in line and str(p) in line


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "-t", "x", "-a", "{}", "--bogus", SECRET],
        ["check", "-t", "x", "-a", "{}", f"--mode={SECRET}"],
        ["check", "-p", "p.yaml", "-t", "x", "-a", "{}", SECRET],
        ["check", "-p", "p.yaml", "-t", "x"],
        [SECRET],
        ["policy", "validate"],
    ],
)
def test_usage_errors_are_one_line_without_values(argv: list[str]) -> None:
    line = _one_line_error(runner.invoke(app, argv))
    assert "--help" in line  # it says where to look


def test_bad_mode_does_not_echo_it(healthcare_policy_path: Path) -> None:
    res = runner.invoke(app, ["check", "-p", str(healthcare_policy_path), "-t", "x", "-a", "{}",
                              "-m", SECRET])
    assert "--mode must be one of audit, enforce, redact" in _one_line_error(res)


def test_exit_1_is_blocked_only(healthcare_policy_path: Path) -> None:
    base = ["check", "-p", str(healthcare_policy_path), "-t", "team_handoff", "-a"]
    blocked = runner.invoke(app, [*base, json.dumps({"summary": f"call {SECRET}"})])
    assert blocked.exit_code == 1 and blocked.stderr == ""
    allowed = runner.invoke(app, [*base, json.dumps({"summary": "ready for pickup"})])
    assert allowed.exit_code == 0


def test_help_documents_exit_codes_and_version() -> None:
    res = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "Exit codes: 0 allowed or ok; 1 blocked" in res.output
    assert "2 input or usage error" in runner.invoke(app, ["check", "--help"],
                                                     env={"COLUMNS": "200"}).output
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.output.strip() == f"tpguard {__version__}"


def test_validate_json(healthcare_policy_path: Path, tmp_path: Path) -> None:
    ok = runner.invoke(app, ["policy", "validate", "--json", str(healthcare_policy_path)])
    data = json.loads(ok.stdout)
    assert ok.exit_code == 0 and data["ok"] is True and data["errors"] == []
    assert (data["atoms"], data["tools"], data["matrix"]["conditional"]) == (7, 5, 1)
    bad = tmp_path / "bad.yaml"
    bad.write_text("atoms:\n  - {id: a, type: t, value: 12:30}\n  - {id: b, type: t, value: \"xy\"}\n")
    res = runner.invoke(app, ["policy", "validate", "--json", str(bad)])
    report = json.loads(res.stdout)
    assert res.exit_code == 2 and report["ok"] is False
    assert [e["path"] for e in report["errors"]] == ["atoms[0].value"]
    assert "quote it" in report["errors"][0]["expected"] and "12:30" not in res.stdout
    assert len(res.stderr.splitlines()) == 1


def test_matrix_json(healthcare_policy_path: Path) -> None:
    res = runner.invoke(app, ["policy", "matrix", "--json", str(healthcare_policy_path)])
    data = json.loads(res.stdout)
    assert res.exit_code == 0 and data["tools"][-1] == "team_handoff"
    assert data["matrix"]["phone"]["notify_patient"] == {
        "state": "authorized", "level": "atom_tool", "binary": 1, "fields": [], "forms": []}
    card = data["matrix"]["card_suffix"]["process_payment"]
    assert card["state"] == "conditional" and card["fields"] == ["card"] and card["level"] == "type_purpose"
    assert data["counts"] == {"authorized": 15, "forbidden": 19, "conditional": 1}


def test_tables_use_full_width_when_not_a_terminal(tmp_path: Path) -> None:
    tools = [f"a_rather_long_tool_name_number_{i:02d}" for i in range(8)]
    p = tmp_path / "wide.yaml"
    p.write_text('atoms: [{id: a, type: t, value: "abcd"}]\ntools:\n'
                 + "".join(f"  - {{name: {t}}}\n" for t in tools))
    res = runner.invoke(app, ["policy", "matrix", str(p)], env={"COLUMNS": ""})
    assert res.exit_code == 0
    header = [line for line in res.stdout.splitlines() if tools[0] in line]
    assert len(header) == 1 and all(t in header[0] for t in tools), res.stdout


def test_real_entry_point_never_prints_a_traceback(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("x: " + "[" * 10_000 + "]" * 10_000 + "\n")
    proc = subprocess.run([sys.executable, "-m", "tpguard.cli", "policy", "validate", str(deep)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    usage = subprocess.run([sys.executable, "-m", "tpguard.cli", "check", "--mode", SECRET],
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and len(usage.stderr.splitlines()) == 1, usage.stderr
    assert SECRET not in usage.stderr
