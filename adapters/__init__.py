"""Framework adapters, installed as ``tpguard.adapters``: ``langchain``, ``smolagents``, ``mcp``
(the MCP proxy and its library adapters) and ``fastmcp``.

Each adapter imports its framework only when used; install the matching extra
(``pip install "tpguard[langchain]"`` / ``"tpguard[smolagents]"`` / ``"tpguard[mcp]"``).
"""

from __future__ import annotations

__all__: list[str] = []
