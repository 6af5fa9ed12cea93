"""The transport-free MCP core: a real SDK client and a real FastMCP server, in process."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp_fixtures import NAME, PHONE, PICKUP, POLICY, RECORD, guarded, policy, upstream

from tpguard import Guard
from tpguard.adapters import _mcp_session
from tpguard.adapters.mcp import META_KEY, REFUSAL_ERROR_CODE, ToolCatalog
from tpguard.testing import SpanCapture

TRACEPARENT = f"00-{0xABC:032x}-{0xDEF:016x}-01"  # the client's trace context, in params._meta
LEAKY = {"summary": f"{NAME} ({PHONE}) can collect {PICKUP}.", "pickup_id": PICKUP}


def _text(result: Any) -> str:
    return "".join(p.text for p in result.content if p.type == "text")


async def test_tools_are_listed_and_their_schemas_learned() -> None:
    guard = Guard(POLICY, mode="enforce")
    catalog = ToolCatalog(guard)
    async with guarded(guard, upstream([]), catalog) as (client, _):
        tools = {t.name for t in (await client.list_tools()).tools}
    assert {"team_handoff", "visit_summary", "broken"} <= tools
    spec = catalog.resolve("team_handoff").spec
    assert spec.sink == "handoff" and spec.free_text == ("summary", "work_notes")  # the policy's
    assert spec.description == "Hand the case to the pharmacy team."  # learned from tools/list
    assert spec.input_schema is not None and set(spec.input_schema["properties"]) == {"summary", "pickup_id"}
    unknown = catalog.resolve("broken")
    assert not unknown.known and unknown.spec.sink == "external"


async def test_audit_passes_calls_and_results_unchanged() -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    guard = Guard(POLICY, mode="audit")
    async with guarded(guard, upstream(received)) as (client, _):
        result = await client.call_tool("team_handoff", LEAKY)
    assert received == [("team_handoff", LEAKY)]
    assert not result.isError and _text(result) == f"Handoff queued for pickup {PICKUP}."
    assert result.meta is None


async def test_enforce_refuses_a_forbidden_call_and_the_upstream_gets_nothing(caplog: pytest.LogCaptureFixture) -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    guard = Guard(POLICY, mode="enforce")
    caplog.set_level(logging.DEBUG)
    async with guarded(guard, upstream(received)) as (client, _):
        refused = await client.call_tool("team_handoff", LEAKY)
        allowed = await client.call_tool("team_handoff", {"summary": f"Pickup {PICKUP} is ready.",
                                                          "pickup_id": PICKUP})
    assert refused.isError
    marker = (refused.meta or {})[META_KEY]
    assert marker["action"] == "block" and marker["stage"] == "request" and marker["reason"] == "policy"
    assert marker["atom_types"] == ["person_name", "phone"] and marker["fields"] == ["summary"]
    shown = _text(refused) + json.dumps(refused.meta) + caplog.text
    assert NAME not in shown and PHONE not in shown and "person_name" in _text(refused)
    assert received == [("team_handoff", {"summary": f"Pickup {PICKUP} is ready.", "pickup_id": PICKUP})]
    assert not allowed.isError


async def test_redact_forwards_typed_placeholders() -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    guard = Guard(POLICY, mode="redact")
    async with guarded(guard, upstream(received)) as (client, _):
        result = await client.call_tool("team_handoff", LEAKY)
    assert not result.isError
    (_tool, args), = received
    assert args["summary"] == f"[PERSON_NAME_1] ([PHONE_1]) can collect {PICKUP}."
    assert args["pickup_id"] == PICKUP
    assert result.meta == {META_KEY: {"action": "redact", "stage": "request", "mode": "redact"}}


async def test_upstream_errors_pass_as_they_are() -> None:
    guard = Guard(POLICY, mode="enforce")
    async with guarded(guard, upstream([])) as (client, _):
        failed = await client.call_tool("broken", {"note": "hello"})
        missing = await client.call_tool("no_such_tool", {})
    assert failed.isError and "the backend is down" in _text(failed) and failed.meta is None
    assert missing.isError and "Unknown tool" in _text(missing) and missing.meta is None


async def test_an_unknown_tool_is_checked_as_external_and_may_be_hidden() -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    guard = Guard(POLICY, mode="enforce")
    async with guarded(guard, upstream(received), ToolCatalog(guard, hide_unknown=True)) as (client, _):
        tools = {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool("broken", {"note": "nothing private"})
    assert "broken" not in tools and "team_handoff" in tools
    assert refused.isError and refused.meta[META_KEY]["reason"] == "unknown_tool_hidden"  # type: ignore[index]
    assert received == []
    # not hidden: the unknown tool is an external sink, so a registered atom is forbidden there
    async with guarded(guard, upstream(received)) as (client, _):
        leaky = await client.call_tool("broken", {"note": f"call {PHONE}"})
    assert leaky.isError and leaky.meta[META_KEY]["atom_types"] == ["phone"]  # type: ignore[index]
    assert received == []


@pytest.mark.parametrize("mode", ["audit", "enforce"])
async def test_a_tool_whose_description_changes_is_a_rug_pull(mode: str, caplog: pytest.LogCaptureFixture) -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    cap = SpanCapture()
    guard = Guard(POLICY, mode=mode, tracer_provider=cap.provider)  # type: ignore[arg-type]
    catalog = ToolCatalog(guard)
    harmless = {"summary": f"Pickup {PICKUP} is ready.", "pickup_id": PICKUP}
    async with guarded(guard, upstream(received), catalog) as (client, _):
        await client.list_tools()
        await client.call_tool("change_handoff", {})
        with anyio.fail_after(5):  # the proxy re-lists on notifications/tools/list_changed by itself
            while "team_handoff" not in catalog.changed:
                await anyio.sleep(0.01)
        result = await client.call_tool("team_handoff", harmless)
    assert "MCP tool team_handoff of upstream changed its description or schema" in caplog.text
    span = cap.tool_spans("team_handoff")[-1]
    assert span.attributes["tpguard.mcp.tool_changed"] is True  # type: ignore[index]
    assert span.attributes.get("tpguard.mcp.refusal") == (None if mode == "audit" else "tool_changed")  # type: ignore[union-attr]
    if mode == "audit":
        assert not result.isError and ("team_handoff", harmless) in received
    else:
        assert result.isError and result.meta[META_KEY]["reason"] == "tool_changed"  # type: ignore[index]
        assert "rug pull" in _text(result)
        assert not any(name == "team_handoff" for name, _ in received)


def _scoped(mode: str) -> Guard:
    scope = {"atoms": ["pickup_id", "workflow_status"]}
    kb = policy(visit_summary={"purpose": "check the pickup", "sink": "record", "scope": scope},
                visit_json={"purpose": "check the pickup", "sink": "record", "scope": scope},
                **{"resources/read": {"purpose": "check the pickup", "sink": "record", "scope": scope}})
    return Guard(kb, mode=mode)  # type: ignore[arg-type]


async def test_results_pass_the_result_stage_text_and_structured() -> None:
    async with guarded(_scoped("redact"), upstream([])) as (client, _):
        text = await client.call_tool("visit_summary", {"visit_id": "V-1"})
        structured = await client.call_tool("visit_json", {"visit_id": "V-1"})
    shown = _text(text)
    assert PICKUP in shown and NAME not in shown and PHONE not in shown and "[PERSON_NAME_1]" in shown
    assert text.meta[META_KEY] == {"action": "redact", "stage": "result", "mode": "redact"}  # type: ignore[index]
    assert structured.structuredContent is not None
    dumped = json.dumps(structured.structuredContent) + _text(structured)
    assert NAME not in dumped and PHONE not in dumped and PICKUP in dumped
    async with guarded(_scoped("enforce"), upstream([])) as (client, _):
        withheld = await client.call_tool("visit_summary", {"visit_id": "V-1"})
    assert withheld.isError and withheld.meta[META_KEY]["stage"] == "result"  # type: ignore[index]
    assert NAME not in _text(withheld) and PHONE not in _text(withheld)


async def test_resources_read_passes_the_result_stage() -> None:
    from mcp.shared.exceptions import McpError

    async with guarded(_scoped("redact"), upstream([])) as (client, _):
        read = await client.read_resource("visit://V-1")  # type: ignore[arg-type]
    text = read.contents[0].text  # type: ignore[union-attr]
    assert PICKUP in text and NAME not in text and PHONE not in text
    async with guarded(_scoped("enforce"), upstream([])) as (client, _):
        with pytest.raises(McpError) as refused:
            await client.read_resource("visit://V-1")  # type: ignore[arg-type]
    assert refused.value.error.code == REFUSAL_ERROR_CODE
    assert NAME not in str(refused.value) and refused.value.error.data["stage"] == "result"


@pytest.mark.parametrize("mode", ["audit", "enforce"])
async def test_an_internal_error_fails_closed_in_enforce_and_open_in_audit(
        mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(_mcp_session, "filter_call_result", boom)
    received: list[tuple[str, dict[str, Any]]] = []
    async with guarded(Guard(POLICY, mode=mode), upstream(received)) as (client, _):  # type: ignore[arg-type]
        result = await client.call_tool("visit_summary", {"visit_id": "V-1"})
    if mode == "audit":
        assert not result.isError and NAME in _text(result)
    else:
        assert result.isError and result.meta[META_KEY]["reason"] == "error"  # type: ignore[index]
        assert NAME not in _text(result) and "RuntimeError" in _text(result)


async def test_the_guard_span_nests_under_the_mcp_server_span() -> None:
    cap = SpanCapture()
    guard = Guard(POLICY, mode="enforce", tracer_provider=cap.provider)
    async with guarded(guard, upstream([]), tracer_provider=cap.provider) as (client, _proxy):
        await client.call_tool("team_handoff", LEAKY, meta={"traceparent": TRACEPARENT})
    server = next(s for s in cap.spans if s.name == "tools/call team_handoff")
    assert server.context.trace_id == 0xABC and server.parent is not None and server.parent.span_id == 0xDEF
    tool = cap.tool_spans("team_handoff")[0]
    assert server.attributes["mcp.method.name"] == "tools/call"  # type: ignore[index]
    assert tool.parent is not None and tool.parent.span_id == server.context.span_id
    assert tool.attributes["tpguard.decision"] == "block"  # type: ignore[index]
    assert tool.attributes["gen_ai.tool.call.id"] == "1"  # type: ignore[index]  # the JSON-RPC id


async def test_one_guard_session_per_mcp_session_carries_taint() -> None:
    """Atoms given to the session are guarded like the policy's, for this session only."""
    from tpguard import PrivateAtom

    member = PrivateAtom(id="member", type="member_id", value="MBR-55120")
    received: list[tuple[str, dict[str, Any]]] = []
    guard = Guard(POLICY, mode="enforce")
    args = {"summary": "Member MBR-55120 is waiting.", "pickup_id": PICKUP}
    async with guarded(guard, upstream(received), atoms=[member]) as (client, _proxy):
        refused = await client.call_tool("team_handoff", args)
    assert refused.isError and refused.meta[META_KEY]["atom_types"] == ["member_id"]  # type: ignore[index]
    async with guarded(guard, upstream(received)) as (client, _):
        passed = await client.call_tool("team_handoff", args)
    assert not passed.isError and received == [("team_handoff", args)]


