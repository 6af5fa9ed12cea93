"""SmolagentsInstrumentor: audit-only spans over unmodified tools, idempotent, truly undone."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("smolagents") is None,
                                reason="smolagents not installed")

from smolagents import CodeAgent, Tool, ToolCallingAgent, tool  # noqa: E402
from smolagents import local_python_executor as lpe  # noqa: E402
from smolagents.monitoring import LogLevel  # noqa: E402

from tpguard import Guard, PolicyKB, PrivateAtom, ToolSpec, purpose_bound  # noqa: E402
from tpguard.adapters import _smolagents_instrumentor as instr_mod  # noqa: E402
from tpguard.adapters.smolagents import (  # noqa: E402
    SmolagentsInstrumentor,
    UnsupportedVersionError,
    check_version,
)
from tpguard.testing import SpanCapture, capture_spans  # noqa: E402
from tpguard.testing.smolagents import ScriptedSmolModel  # noqa: E402

PHONE, SYMPTOM = "415-555-0199", "chest tightness"
ATOMS = [PrivateAtom(id="phone", type="phone", value=PHONE),
         PrivateAtom(id="symptom", type="medical", value=SYMPTOM)]
POLICY = PolicyKB.from_dict({"authorizations": [{"atom": "phone", "tool": "notify_patient", "allow": True}]})
TOOLS = {
    "notify_patient": {"purpose": "tell the patient the next step", "sink": "notification",
                       "free_text": ["message"]},
    "team_handoff": ToolSpec(name="team_handoff", purpose="hand the case to the pharmacy team",
                             sink="handoff", free_text=("summary",)),
}
LEAKY = f"Ready. Patient at {PHONE}, reports {SYMPTOM}."


class NotifyPatient(Tool):  # an ordinary, unmodified smolagents tool
    name = "notify_patient"
    description = "Tell the patient the next step."
    inputs = {"phone": {"type": "string", "description": "phone"},  # noqa: RUF012
              "message": {"type": "string", "description": "text"}}
    output_type = "string"

    def __init__(self, received: list[Any]) -> None:
        super().__init__()
        self.received = received

    def forward(self, phone: str, message: str) -> str:
        self.received.append(("notify_patient", phone, message))
        return f"sent to {len(phone)}-digit number"


def make_tools(received: list[Any]) -> list[Tool]:
    @tool
    def team_handoff(pickup_id: str, summary: str) -> str:
        """Hand the case to the pharmacy team.

        Args:
            pickup_id: the pickup id
            summary: a note
        """
        received.append(("team_handoff", pickup_id, summary))
        return "handoff recorded"

    @tool
    def lookup_hours(store: str) -> str:
        """Opening hours of a store.

        Args:
            store: the store
        """
        received.append(("lookup_hours", store))
        return "9-17"

    return [NotifyPatient(received), team_handoff, lookup_hours]


def parallel_script() -> list[Any]:
    return [
        [{"name": "notify_patient", "arguments": {"phone": PHONE, "message": "Ready for pickup."}, "id": "call_a"},
         {"name": "team_handoff", "arguments": {"pickup_id": "RX-1", "summary": LEAKY}, "id": "call_b"}],
        [{"name": "lookup_hours", "arguments": {"store": "Main St"}, "id": "call_c"}],
        "done",
    ]


def run_agent(kind: str = "toolcalling", script: list[Any] | None = None) -> tuple[Any, list[Any]]:
    received: list[Any] = []
    model = ScriptedSmolModel(script or parallel_script())
    cls = ToolCallingAgent if kind == "toolcalling" else CodeAgent
    agent = cls(tools=make_tools(received), model=model, verbosity_level=LogLevel.OFF, max_steps=5)
    return agent.run("notify, hand off, check hours"), received


@pytest.fixture
def cap() -> Iterator[SpanCapture]:
    with capture_spans() as c:
        yield c


@pytest.fixture
def instrumentor(cap: SpanCapture) -> Iterator[SmolagentsInstrumentor]:
    inst = SmolagentsInstrumentor(Guard(POLICY, mode="audit", tracer_provider=cap.provider), tools=TOOLS)
    inst.instrument()
    try:
        yield inst
    finally:
        inst.uninstrument()


def _patched_attributes() -> dict[str, Any]:
    return {
        "Tool.__call__": Tool.__dict__["__call__"],
        "ToolCallingAgent.process_tool_calls": ToolCallingAgent.__dict__["process_tool_calls"],
        "ToolCallingAgent.execute_tool_call": ToolCallingAgent.__dict__["execute_tool_call"],
        "local_python_executor.timeout": lpe.timeout,
    }


def test_audit_spans_carry_call_ids_and_sessions_in_parallel_calls(
    cap: SpanCapture, instrumentor: SmolagentsInstrumentor
) -> None:
    with instrumentor.guard.session(ATOMS, session_id="s-par"):
        result, received = run_agent()
    assert str(result) == "done"
    # audit only: every tool ran with exactly what the model sent
    assert sorted(received) == sorted([("notify_patient", PHONE, "Ready for pickup."),
                                       ("team_handoff", "RX-1", LEAKY), ("lookup_hours", "Main St")])
    spans = {s.name: s for s in cap.tool_spans()}
    assert set(spans) == {"execute_tool notify_patient", "execute_tool team_handoff",
                          "execute_tool lookup_hours", "execute_tool final_answer"}
    assert len(cap.tool_spans()) == 4  # one span per call
    notify, handoff = spans["execute_tool notify_patient"], spans["execute_tool team_handoff"]
    assert notify.attributes["gen_ai.tool.call.id"] == "call_a"
    assert handoff.attributes["gen_ai.tool.call.id"] == "call_b"
    assert spans["execute_tool lookup_hours"].attributes["gen_ai.tool.call.id"] == "call_c"
    # the session bound around run() reached both thread-pool calls
    for span in cap.tool_spans():
        assert span.attributes["tpguard.session.id"] == "s-par"
        assert span.attributes["tpguard.decision"] == "allow"
    assert handoff.attributes["tpguard.sink"] == "handoff"
    assert list(handoff.attributes["tpguard.forbidden.atom_types"]) == ["medical", "phone"]
    assert notify.attributes["tpguard.finding.count"] == 1
    assert notify.attributes["tpguard.forbidden.count"] == 0
    assert "tpguard.forbidden.atom_ids" not in notify.attributes
    # not in tools=: an unknown tool; final_answer is the final-response exit
    assert spans["execute_tool lookup_hours"].attributes["tpguard.sink"] == "external"
    assert spans["execute_tool final_answer"].attributes["tpguard.sink"] == "final_response"
    dump = cap.dump()
    assert PHONE not in dump and SYMPTOM not in dump


def test_codeagent_calls_are_audited(cap: SpanCapture, instrumentor: SmolagentsInstrumentor) -> None:
    with instrumentor.guard.session(ATOMS, session_id="s-code"):
        result, received = run_agent("code")
    assert str(result) == "done"
    assert ("team_handoff", "RX-1", LEAKY) in received
    names = [s.name for s in cap.tool_spans()]
    assert names == ["execute_tool notify_patient", "execute_tool team_handoff",
                     "execute_tool lookup_hours", "execute_tool final_answer"]
    handoff = cap.tool_spans("team_handoff")[0]
    assert handoff.attributes["tpguard.session.id"] == "s-code"
    assert list(handoff.attributes["tpguard.forbidden.fields"]) == ["summary"]
    assert "gen_ai.tool.call.id" not in handoff.attributes  # code actions carry no per-tool id


def test_instrument_twice_is_once(cap: SpanCapture) -> None:
    inst = SmolagentsInstrumentor(Guard(POLICY, mode="audit", tracer_provider=cap.provider), tools=TOOLS)
    inst.instrument()
    try:
        first = _patched_attributes()
        inst.instrument()
        assert _patched_attributes() == first
        run_agent()
        assert len(cap.tool_spans()) == 4
    finally:
        inst.uninstrument()
        inst.uninstrument()  # also idempotent
    assert not inst.is_instrumented


def test_uninstrument_leaves_smolagents_exactly_as_it_was(cap: SpanCapture) -> None:
    before = _patched_attributes()
    result_before, received_before = run_agent()
    inst = SmolagentsInstrumentor(Guard(POLICY, mode="audit", tracer_provider=cap.provider), tools=TOOLS)
    inst.instrument()
    assert Tool.__dict__["__call__"] is not before["Tool.__call__"]
    run_agent()
    assert len(cap.tool_spans()) == 4
    inst.uninstrument()
    after = _patched_attributes()
    for key, original in before.items():
        assert after[key] is original, key
    cap.clear()
    result_after, received_after = run_agent()
    assert str(result_after) == str(result_before)
    assert sorted(received_after) == sorted(received_before)
    assert cap.tool_spans() == []  # nothing audits any more


def test_purpose_bound_tools_are_not_audited_twice(cap: SpanCapture, instrumentor: SmolagentsInstrumentor) -> None:
    enforcing = Guard(POLICY, mode="enforce", tracer_provider=cap.provider)
    received: list[Any] = []
    tools = make_tools(received)
    tools[1] = purpose_bound(tools[1], purpose="hand the case to the pharmacy team", sink="handoff",
                             free_text=["summary"], guard=enforcing)
    model = ScriptedSmolModel(parallel_script())
    agent = ToolCallingAgent(tools=tools, model=model, verbosity_level=LogLevel.OFF, max_steps=5)
    with enforcing.session(ATOMS), instrumentor.guard.session(ATOMS):
        agent.run("go")
    (handoff,) = cap.tool_spans("team_handoff")
    assert handoff.attributes["tpguard.decision"] == "block"
    assert handoff.attributes["gen_ai.tool.call.id"] == "call_b"  # the id reaches guarded tools too
    assert all(r[0] != "team_handoff" for r in received)


def test_only_audit_guards_are_accepted() -> None:
    with pytest.raises(ValueError, match="only audits"):
        SmolagentsInstrumentor(Guard(POLICY, mode="enforce"))


def test_one_active_instrumentor(instrumentor: SmolagentsInstrumentor) -> None:
    other = SmolagentsInstrumentor(Guard(POLICY, mode="audit"))
    with pytest.raises(RuntimeError, match="another SmolagentsInstrumentor"):
        other.instrument()


def test_supported_versions_are_checked_at_instrument_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_version("1.26.0") == "1.26.0"
    with pytest.raises(UnsupportedVersionError, match=r"1\.19\.2"):
        check_version("1.19.2")
    with pytest.raises(UnsupportedVersionError):
        check_version("2.0.0")
    before = _patched_attributes()
    monkeypatch.setattr(instr_mod, "SUPPORTED_VERSIONS", (("0.1", "0.2"),))
    inst = SmolagentsInstrumentor(Guard(POLICY, mode="audit"))
    with pytest.raises(UnsupportedVersionError, match="skip_dep_check"):
        inst.instrument()
    assert _patched_attributes() == before and not inst.is_instrumented
    inst.instrument(skip_dep_check=True)
    try:
        assert inst.is_instrumented
    finally:
        inst.uninstrument()
