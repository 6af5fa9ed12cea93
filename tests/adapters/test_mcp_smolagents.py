"""smolagents' MCP tools (``ToolCollection.from_mcp``, built on mcpadapt) are ordinary smolagents
tools: ``@purpose_bound`` guards them in a real ``ToolCallingAgent`` loop, no proxy needed. The
server is ``examples/mcp/upstream.py`` as a loopback subprocess."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcpadapt")

from mcp import StdioServerParameters
from mcp_fixtures import NAME, PHONE, PICKUP, POLICY
from smolagents import ToolCallingAgent, ToolCollection
from test_mcp_proxy_stdio import CLEAN, LEAKY, UPSTREAM

from tpguard import Guard, purpose_bound
from tpguard.testing.smolagents import ScriptedSmolModel


def test_mcp_tools_under_purpose_bound_in_a_tool_calling_agent(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    params = StdioServerParameters(command=sys.executable, args=[str(UPSTREAM), "--record", str(record)],
                                   env=dict(os.environ))
    guard = Guard(POLICY, mode="enforce")
    with ToolCollection.from_mcp(params, trust_remote_code=True, structured_output=False) as collection:
        handoff = next(t for t in collection.tools if t.name == "team_handoff")
        guarded = purpose_bound(purpose="hand the case to the pharmacy team", sink="handoff",
                                free_text=["summary", "work_notes"], guard=guard)(handoff)
        assert guarded.name == "team_handoff" and guarded.inputs == handoff.inputs
        model = ScriptedSmolModel([[{"name": "team_handoff", "arguments": {**LEAKY, "work_notes": ""}}],
                                   [{"name": "team_handoff", "arguments": {**CLEAN, "work_notes": ""}}],
                                   "Done."])
        agent = ToolCallingAgent(tools=[guarded], model=model, max_steps=4)
        agent.run("Hand the case to the pharmacy.")
    sent = [json.loads(line)["arguments"]["summary"] for line in record.read_text().splitlines()]
    assert sent == [CLEAN["summary"]]  # the leaky call never reached the server
    refusal = next(m["content"] for m in model.seen[-1] if "tpguard withheld" in m["content"])
    assert "person_name" in refusal and NAME not in refusal and PHONE not in refusal
    assert any(f"Handoff queued for pickup {PICKUP}" in m["content"] for m in model.seen[-1])
