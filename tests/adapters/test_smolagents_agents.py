"""Real smolagents agent loops (ToolCallingAgent and CodeAgent) over a guarded healthcare workflow.

verify_identity → process_payment → notify_patient → team_handoff, driven by ScriptedSmolModel.
The model puts the phone number and the symptom into the handoff's ``summary``. The atoms are bound
with ``guard.session(...)`` around ``agent.run(...)``, so every check below also proves the session
reaches the tool (CodeAgent runs code on a worker thread; parallel calls run on a thread pool).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("smolagents") is None,
                                reason="smolagents not installed")

from smolagents import CodeAgent, Tool, ToolCallingAgent, tool  # noqa: E402
from smolagents.monitoring import LogLevel  # noqa: E402

from tpguard import Guard, PolicyKB, PrivateAtom, purpose_bound  # noqa: E402
from tpguard.testing import SpanCapture, capture_spans  # noqa: E402
from tpguard.testing.smolagents import Code, ScriptedSmolModel  # noqa: E402

PHONE, SYMPTOM, NAME = "415-555-0199", "chest tightness", "Maria Gonzalez"
ATOMS = [
    PrivateAtom(id="name", type="person_name", value=NAME, severity=2),
    PrivateAtom(id="phone", type="phone", value=PHONE, severity=2),
    PrivateAtom(id="symptom", type="medical", value=SYMPTOM, severity=3),
    PrivateAtom(id="card_suffix", type="card_suffix", value="4417", masked=("**** 4417",)),
    PrivateAtom(id="pickup_id", type="pickup_id", value="RX-88213"),
]
POLICY = PolicyKB.from_dict({
    "authorizations": [
        {"atom": "name", "tool": "verify_identity", "allow": True},
        {"atom": "phone", "tool": "verify_identity", "allow": True},
        {"atom": "name", "tool": "process_payment", "allow": True},
        {"atom": "card_suffix", "tool": "process_payment", "allow": "conditional",
         "fields": ["card"], "forms": ["masked"]},
        {"atom": "name", "tool": "notify_patient", "allow": True},
        {"atom": "phone", "tool": "notify_patient", "allow": True},
        {"atom": "pickup_id", "tool": "notify_patient", "allow": True},
        {"atom": "pickup_id", "tool": "team_handoff", "allow": True},
    ],
})
LEAKY = f"RX-88213 is ready for pickup. Patient reachable at {PHONE}; reports {SYMPTOM}. Please prepare the order."
CLEAN = "RX-88213 is ready for pickup. Please prepare the order."
BLOCK_NOTE = "tpguard withheld this call to team_handoff"


def workflow_tools(guard: Guard, received: list[tuple[str, dict[str, Any]]]) -> list[Tool]:
    """The four workflow tools, recording what they receive, each bound to its purpose."""

    @tool
    def verify_identity(name: str, phone: str) -> str:
        """Verify the patient and open the visit record.

        Args:
            name: the patient's full name
            phone: the patient's phone number
        """
        received.append(("verify_identity", {"name": name, "phone": phone}))
        return "identity verified"

    @tool
    def process_payment(name: str, card: str, amount: float) -> str:
        """Charge the visit to the patient's card.

        Args:
            name: the cardholder
            card: the masked card number
            amount: the amount in USD
        """
        received.append(("process_payment", {"name": name, "card": card, "amount": amount}))
        return "payment accepted"

    @tool
    def notify_patient(phone: str, message: str) -> str:
        """Tell the patient the next step.

        Args:
            phone: where to send the text
            message: the text to send
        """
        received.append(("notify_patient", {"phone": phone, "message": message}))
        return "notification sent"

    @tool
    def team_handoff(pickup_id: str, summary: str) -> str:
        """Hand the case to the pharmacy team.

        Args:
            pickup_id: the prescription pickup id
            summary: a short note for the pharmacy team
        """
        received.append(("team_handoff", {"pickup_id": pickup_id, "summary": summary}))
        return "handoff recorded"

    bind = [
        (verify_identity, "verify the patient and open the visit record", "record", ()),
        (process_payment, "process payment", "payment", ()),
        (notify_patient, "tell the patient the next step", "notification", ("message",)),
        (team_handoff, "hand the case to the pharmacy team", "handoff", ("summary",)),
    ]
    return [purpose_bound(t, purpose=p, sink=s, free_text=f, guard=guard) for t, p, s, f in bind]


def _after_handoff(messages: list[dict[str, str]]) -> Any:
    """A model that reads the last observation: a refusal makes it retry with less."""
    if BLOCK_NOTE in messages[-1]["content"]:
        return [{"name": "team_handoff", "arguments": {"pickup_id": "RX-88213", "summary": CLEAN}}]
    return "All four steps are done."


def workflow_script() -> list[Any]:
    return [
        [{"name": "verify_identity", "arguments": {"name": NAME, "phone": PHONE}}],
        [{"name": "process_payment", "arguments": {"name": NAME, "card": "**** 4417", "amount": 45.0}}],
        [{"name": "notify_patient", "arguments": {
            "phone": PHONE, "message": f"Hi {NAME}, your prescription RX-88213 is ready for pickup."}}],
        [{"name": "team_handoff", "arguments": {"pickup_id": "RX-88213", "summary": LEAKY}}],
        _after_handoff,
        "All four steps are done.",
    ]


def make_agent(kind: str, tools: list[Tool], model: ScriptedSmolModel) -> Any:
    cls = ToolCallingAgent if kind == "toolcalling" else CodeAgent
    return cls(tools=tools, model=model, verbosity_level=LogLevel.OFF, max_steps=8)


def run_workflow(kind: str, mode: str, cap: SpanCapture) -> tuple[Any, ScriptedSmolModel, list[Any]]:
    guard = Guard(POLICY, mode=mode, tracer_provider=cap.provider)  # type: ignore[arg-type]
    received: list[tuple[str, dict[str, Any]]] = []
    model = ScriptedSmolModel(workflow_script())
    agent = make_agent(kind, workflow_tools(guard, received), model)
    with guard.session(ATOMS, session_id="case-7"):
        result = agent.run("Register Maria, take the payment, notify her and hand off to pharmacy.")
    return result, model, received


def _decisions(cap: SpanCapture) -> list[tuple[str, str]]:
    return [(s.name.removeprefix("execute_tool "), s.attributes["tpguard.decision"]) for s in cap.tool_spans()]


def _assert_no_raw_values(cap: SpanCapture) -> None:
    dump = cap.dump()
    for value in (PHONE, SYMPTOM, NAME, "4417"):
        assert value not in dump
    assert all(s.attributes["tpguard.session.id"] == "case-7" for s in cap.tool_spans())


KINDS = ["toolcalling", "code"]


@pytest.mark.parametrize("kind", KINDS)
def test_audit_changes_nothing_and_records_the_leak(kind: str) -> None:
    with capture_spans() as cap:
        result, _, received = run_workflow(kind, "audit", cap)
        assert str(result) == "All four steps are done."
        assert [name for name, _ in received] == [
            "verify_identity", "process_payment", "notify_patient", "team_handoff"]
        assert received[0][1] == {"name": NAME, "phone": PHONE}
        assert received[1][1] == {"name": NAME, "card": "**** 4417", "amount": 45.0}
        assert received[3][1] == {"pickup_id": "RX-88213", "summary": LEAKY}
        assert _decisions(cap) == [("verify_identity", "allow"), ("process_payment", "allow"),
                                   ("notify_patient", "allow"), ("team_handoff", "allow")]
        handoff = cap.tool_spans("team_handoff")[0]
        assert list(handoff.attributes["tpguard.forbidden.atom_types"]) == ["medical", "phone"]
        assert list(handoff.attributes["tpguard.forbidden.fields"]) == ["summary"]
        for span in cap.tool_spans()[:3]:  # nothing forbidden: a count of 0 and no id list
            assert span.attributes["tpguard.forbidden.count"] == 0
            assert "tpguard.forbidden.atom_ids" not in span.attributes
        _assert_no_raw_values(cap)


@pytest.mark.parametrize("kind", KINDS)
def test_enforce_blocks_the_model_sees_why_and_retries(kind: str) -> None:
    with capture_spans() as cap:
        result, model, received = run_workflow(kind, "enforce", cap)
        assert str(result) == "All four steps are done."
        handoffs = [args for name, args in received if name == "team_handoff"]
        assert handoffs == [{"pickup_id": "RX-88213", "summary": CLEAN}]  # the leaky call never ran
        assert [name for name, _ in received][:3] == ["verify_identity", "process_payment", "notify_patient"]
        # The step after the blocked call shows the model the guard's message, never the values.
        observation = model.seen[4][-1]["content"]
        assert BLOCK_NOTE in observation and "medical, phone" in observation and "summary" in observation
        assert PHONE not in observation.split(BLOCK_NOTE, 1)[1]
        assert _decisions(cap) == [("verify_identity", "allow"), ("process_payment", "allow"),
                                   ("notify_patient", "allow"), ("team_handoff", "block"),
                                   ("team_handoff", "allow")]
        blocked = cap.tool_spans("team_handoff")[0]
        assert blocked.attributes["error.type"] == "tpguard.blocked"
        _assert_no_raw_values(cap)


@pytest.mark.parametrize("kind", KINDS)
def test_redact_delivers_the_summary_without_the_atoms(kind: str) -> None:
    with capture_spans() as cap:
        result, model, received = run_workflow(kind, "redact", cap)
        assert str(result) == "All four steps are done."
        assert model.turn == 5  # no retry was needed
        (summary,) = [args["summary"] for name, args in received if name == "team_handoff"]
        assert PHONE not in summary and SYMPTOM not in summary
        assert summary == ("RX-88213 is ready for pickup. Patient reachable at [PHONE_1]; "
                           "reports [MEDICAL_1]. Please prepare the order.")
        assert received[2][1]["phone"] == PHONE  # authorized elsewhere: untouched
        assert _decisions(cap)[-1] == ("team_handoff", "redact")
        assert [d for _, d in _decisions(cap)[:3]] == ["allow"] * 3
        _assert_no_raw_values(cap)


def test_parallel_tool_calls_see_the_session() -> None:
    """Two calls in one turn run on smolagents' thread pool; both are checked against the session."""
    with capture_spans() as cap:
        guard = Guard(POLICY, mode="enforce", tracer_provider=cap.provider)
        received: list[tuple[str, dict[str, Any]]] = []
        model = ScriptedSmolModel([
            [{"name": "notify_patient", "arguments": {"phone": PHONE, "message": "Ready for pickup."}},
             {"name": "team_handoff", "arguments": {"pickup_id": "RX-88213", "summary": LEAKY}}],
            "done",
        ])
        agent = make_agent("toolcalling", workflow_tools(guard, received), model)
        with guard.session(ATOMS, session_id="case-7"):
            agent.run("notify and hand off")
        assert [name for name, _ in received] == ["notify_patient"]
        assert sorted(_decisions(cap)) == [("notify_patient", "allow"), ("team_handoff", "block")]
        assert BLOCK_NOTE in model.seen[1][-1]["content"]
        _assert_no_raw_values(cap)