async def test_server_requests_and_progress_pass_through_a_guarded_call() -> None:
    """Sampling requests the server sends mid-call, the client's replies and progress notifications
    cross the proxy unchanged (the proxy is transparent to what it does not guard)."""
    from mcp.types import CreateMessageResult, TextContent

    asked: list[str] = []
    progress: list[float] = []

    async def sampling(_ctx: Any, params: Any) -> CreateMessageResult:
        asked.append(params.messages[0].content.text)
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="fine"), model="m")

    async def on_progress(done: float, total: float | None, _message: str | None) -> None:
        progress.append(done)

    guard = Guard(POLICY, mode="enforce")
    async with guarded(guard, upstream([]), client_options={"sampling_callback": sampling}) as (client, _):
        result = await client.call_tool("ask_the_model", {"question": "how is it going?"},
                                        progress_callback=on_progress)
    assert not result.isError and _text(result) == "the model said: fine"
    assert asked == ["how is it going?"] and progress == [1, 2]


async def test_a_cancelled_call_is_cancelled_upstream_and_the_session_goes_on() -> None:
    from mcp.shared.exceptions import McpError
    from mcp.types import CancelledNotification, CancelledNotificationParams, ClientNotification

    received: list[tuple[str, dict[str, Any]]] = []
    guard = Guard(POLICY, mode="enforce")
    outcome: list[str] = []
    async with guarded(guard, upstream(received)) as (client, proxy):
        async def call() -> None:
            try:
                await client.call_tool("slow", {"note": "hello"})
                outcome.append("returned")
            except McpError as e:
                outcome.append(e.error.message)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                while not received:  # the call reached the server
                    await anyio.sleep(0.01)
                await client.send_notification(ClientNotification(CancelledNotification(
                    params=CancelledNotificationParams(requestId=1, reason="user"))))
            after = await client.call_tool("team_handoff", {"summary": "ready", "pickup_id": PICKUP})
        assert proxy._calls == {} and proxy._waiters == {}
    assert outcome == ["Request cancelled"]  # the server's answer to the cancellation, forwarded
    assert ("slow finished", {}) not in received and not after.isError


