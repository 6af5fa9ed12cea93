"""``tpguard audit --policy POLICY --spans SOURCE``: what enforce and redact would have done to an
audit-mode deployment's traced calls (issue 34), from every span source a user has."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

from tpguard import Guard
from tpguard.cli import app
from tpguard.telemetry import configure, span_to_dict

runner = CliRunner()
VALUES = ("Maria Gonzalez", "415-555-0199", "555-0199", "chest tightness", "RX-88213")
SUMMARIES = ["ready for pickup", "Maria Gonzalez (415) 555-0199 reports chest tightness",
             "call 415-555-0199"]


def _snippet(guard: Guard) -> None:
    """The issue's snippet: one session, three handoffs, two of which carry forbidden atoms."""
    with guard.session(session_id="s1"):
        for s in SUMMARIES:
            with guard.intercept("team_handoff", {"pickup_id": "RX-88213", "summary": s}):
                pass


@pytest.fixture
def spans(healthcare_policy_path: Path, tmp_path: Path) -> Path:
    path = tmp_path / "spans.jsonl"
    prov = configure(service_name="prod-agent", jsonl=path)  # default settings, as a user has them
    _snippet(Guard(healthcare_policy_path, mode="audit", tracer_provider=prov))
    prov.shutdown()
    return path


def _audit(policy: Path, source: Path, *extra: str) -> dict[str, Any]:
    res = runner.invoke(app, ["audit", "--policy", str(policy), "--spans", str(source), "--json",
                              *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_the_snippet_gives_one_session_with_two_would_be_blocked_calls(
        healthcare_policy_path: Path, spans: Path) -> None:
    out = _audit(healthcare_policy_path, spans)
    assert out["calls"] == 3 and out["session_count"] == 1 and out["recorded_modes"] == {"audit": 3}
    request = out["stages"]["request"]
    assert request["enforce"] == 2 and request["redact_rewrite"] == 2 and request["redact_block"] == 0
    (session,) = out["sessions"]
    assert session["session"] == "s1" and session["calls"] == 3 and session["would_block"] == 2
    calls = session["interventions"]
    assert {t for c in calls for t in c["atom_types"]} == {"person_name", "phone", "medical"}
    assert {f for c in calls for f in c["fields"]} == {"summary"}
    assert [c["atom_ids"] for c in calls] == [["name", "phone", "symptom"], ["phone"]]
    by_type = {r["atom_type"]: r for r in request["by"]["atom_type"]}
    assert by_type["phone"]["enforce"] == 2 and by_type["medical"]["enforce"] == 1
    assert by_type["phone"]["sessions"] == ["s1"]
    assert request["by"]["sink"][0]["sink"] == "handoff"
    assert request["by"]["purpose"][0]["purpose"] == "hand the case to the pharmacy team"
    assert not any(v in json.dumps(out) for v in VALUES)


def test_a_structured_field_would_be_blocked_by_redact_too(healthcare_policy_path: Path,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    prov = configure(jsonl=path)
    g = Guard(healthcare_policy_path, mode="audit", tracer_provider=prov)
    with g.intercept("process_payment", {"payer": "Maria Gonzalez", "callback": "415-555-0199"}):
        pass
    prov.shutdown()
    out = _audit(healthcare_policy_path, path)
    request = out["stages"]["request"]
    assert request["enforce"] == 1 and request["redact_block"] == 1 and request["redact_rewrite"] == 0
    (session,) = out["sessions"]  # no session: the call's trace is its group
    assert session["session"].startswith("trace ") and session["interventions"][0]["fields"] == ["callback"]


def test_an_edited_policy_is_what_is_audited(healthcare_policy_path: Path, spans: Path,
                                             tmp_path: Path) -> None:
    edited = tmp_path / "policy.yaml"
    edited.write_text(healthcare_policy_path.read_text() + "  - {atom_type: phone, sink: handoff, allow: true}\n")
    out = _audit(edited, spans)
    assert out["stages"]["request"]["enforce"] == 1  # the phone-only handoff passes now
    assert out["changed_by_policy"] == 2  # two phone findings the recording guard forbade


def test_time_range(healthcare_policy_path: Path, spans: Path) -> None:
    assert _audit(healthcare_policy_path, spans, "--since", "2000-01-01")["calls"] == 3
    later = _audit(healthcare_policy_path, spans, "--since", "2999-01-01T00:00+00:00")
    assert later["calls"] == 0 and later["sessions"] == []
    assert _audit(healthcare_policy_path, spans, "--until", "2000-01-01")["calls"] == 0
    res = runner.invoke(app, ["audit", "--policy", str(healthcare_policy_path), "--spans", str(spans),
                              "--since", "yesterday"])
    assert res.exit_code == 2 and "--since 'yesterday': expected an ISO 8601 time" in res.output


def test_markdown_and_html_reports(healthcare_policy_path: Path, spans: Path, tmp_path: Path) -> None:
    md, page = tmp_path / "audit.md", tmp_path / "audit.html"
    res = runner.invoke(app, ["audit", "--policy", str(healthcare_policy_path), "--spans", str(spans),
                              "--markdown", str(md), "--html", str(page)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "enforce would act on 2, redact would rewrite 2 and block 0" in res.output
    text, html = md.read_text(), page.read_text()
    assert "| team_handoff | 2 | 2 | 0 | 4 | 1 | s1 |" in text
    assert "| s1 | 3 | 2 | 0 |" in text
    assert "<td>team_handoff</td>" in html and "<script src" not in html and "http" not in html
    for v in VALUES:
        assert v not in text and v not in html and v not in res.output


def test_exits_would_be_withheld(healthcare_policy_path: Path, tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    prov = configure(jsonl=path)
    g = Guard(healthcare_policy_path, mode="audit", tracer_provider=prov)
    with g.session(session_id="s2"):
        g.check_exit("email", "someone@example.com",
                     {"to": "someone@example.com", "body": "Maria Gonzalez has chest tightness"})
    prov.shutdown()
    out = _audit(healthcare_policy_path, path)
    assert out["exits"] == 1 and out["stages"]["exit"]["enforce"] == 1
    (it,) = out["sessions"][0]["interventions"]
    assert it["stage"] == "exit" and it["tool"] == "email" and it["enforce"] == "withhold"
    assert it["atom_types"] == ["medical", "person_name"] and it["fields"] == ["body"]


# -- sources ------------------------------------------------------------------------------------
def _recorded(policy: Path) -> tuple[list[Any], list[dict[str, Any]]]:
    exp = InMemorySpanExporter()
    prov = TracerProvider()
    prov.add_span_processor(SimpleSpanProcessor(exp))
    _snippet(Guard(policy, mode="audit", tracer_provider=prov))
    finished = list(exp.get_finished_spans())
    return finished, [span_to_dict(s) for s in finished]


def _jaeger(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """What Jaeger's UI downloads for these spans (its JSON model: tags typed, lists as JSON text,
    µs times, events as logs with an ``event`` field, status as ``otel.status_code``)."""
    def tag(k: str, v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"key": k, "type": "bool", "value": v}
        if isinstance(v, int):
            return {"key": k, "type": "int64", "value": v}
        if isinstance(v, list):
            return {"key": k, "type": "string", "value": json.dumps(v)}
        return {"key": k, "type": "string", "value": v}

    traces: dict[str, Any] = {}
    for s in spans:
        t = traces.setdefault(s["trace_id"], {"traceID": s["trace_id"], "spans": [], "warnings": None,
                                              "processes": {"p1": {"serviceName": "prod-agent", "tags": []}}})
        tags = [tag(k, v) for k, v in s["attributes"].items()]
        if s["status"]["code"] != "UNSET":
            tags.append(tag("otel.status_code", s["status"]["code"]))
        t["spans"].append({
            "traceID": s["trace_id"], "spanID": s["span_id"], "operationName": s["name"],
            "references": ([{"refType": "CHILD_OF", "traceID": s["trace_id"], "spanID": s["parent_span_id"]}]
                           if s["parent_span_id"] else []),
            "startTime": s["start_time_unix_nano"] // 1000,
            "duration": (s["end_time_unix_nano"] - s["start_time_unix_nano"]) // 1000, "tags": tags,
            "logs": [], "processID": "p1", "warnings": None})
    return {"data": list(traces.values()), "total": 0, "limit": 0, "offset": 0, "errors": None}


def _nest(attributes: dict[str, Any]) -> dict[str, Any]:
    """Attributes nested by their dots, as Phoenix stores and returns them."""
    out: dict[str, Any] = {}
    for k, v in attributes.items():
        *parents, last = k.split(".")
        node = out
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = v
    return out


def _phoenix(spans: list[dict[str, Any]]) -> dict[str, Any]:
    from datetime import datetime, timezone

    def iso(ns: int) -> str:
        return datetime.fromtimestamp(ns / 1e9, timezone.utc).isoformat()

    return {"data": [{"id": f"U3Bhbjo{i}", "name": s["name"],
                      "context": {"trace_id": s["trace_id"], "span_id": s["span_id"]},
                      "span_kind": "UNKNOWN", "parent_id": s["parent_span_id"],
                      "start_time": iso(s["start_time_unix_nano"]), "end_time": iso(s["end_time_unix_nano"]),
                      "status_code": s["status"]["code"], "status_message": "",
                      "attributes": _nest(s["attributes"]), "events": []}
                     for i, s in enumerate(spans)], "next_cursor": None}


def test_every_source_format_gives_the_same_audit(healthcare_policy_path: Path, spans: Path,
                                                  tmp_path: Path) -> None:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    finished, dicts = _recorded(healthcare_policy_path)
    otlp = tmp_path / "otlp.json"  # protobuf's JSON mapping: base64 ids
    otlp.write_text(json.dumps(MessageToDict(encode_spans(finished))))
    collector = tmp_path / "collector.jsonl"  # a Collector file exporter: OTLP/JSON, hex ids, per line
    hexed = MessageToDict(encode_spans(finished))
    for rs in hexed["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                for k in ("traceId", "spanId", "parentSpanId"):
                    if k in s:
                        s[k] = base64.b64decode(s[k]).hex()
    collector.write_text(json.dumps(hexed) + "\n")
    jaeger, phoenix = tmp_path / "jaeger.json", tmp_path / "phoenix.json"
    jaeger.write_text(json.dumps(_jaeger(dicts)))
    phoenix.write_text(json.dumps(_phoenix(dicts)))
    expected = _audit(healthcare_policy_path, spans)
    for path, fmt in ((otlp, "otlp-json"), (collector, "otlp-json"), (jaeger, "jaeger"),
                      (phoenix, "phoenix"), (spans.parent, "jsonl+otlp-json+jaeger+phoenix")):
        got = _audit(healthcare_policy_path, path)
        assert got["format"] == "+".join(sorted(fmt.split("+"))), path
        if path != spans.parent:
            assert got["stages"] == expected["stages"], fmt
            assert [s["interventions"][0]["atom_ids"] for s in got["sessions"]] == [["name", "phone", "symptom"]]


def test_another_kind_of_file_is_refused_naming_the_formats(healthcare_policy_path: Path,
                                                            tmp_path: Path) -> None:
    other = tmp_path / "report.json"
    other.write_text(json.dumps({"rows": [1, 2, 3]}))
    res = runner.invoke(app, ["audit", "--policy", str(healthcare_policy_path), "--spans", str(other)],
                        env={"COLUMNS": "400"})
    assert res.exit_code == 2
    for name in ("spans.jsonl", "OTLP/JSON", "Jaeger UI trace download", "Phoenix span export"):
        assert name in res.output
    res = runner.invoke(app, ["audit", "--policy", str(healthcare_policy_path), "--spans",
                              str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "no such span file" in res.output


def test_policy_and_case_are_not_mixed(healthcare_policy_path: Path, spans: Path) -> None:
    res = runner.invoke(app, ["audit", "--policy", str(healthcare_policy_path), "--case",
                              str(healthcare_policy_path), "--spans", str(spans)], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "--policy POLICY with --spans SOURCE" in res.output


def test_spans_that_cannot_be_audited_are_refused(healthcare_policy_path: Path, spans: Path) -> None:
    lines = [json.loads(x) for x in spans.read_text().splitlines()]
    for s in lines:  # an older tpguard's default span: the summary, no findings table
        s["attributes"].pop("tpguard.findings.table", None)
    spans.write_text("".join(json.dumps(s) + "\n" for s in lines))
    res = runner.invoke(app, ["audit", "--policy", str(healthcare_policy_path), "--spans", str(spans),
                              "--json"], env={"COLUMNS": "400"})
    assert res.exit_code == 2 and "finding(s) but no tpguard.findings.table attribute" in res.output
    assert res.stdout == ""  # nothing is reported as leak-free


def test_results_outside_the_scope_would_be_withheld(tmp_path: Path) -> None:
    from tpguard import AcquisitionScope, PolicyKB, ScopeBinding, ToolSpec

    scope = AcquisitionScope(subjects=["P-1"], binding=ScopeBinding(subject_key="patient"))
    spec = ToolSpec(name="records", purpose="look up the patient's visits", sink="record", scope=scope)
    policy = tmp_path / "policy.json"
    policy.write_text(PolicyKB(tools=(spec,)).to_json())
    path = tmp_path / "spans.jsonl"
    prov = configure(jsonl=path)
    g = Guard(policy, mode="audit", tracer_provider=prov)
    with g.session(session_id="s3"):
        for subjects in (["P-1"], ["P-1", "P-2"]):  # the second result holds another patient's record
            with g.intercept("records", {}) as call:
                call.check_result([{"id": f"r{i}", "patient": p} for i, p in enumerate(subjects)])
    prov.shutdown()
    out = _audit(policy, path)
    assert out["calls"] == 2 and out["stages"]["request"]["enforce"] == 0
    result = out["stages"]["result"]
    assert result["enforce"] == 1 and result["redact_rewrite"] == 1  # withheld / filtered
    (it,) = out["sessions"][0]["interventions"]
    assert (it["stage"], it["tool"], it["enforce"], it["redact"]) == ("result", "records", "withhold", "filter")
