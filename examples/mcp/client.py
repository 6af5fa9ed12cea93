"""An MCP client talking to the example server through `tpguard mcp-proxy` (stdio).

    python examples/mcp/client.py [audit|enforce|redact]

It starts exactly what a desktop client's config would start —
``tpguard mcp-proxy --policy examples/healthcare_policy.yaml --mode MODE -- python
examples/mcp/upstream.py`` — lists the tools, sends one hand-off that carries the patient's name and
phone (the pharmacy team needs neither) and one that does not, and prints what came back and what
the server received.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
POLICY = HERE.parent / "healthcare_policy.yaml"
LEAKY = {"summary": "Maria Gonzalez (415-555-0199) can collect RX-88213.", "pickup_id": "RX-88213"}
CLEAN = {"summary": "Prescription RX-88213 is ready for pickup.", "pickup_id": "RX-88213"}


async def main(mode: str) -> None:
    record = Path(tempfile.mkdtemp()) / "received.jsonl"
    proxy = [sys.executable, "-m", "tpguard.cli", "mcp-proxy", "--policy", str(POLICY), "--mode", mode,
             "--", sys.executable, str(HERE / "upstream.py"), "--record", str(record)]
    params = StdioServerParameters(command=proxy[0], args=proxy[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        tools = await client.list_tools()
        print("tools:", ", ".join(t.name for t in tools.tools))
        for args in (LEAKY, CLEAN):
            result = await client.call_tool("team_handoff", args)
            text = " ".join(p.text for p in result.content if p.type == "text")
            marker = (result.meta or {}).get("tpguard/decision")
            print(f"{'error' if result.isError else 'ok'}: {text}" + (f"  {marker}" if marker else ""))
    received = record.read_text().splitlines() if record.exists() else []
    print("the server received:", [json.loads(line)["arguments"]["summary"] for line in received])


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "enforce")
