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

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult
from mcp.types import CallToolResult

from tpguard.guard import Guard, Interception
from tpguard.policy import ToolSpec

from ._mcp_catalog import ToolCatalog
from ._mcp_results import guarded_result, refusal, refusal_meta
from ._mcp_wire import ATTR_REFUSAL, refusal_text

__all__ = ["GuardMiddleware"]

_log = logging.getLogger("tpguard")


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
        """Fail-safe around the guard and its conversions: an error of the guard's own refuses
        the call (``reason: "error"``, the error's type only) in enforce/redact, and in audit
        lets the call run — or returns the tool's result as it is — with the error logged. The
        tool's own exceptions propagate, for FastMCP to answer as always."""
        name = context.message.name
        ran = False
        result: Any = None
        try:
            resolved = self.catalog.resolve(name)
            arguments = context.message.arguments or {}
            with self.guard.intercept(resolved.spec, arguments, call_id=_request_id(context)) as call:
                refused = _refusal(call, name, resolved.refusal)
                if refused is not None:
                    return refused
                forward = self._forwarded(call, context)
                if forward is None:  # nothing to forward but the original
                    return _tool_result(refusal(f"tpguard withheld this call to {name}.",
                                                refusal_meta(call.decision, mode=call.decision.mode)))
                ran = True
                result = await call_next(forward)
                if not isinstance(result, ToolResult):
                    return result
                # an error result is read like any other: its text may quote what the tool read
                raw = _as_json(result)
                shown = guarded_result(call, raw, name)
                return result if shown is raw else _tool_result(shown)
        except Exception as e:
            if ran and result is None:
                raise  # the tool's own failure, not the guard's
            kind = type(e).__qualname__
            _log.error("tpguard: internal error (%s) in a call to FastMCP tool %s", kind, name)
            if self.guard.mode == "audit":
                return result if ran else await call_next(context)
            return _tool_result(refusal(f"tpguard could not check this call to {name} ({kind}) and "
                                        "withheld it.", refusal_meta(None, mode=self.guard.mode, reason="error")))

    @staticmethod
    def _forwarded(call: Interception, context: MiddlewareContext[Any]) -> MiddlewareContext[Any] | None:
        """The context to run the tool with: rewritten in redact (``None`` when it cannot be)."""
        decision = call.decision
        if not decision.redacted:
            return context
        if not isinstance(decision.arguments, Mapping):
            return None
        params = context.message
        return context.copy(message=params.model_copy(update={"arguments": dict(decision.arguments)}))


def _refusal(call: Interception, name: str, reason: str | None) -> ToolResult | None:
    """The refusal when the tool is refused whatever the call holds or the call is blocked."""
    decision = call.decision
    if reason is not None:
        call.span.set_attribute(ATTR_REFUSAL, reason)
        return _tool_result(refusal(refusal_text(name, reason),
                                    refusal_meta(None, mode=decision.mode, reason=reason)))
    if decision.blocked:
        return _tool_result(refusal(decision.message or f"tpguard withheld this call to {name}.",
                                    refusal_meta(decision, mode=decision.mode)))
    return None


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
