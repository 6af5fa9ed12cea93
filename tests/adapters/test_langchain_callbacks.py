"""``TpguardCallbackHandler``: observe-only spans for any Runnable / graph that takes callbacks."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException, tool

from tpguard import Guard, PolicyKB
from tpguard.adapters.langchain import TpguardCallbackHandler
from tpguard.testing import SpanCapture
from tpguard.testing.langchain import ScriptedChatModel

PHONE = "415-555-0199"
POLICY = {"atoms": [{"id": "phone", "type": "phone", "value": PHONE}],
          "authorizations": [{"atom": "phone", "tool": "notify", "allow": True}]}
TOOLS = {"handoff": {"purpose": "hand over", "sink": "handoff", "free_text": ["summary"]},
         "notify": {"purpose": "tell the patient", "sink": "notification"}}


def make_tools(received: list[str]) -> list[Any]:
    @tool
    def handoff(summary: str) -> str:
        """Hand over."""
        received.append(summary)
        if summary == "boom":
            raise ValueError(f"backend rejected {summary}")
        return "ok"

    @tool
    def notify(phone: str) -> str:
        """Text the patient."""
        received.append(phone)
        return "sent"

    return [handoff, notify]


@pytest.mark.parametrize("use_async", [False, True])
async def test_observes_without_changing_anything(
    use_async: bool, tpguard_spans: SpanCapture, caplog: pytest.LogCaptureFixture
) -> None:
    received: list[str] = []
    # Even an enforce-mode guard cannot block through a callback: the handler only records, in
    # audit mode, so its spans never claim a block that did not happen.
    handler = TpguardCallbackHandler(
        Guard(PolicyKB.from_dict(POLICY), mode="enforce", tracer_provider=tpguard_spans.provider),
        tools=TOOLS)
    model = ScriptedChatModel([[{"name": "handoff", "args": {"summary": f"call {PHONE}"}, "id": "h1"},
                                {"name": "notify", "args": {"phone": PHONE}, "id": "n1"}], "done"])
    agent = create_agent(model, tools=make_tools(received))
    config = {"callbacks": [handler]}
    if use_async:
        result = await agent.ainvoke({"messages": [("user", "go")]}, config=config)
    else:
        result = agent.invoke({"messages": [("user", "go")]}, config=config)
    assert sorted(received) == sorted([f"call {PHONE}", PHONE])  # nothing withheld
    assert all(m.status == "success" for m in result["messages"] if isinstance(m, ToolMessage))
    spans = {s.attributes["gen_ai.tool.call.id"]: s for s in tpguard_spans.tool_spans()}
    assert set(spans) == {"h1", "n1"}  # one span per call, each ended
    assert spans["h1"].attributes["tpguard.decision"] == "allow"  # it ran: audit, not block
    assert spans["h1"].attributes["tpguard.mode"] == "audit"
    assert list(spans["h1"].attributes["tpguard.forbidden.atom_types"]) == ["phone"]
    assert spans["h1"].attributes["tpguard.sink"] == "handoff"
    assert spans["n1"].attributes["tpguard.decision"] == "allow"
    assert [d.tool for d in handler.decisions] and not handler._open
    assert PHONE not in tpguard_spans.dump()


def test_tool_error_ends_the_span_with_its_type(tpguard_spans: SpanCapture) -> None:
    received: list[str] = []
    handoff = make_tools(received)[0]
    handler = TpguardCallbackHandler(
        Guard(PolicyKB.from_dict(POLICY), mode="audit", tracer_provider=tpguard_spans.provider))
    with pytest.raises(ValueError, match="backend rejected"):
        handoff.invoke({"summary": "boom"}, config={"callbacks": [handler]})
    [span] = tpguard_spans.tool_spans("handoff")
    assert span.attributes["error.type"] == "ValueError"
    assert span.attributes["tpguard.sink"] == "external"  # not listed, unknown to the guard
    assert "backend rejected" not in tpguard_spans.dump()
    assert not handler._open


def test_tool_exception_handled_by_the_tool_still_ends_the_span(tpguard_spans: SpanCapture) -> None:
    @tool
    def flaky(x: str) -> str:
        """Fail politely."""
        raise ToolException("try later")

    flaky.handle_tool_error = True
    handler = TpguardCallbackHandler(
        Guard(PolicyKB.from_dict(POLICY), mode="audit", tracer_provider=tpguard_spans.provider))
    assert flaky.invoke({"x": "a"}, config={"callbacks": [handler]}) == "try later"
    assert len(tpguard_spans.tool_spans("flaky")) == 1 and not handler._open
