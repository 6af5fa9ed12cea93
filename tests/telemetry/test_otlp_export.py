"""Guard spans over real OTLP (HTTP and gRPC receivers on 127.0.0.1), configured by the standard env."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tpguard
from tpguard import Guard, PolicyKB
from tpguard.telemetry import _attributes as A
from tpguard.telemetry import agent_run_span, configure, span_to_dict
from tpguard.testing.otlp_receiver import OtlpGrpcReceiver, OtlpHttpReceiver

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("register_patient", {"patient": "Maria Gonzalez", "phone": "415-555-0199", "note": "new visit"}),
    ("process_payment", {"payer": "Maria Gonzalez", "plan": "Blue Shield PPO",
                         "note": "call 415-555-0199 if declined"}),       # phone: forbidden here
    ("notify_patient", {"to": "415-555-0199", "message": "RX-88213 is ready for pickup"}),
]


def _guarded_run(policy: PolicyKB, **configure_kw: Any) -> list[str]:
    provider = configure(run_id="run-7", **configure_kw)
    # OpenInference names, redacted arguments and forbidden-finding events on: the most an exported tool span carries
    guard = Guard(policy, mode="enforce", tracer_provider=provider, openinference=True,
                  record_arguments="redacted", finding_events="forbidden")
    actions: list[str] = []
    for i, (tool, args) in enumerate(CALLS):
        with guard.intercept(tool, args, call_id=f"call-{i}") as it:
            actions.append(it.decision.action)
    provider.shutdown()  # flushes the batch processor
    return actions


def _assert_tool_spans(spans: list[dict[str, Any]], service: str) -> None:
    assert [s["name"] for s in spans] == [f"execute_tool {t}" for t, _ in CALLS]
    for (tool, _), span in zip(CALLS, spans, strict=True):
        attrs = span["attributes"]
        assert attrs[A.GEN_AI_OPERATION_NAME] == "execute_tool"
        assert attrs[A.GEN_AI_TOOL_NAME] == tool
        assert attrs[A.OPENINFERENCE_SPAN_KIND] == "TOOL"
        assert attrs[A.OPENINFERENCE_TOOL_NAME] == tool
        assert attrs[A.OPENINFERENCE_INPUT_VALUE].startswith("{")
        assert attrs[A.TPGUARD_MODE] == "enforce"
        assert span["kind"] == "INTERNAL"
        assert span["resource"][A.SERVICE_NAME] == service
        assert span["resource"][A.SERVICE_VERSION] == tpguard.__version__
        assert span["resource"][A.TPGUARD_RUN_ID] == "run-7"
    allowed, blocked, notified = spans
    assert [s["attributes"][A.TPGUARD_DECISION] for s in spans] == ["allow", "block", "allow"]
    assert blocked["status"]["code"] == "ERROR" and allowed["status"]["code"] == "UNSET"
    assert blocked["attributes"][A.ERROR_TYPE] == "tpguard.blocked"
    assert blocked["attributes"][A.TPGUARD_FORBIDDEN_ATOM_IDS] == ["phone"]
    assert blocked["attributes"][A.TPGUARD_FORBIDDEN_ATOM_TYPES] == ["phone"]
    assert blocked["attributes"][A.TPGUARD_FORBIDDEN_FIELDS] == ["note"]
    assert allowed["attributes"][A.TPGUARD_FORBIDDEN_COUNT] == 0
    assert A.TPGUARD_FORBIDDEN_ATOM_IDS not in allowed["attributes"]
    assert notified["attributes"][A.GEN_AI_TOOL_CALL_ID] == "call-2"
    finding = {(e["attributes"][A.FINDING_ATOM_ID], e["attributes"][A.FINDING_PATH],
                e["attributes"][A.FINDING_AUTHORIZED]) for e in blocked["events"]}
    assert finding == {("phone", "note", False)}  # "forbidden": only forbidden findings get events
    assert blocked["attributes"][A.TPGUARD_FINDINGS_TYPES] == ["insurance_type", "person_name", "phone"]
    assert {e["name"] for s in spans for e in s["events"]} == {A.TPGUARD_FINDING_EVENT}


def test_http_export_from_the_base_endpoint_variable(
    healthcare: PolicyKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OtlpHttpReceiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        assert _guarded_run(healthcare) == ["allow", "block", "allow"]
        spans = rx.wait_for(3)
    assert len(spans) == 3
    _assert_tool_spans(spans, service="tpguard")
    assert rx.requests[0].resource_spans[0].scope_spans[0].scope.name == "tpguard"


def test_http_export_from_the_traces_endpoint_verbatim_with_gzip(
    healthcare: PolicyKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OtlpHttpReceiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rx.traces_url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "triage-desk")
        _guarded_run(healthcare)
        spans = rx.wait_for(3)
    _assert_tool_spans(spans, service="triage-desk")
    assert rx.raw_bodies[0][:2] == b"\x1f\x8b" and rx.raw_bodies[0] != rx.bodies[0]


def test_grpc_export_chosen_by_the_protocol_variable(
    healthcare: PolicyKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OtlpGrpcReceiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        assert _guarded_run(healthcare, service_name="grpc-agent") == ["allow", "block", "allow"]
        spans = rx.wait_for(3)
    _assert_tool_spans(spans, service="grpc-agent")
    assert b"execute_tool process_payment" in rx.payload()


def test_received_spans_have_the_shape_of_the_jsonl_spans(healthcare: PolicyKB) -> None:
    """``audit --spans`` reads JSONL files; a receiver's spans must read the same way."""
    memory = InMemorySpanExporter()
    with OtlpHttpReceiver() as rx:
        provider = configure(endpoint=rx.endpoint, processors=[SimpleSpanProcessor(memory)])
        guard = Guard(healthcare, mode="redact", tracer_provider=provider)
        with agent_run_span(provider, "agent", run_id="r"):
            for tool, args in CALLS:
                with guard.intercept(tool, args):
                    pass
        provider.shutdown()
        received = sorted(rx.wait_for(4), key=lambda s: s["start_time_unix_nano"])
    local = sorted((span_to_dict(s) for s in memory.get_finished_spans()),
                   key=lambda s: s["start_time_unix_nano"])
    for got in received:
        got.pop("scope")
    assert received == local


