"""One run directory per configuration, one writer at a time, and option validation that leaves
nothing behind (issue 12, items 2 and 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.runner import RunConfig, RunLock, default_out, select_cases
from tpguard.cli import app

runner = CliRunner()


def _bench(*args: str, **kw: object):
    return runner.invoke(app, ["bench", "run", "--no-report", *args], **kw)  # type: ignore[arg-type]


def _rows(out: Path) -> set[tuple[str, str]]:
    summary = json.loads((out / "summary.json").read_text())
    return {(r["agent"], r["guard"]) for r in summary["rows"]}


def test_default_directories() -> None:
    assert default_out(RunConfig(quick=True)) == Path("runs/need-to-know-quick")  # the README's
    assert default_out(RunConfig()) == Path("runs/need-to-know")
    a = default_out(RunConfig(agents=("oracle",), guards=("off", "enforce"), limit=2))
    b = default_out(RunConfig(agents=("oracle",), guards=("off", "enforce"), limit=2, seed=1))
    c = default_out(RunConfig(quick=True, guard_knows_variants=True))
    assert a.name.startswith("need-to-know-oracle-off+enforce-s0-l2-")
    assert b.name.startswith("need-to-know-oracle-off+enforce-s1-l2-")
    assert len({a, b, c, Path("runs/need-to-know-quick")}) == 4  # the hash tells them apart
    six = default_out(RunConfig(agents=("oracle", "leaky"), quick=True, seed=3))
    assert six.name.startswith("need-to-know-oracle+leaky-6g-s3-quick-")


def test_two_configurations_never_mix_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = _bench("--agent", "oracle", "--guard", "off", "--limit", "2")
    second = _bench("--agent", "leaky", "--guard", "enforce", "--limit", "2")
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    dirs = sorted(p for p in (tmp_path / "runs").iterdir())
    assert len(dirs) == 2
    assert [_rows(d) for d in dirs] in ([{("leaky", "enforce")}, {("oracle", "off")}],
                                        [{("oracle", "off")}, {("leaky", "enforce")}])


def test_another_configuration_in_a_directory_is_refused_unless_appended(tmp_path: Path) -> None:
    out = str(tmp_path / "r")
    assert _bench("--agent", "oracle", "--guard", "off", "--limit", "2", "--out", out).exit_code == 0
    refused = _bench("--agent", "oracle", "--guard", "enforce", "--limit", "2", "--out", out)
    assert refused.exit_code == 2
    assert "holds a run of another configuration (differs in guards)" in refused.output
    assert "--append" in refused.output
    assert _rows(tmp_path / "r") == {("oracle", "off")}
    resumed = _bench("--agent", "oracle", "--guard", "off", "--limit", "2", "--out", out)
    assert resumed.exit_code == 0 and "0 runs executed" in resumed.output
    appended = _bench("--agent", "oracle", "--guard", "enforce", "--limit", "2", "--out", out,
                      "--append")
    assert appended.exit_code == 0, appended.output
    assert _rows(tmp_path / "r") == {("oracle", "off"), ("oracle", "enforce")}
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert [c["guards"] for c in run["configurations"]] == [["off"], ["enforce"]]


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r"
    out.mkdir()
    with RunLock(out):
        res = _bench("--agent", "oracle", "--guard", "off", "--limit", "1", "--out", str(out))
    assert res.exit_code == 2
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "is in use by a running benchmark (PID" in lines[0]
    assert not (out / "records.jsonl").exists()
    assert _bench("--agent", "oracle", "--guard", "off", "--limit", "1", "--out",
                  str(out)).exit_code == 0  # released


@pytest.mark.parametrize(("args", "says"), [
    (["--limit", "-3"], "--limit"),
    (["--limit", "0"], "--limit"),
    (["--workers", "0"], "--workers"),
    (["--guard", ""], "--guard: empty list"),
    (["--guard", " , "], "--guard: empty list"),
    (["--agent", ""], "--agent: empty list"),
    (["--guard", "off,nope"], "unknown nope"),
    (["--agent", "nope"], "unknown agent 'nope'"),
    (["--domains", "medical,atlantis"], "valid domains of need-to-know: charity-aid"),
    (["--suite", "nope"], "unknown suite"),
    (["--quick", "true"], "unexpected extra argument"),
])
def test_bad_options_exit_2_and_leave_no_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], says: str) -> None:
    monkeypatch.chdir(tmp_path)
    res = _bench(*args)
    assert res.exit_code == 2 and says in res.output, res.output
    assert not (tmp_path / "runs").exists()


def test_help_shows_flags_as_flags() -> None:
    res = runner.invoke(app, ["bench", "run", "--help"], env={"COLUMNS": "200"})
    line = next(x for x in res.output.splitlines() if "│ --quick " in x)
    assert "<bool>" not in line and "Two cases per domain" in line


def test_domains_by_slug_or_name_any_case() -> None:
    suite = generate(0)
    by_slug = select_cases(suite, RunConfig(domains=("it-helpdesk", "credit-card-risk")))
    by_name = select_cases(suite, RunConfig(domains=("IT helpdesk", "Credit-card RISK")))
    assert [c.id for c in by_slug] == [c.id for c in by_name]
    assert {c.domain for c in by_slug} == {"IT helpdesk", "Credit-card risk"}


def test_oracle_variants_is_named_in_the_terminal_and_the_report(tmp_path: Path) -> None:
    """Handing the guard the evaluator's variants is an oracle condition: said where it is read."""
    out = tmp_path / "oracle"
    res = runner.invoke(app, ["bench", "run", "--agent", "oracle", "--guard", "enforce", "--limit", "1",
                              "--bootstrap", "0", "--oracle-variants", "--out", str(out)],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "ORACLE CONDITION" in res.output
    assert json.loads((out / "run.json").read_text())["config"]["guard_knows_variants"] is True
    report = (out / "report.md").read_text()
    assert "ORACLE CONDITION" in "\n".join(report.splitlines()[:10])  # the first screen
    assert "ORACLE CONDITION" in (out / "report.html").read_text()
    plain = runner.invoke(app, ["bench", "run", "--agent", "oracle", "--guard", "enforce", "--limit", "1",
                                "--bootstrap", "0", "--out", str(tmp_path / "plain")], env={"COLUMNS": "200"})
    assert plain.exit_code == 0, plain.output
    assert "ORACLE" not in plain.output
    assert "ORACLE" not in (tmp_path / "plain" / "report.md").read_text()
