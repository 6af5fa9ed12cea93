"""The audit trail must not become the next leak: scan every byte a real OTLP receiver got.

The calls (``HEALTHCARE_CALLS``) carry every healthcare atom — value, alias, masked form and semantic
variant, structured and free text — through audit, enforce and redact guards. In the default
``redacted`` recording no atom string may appear in the raw protobuf bodies nor in the decoded
requests; the same scanner run over a ``raw`` (explicitly allowed) export finds them, so it bites.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest
from google.protobuf import json_format

from tpguard import Decision, Guard, PolicyKB
from tpguard.telemetry import agent_run_span, configure
from tpguard.testing.otlp_receiver import OtlpHttpReceiver

Calls = list[tuple[str, dict[str, Any]]]

# Fragments that would betray a partial redaction (a surname left next to a placeholder, …).
_FRAGMENTS = ["Gonzalez", "555-0199", "88213", "Shield"]
# Timestamps and random ids carry no content but, printed in decimal/base64, can contain a short
# atom such as "4417" by chance; the raw protobuf holds them as binary, so only the JSON drops them.
_NON_CONTENT_KEYS = {"traceId", "spanId", "parentSpanId", "startTimeUnixNano", "endTimeUnixNano",
                     "timeUnixNano"}
_HMAC_TAG = re.compile(r"<[a-z_]+:hmac:[0-9a-f]{16}>")


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in _NON_CONTENT_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _exported_texts(rx: OtlpHttpReceiver) -> tuple[bytes, str]:
    """(every received byte, every decoded request as JSON without timestamps/ids), HMAC tags
    removed (a 16-hex-digit digest may contain a short number by chance; it is not the value)."""
    raw = _HMAC_TAG.sub("", rx.payload().decode("latin-1")).encode("latin-1")
    decoded = json.dumps([_strip(json_format.MessageToDict(r)) for r in rx.requests],
                         ensure_ascii=False)
    return raw, _HMAC_TAG.sub("", decoded)


def _leaks(rx: OtlpHttpReceiver, atom_strings: dict[str, list[str]]) -> list[str]:
    raw, decoded = _exported_texts(rx)
    found = []
    for atom_id, forms in atom_strings.items():
        for form in forms:
            if form.encode() in raw or form.casefold() in decoded.casefold():
                found.append(f"{atom_id}:{form}")
    return found


def _run(
    rx: OtlpHttpReceiver, policy: PolicyKB, calls: Calls, mode: str, **guard_kw: Any
) -> list[Decision]:
    provider = configure(endpoint=rx.endpoint, run_id=f"privacy-{mode}",
                         resource_attributes={"service.instance.id": "privacy-test"})
    guard = Guard(policy, mode=mode, tracer_provider=provider, **guard_kw)  # type: ignore[arg-type]
    decisions: list[Decision] = []
    with agent_run_span(provider, "healthcare-agent", case_id="healthcare-table1"):
        for tool, args in calls:
            with guard.intercept(tool, args, call_id=f"call-{len(decisions)}") as it:
                decisions.append(it.decision)
    provider.shutdown()
    return decisions


def test_redacted_recording_exports_no_atom_value(
    healthcare: PolicyKB, healthcare_calls: Calls, atom_strings: dict[str, list[str]]
) -> None:
    calls = healthcare_calls
    with OtlpHttpReceiver() as rx:
        # every finding as an event (authorized ones too) and the arguments recorded redacted:
        # the most a span holds without the raw opt-in (the default records no argument text)
        by_mode = {mode: _run(rx, healthcare, calls, mode, finding_events="all", record_arguments="redacted")
                   for mode in ("audit", "enforce", "redact")}
        spans = rx.wait_for(3 * (len(calls) + 1))
        leaks = _leaks(rx, atom_strings)
    # The run really carried every atom, forbidden and authorized, structured and free text …
    events = [e["attributes"] for s in spans for e in s["events"]]
    assert {e["tpguard.atom.id"] for e in events} == {a.id for a in healthcare.atoms}
    assert {e["tpguard.free_text"] for e in events} == {True, False}
    assert {e["tpguard.authorized"] for e in events} == {True, False}
    actions = {mode: {d.action for d in ds} for mode, ds in by_mode.items()}
    assert actions["audit"] == {"allow"} and "block" in actions["enforce"]
    assert "redact" in actions["redact"] and "block" in actions["redact"]
    assert all(s["attributes"]["tpguard.arguments.mode"] == "redacted"
               for s in spans if s["name"].startswith("execute_tool"))
    # … and not one of its strings reached the collector.
    assert leaks == []
    tool_args = [s["attributes"]["tpguard.arguments"] for s in spans if s["name"].startswith("execute_tool")]
    assert any("<person_name>" in a for a in tool_args)
    for fragment in _FRAGMENTS:
        assert fragment not in json.dumps(spans), fragment


def test_scanner_finds_values_when_raw_is_explicitly_allowed(
    healthcare: PolicyKB, healthcare_calls: Calls, atom_strings: dict[str, list[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = healthcare_calls
    with OtlpHttpReceiver() as rx, caplog.at_level(logging.WARNING, logger="tpguard"):
        _run(rx, healthcare, calls, "audit", record_arguments="raw", allow_raw_arguments=True)
        spans = rx.wait_for(len(calls) + 1)
        leaks = _leaks(rx, atom_strings)
    assert any("RAW tool arguments" in r.getMessage() for r in caplog.records)
    assert {s["attributes"].get("tpguard.arguments.mode") for s in spans} >= {"raw"}
    assert {leak.split(":")[0] for leak in leaks} == {a.id for a in healthcare.atoms}
    raw_args = [s["attributes"]["gen_ai.tool.call.arguments"] for s in spans
                if s["name"].startswith("execute_tool")]
    assert "415-555-0199" in raw_args[0]


def test_raw_without_the_flag_is_redacted_with_a_warning(
    healthcare: PolicyKB, healthcare_calls: Calls, atom_strings: dict[str, list[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = healthcare_calls
    with OtlpHttpReceiver() as rx, caplog.at_level(logging.WARNING, logger="tpguard"):
        _run(rx, healthcare, calls, "enforce", record_arguments="raw")
        spans = rx.wait_for(len(calls) + 1)
        leaks = _leaks(rx, atom_strings)
    assert any("needs allow_raw=True" in r.getMessage() for r in caplog.records)
    tool_spans = [s for s in spans if s["name"].startswith("execute_tool")]
    assert {s["attributes"]["tpguard.arguments.mode"] for s in tool_spans} == {"redacted"}
    assert all("gen_ai.tool.call.arguments" not in s["attributes"] for s in tool_spans)
    assert leaks == []


def _hash_tags(
    healthcare: PolicyKB, calls: Calls, atom_strings: dict[str, list[str]], key: str,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """Per tool call id, the HMAC-tagged arguments that were exported."""
    monkeypatch.setenv("TPGUARD_HASH_KEY", key)
    with OtlpHttpReceiver() as rx:
        _run(rx, healthcare, calls, "audit", record_arguments="hash")
        spans = rx.wait_for(len(calls) + 1)
        assert _leaks(rx, atom_strings) == []
    return {s["attributes"]["gen_ai.tool.call.id"]: s["attributes"]["tpguard.arguments"]
            for s in spans if s["name"].startswith("execute_tool")}


def test_hash_recording_is_keyed_from_the_environment(
    healthcare: PolicyKB, healthcare_calls: Calls, atom_strings: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = (healthcare, healthcare_calls, atom_strings)
    first = _hash_tags(*args, "key-one-0123456789abcdef", monkeypatch)
    again = _hash_tags(*args, "key-one-0123456789abcdef", monkeypatch)  # a new guard and provider, same key
    other = _hash_tags(*args, "key-two-0123456789abcdef", monkeypatch)
    tags = {cid: _HMAC_TAG.findall(text) for cid, text in first.items()}
    assert all(tags.values()), "every call carries at least one atom, so one tag"
    assert first == again
    for cid, text in other.items():
        assert set(_HMAC_TAG.findall(text)).isdisjoint(tags[cid])
    # the same text links across calls under one key: the phone in register_patient and notify
    phone_tags = [re.findall(r"<phone:hmac:[0-9a-f]{16}>", first[c]) for c in ("call-0", "call-3")]
    assert phone_tags[0] and phone_tags[0][0] in phone_tags[1]
