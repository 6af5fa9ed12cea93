"""One span per intercepted call: names, GenAI/tpguard attributes, events, content modes."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tpguard import Guard, PolicyKB
from tpguard.telemetry import JsonlSpanExporter
from tpguard.testing import SpanCapture

VALUES = ("Maria Gonzalez", "415-555-0199", "chest tightness", "4417", "Blue Shield PPO")
SUMMARY = "Maria Gonzalez (415-555-0199) reports chest tightness."


@pytest.fixture
def policy(healthcare_policy_path: Path) -> PolicyKB:
    return PolicyKB.from_file(healthcare_policy_path)


def run(guard: Guard, tool: str, args: dict, call_id: str | None = None) -> None:
    with guard.intercept(tool, args, call_id=call_id):
        pass


def test_span_shape_and_attributes(policy: PolicyKB, tpguard_spans: SpanCapture) -> None:
    g = Guard(policy, mode="enforce", tracer_provider=tpguard_spans.provider)
    with g.session(session_id="req-1"):
        run(g, "team_handoff", {"summary": SUMMARY}, call_id="call_7")
        run(g, "notify_patient", {"phone": "415-555-0199", "message": "ready for pickup"})
    first, second = tpguard_spans.tool_spans()
    assert first.name == "execute_tool team_handoff" and second.name == "execute_tool notify_patient"
    a = first.attributes or {}
    assert a["gen_ai.operation.name"] == "execute_tool" and a["gen_ai.tool.name"] == "team_handoff"
    assert a["gen_ai.tool.call.id"] == "call_7"
    # GenAI and tpguard names only by default: no OpenInference twin, no argument content
    assert not any(k.startswith(("openinference.", "tool.", "input.")) for k in a)
    assert "tpguard.arguments" not in a and "tpguard.arguments.mode" not in a
    assert a["tpguard.decision"] == "block" and a["tpguard.mode"] == "enforce"
    assert a["tpguard.sink"] == "handoff" and a["tpguard.purpose"].startswith("hand the case")
    assert list(a["tpguard.forbidden.atom_ids"]) == ["name", "phone", "symptom"]
    assert list(a["tpguard.forbidden.atom_types"]) == ["medical", "person_name", "phone"]
    assert list(a["tpguard.forbidden.fields"]) == ["summary"]
    assert list(a["tpguard.findings.types"]) == ["medical", "person_name", "phone"]
    assert a["tpguard.finding.count"] == 3 and a["tpguard.session.id"] == "req-1"
    # every finding, value-free, as one compact JSON table: what `tpguard audit` scores from
    assert json.loads(a["tpguard.findings.table"]) == [
        ["name", "person_name", "summary", "exact", True, False],
        ["phone", "phone", "summary", "exact", True, False],
        ["symptom", "medical", "summary", "exact", True, False]]
    assert first.status.status_code.name == "ERROR" and a["error.type"] == "tpguard.blocked"
    assert list(a["tpguard.free_text.slots"]) == ["summary"]
    # the summary only by default: per-finding events are opt-in (finding_events=...)
    assert not first.events and not second.events
    # each fact once: the purpose is not repeated as a description, the declared free-text
    # slots are policy (the span lists the call's non-empty ones), atom ids only of forbidden ones
    assert "gen_ai.tool.description" not in a and "tpguard.free_text" not in a
    assert "tpguard.findings.atom_ids" not in a
    b = second.attributes or {}
    assert b["tpguard.decision"] == "allow" and b["tpguard.forbidden.count"] == 0
    assert not any(k.startswith("tpguard.forbidden.") and k != "tpguard.forbidden.count" for k in b)
    assert second.status.status_code.name == "UNSET"
    g.check("notify_patient", {"message": "x"})
    run(g, "notify_patient", {"message": "outside any session"})
    assert "tpguard.session.id" not in (tpguard_spans.tool_spans()[-1].attributes or {})


def test_a_tool_description_is_recorded_as_such(tpguard_spans: SpanCapture) -> None:
    from tpguard import ToolSpec

    g = Guard(tracer_provider=tpguard_spans.provider, openinference=True)
    spec = ToolSpec(name="lookup", purpose="find an order", description="Look an order up by id.")
    run(g, spec, {"order": "A-1"})
    a = tpguard_spans.tool_spans()[0].attributes or {}
    assert a["gen_ai.tool.description"] == a["tool.description"] == "Look an order up by id."
    assert a["tpguard.purpose"] == "find an order"


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_openinference_names_on_request(policy: PolicyKB, tpguard_spans: SpanCapture,
                                        monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if how == "environment":
        monkeypatch.setenv("TPGUARD_OPENINFERENCE", "1")
    g = Guard(policy, mode="enforce", tracer_provider=tpguard_spans.provider, record_arguments="redacted",
              openinference=True if how == "argument" else None)
    run(g, "team_handoff", {"summary": SUMMARY}, call_id="call_7")
    a = tpguard_spans.tool_spans()[0].attributes or {}
    assert a["openinference.span.kind"] == "TOOL" and a["tool.name"] == "team_handoff"
    assert a["tool.id"] == "call_7" and "tool.description" not in a  # (no description: a purpose)
    assert a["input.value"] == a["tpguard.arguments"] and a["input.mime_type"] == "application/json"
    assert "<person_name>" in a["input.value"] and "Maria" not in a["input.value"]


@pytest.mark.parametrize("recording", [None, "redacted"])
def test_default_and_redacted_record_no_raw_value(
    policy: PolicyKB, tpguard_spans: SpanCapture, recording: str | None
) -> None:
    for mode in ("audit", "enforce", "redact"):
        g = Guard(policy, mode=mode, tracer_provider=tpguard_spans.provider,  # type: ignore[arg-type]
                  record_arguments=recording)  # type: ignore[arg-type]
        run(g, "team_handoff", {"summary": SUMMARY, "card": "**** 4417", "ins": "Blue Shield PPO",
                                "extra": "unregistered words"})
        run(g, "process_payment", {"card": "4417", "note": "ok"})
    dump = tpguard_spans.dump()
    for v in VALUES:
        assert v not in dump
    if recording is None:  # content capture is opt-in: not even the text around the atoms
        assert g.recording == "none" and "unregistered words" not in dump and "<phone>" not in dump
        assert "phone" in dump  # the findings' types still are
    else:
        assert "<person_name>" in dump and "<phone>" in dump and "unregistered words" in dump


def test_hash_mode_is_keyed(policy: PolicyKB, tpguard_spans: SpanCapture) -> None:
    def tag(key: str) -> str:
        tpguard_spans.clear()
        g = Guard(policy, record_arguments="hash", hash_key=key, tracer_provider=tpguard_spans.provider)
        run(g, "team_handoff", {"summary": "call 415-555-0199"})
        return json.loads((tpguard_spans.tool_spans()[0].attributes or {})["tpguard.arguments"])["summary"]

    a, b, c = tag("key-one-0123456789"), tag("key-one-0123456789"), tag("key-two-0123456789")
    assert a == b != c and a.startswith("call <phone:hmac:") and "0199" not in a


def test_raw_needs_explicit_opt_in(
    policy: PolicyKB, tpguard_spans: SpanCapture, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "tpguard")
    g = Guard(policy, record_arguments="raw", tracer_provider=tpguard_spans.provider)
    assert g.recording == "redacted" and "needs allow_raw" in caplog.text
    g2 = Guard(policy, record_arguments="raw", allow_raw_arguments=True,
               tracer_provider=tpguard_spans.provider)
    assert g2.recording == "raw" and "RAW tool arguments" in caplog.text
    run(g2, "team_handoff", {"summary": "call 415-555-0199"})
    attrs = tpguard_spans.tool_spans()[0].attributes or {}
    assert "415-555-0199" in attrs["gen_ai.tool.call.arguments"]


def test_none_mode_records_no_arguments(policy: PolicyKB, tpguard_spans: SpanCapture) -> None:
    g = Guard(policy, record_arguments="none", tracer_provider=tpguard_spans.provider)
    run(g, "team_handoff", {"summary": SUMMARY})
    attrs = tpguard_spans.tool_spans()[0].attributes or {}
    assert "tpguard.arguments" not in attrs and attrs["tpguard.finding.count"] == 3


def test_tool_exception_recorded_by_type_only(policy: PolicyKB, tpguard_spans: SpanCapture) -> None:
    g = Guard(policy, tracer_provider=tpguard_spans.provider)
    with pytest.raises(ValueError), g.intercept("notify_patient", {"message": "x"}):
        raise ValueError("bad phone 415-555-0199")
    span = tpguard_spans.tool_spans()[0]
    assert (span.attributes or {})["error.type"] == "ValueError"
    assert span.status.status_code.name == "ERROR" and "555-0199" not in tpguard_spans.dump()


def test_jsonl_exporter_writes_one_line_per_span(policy: PolicyKB, tmp_path: Path) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonlSpanExporter(tmp_path / "spans.jsonl")))
    g = Guard(policy, mode="enforce", tracer_provider=provider)
    run(g, "team_handoff", {"summary": SUMMARY})
    run(g, "notify_patient", {"message": "ready"})
    provider.shutdown()
    lines = [json.loads(x) for x in (tmp_path / "spans.jsonl").read_text().splitlines()]
    assert [x["name"] for x in lines] == ["execute_tool team_handoff", "execute_tool notify_patient"]
    assert lines[0]["attributes"]["tpguard.decision"] == "block"
    assert lines[0]["attributes"]["tpguard.forbidden.count"] == 3
    assert all(v not in (tmp_path / "spans.jsonl").read_text() for v in VALUES)


def test_hash_tags_one_fact_the_same_whatever_its_form(policy: PolicyKB, tpguard_spans: SpanCapture) -> None:
    g = Guard(policy, record_arguments="hash", hash_key="a-long-enough-key-0123", tracer_provider=tpguard_spans.provider)
    run(g, "team_handoff", {"a": "415-555-0199", "b": "(415) 555 0199"})
    args = json.loads((tpguard_spans.tool_spans()[0].attributes or {})["tpguard.arguments"])
    assert args["a"] == args["b"] and args["a"].startswith("<phone:hmac:")


def test_findings_are_summarized_and_events_capped(policy: PolicyKB, tpguard_spans: SpanCapture) -> None:
    args = {"summary": " ".join(f"({i}) Maria Gonzalez 415-555-0199" for i in range(15))}  # 30 findings
    g = Guard(policy, mode="audit", tracer_provider=tpguard_spans.provider, finding_events="forbidden")
    run(g, "team_handoff", args)
    span = tpguard_spans.tool_spans()[0]
    a = span.attributes or {}
    assert a["tpguard.finding.count"] == 30 and a["tpguard.forbidden.count"] == 30
    assert list(a["tpguard.findings.types"]) == ["person_name", "phone"]
    assert list(a["tpguard.forbidden.fields"]) == ["summary"]
    assert len(span.events) == 16 and a["tpguard.finding.events_dropped"] == 14
    tpguard_spans.clear()
    uncapped = Guard(policy, mode="audit", tracer_provider=tpguard_spans.provider, max_finding_events=None,
                     finding_events="forbidden")
    run(uncapped, "team_handoff", args)
    span = tpguard_spans.tool_spans()[0]
    assert len(span.events) == 30 and "tpguard.finding.events_dropped" not in (span.attributes or {})


def test_forbidden_findings_get_events_first(policy: PolicyKB, tpguard_spans: SpanCapture) -> None:
    g = Guard(policy, mode="audit", tracer_provider=tpguard_spans.provider, max_finding_events=1,
              finding_events="all")
    run(g, "team_handoff", {"summary": "RX-88213 then Maria Gonzalez"})
    (event,) = tpguard_spans.tool_spans()[0].events
    assert (event.attributes or {})["tpguard.atom.id"] == "name"


@pytest.mark.parametrize(("events", "expected"), [
    ("forbidden", ["phone"]), ("all", ["phone", "name"]), ("none", [])])
def test_which_findings_get_events(policy: PolicyKB, tpguard_spans: SpanCapture, events: str,
                                   expected: list[str]) -> None:
    # process_payment may receive the name, not the phone: one authorized, one forbidden finding
    g = Guard(policy, mode="audit", tracer_provider=tpguard_spans.provider,
              finding_events=events)  # type: ignore[arg-type]
    run(g, "process_payment", {"note": "Maria Gonzalez, 415-555-0199"})
    span = tpguard_spans.tool_spans()[0]
    assert [(e.attributes or {})["tpguard.atom.id"] for e in span.events] == expected
    a = span.attributes or {}  # the summary holds both, whatever gets an event
    assert list(a["tpguard.findings.types"]) == ["person_name", "phone"]
    assert list(a["tpguard.forbidden.atom_ids"]) == ["phone"]


def test_an_unknown_finding_events_choice_is_refused(policy: PolicyKB) -> None:
    with pytest.raises(ValueError, match="finding_events must be one of none, forbidden, all"):
        Guard(policy, finding_events="authorized")  # type: ignore[arg-type]


def test_nothing_is_rendered_for_a_span_that_is_not_recording(
    policy: PolicyKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.trace import NoOpTracerProvider

    from tpguard.telemetry.content import ContentPolicy

    def boom(*_: object, **__: object) -> str:
        raise AssertionError("rendered for a span nobody records")

    monkeypatch.setattr(ContentPolicy, "render_call", boom)
    g = Guard(policy, mode="enforce", tracer_provider=NoOpTracerProvider())
    with g.intercept("team_handoff", {"summary": SUMMARY}) as call:
        assert call.decision.blocked


@pytest.mark.parametrize("key", ["", "k", "short-key-15byt", b"\x00" * 15])
def test_short_hmac_keys_are_refused_without_echoing_them(policy: PolicyKB, key: str | bytes) -> None:
    from tpguard.telemetry import render_arguments

    with pytest.raises(ValueError, match="at least 16 bytes") as info:
        Guard(policy, record_arguments="hash", hash_key=key)
    if len(key) > 1:
        assert str(key) not in str(info.value) and repr(key) not in str(info.value)
    with pytest.raises(ValueError, match="at least 16 bytes"):
        render_arguments({"a": "x"}, [], "hash", key=key)


def test_hash_rendering_never_uses_an_empty_key(
    policy: PolicyKB, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import hashlib
    import hmac

    from tpguard.telemetry import render_arguments

    f = Guard(policy, mode="audit").check("team_handoff", {"summary": "4417"}).findings
    shown = render_arguments({"summary": "4417"}, f, "hash")
    empty = hmac.new(b"", b"card_suffix:4417", hashlib.sha256).hexdigest()[:16]
    assert shown is not None and "<card_suffix:hmac:" in shown and empty not in shown
    assert "random per-process key" in caplog.text
    monkeypatch.setenv("TPGUARD_HASH_KEY", "tiny")
    with pytest.raises(ValueError, match="at least 16 bytes"):
        Guard(policy, record_arguments="hash")
