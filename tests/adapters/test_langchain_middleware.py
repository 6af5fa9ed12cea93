"""``PurposeBoundMiddleware`` beyond the workflow: async, ``Command`` results, forged injected
arguments, unknown tools, and two instances on one agent."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.prebuilt import InjectedState
from langgraph.types import Command

from tpguard import Guard, PolicyKB, ToolSpec
from tpguard.adapters.langchain import PurposeBoundMiddleware
from tpguard.testing import SpanCapture
from tpguard.testing.langchain import ScriptedChatModel

PHONE = "415-555-0199"
POLICY = {"atoms": [{"id": "phone", "type": "phone", "value": PHONE}],
          "authorizations": [{"atom": "phone", "tool": "notify", "allow": True}]}
TOOLS = {"notify": ToolSpec(name="notify", purpose="tell the patient", sink="notification",
                            free_text=("message",)),
         "handoff": {"purpose": "hand over", "sink": "handoff", "free_text": ["summary"]}}
USER = {"messages": [{"role": "user", "content": "go"}]}


def guard(spans: SpanCapture, mode: str) -> Guard:
    return Guard(PolicyKB.from_dict(POLICY), mode=mode,  # type: ignore[arg-type]
                 tracer_provider=spans.provider, record_arguments="redacted")


def make_tools(received: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    @tool
    def notify(phone: str, message: str) -> str:
        """Text the patient."""
        received.append(("notify", {"phone": phone, "message": message}))
        return "sent"

    @tool
    def handoff(summary: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Hand over; answers with a Command that also updates the state."""
        received.append(("handoff", {"summary": summary}))
        return Command(update={"messages": [
            ToolMessage(content="handed over", tool_call_id=tool_call_id, name="handoff")]})

    return [notify, handoff]


async def test_async_agent_enforce_with_command_results(tpguard_spans: SpanCapture) -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    model = ScriptedChatModel([
        [{"name": "notify", "args": {"phone": PHONE, "message": "ready"}, "id": "n1"},
         {"name": "handoff", "args": {"summary": f"call {PHONE}"}, "id": "h1"}],
        [{"name": "handoff", "args": {"summary": "ready"}, "id": "h2"}],
        "done",
    ])
    mw = PurposeBoundMiddleware(guard(tpguard_spans, "enforce"), tools=TOOLS)
    agent = create_agent(model, tools=make_tools(received), middleware=[mw])
    result = await agent.ainvoke(USER)
    assert received == [("notify", {"phone": PHONE, "message": "ready"}),
                        ("handoff", {"summary": "ready"})]
    errors = [m for m in model.seen[1] if isinstance(m, ToolMessage) and m.status == "error"]
    assert [e.tool_call_id for e in errors] == ["h1"]
    # The Command's own ToolMessage reached the conversation unchanged.
    assert [m.content for m in result["messages"] if isinstance(m, ToolMessage)][-1] == "handed over"
    decisions = {s.attributes["gen_ai.tool.call.id"]: s.attributes["tpguard.decision"]
                 for s in tpguard_spans.tool_spans()}
    assert decisions == {"n1": "allow", "h1": "block", "h2": "allow"}
    assert PHONE not in tpguard_spans.dump()


@pytest.mark.parametrize("use_async", [False, True])
async def test_redact_through_command_tool(use_async: bool, tpguard_spans: SpanCapture) -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    model = ScriptedChatModel([[{"name": "handoff", "args": {"summary": f"call {PHONE} now"}}],
                               "done"])
    agent = create_agent(model, tools=make_tools(received),
                         middleware=[PurposeBoundMiddleware(guard(tpguard_spans, "redact"), TOOLS)])
    if use_async:
        await agent.ainvoke(USER)
    else:
        agent.invoke(USER)
    assert received == [("handoff", {"summary": "call [PHONE_1] now"})]
    assert tpguard_spans.tool_spans("handoff")[0].attributes["tpguard.decision"] == "redact"


