"""Feedback after a block (issue 31) through a real ``create_agent`` loop.

The scripted model replays what a small real model was recorded doing after an ``enforce`` block
(``docs/threat-model.md``, "Feedback after a block"): it **copies its own last call** — byte for
byte, from the conversation it is given. With the middleware's default feedback the blocked call
in that conversation has been rewritten to its placeholder form, so the copy goes through and the
withheld value never reaches the model again; without it the copy is blocked again and again.
``Guard(escalate="redact")`` turns the repeated copy into a rewrite at the guard instead.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from tpguard import Guard, PolicyKB, ToolSpec
from tpguard.adapters.langchain import PurposeBoundMiddleware
from tpguard.testing import SpanCapture
from tpguard.testing.langchain import ScriptedChatModel

PHONE, ADDRESS = "415-555-0199", "12 Elm Street, Springfield"
POLICY = {"atoms": [{"id": "phone", "type": "phone", "value": PHONE},
                    {"id": "addr", "type": "home_address", "value": ADDRESS}],
          "authorizations": [{"atom": "phone", "tool": "handoff", "allow": True}]}
TOOLS = {"handoff": {"purpose": "hand the case over", "sink": "handoff", "free_text": ["summary"]}}
LEAKY = {"phone": PHONE, "summary": f"Client at {ADDRESS} needs a call back"}
USER = {"messages": [{"role": "user", "content": "hand the case over"}]}


def copies_its_last_call(first: list[dict[str, Any]], tries: int = 3):
    """The recorded behaviour: after an error ToolMessage, resend the last AIMessage's calls as
    they stand in the conversation; stop after ``tries`` resends or a success."""

    def turn(messages: list[BaseMessage]) -> Any:
        tools = [m for m in messages if isinstance(m, ToolMessage)]
        if not tools:
            return first
        if tools[-1].status != "error" or len(tools) > tries:
            return "done"
        last = next(m for m in reversed(messages) if isinstance(m, AIMessage) and m.tool_calls)
        return [{"name": c["name"], "args": c["args"], "id": f"{c['id']}r"} for c in last.tool_calls]

    return turn


def run(spans: SpanCapture, first: list[dict[str, Any]], *, escalate: str | None = None,
        rewrite: bool = True, compact: bool = False) -> tuple[ScriptedChatModel, list[dict[str, Any]], dict[str, Any]]:
    received: list[dict[str, Any]] = []

    @tool
    def handoff(phone: str, summary: str) -> str:
        """Hand the case over."""
        received.append({"phone": phone, "summary": summary})
        return "handed over"

    guard = Guard(PolicyKB.from_dict(POLICY), mode="enforce", escalate=escalate,  # type: ignore[arg-type]
                  tracer_provider=spans.provider)
    model = ScriptedChatModel(copies_its_last_call(first))
    mw = PurposeBoundMiddleware(guard, tools=TOOLS, rewrite_blocked=rewrite,
                                compact_after_resend=compact)
    out = create_agent(model, tools=[handoff], middleware=[mw]).invoke(USER)
    return model, received, out


def model_inputs_after_block(model: ScriptedChatModel) -> str:
    return "\n".join(repr(m) for call in model.seen[1:] for m in call)


def test_blocked_call_is_rewritten_in_memory_and_the_copy_goes_through(tpguard_spans: SpanCapture) -> None:
    model, received, out = run(tpguard_spans, [{"name": "handoff", "args": LEAKY, "id": "h1"}])
    # the model's copy of its (rewritten) last call went through, placeholder and all
    assert received == [{"phone": PHONE, "summary": "Client at [HOME_ADDRESS_1] needs a call back"}]
    # the refusal it read names the part and the placeholder, first, value-free
    refusal = next(m for m in model.seen[1] if isinstance(m, ToolMessage))
    assert refusal.content.startswith("tpguard replaced the home_address in summary with "
                                      "[HOME_ADDRESS_1] in your call above")
    # its own last call, as it saw it on the next turn, holds the placeholder, not the address
    assert ADDRESS not in model_inputs_after_block(model)
    blocked = next(m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert blocked.tool_calls[0]["args"]["summary"] == "Client at [HOME_ADDRESS_1] needs a call back"
    assert ADDRESS not in repr(out["messages"])  # gone from the agent's state too
    # the rewrite is recorded on the blocked call's span, value-free
    span = tpguard_spans.tool_spans("handoff")[0]
    assert span.attributes["tpguard.decision"] == "block"
    events = [e for e in span.events if e.name == "tpguard.call_rewritten"]
    assert [dict(e.attributes or {}) for e in events] == [{
        "tpguard.rewrite.where": "langchain-messages", "tpguard.rewrite.paths": ("summary",),
        "tpguard.rewrite.atom_types": ("home_address",)}]
    assert ADDRESS not in tpguard_spans.dump()


def test_parallel_blocked_calls_are_all_rewritten(tpguard_spans: SpanCapture) -> None:
    second = {"phone": PHONE, "summary": f"Mail to {ADDRESS}"}
    model, received, _out = run(tpguard_spans, [{"name": "handoff", "args": LEAKY, "id": "h1"},
                                               {"name": "handoff", "args": second, "id": "h2"}])
    assert sorted(r["summary"] for r in received) == ["Client at [HOME_ADDRESS_1] needs a call back",
                                                      "Mail to [HOME_ADDRESS_1]"]
    assert ADDRESS not in model_inputs_after_block(model)


def test_without_the_rewrite_the_copy_is_blocked_every_time(tpguard_spans: SpanCapture) -> None:
    """The old feedback: the model's last call still holds the value, its copy is refused."""
    model, received, _ = run(tpguard_spans, [{"name": "handoff", "args": LEAKY, "id": "h1"}],
                             rewrite=False)
    assert received == []
    assert ADDRESS in model_inputs_after_block(model)
    assert all(s.attributes["tpguard.decision"] == "block" for s in tpguard_spans.tool_spans("handoff"))


