"""``@purpose_bound`` / ``guard_tool`` on LangChain tools: what is kept, what is checked, and how.

Covers: name/description/args_schema preserved; validated (coerced) arguments are what the guard
sees; injected arguments (ToolRuntime, InjectedState, InjectedToolCallId) filtered; custom
``BaseTool`` subclasses (``_run``/``_arun``); async; ``ToolNode`` directly; parallel tool calls in
one turn with a ``guard.session`` bound around the run; the tool's own errors kept as they were.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, ToolNode, ToolRuntime
from pydantic import BaseModel, Field

from tpguard import Guard, PolicyKB, PrivateAtom, purpose_bound
from tpguard.adapters.langchain import ToolCallWithheld, guard_tool
from tpguard.testing import SpanCapture

PHONE = "415-555-0199"
POLICY = {
    "atoms": [{"id": "phone", "type": "phone", "value": PHONE},
              {"id": "symptom", "type": "medical", "value": "chest tightness"}],
    "authorizations": [{"atom": "phone", "tool": "notify", "allow": True}],
}
HANDOFF = {"purpose": "hand the case to the pharmacy team", "sink": "handoff", "free_text": ["summary"]}


def guard(spans: SpanCapture, mode: str = "enforce", policy: dict[str, Any] = POLICY) -> Guard:
    return Guard(PolicyKB.from_dict(policy), mode=mode,  # type: ignore[arg-type]
                 tracer_provider=spans.provider, record_arguments="redacted")


def call(name: str, args: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    return {"type": "tool_call", "name": name, "args": args, "id": call_id}


def tool_graph(node: ToolNode) -> Any:
    """LangGraph's ``ToolNode`` as the only node of a graph (it needs the graph runtime)."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", node)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def tool_messages(out: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def test_name_description_schema_and_class_preserved(tpguard_spans: SpanCapture) -> None:
    @tool
    def handoff(summary: str, priority: int = 1) -> str:
        """Hand the case over."""
        return "ok"

    g = guard(tpguard_spans)
    guarded = purpose_bound(handoff, guard=g, **HANDOFF)
    assert guarded is not handoff and isinstance(guarded, StructuredTool)
    assert (guarded.name, guarded.description) == (handoff.name, handoff.description)
    assert guarded.args_schema is handoff.args_schema
    assert guarded.tool_call_schema.model_json_schema() == handoff.tool_call_schema.model_json_schema()
    spec = g.tool_spec("handoff")
    assert spec.purpose == HANDOFF["purpose"] and spec.free_text == ("summary",)
    assert spec.input_schema is not None and set(spec.input_schema["properties"]) == {"summary", "priority"}
    # The original stays unguarded.
    assert handoff.invoke({"summary": f"call {PHONE}"}) == "ok"
    assert tpguard_spans.tool_spans() == []


def test_guard_sees_validated_arguments(tpguard_spans: SpanCapture) -> None:
    class Args(BaseModel):
        summary: str
        phone_digits: int

    received: list[Any] = []

    def fn(summary: str, phone_digits: int) -> str:
        received.append(phone_digits)
        return "ok"

    raw = StructuredTool.from_function(fn, name="handoff", description="d", args_schema=Args)
    policy = {"atoms": [{"id": "ext", "type": "extension", "value": "4417"}]}
    guarded = guard_tool(raw, guard=guard(tpguard_spans, policy=policy), **HANDOFF)
    # The model sent a string; validation made it an int — the guard still finds it, as validated.
    out = guarded.invoke(call("handoff", {"summary": "ok", "phone_digits": "4417"}))
    assert isinstance(out, ToolMessage) and out.status == "error"
    assert received == []
    span = tpguard_spans.tool_spans("handoff")[0]
    assert span.attributes["tpguard.forbidden.fields"] == ("phone_digits",)
    assert json.loads(span.attributes["tpguard.arguments"]) == {"phone_digits": "<extension>",
                                                                 "summary": "ok"}


