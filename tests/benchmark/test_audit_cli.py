"""``tpguard audit``: score a recorded trajectory or exported spans against a case or policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from typer.testing import CliRunner

from tpguard.benchmark.backends import AuditLog, Environment
from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.guards import make_guard
from tpguard.benchmark.metrics import CaseScorer
from tpguard.benchmark.runner import Gateway
from tpguard.cli import app
from tpguard.telemetry import JsonlSpanExporter, agent_run_span

runner = CliRunner()


@pytest.fixture(scope="module")
def case() -> Case:
    return generate(seed=0, n_cases=23).cases[5]


def _leaky_calls(case: Case) -> list[dict]:
    calls = []
    for g in case.ground_truth:
        args = dict(g.arguments)
        slots = case.tool(g.tool).free_text
        if slots and case.tool(g.tool).sink in ("handoff", "ticket"):
            args[slots[0]] = "Context: " + "; ".join(a.value for a in case.atoms)
        calls.append({"tool": g.tool, "arguments": args})
    return calls


def test_audit_trajectory_against_a_case(case: Case, tmp_path: Path) -> None:
    (tmp_path / "case.json").write_text(case.model_dump_json())
    traj = tmp_path / "calls.jsonl"
    traj.write_text("".join(json.dumps(c) + "\n" for c in _leaky_calls(case)))
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory",
                              str(traj), "--s-task", "1", "--json"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)
    assert row["FOR"] > 0 and row["TaskSuccess"] == pytest.approx(100.0)
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps({"calls": [{"tool": g.tool, "arguments": g.arguments}
                                           for g in case.ground_truth]}))
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory",
                              str(clean), "--json"])
    assert json.loads(res.output)["FOR"] == 0.0


def test_audit_trajectory_against_a_policy_file(healthcare_policy_path: Path, tmp_path: Path) -> None:
    traj = tmp_path / "t.json"
    traj.write_text(json.dumps([
        {"tool": "notify_patient", "arguments": {"phone": "415-555-0199", "message": "ready"}},
        {"tool": "team_handoff", "arguments": {"summary": "Maria Gonzalez, chest tightness"}},
    ]))
    res = runner.invoke(app, ["audit", "--case", str(healthcare_policy_path), "--trajectory",
                              str(traj), "--json"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)
    assert row["TaskSuccess"] is None  # a bare policy has no answer key
    # notify_patient: 3 forbidden atoms, none leaked; team_handoff: 5 forbidden, 2 leaked
    assert row["FOR"] == pytest.approx(100 * 2 / 8) and row["LTCR"] == pytest.approx(50.0)


def test_audit_spans_equal_audit_log_scores(case: Case, tmp_path: Path) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonlSpanExporter(tmp_path / "spans.jsonl")))
    audit = AuditLog(":memory:")
    expected = {}
    for guard in ("off", "redact", "enforce"):
        env = Environment(case, audit, f"x/{guard}", agent="x", guard=guard)
        gw = Gateway(env, make_guard(guard).prepare(case), guard, provider)
        with agent_run_span(provider, "x", case_id=case.id,
                            attributes={"tpguard.benchmark.guard": guard}) as root:
            for c in _leaky_calls(case):
                obs = gw.call(c["tool"], c["arguments"])
                if obs.blocked:
                    gw.call(c["tool"], next(g.arguments for g in case.ground_truth
                                            if g.tool == c["tool"]))
            root.set_attribute("tpguard.case.s_task", env.s_task)
        expected[guard] = CaseScorer(case).score(audit.trajectory(f"x/{guard}", case.id),
                                                 env.s_task).values()
    provider.shutdown()
    (tmp_path / "case.json").write_text(case.model_dump_json())
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--spans",
                              str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["guard"]: r for r in json.loads(res.output)}
    assert set(rows) == {"off", "redact", "enforce"} and rows["enforce"]["blocked"] >= 1
    for guard, values in expected.items():
        for key, v in values.items():
            assert rows[guard][key] == pytest.approx(v), (guard, key)
    assert rows["off"]["FOR"] > 0 and rows["enforce"]["FOR"] < rows["off"]["FOR"]


def test_audit_bad_input_is_a_clear_error(case: Case, tmp_path: Path) -> None:
    (tmp_path / "case.json").write_text(case.model_dump_json())
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json")])
    assert res.exit_code == 2 and "exactly one of" in res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"arguments": {}}\n')
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory", str(bad)])
    assert res.exit_code == 2 and "expected {'tool'" in res.output


def test_audit_bad_line_names_file_and_line(case: Case, tmp_path: Path) -> None:
    (tmp_path / "case.json").write_text(case.model_dump_json())
    bad = tmp_path / "calls.jsonl"
    g = case.ground_truth[0]
    bad.write_text(json.dumps({"tool": g.tool, "arguments": g.arguments}) + "\n\n{not json\n")
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory", str(bad)])
    assert res.exit_code == 2 and f"{bad}:3: not JSON" in res.output
    bad.write_text(json.dumps({"tool": g.tool, "arguments": g.arguments}) + "\n[1, 2]\n")
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory", str(bad)])
    assert res.exit_code == 2 and f"{bad}:2: expected {{'tool'" in res.output
    spans = tmp_path / "spans.jsonl"
    spans.write_text('{"name": "x"}\n{oops\n')
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--spans", str(spans)])
    assert res.exit_code == 2 and f"{spans}:2: expected one JSON span per line" in res.output


def test_audit_flags_tools_not_in_the_case(case: Case, tmp_path: Path) -> None:
    (tmp_path / "case.json").write_text(case.model_dump_json())
    calls = [{"tool": g.tool, "arguments": g.arguments} for g in case.ground_truth]
    calls += [{"tool": "exfiltrate", "arguments": {"text": case.atoms[0].value}}] * 2
    traj = tmp_path / "calls.json"
    traj.write_text(json.dumps(calls))
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory",
                              str(traj), "--json"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.stdout)
    assert row["unknown_tools"] == {"exfiltrate": 2} and row["FOR"] > 0
    assert f"2 call(s) to tools not in case {case.id} (exfiltrate ×2)" in res.output
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(calls[:-2]))
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory",
                              str(clean), "--json"])
    assert json.loads(res.stdout)["unknown_tools"] == {} and "warning" not in res.output


def test_audit_lists_the_case_ids_present(case: Case, tmp_path: Path) -> None:
    (tmp_path / "case.json").write_text(case.model_dump_json())
    other = generate(seed=0, n_cases=23).cases[6]
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps({"case_id": c.id, "calls": [
        {"tool": g.tool, "arguments": g.arguments} for g in c.ground_truth]}) + "\n"
        for c in (other, case)))
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory",
                              str(runs), "--json"])
    assert res.exit_code == 0, res.output  # the case's own trajectory is picked, not the first
    assert json.loads(res.stdout)["calls"] == len(case.ground_truth)
    only_other = tmp_path / "other.jsonl"
    only_other.write_text(json.dumps({"case_id": other.id, "calls": []}) + "\n"
                          + json.dumps({"case_id": "x-1", "calls": []}) + "\n")
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory",
                              str(only_other)])
    assert res.exit_code == 2 and f"holds case ids {other.id}, x-1, not {case.id!r}" in res.output
    res = runner.invoke(app, ["audit", "--case", str(tmp_path / "case.json"), "--trajectory",
                              str(runs)], env={"COLUMNS": "300"})
    assert res.exit_code == 0 and f"case ids in the file: {', '.join(sorted([case.id, other.id]))}" \
        in res.output


def _snippet_spans(policy: Path, path: Path, **guard_options: object) -> None:
    """The issue's snippet: default settings, one session, three handoffs (two leak)."""
    from tpguard import Guard
    from tpguard.telemetry import configure

    prov = configure(service_name="prod-agent", jsonl=path)
    g = Guard(policy, mode="audit", tracer_provider=prov, **guard_options)  # type: ignore[arg-type]
    with g.session(session_id="s1"):
        for s in ["ready for pickup", "Maria Gonzalez (415) 555-0199 reports chest tightness",
                  "call 415-555-0199"]:
            with g.intercept("team_handoff", {"pickup_id": "RX-88213", "summary": s}):
                pass
    prov.shutdown()


