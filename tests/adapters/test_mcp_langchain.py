"""MCP tools in a LangChain agent: ``langchain-mcp-adapters`` with :class:`GuardInterceptor`, a real
``create_agent`` loop driven by a scripted model, against an in-process FastMCP server."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_mcp_adapters")

from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp.shared.memory import create_connected_server_and_client_session
from mcp_fixtures import NAME, PHONE, PICKUP, POLICY, upstream

from tpguard import Guard
from tpguard.adapters.mcp import META_KEY, GuardInterceptor
from tpguard.testing.langchain import ScriptedChatModel

LEAKY = {"summary": f"{NAME} ({PHONE}) can collect {PICKUP}.", "pickup_id": PICKUP}
USER = {"messages": [{"role": "user", "content": "Hand the case to the pharmacy."}]}


async def run_agent(mode: str, received: list[tuple[str, dict[str, Any]]]) -> list[ToolMessage]:
    server = upstream(received)
    async with create_connected_server_and_client_session(server._mcp_server) as session:
        tools = await load_mcp_tools(session, tool_interceptors=[GuardInterceptor(Guard(POLICY, mode=mode))])  # type: ignore[arg-type]
        model = ScriptedChatModel(turns=[[{"name": "team_handoff", "args": LEAKY}], "Done."])
        state = await create_agent(model, tools=tools).ainvoke(USER)
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


async def test_enforce_refuses_in_the_agent_loop_and_the_server_receives_nothing() -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    (message,) = await run_agent("enforce", received)
    assert received == []
    assert message.status == "error" and "person_name" in str(message.content)
    assert NAME not in str(message.content) and PHONE not in str(message.content)


async def test_redact_sends_placeholders_through_the_adapters() -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    (message,) = await run_agent("redact", received)
    assert message.status != "error"
    assert received == [("team_handoff", {"summary": f"[PERSON_NAME_1] ([PHONE_1]) can collect {PICKUP}.",
                                          "pickup_id": PICKUP})]


async def test_audit_changes_nothing() -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    await run_agent("audit", received)
    assert received == [("team_handoff", LEAKY)]


async def test_an_error_result_goes_through_the_result_stage() -> None:
    from mcp.types import CallToolResult

    from tpguard.testing import SpanCapture

    spans = SpanCapture()
    interceptor = GuardInterceptor(Guard(POLICY, mode="audit", tracer_provider=spans.provider))  # type: ignore[arg-type]

    class Request:  # what the interceptor reads of langchain-mcp-adapters' MCPToolCallRequest
        name, args = "team_handoff", {"pickup_id": PICKUP}

    async def handler(request: Any) -> CallToolResult:
        return CallToolResult.model_validate(
            {"content": [{"type": "text", "text": f"no pickup for {NAME} at {PHONE}"}], "isError": True})

    out = await interceptor(Request(), handler)
    assert out.isError
    [span] = spans.tool_spans()
    assert "tpguard.result.decision" in (span.attributes or {}), "the error text was read"


@pytest.mark.parametrize("mode", ["audit", "enforce"])
async def test_a_guard_error_fails_closed_or_passes_with_a_record(
        mode: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from mcp.types import CallToolResult

    from tpguard.adapters import _mcp_langchain

    def unreadable(*_: Any) -> Any:
        raise ValueError(f"cannot read {NAME}")

    monkeypatch.setattr(_mcp_langchain, "guarded_result", unreadable)
    interceptor = GuardInterceptor(Guard(POLICY, mode=mode))  # type: ignore[arg-type]
    tool_result = CallToolResult.model_validate({"content": [{"type": "text", "text": f"{NAME} at {PHONE}"}]})

    class Request:  # what the interceptor reads of langchain-mcp-adapters' MCPToolCallRequest
        name, args = "team_handoff", {"pickup_id": PICKUP}

    async def handler(request: Any) -> CallToolResult:
        return tool_result

    out = await interceptor(Request(), handler)
    if mode == "audit":
        assert out is tool_result
    else:
        assert out.isError and out.meta[META_KEY]["reason"] == "error" and "ValueError" in out.content[0].text
        assert NAME not in out.content[0].text
    assert "internal error (ValueError)" in caplog.text and NAME not in caplog.text