def test_blocked_direct_invoke_returns_message_and_own_errors_keep_their_setting(
    tpguard_spans: SpanCapture,
) -> None:
    @tool
    def handoff(summary: str) -> str:
        """Hand over."""
        if summary == "boom":
            raise ToolException("backend down")
        return "ok"

    guarded = purpose_bound(handoff, guard=guard(tpguard_spans), **HANDOFF)
    msg = guarded.invoke({"summary": f"call {PHONE}"})
    assert "phone" in msg and PHONE not in msg
    with pytest.raises(ToolException, match="backend down") as err:  # handle_tool_error was False
        guarded.invoke({"summary": "boom"})
    assert not isinstance(err.value, ToolCallWithheld)
    spans = tpguard_spans.tool_spans("handoff")
    assert [s.attributes["tpguard.decision"] for s in spans] == ["block", "allow"]
    assert spans[1].attributes["error.type"] == "ToolException"


def test_injected_arguments_are_filtered_but_still_delivered(tpguard_spans: SpanCapture) -> None:
    seen: dict[str, Any] = {}

    @tool
    def handoff(
        summary: str,
        state: Annotated[dict, InjectedState],
        call_id: Annotated[str, InjectedToolCallId],
        runtime: ToolRuntime,
    ) -> str:
        """Hand over."""
        seen.update(state=state, call_id=call_id, runtime=runtime)
        return "ok"

    guarded = purpose_bound(handoff, guard=guard(tpguard_spans), **HANDOFF)
    node = tool_graph(ToolNode([guarded]))
    # The graph state holds the phone number (the conversation); it must not count as sent.
    state = {"messages": [AIMessage(content=f"phone {PHONE}", tool_calls=[
        call("handoff", {"summary": "ready"}, "c7")])]}
    out = node.invoke(state)
    assert tool_messages(out)[0].status == "success"
    assert seen["call_id"] == "c7" and seen["state"]["messages"] and isinstance(seen["runtime"], ToolRuntime)
    span = tpguard_spans.tool_spans("handoff")[0]
    assert span.attributes["tpguard.decision"] == "allow"
    assert json.loads(span.attributes["tpguard.arguments"]) == {"summary": "ready"}
    assert span.attributes["gen_ai.tool.call.id"] == "c7"
    assert PHONE not in tpguard_spans.dump()


class LookupTool(BaseTool):
    """A custom tool with its own sync and async paths."""

    name: str = "lookup"
    description: str = "Look a case up."
    received: list[tuple[str, str]] = Field(default_factory=list)

    def _run(self, query: str) -> str:
        self.received.append(("sync", query))
        return f"found {query}"

    async def _arun(self, query: str) -> str:
        self.received.append(("async", query))
        return f"found {query}"


async def test_custom_basetool_sync_async_and_redact(tpguard_spans: SpanCapture) -> None:
    original = LookupTool()
    g = guard(tpguard_spans, mode="redact")
    guarded = guard_tool(original, purpose="look up", sink="external", free_text=["query"], guard=g)
    assert isinstance(guarded, LookupTool) and guarded.name == "lookup"
    assert guarded.run(f"patient {PHONE}") == "found patient [PHONE_1]"  # positional string input
    assert await guarded.ainvoke({"query": f"patient {PHONE}"}) == "found patient [PHONE_1]"
    assert guarded.received == [("sync", "patient [PHONE_1]"), ("async", "patient [PHONE_1]")]
    assert [s.attributes["tpguard.decision"] for s in tpguard_spans.tool_spans()] == ["redact"] * 2


async def test_async_tool_blocked_and_allowed(tpguard_spans: SpanCapture) -> None:
    received: list[str] = []

    @tool
    async def handoff(summary: str) -> str:
        """Hand over."""
        received.append(summary)
        return "ok"

    guarded = purpose_bound(handoff, guard=guard(tpguard_spans), **HANDOFF)
    blocked = await guarded.ainvoke(call("handoff", {"summary": f"call {PHONE}"}, "a1"))
    allowed = await guarded.ainvoke(call("handoff", {"summary": "ready"}, "a2"))
    assert (blocked.status, allowed.status) == ("error", "success")
    assert received == ["ready"]
    ids = [s.attributes["gen_ai.tool.call.id"] for s in tpguard_spans.tool_spans()]
    assert ids == ["a1", "a2"]


