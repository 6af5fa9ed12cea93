"""JSON-RPC and span plumbing of the MCP proxy: replies, errors, the server span, trace context."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, JSONRPCResponse
from opentelemetry import propagate
from opentelemetry.semconv._incubating.attributes import mcp_attributes
from opentelemetry.trace import Span, SpanKind, Tracer

__all__ = ["ATTR_REFUSAL", "ATTR_TOOL_CHANGED", "Reply", "Streams", "error", "inject_trace",
           "refusal_text", "result", "server_span"]

Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
Reply = JSONRPCResponse | JSONRPCError

# The proxy's own span attributes (the guard's ``tpguard.*`` names are in tpguard.telemetry).
#: why the proxy refused a call whatever it held (``tool_changed``, ``unknown_tool_hidden``)
ATTR_REFUSAL = "tpguard.mcp.refusal"
#: the tool's definition changed since it was first listed (recorded in audit too)
ATTR_TOOL_CHANGED = "tpguard.mcp.tool_changed"

_REASONS = {
    "tool_changed": "its description or schema changed since the proxy first listed it (a possible "
                    "rug pull); review the server before calling it again",
    "unknown_tool_hidden": "it has no purpose in the policy and this proxy hides unknown tools",
}


def refusal_text(name: str, reason: str) -> str:
    return f"tpguard refused this call to {name}: {_REASONS.get(reason, reason)}."


@contextmanager
def server_span(tracer: Tracer, method: str, name: str | None, params: Mapping[str, Any],
                session_id: str | None) -> Iterator[Span]:
    """The ``{method} {name}`` SERVER span, continuing the client's trace from ``params._meta``."""
    meta = params.get("_meta")
    parent = propagate.extract(dict(meta)) if isinstance(meta, Mapping) else None
    attributes: dict[str, str] = {mcp_attributes.MCP_METHOD_NAME: method}
    if session_id:
        attributes[mcp_attributes.MCP_SESSION_ID] = session_id
    title = f"{method} {name}" if name else method
    with tracer.start_as_current_span(title, context=parent, kind=SpanKind.SERVER,
                                      attributes=attributes) as span:
        yield span


def inject_trace(params: dict[str, Any]) -> None:
    """Put the current trace context (W3C ``traceparent``) into ``params._meta``."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    if carrier:
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, Mapping) else {}), **carrier}


def result(request_id: Any, payload: Mapping[str, Any]) -> JSONRPCResponse:
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dict(payload))


def error(request_id: Any, code: int, message: str, data: Any = None) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message, data=data))