def test_codeagent_positional_arguments_are_bound_by_inputs_order() -> None:
    with capture_spans() as cap:
        guard = Guard(POLICY, mode="redact", tracer_provider=cap.provider)
        received: list[tuple[str, dict[str, Any]]] = []
        model = ScriptedSmolModel([Code(f"print(team_handoff('RX-88213', {LEAKY!r}))"), "done"])
        agent = make_agent("code", workflow_tools(guard, received), model)
        with guard.session(ATOMS, session_id="case-7"):
            agent.run("hand off")
        assert received == [("team_handoff", {
            "pickup_id": "RX-88213",
            "summary": "RX-88213 is ready for pickup. Patient reachable at [PHONE_1]; reports "
                       "[MEDICAL_1]. Please prepare the order."})]
        (span,) = cap.tool_spans("team_handoff")
        assert list(span.attributes["tpguard.forbidden.fields"]) == ["summary"]


def test_codeagent_cannot_swallow_a_block() -> None:
    """Generated code that catches exceptions still gets (and shows) the refusal."""
    with capture_spans() as cap:
        guard = Guard(POLICY, mode="enforce", tracer_provider=cap.provider)
        received: list[tuple[str, dict[str, Any]]] = []
        code = ("try:\n    r = team_handoff(pickup_id='RX-88213', summary=" + repr(LEAKY) + ")\n"
                "except Exception:\n    r = 'handoff done'\nprint(r)")
        model = ScriptedSmolModel([Code(code), "done"])
        agent = make_agent("code", workflow_tools(guard, received), model)
        with guard.session(ATOMS):
            agent.run("hand off")
        assert received == []
        observation = model.seen[1][-1]["content"]
        assert BLOCK_NOTE in observation and "handoff done" not in observation


