"""A real ``create_agent`` loop whose final answer carries an atom the requester may not receive
(another patient's diagnosis a tool returned): what the requester saw, per mode (issue 11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
from exposure_scenario import (
    ANSWER,
    FORBIDDEN,
    POLICY,
    PURPOSE,
    REDACTED,
    REFUSAL,
    REQUESTER,
    SESSION,
    Records,
)
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from tpguard import Guard
from tpguard.adapters.langchain import PurposeBoundMiddleware
from tpguard.testing import SpanCapture
from tpguard.testing.langchain import ScriptedChatModel

SCRIPT = [[{"name": "query_records", "args": {"patient_id": "P-1"}, "id": "q1"}], ANSWER]


def run(mode: str, tmp_path: Path, spans: SpanCapture, *, asynchronous: bool = False,
        script: list[Any] | None = None) -> tuple[dict[str, Any], ScriptedChatModel]:
    records = Records(tmp_path / f"{mode}.sqlite")

    @tool
    def query_records(patient_id: str) -> str:
        """Look up a patient's visits."""
        return records.query(patient_id)

    guard = Guard(POLICY, mode=mode, tracer_provider=spans.provider)  # type: ignore[arg-type]
    model = ScriptedChatModel(script or SCRIPT)
    agent = create_agent(model, tools=[query_records], middleware=[
        PurposeBoundMiddleware(guard, tools={"query_records": PURPOSE}, exits=True)])
    user = {"messages": [{"role": "user", "content": "When was I last seen?"}]}
    with guard.session(**SESSION):
        if asynchronous:
            import asyncio
            state = asyncio.run(agent.ainvoke(user))
        else:
            state = agent.invoke(user)
    return state, model


def final(state: dict[str, Any]) -> AIMessage:
    message = state["messages"][-1]
    assert isinstance(message, AIMessage) and not message.tool_calls
    return message


