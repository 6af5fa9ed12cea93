"""``GuardMiddleware``: the guard as a FastMCP (3.x) server middleware.

For people who run their own FastMCP server (or a FastMCP proxy) and want the guard inside it
rather than a separate ``tpguard mcp-proxy`` process. Thin (STYLE §5): ``on_list_tools`` feeds the
same :class:`~._mcp_catalog.ToolCatalog` as the proxy (specs learned, definitions pinned, unknown
tools optionally hidden); ``on_call_tool`` runs :meth:`Guard.intercept` — a block or a refused
tool returns the proxy's refusal (``is_error``, value-free text, ``_meta["tpguard/decision"]``)
without calling the tool, ``redact`` calls it with the rewritten arguments
(``context.copy(message=...)``), and the result passes the result stage.

    server = FastMCP("clinic", middleware=[GuardMiddleware(Guard("policy.yaml", mode="enforce"))])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult
from mcp.types import CallToolResult

from tpguard.guard import Guard
from tpguard.policy import ToolSpec

from ._mcp_catalog import ToolCatalog
from ._mcp_results import guarded_result, refusal, refusal_meta
from ._mcp_wire import ATTR_REFUSAL, refusal_text

__all__ = ["GuardMiddleware"]


class GuardMiddleware(Middleware):
    """Guard a FastMCP server's tools; ``tools`` gives specs to tools the policy does not name."""

    def __init__(self, guard: Guard, tools: Mapping[str, ToolSpec | Mapping[str, Any]] | None = None, *,
                 hide_unknown: bool = False) -> None:
        specs = {n: s if isinstance(s, ToolSpec) else ToolSpec.model_validate({"name": n, **s})
                 for n, s in (tools or {}).items()}
        self.guard = guard
        self.catalog = ToolCatalog(guard, specs, hide_unknown=hide_unknown, server="fastmcp")

    async def on_list_tools(self, context: MiddlewareContext[Any], call_next: Any) -> Sequence[Any]:
        tools = await call_next(context)
        listed = [t.to_mcp_tool().model_dump(by_alias=True, exclude_none=True) for t in tools]
        shown = {d["name"] for d in self.catalog.learn(listed)}
        return [t for t in tools if t.name in shown]

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        params = context.message
        resolved = self.catalog.resolve(params.name)
        with self.guard.intercept(resolved.spec, params.arguments or {}, call_id=_request_id(context)) as call:
            decision = call.decision
            if resolved.refusal is not None:
                call.span.set_attribute(ATTR_REFUSAL, resolved.refusal)
                return _tool_result(refusal(refusal_text(params.name, resolved.refusal),
                                            refusal_meta(None, mode=decision.mode, reason=resolved.refusal)))
            if decision.blocked:
                return _tool_result(refusal(decision.message or f"tpguard withheld this call to {params.name}.",
                                            refusal_meta(decision, mode=decision.mode)))
            if decision.redacted:
                if not isinstance(decision.arguments, Mapping):  # nothing to forward but the original
                    return _tool_result(refusal(f"tpguard withheld this call to {params.name}.",
                                                refusal_meta(decision, mode=decision.mode)))
                context = context.copy(message=params.model_copy(update={"arguments": dict(decision.arguments)}))
            result = await call_next(context)
            if not isinstance(result, ToolResult):
                return result
            # an error result is read like any other: its text may quote what the tool read
            raw = _as_json(result)
            shown = guarded_result(call, raw, params.name)
            return result if shown is raw else _tool_result(shown)


def _request_id(context: MiddlewareContext[Any]) -> str | None:
    try:
        return str(context.fastmcp_context.request_id) if context.fastmcp_context is not None else None
    except Exception:  # no request in flight (a call from inside the server)
        return None


def _as_json(result: ToolResult) -> dict[str, Any]:
    out: dict[str, Any] = {"content": [c.model_dump(by_alias=True, exclude_none=True) for c in result.content]}
    if result.structured_content is not None:
        out["structuredContent"] = result.structured_content
    if result.meta is not None:
        out["_meta"] = result.meta
    return out


def _tool_result(payload: Mapping[str, Any]) -> ToolResult:
    mcp = CallToolResult.model_validate(payload)
    return ToolResult(content=mcp.content, structured_content=mcp.structuredContent, meta=mcp.meta,
                      is_error=mcp.isError)
