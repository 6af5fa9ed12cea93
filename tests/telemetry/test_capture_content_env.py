"""``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (the GenAI conventions' content-capture
switch) selects ``redacted`` argument recording, never ``raw`` (issue 28, "Privacy beside the
guard")."""

from __future__ import annotations

import pytest

from tpguard import Guard, PolicyKB
from tpguard.testing import SpanCapture

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
POLICY = PolicyKB.from_dict({
    "atoms": [{"id": "dx", "type": "diagnosis", "value": "hepatitis B"}],
    "tools": [{"name": "note", "sink": "comment", "free_text": ["text"]}],
})


def recorded(spans: SpanCapture) -> str | None:
    guard = Guard(POLICY, mode="audit", tracer_provider=spans.provider)
    with guard.intercept("note", {"text": "Bob has hepatitis B, unregistered detail stays"}):
        pass
    (span,) = spans.tool_spans("note")
    value = span.attributes.get("tpguard.arguments")
    return None if value is None else str(value)


@pytest.mark.parametrize("value", ["true", "True", "SPAN_ONLY", "span_and_event", "EVENT_ONLY", "1"])
def test_the_otel_switch_means_redacted(value: str, monkeypatch: pytest.MonkeyPatch,
                                        tpguard_spans: SpanCapture) -> None:
    monkeypatch.setenv(CAPTURE, value)
    assert Guard(POLICY).recording == "redacted"
    text = recorded(tpguard_spans)
    assert text is not None and "<diagnosis>" in text and "hepatitis" not in text
    assert "unregistered detail stays" in text  # redacted, not withheld: content was asked for


@pytest.mark.parametrize("value", ["", "false", "FALSE", "no_content", "0"])
def test_off_values_record_nothing(value: str, monkeypatch: pytest.MonkeyPatch,
                                   tpguard_spans: SpanCapture) -> None:
    monkeypatch.setenv(CAPTURE, value)
    assert Guard(POLICY).recording == "none" and recorded(tpguard_spans) is None


def test_never_raw_even_with_the_raw_flag(monkeypatch: pytest.MonkeyPatch, tpguard_spans: SpanCapture) -> None:
    monkeypatch.setenv(CAPTURE, "true")
    monkeypatch.setenv("TPGUARD_ALLOW_RAW_ARGUMENTS", "1")
    assert Guard(POLICY).recording == "redacted"
    assert "hepatitis" not in str(recorded(tpguard_spans))


def test_tpguard_setting_and_the_argument_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CAPTURE, "true")
    monkeypatch.setenv("TPGUARD_RECORD_ARGUMENTS", "none")
    assert Guard(POLICY).recording == "none"
    monkeypatch.setenv("TPGUARD_RECORD_ARGUMENTS", "hash")
    monkeypatch.setenv("TPGUARD_HASH_KEY", "k" * 32)
    assert Guard(POLICY).recording == "hash"
    assert Guard(POLICY, record_arguments="none").recording == "none"
