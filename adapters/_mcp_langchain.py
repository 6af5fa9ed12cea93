"""``GuardInterceptor``: the guard as a ``langchain-mcp-adapters`` tool interceptor.

For agents that load MCP tools with ``langchain-mcp-adapters`` (``MultiServerMCPClient(...,
tool_interceptors=[GuardInterceptor(guard)])`` or ``load_mcp_tools(session,
tool_interceptors=[...])``) and want the guard in process rather than a proxy in front of the
server. Thin (STYLE §5): the request goes through :meth:`Guard.intercept`; a block returns the same
refusal ``CallToolResult`` the proxy sends (``isError``, value-free message, ``_meta`` marker — the
adapters hand it to the model as an error ``ToolMessage``); ``redact`` calls the tool with the
rewritten arguments (``request.override(args=...)``); the result passes the result stage like the
proxy's. Duck-typed on the request (``name``, ``args``, ``server_name``, ``override``), so importing
it needs no ``langchain-mcp-adapters``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.types import CallToolResult

from tpguard.guard import Guard
from tpguard.policy import ToolSpec

from ._mcp_results import guarded_result, refusal, refusal_meta

__all__ = ["GuardInterceptor"]

_log = logging.getLogger("tpguard")


class GuardInterceptor:
    """Check each MCP tool call a LangChain agent makes; ``tools`` maps tool names to specs (or
    dicts of their fields) for tools the guard's policy does not name — else the guard's spec, else
    the unknown tool (sink ``external``)."""

    def __init__(self, guard: Guard, tools: Mapping[str, ToolSpec | Mapping[str, Any]] | None = None) -> None:
        self.guard = guard
        self.specs = {n: s if isinstance(s, ToolSpec) else ToolSpec.model_validate({"name": n, **s})
                      for n, s in (tools or {}).items()}

    def spec_for(self, name: str) -> ToolSpec:
        return self.specs.get(name) or self.guard.tool_spec(name)

    async def __call__(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """Fail-safe as the FastMCP middleware: an error of the guard's own refuses the call
        (``reason: "error"``, its type only) in enforce/redact and, in audit, lets the call run or
        returns the tool's result as it is, logged; the tool's own exceptions propagate."""
        ran = False
        result: Any = None
        try:
            with self.guard.intercept(self.spec_for(request.name), request.args) as call:
                decision = call.decision
                if decision.blocked:
                    return CallToolResult.model_validate(refusal(
                        decision.message or f"tpguard withheld this call to {request.name}.",
                        refusal_meta(decision, mode=decision.mode)))
                forward = request
                if decision.redacted and isinstance(decision.arguments, Mapping):
                    forward = request.override(args=dict(decision.arguments))
                ran = True
                result = await handler(forward)
                if not isinstance(result, CallToolResult):
                    return result  # a ToolMessage/Command from another interceptor
                # the tool's error text is a result too: it may quote what the tool read
                raw = result.model_dump(by_alias=True, exclude_none=True)
                shown = guarded_result(call, raw, request.name)
                return result if shown is raw else CallToolResult.model_validate(shown)
        except Exception as e:
            if ran and result is None:
                raise  # the tool's own failure, not the guard's
            kind = type(e).__qualname__
            _log.error("tpguard: internal error (%s) in a call to MCP tool %s", kind, request.name)
            if self.guard.mode == "audit":
                return result if ran else await handler(request)
            return CallToolResult.model_validate(refusal(
                f"tpguard could not check this call to {request.name} ({kind}) and withheld it.",
                refusal_meta(None, mode=self.guard.mode, reason="error")))