def _erring_upstream() -> Any:
    """The healthcare server, but every ``tools/call`` and ``resources/read`` answers a JSON-RPC
    error whose message and data quote the visit record (as some servers' errors quote what the
    tool read)."""
    from mcp.shared.exceptions import McpError
    from mcp.types import CallToolRequest, ErrorData, ReadResourceRequest

    server = upstream([])

    async def fail(_request: Any) -> Any:
        raise McpError(ErrorData(code=-32000, message=f"lookup failed: {RECORD}", data={"record": RECORD}))

    server._mcp_server.request_handlers[CallToolRequest] = fail
    server._mcp_server.request_handlers[ReadResourceRequest] = fail
    return server


async def test_an_upstream_jsonrpc_error_passes_the_result_stage() -> None:
    from mcp.shared.exceptions import McpError

    async with guarded(_scoped("enforce"), _erring_upstream()) as (client, _):
        withheld = await client.call_tool("visit_summary", {"visit_id": "V-1"})
        with pytest.raises(McpError) as read:
            await client.read_resource("visit://V-1")  # type: ignore[arg-type]
    assert withheld.isError and withheld.meta[META_KEY]["stage"] == "result"  # type: ignore[index]
    assert NAME not in _text(withheld) + json.dumps(withheld.meta)
    assert read.value.error.code == REFUSAL_ERROR_CODE and NAME not in str(read.value.error.model_dump())
    async with guarded(_scoped("redact"), _erring_upstream()) as (client, _):
        with pytest.raises(McpError) as filtered:
            await client.call_tool("visit_summary", {"visit_id": "V-1"})
    shown = json.dumps(filtered.value.error.model_dump())
    assert filtered.value.error.code == -32000 and PICKUP in shown
    assert NAME not in shown and PHONE not in shown and "[PERSON_NAME_1]" in shown
    cap = SpanCapture()
    audit = Guard(_scoped("audit").policy, mode="audit", tracer_provider=cap.provider)
    async with guarded(audit, _erring_upstream()) as (client, _):
        with pytest.raises(McpError) as passed:
            await client.call_tool("visit_summary", {"visit_id": "V-1"})
    assert passed.value.error.message == f"lookup failed: {RECORD}"  # audit: unchanged, recorded
    assert "tpguard.result.decision" in (cap.tool_spans("visit_summary")[0].attributes or {})