def test_forged_injected_arguments_are_not_scanned(tpguard_spans: SpanCapture) -> None:
    """A model may put an injected argument's name in its call; ToolNode replaces it with the real
    value, and the guard ignores it rather than blocking on (or recording) it."""
    seen: list[Any] = []

    @tool
    def handoff(summary: str, case: Annotated[dict, InjectedState]) -> str:
        """Hand over."""
        seen.append(case)
        return "ok"

    model = ScriptedChatModel([[{"name": "handoff", "args": {"summary": "ready",
                                                              "case": {"note": PHONE}}}], "done"])
    agent = create_agent(model, tools=[handoff],
                         middleware=[PurposeBoundMiddleware(guard(tpguard_spans, "enforce"), TOOLS)])
    agent.invoke(USER)
    assert len(seen) == 1 and "messages" in seen[0]  # the real state, not the forged value
    span = tpguard_spans.tool_spans("handoff")[0]
    assert span.attributes["tpguard.decision"] == "allow"
    assert json.loads(span.attributes["tpguard.arguments"]) == {"summary": "ready"}


def test_unlisted_tool_is_checked_as_external(tpguard_spans: SpanCapture) -> None:
    received: list[str] = []

    @tool
    def lookup(query: str) -> str:
        """Look up."""
        received.append(query)
        return "found"

    model = ScriptedChatModel([[{"name": "lookup", "args": {"query": f"who has {PHONE}"}}],
                               [{"name": "lookup", "args": {"query": "open cases"}}], "done"])
    mw = PurposeBoundMiddleware(guard(tpguard_spans, "enforce"), tools=TOOLS)
    create_agent(model, tools=[lookup], middleware=[mw]).invoke(USER)
    assert received == ["open cases"]
    spans = tpguard_spans.tool_spans("lookup")
    assert [s.attributes["tpguard.sink"] for s in spans] == ["external", "external"]
    assert [s.attributes["tpguard.decision"] for s in spans] == ["block", "allow"]
    assert mw.spec_for("lookup").sink == "external"


@pytest.mark.parametrize("use_async", [False, True])
async def test_call_to_a_missing_tool_gets_langgraphs_answer(
    use_async: bool, tpguard_spans: SpanCapture
) -> None:
    """Nothing runs for a tool the agent lacks, so the model keeps LangGraph's list of valid tools
    rather than a refusal (which would leave it guessing)."""
    received: list[tuple[str, dict[str, Any]]] = []
    model = ScriptedChatModel([[{"name": "page_doctor", "args": {"text": f"call {PHONE}"},
                                 "id": "p1"}], "done"])
    mw = PurposeBoundMiddleware(guard(tpguard_spans, "enforce"), tools=TOOLS)
    agent = create_agent(model, tools=make_tools(received), middleware=[mw])
    await agent.ainvoke(USER) if use_async else agent.invoke(USER)
    answer = next(m for m in model.seen[1] if isinstance(m, ToolMessage))
    assert answer.status == "error" and "not a valid tool" in str(answer.content)
    assert "notify" in str(answer.content) and "tpguard" not in str(answer.content)
    assert received == [] and tpguard_spans.tool_spans("page_doctor") == []


def test_two_instances_coexist(tpguard_spans: SpanCapture) -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    audit = PurposeBoundMiddleware(guard(tpguard_spans, "audit"), tools=TOOLS)
    enforce = PurposeBoundMiddleware(guard(tpguard_spans, "enforce"), tools=TOOLS)
    assert audit.name != enforce.name
    named = PurposeBoundMiddleware(guard(tpguard_spans, "audit"), tools=TOOLS, name="privacy")
    assert named.name == "privacy"
    model = ScriptedChatModel([[{"name": "handoff", "args": {"summary": f"call {PHONE}"}}],
                               [{"name": "handoff", "args": {"summary": "ready"}}], "done"])
    create_agent(model, tools=make_tools(received), middleware=[audit, enforce]).invoke(USER)
    assert received == [("handoff", {"summary": "ready"})]
    modes = [(s.attributes["tpguard.mode"], s.attributes["tpguard.decision"])
             for s in tpguard_spans.tool_spans("handoff")]
    # audit is outermost: it saw both calls; enforce blocked the first, passed the second.
    assert sorted(modes) == sorted([("audit", "allow"), ("enforce", "block"),
                                    ("audit", "allow"), ("enforce", "allow")])