def test_guarded_tool_keeps_its_interface_and_the_original_is_untouched() -> None:
    guard = Guard(POLICY, mode="enforce")
    received: list[tuple[str, dict[str, Any]]] = []
    tools = workflow_tools(guard, received)
    handoff = tools[3]
    assert isinstance(handoff, Tool)
    assert handoff.name == "team_handoff" and handoff.output_type == "string"
    assert list(handoff.inputs) == ["pickup_id", "summary"]
    assert handoff.description.startswith("Hand the case to the pharmacy team")
    spec = guard.tool_spec("team_handoff")
    assert spec.sink == "handoff" and spec.free_text == ("summary",)
    assert spec.input_schema and spec.input_schema["required"] == ["pickup_id", "summary"]
    handoff.validate_arguments()  # smolagents' own check of forward against inputs still passes
    with guard.session(ATOMS):
        assert handoff(pickup_id="RX-88213", summary=LEAKY).startswith(BLOCK_NOTE)
        assert handoff({"pickup_id": "RX-88213", "summary": CLEAN}) == "handoff recorded"
    renamed = purpose_bound(handoff, purpose="hand over", sink="handoff", guard=guard, name="handover")
    assert renamed.name == "handover" and handoff.name == "team_handoff"


def test_stacking_purpose_bound_over_tool_works_but_smolagents_warns() -> None:
    guard = Guard(POLICY, mode="enforce")
    with pytest.warns(UserWarning, match="decorators other than @tool"):

        @purpose_bound(purpose="hand the case to the pharmacy team", sink="handoff",
                       free_text=["summary"], guard=guard)
        @tool
        def handoff(summary: str) -> str:
            """Hand off.

            Args:
                summary: a note
            """
            return "ok"

    assert isinstance(handoff, Tool)
    with guard.session(ATOMS):
        assert handoff(summary=LEAKY).startswith("tpguard withheld this call to handoff")
        assert handoff(summary="The order is ready.") == "ok"