async def test_audit_returns_the_upstream_answer_when_the_guard_fails_after_forwarding(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def boom(*_: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(_mcp_session.GuardedMCPSession, "_filtered", boom)
    cap = SpanCapture()
    received: list[tuple[str, dict[str, Any]]] = []
    async with guarded(Guard(POLICY, mode="audit", tracer_provider=cap.provider), upstream(received)) as (client, _):
        result = await client.call_tool("visit_summary", {"visit_id": "V-1"})
    assert received == [("visit_summary", {"visit_id": "V-1"})]  # forwarded once, not twice
    assert not result.isError and _text(result) == RECORD and result.meta is None
    assert cap.tool_spans("visit_summary")[0].attributes["error.type"] == "RuntimeError"  # type: ignore[index]
    assert "internal error (RuntimeError)" in caplog.text and NAME not in caplog.text
    async with guarded(Guard(POLICY, mode="enforce"), upstream([])) as (client, _):
        refused = await client.call_tool("visit_summary", {"visit_id": "V-1"})
    assert refused.isError and refused.meta[META_KEY]["reason"] == "error"  # type: ignore[index]
    assert NAME not in _text(refused)


@pytest.mark.parametrize("shape", ["json", "result", "apart"])
def test_a_text_part_rendering_the_structure_is_checked_with_it_once(shape: str) -> None:
    """The SDK sends a structured result twice — as ``structuredContent`` and as its JSON text
    (or a plain return as text and ``{"result": text}``). Such a pair is one check, and both parts
    show what that check let through; a text that says something else is checked on its own."""
    from tpguard.adapters._mcp_results import filter_call_result

    record = {"patient": NAME, "phone": PHONE, "pickup": PICKUP}
    structured, text = {
        "json": (record, json.dumps(record, indent=2)),
        "result": ({"result": RECORD}, RECORD),
        "apart": (record, RECORD)}[shape]
    guard = _scoped("redact")
    with guard.intercept("visit_json", {"visit_id": "V-1"}) as call:
        shown = filter_call_result(call, {"content": [{"type": "text", "text": text}],
                                          "structuredContent": structured, "isError": False})
        checks = len(call.results)
    assert checks == (2 if shape == "apart" else 1)
    out_text, out_structured = shown["content"][0]["text"], shown["structuredContent"]
    dumped = out_text + json.dumps(out_structured)
    assert NAME not in dumped and PHONE not in dumped and PICKUP in dumped
    if shape == "json":
        assert json.loads(out_text) == out_structured
    elif shape == "result":
        assert out_structured == {"result": out_text}
