"""``tpguard mcp-proxy ... -- python examples/mcp/upstream.py`` end to end over stdio: the official
SDK client starts the proxy, which starts the example server, both as loopback subprocesses."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_fixtures import EXAMPLES, NAME, PHONE, PICKUP, POLICY

from tpguard.adapters.mcp import META_KEY

UPSTREAM = EXAMPLES / "mcp" / "upstream.py"
LEAKY = {"summary": f"{NAME} ({PHONE}) can collect {PICKUP}.", "pickup_id": PICKUP}
CLEAN = {"summary": f"Prescription {PICKUP} is ready for pickup.", "pickup_id": PICKUP}


def proxy_argv(mode: str, *upstream: str, options: tuple[str, ...] = ()) -> list[str]:
    return ["-m", "tpguard.cli", "mcp-proxy", "--policy", str(POLICY), "--mode", mode, *options,
            "--", *upstream]


@asynccontextmanager
async def proxied(mode: str, record: Path, *options: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=proxy_argv(mode, sys.executable, str(UPSTREAM), "--record", str(record), options=options),
        env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


def received(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


def text(result: Any) -> str:
    return "".join(p.text for p in result.content if p.type == "text")


async def test_audit_lists_the_tools_and_passes_calls_unchanged(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    async with proxied("audit", record) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("team_handoff", LEAKY)
    assert {"team_handoff", "notify_patient", "visit_summary"} <= names
    assert not result.isError and result.meta is None
    assert received(record) == [{"tool": "team_handoff", "arguments": {**LEAKY, "work_notes": ""}}]


async def test_enforce_refuses_without_naming_a_value_and_the_upstream_receives_nothing(tmp_path: Path) -> None:
    record, spans = tmp_path / "received.jsonl", tmp_path / "spans.jsonl"
    async with proxied("enforce", record, "--spans", str(spans)) as client:
        refused = await client.call_tool("team_handoff", LEAKY)
        assert received(record) == []
        allowed = await client.call_tool("team_handoff", CLEAN)
    assert refused.isError
    shown = text(refused) + json.dumps(refused.meta)
    assert NAME not in shown and PHONE not in shown
    assert "person_name" in text(refused) and "phone" in text(refused)
    assert refused.meta is not None and refused.meta[META_KEY]["action"] == "block"
    assert not allowed.isError and text(allowed) == f"Handoff queued for pickup {PICKUP}."
    assert received(record) == [{"tool": "team_handoff", "arguments": {**CLEAN, "work_notes": ""}}]
    # the guard's span nests under the proxy's MCP server span; neither carries a value
    written = spans.read_text()
    assert NAME not in written and PHONE not in written
    by_name = {}
    for line in written.splitlines():
        span = json.loads(line)
        by_name.setdefault(span["name"], []).append(span)
    server, tool = by_name["tools/call team_handoff"][0], by_name["execute_tool team_handoff"][0]
    assert server["kind"] == "SERVER" and server["attributes"]["mcp.method.name"] == "tools/call"
    assert tool["parent_span_id"] == server["span_id"] and tool["attributes"]["tpguard.decision"] == "block"


async def test_redact_forwards_typed_placeholders(tmp_path: Path) -> None:
    record, atoms = tmp_path / "received.jsonl", tmp_path / "session.yaml"
    atoms.write_text('atoms:\n  - {id: member, type: member_id, value: "MBR-55120"}\n')
    async with proxied("redact", record, "--session-atoms", str(atoms)) as client:
        result = await client.call_tool("team_handoff", {**LEAKY, "work_notes": "member MBR-55120"})
    assert not result.isError
    (call,) = received(record)
    assert call["arguments"]["summary"] == f"[PERSON_NAME_1] ([PHONE_1]) can collect {PICKUP}."
    assert call["arguments"]["work_notes"] == "member [MEMBER_ID_1]"  # an atom of --session-atoms
    assert NAME not in json.dumps(call) and PHONE not in json.dumps(call)
