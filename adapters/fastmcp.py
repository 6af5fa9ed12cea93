"""tpguard inside a FastMCP 3.x server (``pip install "tpguard[mcp]" "fastmcp>=3.4,<4"``).

    from fastmcp import FastMCP
    from tpguard.adapters.fastmcp import GuardMiddleware

    server = FastMCP("clinic", middleware=[GuardMiddleware(Guard("policy.yaml", mode="enforce"))])

The same decisions, refusals and catalog as ``tpguard mcp-proxy`` (docs/mcp.md), without a proxy
process. FastMCP 4.x (``mcp`` 2.x) is not supported: tpguard's ``mcp`` extra is on the 1.x line.
"""

from __future__ import annotations

from ._mcp_fastmcp import GuardMiddleware

__all__ = ["GuardMiddleware"]