def test_audit_the_requester_sees_the_answer_and_the_span_records_the_exposure(
        tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    state, _ = run("audit", tmp_path, tpguard_spans)
    assert final(state).content == ANSWER
    span = [s for s in tpguard_spans.spans if s.name == "exit final_response"][-1]
    assert span.attributes["tpguard.exit.decision"] == "allow"
    assert list(span.attributes["tpguard.exit.recipients"]) == [REQUESTER]
    assert list(span.attributes["tpguard.exit.forbidden.atom_ids"]) == ["bob.dx", "bob.name"]
    assert not [v for v in FORBIDDEN if v in tpguard_spans.dump()]


def test_enforce_the_requester_sees_a_value_free_refusal(tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    state, _ = run("enforce", tmp_path, tpguard_spans)
    assert final(state).content == REFUSAL
    everything = " ".join(str(m.content) for m in state["messages"] if isinstance(m, AIMessage))
    assert not [v for v in FORBIDDEN if v in everything]
    span = [s for s in tpguard_spans.spans if s.name == "exit final_response"][-1]
    assert span.attributes["tpguard.exit.decision"] == "block"


def test_redact_the_requester_sees_placeholders_for_what_she_may_not_receive(
        tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    state, _ = run("redact", tmp_path, tpguard_spans)
    assert final(state).content == REDACTED


def test_async_agent_and_text_blocks(tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    blocks = AIMessage(content=[{"type": "text", "text": "Your visit: 2024-03-02."},
                                {"type": "text", "text": "Also: Bob Ray has hepatitis B."}])
    state, _ = run("redact", tmp_path, tpguard_spans, asynchronous=True, script=[SCRIPT[0], blocks])
    assert final(state).content == [{"type": "text", "text": "Your visit: 2024-03-02."},
                                    {"type": "text", "text": "Also: [PERSON_NAME_1] has [DIAGNOSIS_1]."}]


def test_text_next_to_a_tool_call_is_guarded_and_the_call_is_kept(
        tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    chatty = AIMessage(content="Bob Ray has hepatitis B; checking yours.",
                       tool_calls=[{"name": "query_records", "args": {"patient_id": "P-1"}, "id": "q1"}])
    state, model = run("enforce", tmp_path, tpguard_spans, script=[chatty, "Seen on 2024-03-02."])
    first = state["messages"][1]
    assert isinstance(first, AIMessage) and first.tool_calls[0]["id"] == "q1"
    assert "Bob Ray" not in str(first.content) and str(first.content).startswith("tpguard withheld")
    assert final(state).content == "Seen on 2024-03-02."
    assert model.calls == 2


def test_without_exits_the_middleware_leaves_answers_alone(tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    guard = Guard(POLICY, mode="enforce", tracer_provider=tpguard_spans.provider)
    agent = create_agent(ScriptedChatModel([ANSWER]), tools=[], middleware=[PurposeBoundMiddleware(guard)])
    with guard.session(**SESSION):
        state = agent.invoke({"messages": [{"role": "user", "content": "hi"}]})
    assert final(state).content == ANSWER


def test_the_docs_agent_snippet_runs() -> None:
    """docs/exposure-guard.md's two python blocks: the policy, then the agent with the middleware."""
    from tpguard import Disclosure

    doc = (Path(__file__).resolve().parents[2] / "docs" / "exposure-guard.md").read_text()
    blocks = [b.split("```", 1)[0] for b in doc.split("```python\n")[1:3]]
    ns: dict[str, Any] = {"print": lambda *a: None, "create_agent": create_agent, "tools": [],
                          "PurposeBoundMiddleware": PurposeBoundMiddleware, "Disclosure": Disclosure,
                          "model": ScriptedChatModel(["Your visit found asthma. Bob's found hepatitis B."])}
    exec(blocks[0], ns)
    exec(blocks[1], ns)
    assert final(ns["state"]).content == "Your visit found asthma. Bob's found [DIAGNOSIS_1]."


MAIL_POLICY = {
    "atoms": [{"id": "ann.dx", "type": "diagnosis", "value": "asthma"}],
    "recipients": [{"id": "ext:vendor", "kind": "external", "addresses": ["ops@vendor.example"]}],
    "rules": [{"atom_type": "diagnosis", "sink": "email", "allow": True}],  # the tool's purpose allows it
    "tools": [{"name": "send_email", "purpose": "write to a contact", "sink": "email",
               "free_text": ["body"], "exit": {"channel": "email", "recipient_arg": "to"}}],
}


@pytest.mark.parametrize("mode", ["audit", "enforce", "redact"])
def test_an_email_tool_is_an_exit_for_the_recipient_it_names(mode: str, tpguard_spans: SpanCapture) -> None:
    from langchain_core.messages import ToolMessage

    from tpguard import PolicyKB

    sent: list[dict[str, str]] = []

    @tool
    def send_email(to: str, body: str) -> str:
        """Send an e-mail."""
        sent.append({"to": to, "body": body})
        return "sent"

    guard = Guard(PolicyKB.from_dict(MAIL_POLICY), mode=mode,  # type: ignore[arg-type]
                  tracer_provider=tpguard_spans.provider)
    model = ScriptedChatModel([[{"name": "send_email", "id": "m1",
                                 "args": {"to": "ops@vendor.example", "body": "Ann has asthma."}}], "ok"])
    agent = create_agent(model, tools=[send_email], middleware=[PurposeBoundMiddleware(guard)])
    agent.invoke({"messages": [{"role": "user", "content": "tell the vendor"}]})
    reply = next(m for m in reversed(model.seen[1]) if isinstance(m, ToolMessage))
    if mode == "enforce":  # the middleware's turn after the refusal asks the model to resend
        assert "withheld" in str(model.seen[1][-1].content)
    if mode == "audit":
        assert sent == [{"to": "ops@vendor.example", "body": "Ann has asthma."}]
    elif mode == "enforce":
        assert sent == [] and reply.status == "error"
        assert str(reply.content).startswith("tpguard withheld this call to send_email (email to ext:vendor)")
    else:
        assert sent == [{"to": "ops@vendor.example", "body": "Ann has [DIAGNOSIS_1]."}]
    span = tpguard_spans.tool_spans("send_email")[0]
    assert list(span.attributes["tpguard.exit.forbidden.atom_ids"]) == ["ann.dx"]