def plain_graph(model: ScriptedChatModel, tools: list[Any], mw: PurposeBoundMiddleware,
                rewrite: bool = False) -> Any:
    """A hand-built LangGraph agent (no ``create_agent``): a model node and LangGraph's
    ``ToolNode`` with the middleware's hooks as its ``wrap_tool_call``/``awrap_tool_call``; with
    ``rewrite``, the model node applies ``mw.before_model`` first, as docs/langchain.md says."""
    from langgraph.graph import END, START, MessagesState, StateGraph, add_messages
    from langgraph.prebuilt import ToolNode, tools_condition

    bound = model.bind_tools(tools)

    def call_model(state: MessagesState) -> dict[str, Any]:
        update = (mw.before_model(state, None) if rewrite else None) or {"messages": []}
        messages = add_messages(state["messages"], update["messages"])
        return {"messages": [*update["messages"], bound.invoke(messages)]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode(tools, wrap_tool_call=mw.wrap_tool_call,
                                     awrap_tool_call=mw.awrap_tool_call))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "model")
    return graph.compile()


@pytest.mark.parametrize("use_async", [False, True])
async def test_toolnode_wrap_tool_call_guards_a_plain_langgraph_graph(
    use_async: bool, tpguard_spans: SpanCapture
) -> None:
    """docs/langchain.md, "Plain LangGraph graphs": the same hooks on ``ToolNode`` block the
    forbidden call (the tool never runs, the model reads a value-free refusal) and pass the
    authorized one."""
    received: list[tuple[str, dict[str, Any]]] = []
    model = ScriptedChatModel([
        [{"name": "handoff", "args": {"summary": f"call {PHONE}"}, "id": "h1"}],
        [{"name": "notify", "args": {"phone": PHONE, "message": "ready"}, "id": "n1"}],
        "done",
    ])
    mw = PurposeBoundMiddleware(guard(tpguard_spans, "enforce"), tools=TOOLS)
    app = plain_graph(model, make_tools(received), mw)
    await app.ainvoke(USER) if use_async else app.invoke(USER)
    assert received == [("notify", {"phone": PHONE, "message": "ready"})]
    refusal = next(m for m in model.seen[1] if isinstance(m, ToolMessage))
    assert refusal.status == "error" and refusal.tool_call_id == "h1"
    assert PHONE not in str(refusal.content) and "tpguard" in str(refusal.content).lower()
    assert [s.attributes["tpguard.decision"] for s in tpguard_spans.tool_spans("handoff")] == ["block"]
    assert [s.attributes["tpguard.decision"] for s in tpguard_spans.tool_spans("notify")] == ["allow"]


def test_plain_graph_rewrites_the_blocked_call_through_before_model(
    tpguard_spans: SpanCapture
) -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    model = ScriptedChatModel([
        [{"name": "handoff", "args": {"summary": f"call {PHONE}"}, "id": "h1"}], "done"])
    mw = PurposeBoundMiddleware(guard(tpguard_spans, "enforce"), tools=TOOLS)
    final = plain_graph(model, make_tools(received), mw, rewrite=True).invoke(USER)
    # what the model read on its second turn, and what the state keeps: the placeholder call only
    for messages in (model.seen[1], final["messages"]):
        call = next(m for m in messages if getattr(m, "tool_calls", None)).tool_calls[0]
        assert PHONE not in json.dumps(call["args"]) and "[PHONE_1]" in call["args"]["summary"]
    assert received == []
