"""``--guard-path mcp`` for agents that call tools one at a time (``oracle``, ``leaky``, ``replay``):
the agent's calls reach the case's tools over MCP, through tpguard's MCP proxy (:mod:`._mcp_serve`).

The agent itself is unchanged: it gets a :class:`~._mcp_serve.McpGateway` instead of the runner's
gateway. The event loop the MCP client, the proxy and the case server share runs in a blocking
portal's thread for the length of one case-run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._mcp_serve import MCP_PATH, McpGateway, mcp_portal
from .base import Agent, AgentResult, ToolGateway

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["McpPathAgent"]


class McpPathAgent:
    """``inner`` with its tools served over MCP behind tpguard's proxy (needs the ``mcp`` extra)."""

    guard_path = MCP_PATH

    def __init__(self, inner: Agent) -> None:
        import mcp  # noqa: F401  — a missing extra fails when the agent is made, not mid-run

        self.inner = inner
        self.name = inner.name

    def run(self, case: Case, gateway: ToolGateway, *, seed: int = 0) -> AgentResult:
        with mcp_portal(gateway) as (portal, client):
            return self.inner.run(case, McpGateway(gateway.tools, portal, client), seed=seed)