def test_default_spans_score_the_leaking_calls(healthcare_policy_path: Path, tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    _snippet_spans(healthcare_policy_path, spans)
    assert "tpguard.finding\"" not in spans.read_text()  # no per-finding events by default
    res = runner.invoke(app, ["audit", "--case", str(healthcare_policy_path), "--spans", str(spans),
                              "--json"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.stdout)  # one session: one row
    # team_handoff forbids 5 atoms per call; call 2 leaks name, phone, symptom, call 3 the phone
    assert row["calls"] == 3 and row["FOR"] == pytest.approx(100 * 4 / 15)
    assert row["LTCR"] == pytest.approx(100 * 2 / 3)
    events = tmp_path / "events.jsonl"  # the same calls with every finding as an event: same scores
    _snippet_spans(healthcare_policy_path, events, finding_events="all", max_finding_events=None)
    res = runner.invoke(app, ["audit", "--case", str(healthcare_policy_path), "--spans", str(events),
                              "--json"])
    assert json.loads(res.stdout)["FOR"] == pytest.approx(row["FOR"])


def test_spans_without_findings_are_refused_not_scored_zero(healthcare_policy_path: Path,
                                                            tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    _snippet_spans(healthcare_policy_path, spans, finding_events="forbidden")
    lines = [json.loads(x) for x in spans.read_text().splitlines()]
    for s in lines:  # what an older tpguard recorded: the summary and forbidden events only
        s["attributes"].pop("tpguard.findings.table", None)
    spans.write_text("".join(json.dumps(s) + "\n" for s in lines))
    res = runner.invoke(app, ["audit", "--case", str(healthcare_policy_path), "--spans", str(spans),
                              "--json"], env={"COLUMNS": "300"})
    assert res.exit_code == 2, res.output
    assert "finding(s) but no tpguard.findings.table attribute" in res.output
    assert "Re-record with this tpguard" in res.output and "FOR" not in res.stdout