@pytest.mark.parametrize("use_async", [False, True])
def test_parallel_calls_in_one_turn_see_the_session(
    use_async: bool, tpguard_spans: SpanCapture
) -> None:
    """ToolNode runs the calls of one turn concurrently (sync: in threads, which the barrier
    proves); the session bound around the run reaches every call, and each span gets its own id."""
    threads: set[str] = set()
    barrier = threading.Barrier(2, timeout=5)
    received: list[str] = []

    @tool
    def handoff(summary: str) -> str:
        """Hand over."""
        threads.add(threading.current_thread().name)
        if not use_async:
            barrier.wait()  # both calls are in flight at once
        received.append(summary)
        return "ok"

    g = guard(tpguard_spans, policy={})  # no atoms in the policy: they come with the request
    node = tool_graph(ToolNode([purpose_bound(handoff, guard=g, **HANDOFF)]))
    turn = AIMessage(content="", tool_calls=[call("handoff", {"summary": "member M-77 ready"}, "p1"),
                                             call("handoff", {"summary": "all clear"}, "p2"),
                                             call("handoff", {"summary": "all set"}, "p3")])
    with g.session([PrivateAtom(id="member", type="member_id", value="M-77")], session_id="req-1"):
        if use_async:
            out = asyncio.run(node.ainvoke({"messages": [turn]}))
        else:
            out = node.invoke({"messages": [turn]})
    by_id = {m.tool_call_id: m for m in tool_messages(out)}
    assert [by_id[i].status for i in ("p1", "p2", "p3")] == ["error", "success", "success"]
    assert "member_id" in by_id["p1"].content
    assert sorted(received) == ["all clear", "all set"]
    if not use_async:
        assert len(threads) == 2
    spans = {s.attributes["gen_ai.tool.call.id"]: s for s in tpguard_spans.tool_spans()}
    assert spans["p1"].attributes["tpguard.decision"] == "block"
    assert spans["p2"].attributes["tpguard.decision"] == spans["p3"].attributes["tpguard.decision"]
    assert spans["p3"].attributes["tpguard.decision"] == "allow"
    assert {s.attributes["tpguard.session.id"] for s in spans.values()} == {"req-1"}
    assert "M-77" not in tpguard_spans.dump()


def test_renaming_and_rewrapping(tpguard_spans: SpanCapture) -> None:
    @tool
    def send(summary: str) -> str:
        """Send."""
        return "sent"

    audit, enforce = guard(tpguard_spans, mode="audit"), guard(tpguard_spans)
    once = purpose_bound(send, guard=audit, name="team_handoff", **HANDOFF)
    twice = purpose_bound(once, guard=enforce, **HANDOFF)
    assert once.name == twice.name == "team_handoff"
    assert twice.invoke({"summary": "ready"}) == "sent"
    assert "phone" in twice.invoke({"summary": f"call {PHONE}"})
    # Both guards checked each call; the inner (audit) one never saw the blocked call.
    decisions = [s.attributes["tpguard.mode"] + ":" + s.attributes["tpguard.decision"]
                 for s in tpguard_spans.tool_spans("team_handoff")]
    assert sorted(decisions) == ["audit:allow", "enforce:allow", "enforce:block"]


class ConfigTool(BaseTool):
    """A custom tool whose ``_run`` asks LangChain for the run's config (a string annotation
    here: this module uses ``from __future__ import annotations``)."""

    name: str = "configured"
    description: str = "Reads its run config."
    seen: list[Any] = Field(default_factory=list)

    def _run(self, query: str, config: RunnableConfig) -> str:
        self.seen.append(config.get("metadata", {}).get("ticket"))
        return f"ok {query}"


def test_runnable_config_still_delivered_and_annotations_evaluated_once(
    tpguard_spans: SpanCapture,
) -> None:
    original = ConfigTool()
    assert isinstance(ConfigTool._run.__annotations__["config"], str)  # what LangChain would compile
    guarded = guard_tool(original, purpose="look up", sink="external", free_text=["query"],
                         guard=guard(tpguard_spans))
    # LangChain finds the RunnableConfig parameter through get_type_hints on every call; the
    # wrapper carries the evaluated annotations, so nothing is compiled per call.
    hints = type(guarded)._run.__annotations__
    assert hints["config"] is RunnableConfig and not any(isinstance(v, str) for v in hints.values())
    assert guarded.invoke({"query": "case 7"}, config={"metadata": {"ticket": "T-1"}}) == "ok case 7"
    assert original.seen == ["T-1"]
    assert "withheld" in guarded.invoke({"query": f"call {PHONE}"})  # still guarded
    assert original.seen == ["T-1"]
