"""An MCP server with the healthcare example's tools — the server tpguard's MCP proxy guards.

It records every call it receives (tool name and arguments, one JSON line each) to the file named
by ``--record`` (or ``$TPGUARD_MCP_RECORD``), so you can see what reached it — nothing, the
arguments unchanged, or placeholders. Values in it are fabricated.

    python examples/mcp/upstream.py                      # stdio (what a client or the proxy starts)
    python examples/mcp/upstream.py --http 127.0.0.1:0   # streamable HTTP; prints its URL on stderr

Guarded (docs/mcp.md)::

    tpguard mcp-proxy --policy examples/healthcare_policy.yaml --mode enforce -- \\
        python examples/mcp/upstream.py --record received.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from mcp.server.fastmcp import FastMCP

server = FastMCP("healthcare", log_level="WARNING")
_record: str | None = os.environ.get("TPGUARD_MCP_RECORD")


def _received(tool: str, arguments: dict[str, Any]) -> None:
    if _record:
        with open(_record, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def team_handoff(summary: str, pickup_id: str = "", work_notes: str = "") -> str:
    """Hand the case to the pharmacy team."""
    _received("team_handoff", {"summary": summary, "pickup_id": pickup_id, "work_notes": work_notes})
    return f"Handoff queued for pickup {pickup_id or '(none)'}."


@server.tool()
def notify_patient(message: str) -> str:
    """Tell the patient the next step."""
    _received("notify_patient", {"message": message})
    return "Notification sent."


@server.tool()
def visit_summary(visit_id: str) -> str:
    """Read the visit record (it names the patient and their phone)."""
    _received("visit_summary", {"visit_id": visit_id})
    return ("Visit V-1: Maria Gonzalez, phone 415-555-0199, prescription RX-88213 is "
            "ready for pickup.")


@server.resource("visit://{visit_id}")
def visit_record(visit_id: str) -> str:
    """The visit record as a resource."""
    _received("visit_record", {"visit_id": visit_id})
    return "Visit V-1: Maria Gonzalez, phone 415-555-0199, prescription RX-88213."


def _serve_http(address: str) -> None:
    import socket

    import uvicorn

    host, _, port = address.rpartition(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host or "127.0.0.1", int(port)))
    sock.listen(64)
    print(f"listening on http://{host}:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    app = server.streamable_http_app()
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def main() -> None:
    global _record
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", help="append each call received to this JSONL file")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP instead of stdio")
    args = parser.parse_args()
    _record = args.record or _record
    if args.http:
        _serve_http(args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
