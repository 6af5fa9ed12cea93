"""``tpguard mcp-proxy`` over streamable HTTP on loopback: ``--listen`` (the client side) and
``--upstream URL`` (the server side), with the official SDK client and the example server."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_fixtures import NAME, PHONE, PICKUP, POLICY
from test_mcp_proxy_stdio import CLEAN, LEAKY, UPSTREAM, received, text

from tpguard.adapters.mcp import META_KEY


@contextmanager
def serving(*argv: str) -> Iterator[str]:
    """Run ``python argv…`` until it prints ``listening on URL`` on stderr; yield the URL."""
    proc = subprocess.Popen([sys.executable, *argv], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if "listening on " in line:
                yield line.split("listening on ", 1)[1].strip()
                return
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


def proxy(mode: str, *rest: str) -> tuple[str, ...]:
    return ("-m", "tpguard.cli", "mcp-proxy", "--policy", str(POLICY), "--mode", mode,
            "--listen", "127.0.0.1:0", *rest)


@asynccontextmanager
async def client(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def test_enforce_over_http_refuses_and_the_upstream_receives_nothing(tmp_path: Path) -> None:
    record, spans = tmp_path / "received.jsonl", tmp_path / "spans.jsonl"
    argv = proxy("enforce", "--spans", str(spans), "--", sys.executable, str(UPSTREAM), "--record", str(record))
    with serving(*argv) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        async with client(url) as session:
            names = {t.name for t in (await session.list_tools()).tools}
            refused = await session.call_tool("team_handoff", LEAKY)
            assert received(record) == []
            allowed = await session.call_tool("team_handoff", CLEAN)
    assert "team_handoff" in names
    assert refused.isError and refused.meta is not None and refused.meta[META_KEY]["action"] == "block"
    assert NAME not in text(refused) + json.dumps(refused.meta) and PHONE not in text(refused)
    assert not allowed.isError
    assert received(record) == [{"tool": "team_handoff", "arguments": {**CLEAN, "work_notes": ""}}]
    server_spans = [json.loads(line) for line in spans.read_text().splitlines()
                    if json.loads(line)["name"] == "tools/call team_handoff"]
    session_ids = {span["attributes"].get("mcp.session.id") for span in server_spans}
    assert len(server_spans) == 2 and len(session_ids) == 1 and None not in session_ids  # the Mcp-Session-Id


async def test_redact_over_http_forwards_placeholders(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    with serving(*proxy("redact", "--", sys.executable, str(UPSTREAM), "--record", str(record))) as url:
        async with client(url) as session:
            result = await session.call_tool("team_handoff", LEAKY)
    assert not result.isError
    (call,) = received(record)
    assert call["arguments"]["summary"] == f"[PERSON_NAME_1] ([PHONE_1]) can collect {PICKUP}."


async def test_audit_from_an_http_upstream_to_an_http_client_passes_calls_unchanged(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    with serving(str(UPSTREAM), "--http", "127.0.0.1:0", "--record", str(record)) as upstream_url, \
            serving(*proxy("audit", "--upstream", upstream_url)) as url:
        async with client(url) as session:
            result = await session.call_tool("team_handoff", LEAKY)
    assert not result.isError and result.meta is None
    assert received(record) == [{"tool": "team_handoff", "arguments": {**LEAKY, "work_notes": ""}}]


async def test_sessions_are_bounded_and_expire_when_idle(tmp_path: Path) -> None:
    argv = proxy("enforce", "--max-sessions", "1", "--idle-timeout", "1", "--", sys.executable, str(UPSTREAM))
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with serving(*argv) as url:
        async with httpx.AsyncClient(timeout=30) as http:
            first = await http.post(url, json=initialize, headers=headers)
            assert first.status_code == 200
            session_id = first.headers["mcp-session-id"]
            second = await http.post(url, json=initialize, headers=headers)
            assert second.status_code == 503  # one session open already
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            session = {**headers, "mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"}
            assert (await http.post(url, json=ping, headers=session)).status_code == 200
            await anyio.sleep(2.5)  # idle for longer than --idle-timeout: the session ends
            status = (await http.post(url, json=ping, headers=session)).status_code
            assert status == 404
            third = await http.post(url, json=initialize, headers=headers)
            assert third.status_code == 200  # room again
