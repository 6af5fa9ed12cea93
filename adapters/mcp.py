"""tpguard for the Model Context Protocol (extra ``tpguard[mcp]``): a purpose-bound proxy in front
of any MCP server, for any MCP client.

From the command line (docs/mcp.md)::

    tpguard mcp-proxy --policy policy.yaml --mode enforce -- python my_server.py     # stdio
    tpguard mcp-proxy --policy policy.yaml --listen 127.0.0.1:8765 --upstream http://127.0.0.1:9000/mcp

In Python, :class:`GuardedMCPSession` guards one session between any two pairs of SDK streams
(stdio, streamable HTTP or in-memory), and :class:`ProxySessions` serves one upstream to many::

    sessions = ProxySessions(Guard("policy.yaml", mode="enforce"), catalog, Upstream(command=(...)))
    await serve_stdio(sessions)             # or: await serve_http(sessions, "127.0.0.1", 8765)

For ``langchain-mcp-adapters`` without a proxy, pass ``tool_interceptors=[GuardInterceptor(guard)]``.

A refused call answers a ``CallToolResult`` with ``isError: true``, a value-free message, and
``_meta[META_KEY]`` (``{"action": "block", "stage", "mode", "reason", "atom_types", "fields"}``).
"""

from __future__ import annotations

from ._mcp_catalog import Resolved, ToolCatalog
from ._mcp_config import ProxyConfig, ServerConfig, build_sessions, load_config
from ._mcp_langchain import GuardInterceptor
from ._mcp_results import META_KEY
from ._mcp_session import REFUSAL_ERROR_CODE, RESOURCE_TOOL, GuardedMCPSession
from ._mcp_transports import (
    ProxySessions,
    Upstream,
    http_app,
    open_upstream,
    serve_http,
    serve_stdio,
)

__all__ = [
    "META_KEY",
    "REFUSAL_ERROR_CODE",
    "RESOURCE_TOOL",
    "GuardInterceptor",
    "GuardedMCPSession",
    "ProxyConfig",
    "ProxySessions",
    "Resolved",
    "ServerConfig",
    "ToolCatalog",
    "Upstream",
    "build_sessions",
    "http_app",
    "load_config",
    "open_upstream",
    "serve_http",
    "serve_stdio",
]