def test_receiver_rejects_other_paths_and_garbage() -> None:
    import urllib.error
    import urllib.request

    with OtlpHttpReceiver() as rx:
        for url, body, code in ((rx.endpoint + "/v1/logs", b"", 404), (rx.traces_url, b"\xff\xff", 400)):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=5)
            assert err.value.code == code
            err.value.close()
        with pytest.raises(TimeoutError, match="received 0"):
            rx.wait_for(1, timeout=0.05)


def test_openinference_names_match_the_installed_semconv() -> None:
    semconv = pytest.importorskip("openinference.semconv.trace")
    spans = semconv.SpanAttributes
    assert A.OPENINFERENCE_SPAN_KIND == spans.OPENINFERENCE_SPAN_KIND
    assert A.OPENINFERENCE_TOOL_NAME == spans.TOOL_NAME
    assert A.OPENINFERENCE_TOOL_DESCRIPTION == spans.TOOL_DESCRIPTION
    assert A.OPENINFERENCE_TOOL_PARAMETERS == spans.TOOL_PARAMETERS
    assert A.OPENINFERENCE_TOOL_ID == spans.TOOL_ID
    assert A.OPENINFERENCE_INPUT_VALUE == spans.INPUT_VALUE
    assert A.OPENINFERENCE_INPUT_MIME_TYPE == spans.INPUT_MIME_TYPE
    assert A.OPENINFERENCE_AGENT_NAME == spans.AGENT_NAME
    assert A.OPENINFERENCE_SESSION_ID == spans.SESSION_ID
    resource = pytest.importorskip("openinference.semconv.resource")
    assert A.OPENINFERENCE_PROJECT_NAME == resource.ResourceAttributes.PROJECT_NAME
    kinds = semconv.OpenInferenceSpanKindValues
    assert (kinds.TOOL.value, kinds.AGENT.value) == ("TOOL", "AGENT")