@pytest.mark.parametrize("compact", [False, True])
def test_compact_removes_the_blocked_turn_once_the_resend_went_through(
    compact: bool, tpguard_spans: SpanCapture
) -> None:
    """``compact_after_resend``: the model's last turn reads one call and its result — what
    ``redact`` would have left — not the call, its refusal and the resend."""
    model, received, out = run(tpguard_spans, [{"name": "handoff", "args": LEAKY, "id": "h1"}],
                               compact=compact)
    assert received == [{"phone": PHONE, "summary": "Client at [HOME_ADDRESS_1] needs a call back"}]
    for messages in (model.seen[-1], out["messages"]):
        tools = [m for m in messages if isinstance(m, ToolMessage)]
        assert [m.status for m in tools] == (["success"] if compact else ["error", "success"])
        assert ADDRESS not in repr(messages)
    assert [s.attributes["tpguard.decision"] for s in tpguard_spans.tool_spans("handoff")] == [
        "block", "allow"]


def test_compact_keeps_a_turn_with_other_calls(tpguard_spans: SpanCapture) -> None:
    """Only a turn that was the one refused call is removed: here the blocked call came with a
    second call that went through, so the turn stays (rewritten) after the resend."""
    received: list[dict[str, Any]] = []

    @tool
    def handoff(phone: str, summary: str) -> str:
        """Hand the case over."""
        received.append({"phone": phone, "summary": summary})
        return "handed over"

    placeholder = {"phone": PHONE, "summary": "Client at [HOME_ADDRESS_1] needs a call back"}
    model = ScriptedChatModel([
        [{"name": "handoff", "args": LEAKY, "id": "h1"},
         {"name": "handoff", "args": {"phone": PHONE, "summary": "ready"}, "id": "h2"}],
        [{"name": "handoff", "args": placeholder, "id": "h3"}], "done"])
    guard = Guard(PolicyKB.from_dict(POLICY), mode="enforce", tracer_provider=tpguard_spans.provider)
    mw = PurposeBoundMiddleware(guard, tools=TOOLS, compact_after_resend=True)
    create_agent(model, tools=[handoff], middleware=[mw]).invoke(USER)
    assert received[-1] == placeholder
    statuses = [m.status for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert sorted(statuses) == ["error", "success", "success"]
    assert ADDRESS not in repr(model.seen[-1])


def ends_its_turn_after_a_refusal(first: list[dict[str, Any]]):
    """The recorded behaviour of Qwen2.5-Coder-1.5B behind LangChain: a conversation that ends on
    a refusal gets an empty reply (the agent stops); after a user turn it copies its last call."""

    def turn(messages: list[BaseMessage]) -> Any:
        if not any(isinstance(m, ToolMessage) for m in messages):
            return first
        if isinstance(messages[-1], ToolMessage):
            return "done" if messages[-1].status != "error" else ""
        last = next(m for m in reversed(messages) if isinstance(m, AIMessage) and m.tool_calls)
        return [{"name": c["name"], "args": c["args"], "id": f"{c['id']}r"} for c in last.tool_calls]

    return turn


@pytest.mark.parametrize("continue_after_block", [True, False])
def test_a_turn_after_the_refusal_keeps_the_agent_going(
    continue_after_block: bool, tpguard_spans: SpanCapture
) -> None:
    received: list[dict[str, Any]] = []

    @tool
    def handoff(phone: str, summary: str) -> str:
        """Hand the case over."""
        received.append({"phone": phone, "summary": summary})
        return "handed over"

    guard = Guard(PolicyKB.from_dict(POLICY), mode="enforce", tracer_provider=tpguard_spans.provider)
    model = ScriptedChatModel(ends_its_turn_after_a_refusal([{"name": "handoff", "args": LEAKY, "id": "h1"}]))
    mw = PurposeBoundMiddleware(guard, tools=TOOLS, continue_after_block=continue_after_block)
    out = create_agent(model, tools=[handoff], middleware=[mw]).invoke(USER)
    after_block = model.seen[1]
    if not continue_after_block:  # the model ended its turn on the refusal: nothing was handed over
        assert received == [] and isinstance(after_block[-1], ToolMessage)
        assert out["messages"][-1].text == ""
        return
    assert received == [{"phone": PHONE, "summary": "Client at [HOME_ADDRESS_1] needs a call back"}]
    prompt = after_block[-1]
    assert isinstance(prompt, HumanMessage)
    assert prompt.text == ("The last call was withheld. Continue the workflow: resend it as the tool "
                           "message says, then go on with the remaining steps.")
    # the turn is in the model's request only: the agent's state holds the user's task alone
    assert [m.text for m in out["messages"] if isinstance(m, HumanMessage)] == ["hand the case over"]
    assert not isinstance(model.seen[-1][-1], HumanMessage)  # after the resend went through: no turn
    assert ADDRESS not in repr(model.seen) and ADDRESS not in tpguard_spans.dump()


def test_the_turn_after_parallel_refusals_names_the_withheld_calls(tpguard_spans: SpanCapture) -> None:
    received: list[str] = []

    @tool
    def handoff(phone: str, summary: str) -> str:
        """Hand the case over."""
        received.append(summary)
        return "handed over"

    @tool
    def note(summary: str) -> str:
        """Leave a note."""
        received.append(summary)
        return "noted"

    guard = Guard(PolicyKB.from_dict(POLICY), mode="enforce", tracer_provider=tpguard_spans.provider)
    tools = {**TOOLS, "note": {"purpose": "leave a note", "sink": "comment", "free_text": ["summary"]}}
    model = ScriptedChatModel(ends_its_turn_after_a_refusal([
        {"name": "handoff", "args": LEAKY, "id": "h1"}, {"name": "note", "args": {"summary": "ok"}, "id": "n1"},
        {"name": "note", "args": {"summary": f"at {ADDRESS}"}, "id": "n2"}]))
    mw = PurposeBoundMiddleware(guard, tools=tools)
    create_agent(model, tools=[handoff, note], middleware=[mw]).invoke(USER)
    prompt = model.seen[1][-1]
    assert isinstance(prompt, HumanMessage)
    assert prompt.text == ("2 of the last calls were withheld (handoff, note). Continue the workflow: "
                                  "resend only those, as their tool messages say.")
    assert sorted(received) == sorted(["ok", "ok", "Client at [HOME_ADDRESS_1] needs a call back",
                                       "at [HOME_ADDRESS_1]"])


def test_escalation_rewrites_the_repeated_call(tpguard_spans: SpanCapture) -> None:
    """``enforce`` with ``escalate="redact"`` and no memory rewrite: the first call is blocked,
    the byte-identical copy is rewritten at the guard and goes through."""
    _model, received, _ = run(tpguard_spans, [{"name": "handoff", "args": LEAKY, "id": "h1"}],
                             escalate="redact", rewrite=False)
    assert received == [{"phone": PHONE, "summary": "Client at [HOME_ADDRESS_1] needs a call back"}]
    first, second = tpguard_spans.tool_spans("handoff")
    assert (first.attributes["tpguard.decision"], second.attributes["tpguard.decision"]) == ("block", "redact")
    assert [dict(e.attributes or {}) for e in second.events if e.name == "tpguard.escalated"] == [
        {"tpguard.escalation.from": "enforce", "tpguard.escalation.to": "redact"}]
    assert not [e for e in first.events if e.name == "tpguard.escalated"]
    assert ADDRESS not in tpguard_spans.dump()


def test_escalation_is_per_session_and_per_tool() -> None:
    guard = Guard(PolicyKB.from_dict(POLICY), mode="enforce", escalate="redact")
    guard.add_tool(ToolSpec(name="handoff", **TOOLS["handoff"]))
    guard.add_tool(ToolSpec(name="note", sink="comment", free_text=("summary",)))
    with guard.session():
        assert guard.check("handoff", LEAKY).blocked
        assert guard.check("note", LEAKY).blocked  # another tool: refused first
        assert guard.check("handoff", LEAKY).redacted
    with guard.session():  # another request: its first refusal blocks again
        assert guard.check("handoff", LEAKY).blocked


def test_escalate_is_checked() -> None:
    with pytest.raises(ValueError, match="only mode='enforce' escalates"):
        Guard(mode="redact", escalate="redact")
    with pytest.raises(ValueError, match="only to 'redact'"):
        Guard(mode="enforce", escalate="audit")  # type: ignore[arg-type]
