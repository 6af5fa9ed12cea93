"""``GuardedMCPSession``: one MCP session between a client and an upstream server, guarded.

Transport-free: it pumps JSON-RPC messages (the SDK's ``SessionMessage``) between two pairs of
anyio streams — the client side of any server transport (stdio, streamable HTTP, in-memory) and
the upstream side of any client transport. Everything the guard has no stake in passes unchanged in
both directions (initialize, prompts, completions, logging, sampling, elicitation, progress,
cancellation), so the client sees the upstream's own capabilities and protocol version.

What it guards:

* ``tools/list`` responses teach the :class:`~._mcp_catalog.ToolCatalog` each tool's spec and pin
  its definition (hidden unknown tools are dropped); ``notifications/tools/list_changed`` is
  forwarded and makes the proxy list the tools again, so a changed definition is caught even when
  the client does not re-list. A call before any listing makes the proxy list first.
* ``tools/call`` runs in its own task inside ``guard.intercept`` (call id: the JSON-RPC id),
  under a ``tools/call {name}`` server span carrying ``mcp.method.name``/``mcp.session.id``. A
  blocked call answers a refusal result and the upstream receives nothing; ``redact`` forwards the
  rewritten arguments; the result passes the result stage (:mod:`._mcp_results`). The trace context
  is propagated upstream in ``params._meta`` (W3C ``traceparent``).
* ``resources/read`` is checked as a call of the tool named ``resources/read`` (its URI is the
  argument) and its text contents pass the result stage; a withheld read answers a JSON-RPC error
  with code :data:`REFUSAL_ERROR_CODE` and the marker as ``data``.

One ``guard.session`` spans the whole MCP session (atoms given to the proxy plus taint from
results). Any error of the proxy's own fails closed in enforce/redact (a refusal naming the error
type) and open in audit (the message passes unguarded); upstream errors pass as they are. The proxy
logs tool names and error types, never an argument or a result.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from tpguard.guard import Guard, Interception
from tpguard.policy import PrivateAtom
from tpguard.telemetry._attributes import TPGUARD_VERSION as __version__

from ._mcp_catalog import ToolCatalog
from ._mcp_results import (
    META_KEY,
    filter_call_result,
    filter_error,
    filter_read_result,
    refusal,
    refusal_meta,
)
from ._mcp_wire import (
    ATTR_REFUSAL,
    ATTR_TOOL_CHANGED,
    Reply,
    Streams,
    error,
    inject_trace,
    refusal_text,
    result,
    server_span,
)

__all__ = ["REFUSAL_ERROR_CODE", "RESOURCE_TOOL", "GuardedMCPSession", "Streams"]

_log = logging.getLogger("tpguard")
_own_ids = itertools.count(1)

#: the tool name a ``resources/read`` is checked as (a policy may give it a spec and a scope)
RESOURCE_TOOL = "resources/read"
#: JSON-RPC error code of a withheld ``resources/read`` (implementation-defined server error range)
REFUSAL_ERROR_CODE = -32050



class _Waiter:
    """The one reply to a request the proxy sent upstream (an event and a slot: cheaper than a
    memory stream per call)."""

    __slots__ = ("_event", "_reply")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._reply: Reply | None = None

    def set(self, reply: Reply) -> None:
        self._reply = reply
        self._event.set()

    async def wait(self) -> Reply:
        await self._event.wait()
        assert self._reply is not None
        return self._reply


class GuardedMCPSession:
    """Guard one MCP session: ``await GuardedMCPSession(guard, catalog).run(client, upstream)``.

    ``client`` is (read, write) of a server transport, ``upstream`` of a client transport. ``atoms``
    are bound to this session on top of the policy's; ``session_id`` names the guard session.
    ``tracer_provider`` receives the proxy's ``tools/call`` server spans (default: the global
    provider); the guard's own spans go to the guard's provider — pass the same one to both.
    Returns when either side closes.
    """

    def __init__(self, guard: Guard, catalog: ToolCatalog | None = None, *,
                 atoms: Iterable[PrivateAtom] = (), session_id: str | None = None,
                 tracer_provider: TracerProvider | None = None) -> None:
        self.guard = guard
        self.catalog = catalog or ToolCatalog(guard)
        self.atoms = tuple(atoms)
        self.session_id = session_id or f"mcp-{uuid.uuid4().hex[:12]}"
        #: the ``Mcp-Session-Id`` the client uses (streamable HTTP), learned from its requests
        self.mcp_session_id: str | None = None
        self._tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer("tpguard.mcp", __version__)
        self._waiters: dict[Any, _Waiter] = {}
        self._lists: set[Any] = set()
        self._calls: dict[Any, anyio.CancelScope] = {}
        self._progress: dict[Any, Any] = {}
        self._list_lock = anyio.Lock()
        self._listing_tried = False
        self._to_client: MemoryObjectSendStream[SessionMessage] | None = None
        self._to_upstream: MemoryObjectSendStream[SessionMessage] | None = None
        self._tg: TaskGroup | None = None

    @property
    def mode(self) -> str:
        return self.guard.mode

    async def run(self, client: Streams, upstream: Streams) -> None:
        self._to_client, self._to_upstream = client[1], upstream[1]
        with self.guard.session(self.atoms, session_id=self.session_id):
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._pump_client, client[0], tg)
                tg.start_soon(self._pump_upstream, upstream[0], tg)

    # -- client → upstream ------------------------------------------------------------------------
    async def _pump_client(self, read: MemoryObjectReceiveStream[SessionMessage | Exception],
                           tg: TaskGroup) -> None:
        try:
            async for item in read:
                if isinstance(item, Exception):  # unparseable input: the transport already said so
                    _log.warning("tpguard: dropped an unreadable client message (%s)", type(item).__qualname__)
                    continue
                self._learn_session_id(item)
                root = item.message.root
                if isinstance(root, JSONRPCRequest):
                    self._note_progress(root)
                    if root.method == "tools/call":
                        tg.start_soon(self._call_tool, root)
                        continue
                    if root.method == "resources/read":
                        tg.start_soon(self._read_resource, root)
                        continue
                    if root.method == "tools/list":
                        self._lists.add(root.id)
                elif isinstance(root, JSONRPCNotification) and root.method == "notifications/cancelled":
                    scope = self._calls.get((root.params or {}).get("requestId"))
                    if scope is not None:
                        scope.cancel()
                await self._upstream(item.message)
        finally:
            tg.cancel_scope.cancel()

    def _learn_session_id(self, item: SessionMessage) -> None:
        if self.mcp_session_id is None and isinstance(item.metadata, ServerMessageMetadata):
            headers = getattr(item.metadata.request_context, "headers", None)
            if headers is not None:
                self.mcp_session_id = headers.get("mcp-session-id")

    def _note_progress(self, req: JSONRPCRequest) -> None:
        meta = (req.params or {}).get("_meta")
        if isinstance(meta, Mapping) and meta.get("progressToken") is not None:
            self._progress[meta["progressToken"]] = req.id

    # -- upstream → client ------------------------------------------------------------------------
    async def _pump_upstream(self, read: MemoryObjectReceiveStream[SessionMessage | Exception],
                             tg: TaskGroup) -> None:
        try:
            async for item in read:
                if isinstance(item, Exception):
                    _log.warning("tpguard: dropped an unreadable upstream message (%s)",
                                 type(item).__qualname__)
                    continue
                root = item.message.root
                if isinstance(root, JSONRPCResponse | JSONRPCError):
                    waiter = self._waiters.pop(root.id, None)
                    if waiter is not None:
                        waiter.set(root)  # nobody reads it if the call was cancelled
                        continue
                    if root.id in self._lists:
                        self._lists.discard(root.id)
                        await self._client(self._listed(root))
                        continue
                    self._forget(root.id)
                elif isinstance(root, JSONRPCNotification):
                    if root.method == "notifications/tools/list_changed":
                        tg.start_soon(self._refresh_tools)
                    elif root.method == "notifications/progress":
                        token = (root.params or {}).get("progressToken")
                        await self._client(item.message, self._progress.get(token))
                        continue
                await self._client(item.message)
        finally:
            tg.cancel_scope.cancel()

    def _forget(self, request_id: Any) -> None:
        for token in [t for t, rid in self._progress.items() if rid == request_id]:
            del self._progress[token]

    def _listed(self, root: Reply) -> JSONRPCMessage:
        """A ``tools/list`` response learned (and, with hidden tools, filtered)."""
        if not isinstance(root, JSONRPCResponse) or not isinstance(root.result.get("tools"), list):
            return JSONRPCMessage(root)
        tools = root.result["tools"]
        try:
            shown = self.catalog.learn(tools)
        except Exception as e:  # fail closed: a listing the proxy cannot read is not shown
            kind = type(e).__qualname__
            _log.error("tpguard: could not read a tool listing (%s)", kind)
            if self.mode == "audit":
                return JSONRPCMessage(root)
            return JSONRPCMessage(error(root.id, INTERNAL_ERROR,
                                         f"tpguard could not read the tool listing ({kind})."))
        if len(shown) == len(tools):
            return JSONRPCMessage(root)
        return JSONRPCMessage(JSONRPCResponse(jsonrpc="2.0", id=root.id, result={**root.result, "tools": shown}))

    async def _refresh_tools(self) -> None:
        """List every page of tools on the proxy's own account (pins and specs)."""
        async with self._list_lock:
            cursor: Any = None
            try:
                while True:
                    reply = await self._ask("tools/list", {"cursor": cursor} if cursor else None)
                    if not isinstance(reply, JSONRPCResponse):
                        return
                    tools = reply.result.get("tools")
                    self.catalog.learn(tools if isinstance(tools, list) else [])
                    cursor = reply.result.get("nextCursor")
                    if not cursor:
                        return
            except Exception as e:  # the next listing or call tries again
                _log.error("tpguard: could not list the upstream's tools (%s)", type(e).__qualname__)

    # -- tools/call -------------------------------------------------------------------------------
    async def _call_tool(self, req: JSONRPCRequest) -> None:
        params = dict(req.params or {})
        name = str(params.get("name", ""))
        with anyio.CancelScope() as scope:
            self._calls[req.id] = scope
            try:
                if not self.catalog.listed and not self._listing_tried:
                    self._listing_tried = True  # once: a server without tools/list is not asked again
                    await self._refresh_tools()
                with self._server_span("tools/call", name, params):
                    reply = await self._guarded_call(req, name, params)
                await self._client(JSONRPCMessage(reply))
            finally:
                self._calls.pop(req.id, None)
                self._forget(req.id)

    async def _guarded_call(self, req: JSONRPCRequest, name: str, params: dict[str, Any]) -> Reply:
        arguments = params.get("arguments") or {}
        forwarded = False
        reply: Reply | None = None
        try:
            resolved = self.catalog.resolve(name)
            with self.guard.intercept(resolved.spec, arguments, call_id=str(req.id)) as call:
                if name in self.catalog.changed:
                    call.span.set_attribute(ATTR_TOOL_CHANGED, True)
                if resolved.refusal is not None:
                    call.span.set_attribute(ATTR_REFUSAL, resolved.refusal)
                    _log.warning("tpguard: refused a call to MCP tool %s (%s)", name, resolved.refusal)
                    return result(req.id, refusal(refusal_text(name, resolved.refusal),
                                                   refusal_meta(None, mode=self.mode, reason=resolved.refusal)))
                decision = call.decision
                if decision.blocked:
                    return result(req.id, refusal(decision.message or f"tpguard withheld this call to {name}.",
                                                   refusal_meta(decision, mode=self.mode)))
                if decision.redacted:
                    params["arguments"] = decision.arguments
                inject_trace(params)
                forwarded = True
                reply = await self._ask("tools/call", params, req.id)
                return self._filtered(call, reply)
        except Exception as e:  # the proxy's own failure: closed in enforce/redact, open in audit
            kind = type(e).__qualname__  # (the intercept's span records it as error.type)
            _log.error("tpguard: internal error (%s) in a call to MCP tool %s", kind, name)
            if self.mode == "audit":  # the upstream's own answer, unchanged
                if reply is not None:
                    return reply
                if not forwarded:
                    return await self._ask("tools/call", req.params, req.id)
            return result(req.id, refusal(f"tpguard could not check this call to {name} ({kind}) and "
                                           "withheld it.", refusal_meta(None, mode=self.mode, reason="error")))

    def _filtered(self, call: Interception, reply: Reply) -> Reply:
        """The upstream's reply as the client should see it (result stage; fails closed)."""
        try:
            if isinstance(reply, JSONRPCError):
                return self._filtered_error(call, reply)
            shown = filter_call_result(call, reply.result)
        except Exception as e:
            kind = type(e).__qualname__
            _log.error("tpguard: internal error (%s) reading a result of %s", kind, call.decision.tool)
            if self.mode == "audit":
                return reply
            return result(reply.id, refusal(
                f"tpguard could not check the result of {call.decision.tool} ({kind}) and withheld it.",
                refusal_meta(None, mode=self.mode, reason="error", stage="result")))
        if shown is reply.result and call.decision.redacted:  # say the request was rewritten
            meta = dict(shown.get("_meta") or {})
            meta[META_KEY] = {"action": "redact", "stage": "request", "mode": self.mode}
            shown = {**shown, "_meta": meta}
        return reply if shown is reply.result else result(reply.id, shown)

    def _filtered_error(self, call: Interception, reply: JSONRPCError) -> Reply:
        """An upstream JSON-RPC error of a ``tools/call``: its message and data may quote what the
        tool read, so they pass the result stage; withheld → the refusal result."""
        raw = reply.error.model_dump(by_alias=True, exclude_none=True)
        shown, withheld = filter_error(call, raw)
        if withheld is not None:
            return result(reply.id, refusal(withheld.message or "tpguard withheld this result.",
                                            refusal_meta(withheld, mode=self.mode, stage="result")))
        return reply if shown is raw else JSONRPCError(jsonrpc="2.0", id=reply.id,
                                                        error=ErrorData.model_validate(shown))

    # -- resources/read ---------------------------------------------------------------------------
    async def _read_resource(self, req: JSONRPCRequest) -> None:
        params = dict(req.params or {})
        with anyio.CancelScope() as scope:
            self._calls[req.id] = scope
            try:
                with self._server_span(RESOURCE_TOOL, None, params):
                    reply = await self._guarded_read(req, params)
                await self._client(JSONRPCMessage(reply))
            finally:
                self._calls.pop(req.id, None)

    async def _guarded_read(self, req: JSONRPCRequest, params: dict[str, Any]) -> Reply:
        forwarded = False
        reply: Reply | None = None
        try:
            spec = self.guard.tool_spec(RESOURCE_TOOL)
            with self.guard.intercept(spec, {"uri": params.get("uri")}, call_id=str(req.id)) as call:
                decision = call.decision
                if decision.blocked:
                    return error(req.id, REFUSAL_ERROR_CODE, decision.message or "tpguard withheld this read.",
                                  refusal_meta(decision, mode=self.mode))
                forwarded = True
                reply = await self._ask(RESOURCE_TOOL, params, req.id)
                if isinstance(reply, JSONRPCError):  # its message may quote the resource
                    raw = reply.error.model_dump(by_alias=True, exclude_none=True)
                    error_shown, withheld = filter_error(call, raw)
                    if withheld is None:
                        return reply if error_shown is raw else JSONRPCError(
                            jsonrpc="2.0", id=req.id, error=ErrorData.model_validate(error_shown))
                    return error(req.id, REFUSAL_ERROR_CODE, withheld.message or "tpguard withheld this read.",
                                 refusal_meta(withheld, mode=self.mode))
                shown, withheld = filter_read_result(call, reply.result)
                if withheld is not None:
                    return error(req.id, REFUSAL_ERROR_CODE, withheld.message or "tpguard withheld this read.",
                                  refusal_meta(withheld, mode=self.mode))
                return reply if shown is reply.result else JSONRPCResponse(jsonrpc="2.0", id=req.id, result=dict(shown))
        except Exception as e:
            kind = type(e).__qualname__
            _log.error("tpguard: internal error (%s) in a resources/read", kind)
            if self.mode == "audit":  # the upstream's own answer, unchanged
                if reply is not None:
                    return reply
                if not forwarded:
                    return await self._ask(RESOURCE_TOOL, req.params, req.id)
            return error(req.id, REFUSAL_ERROR_CODE, f"tpguard could not check this read ({kind}) and withheld it.",
                          refusal_meta(None, mode=self.mode, reason="error"))

    # -- plumbing ---------------------------------------------------------------------------------
    async def _ask(self, method: str, params: Mapping[str, Any] | None, request_id: Any = None) -> Reply:
        """Send a request upstream and wait for its reply (own requests get ``tpguard-N`` ids)."""
        rid = request_id if request_id is not None else f"tpguard-{next(_own_ids)}"
        waiter = self._waiters[rid] = _Waiter()
        try:
            request = JSONRPCRequest(jsonrpc="2.0", id=rid, method=method,
                                     params=dict(params) if params is not None else None)
            await self._upstream(JSONRPCMessage(request))
            return await waiter.wait()
        finally:
            self._waiters.pop(rid, None)

    async def _upstream(self, message: JSONRPCMessage) -> None:
        assert self._to_upstream is not None
        await self._to_upstream.send(SessionMessage(message))

    async def _client(self, message: JSONRPCMessage, related: Any = None) -> None:
        assert self._to_client is not None
        meta = ServerMessageMetadata(related_request_id=related) if related is not None else None
        await self._to_client.send(SessionMessage(message, metadata=meta))

    def _server_span(self, method: str, name: str | None, params: Mapping[str, Any]) -> Any:
        return server_span(self._tracer, method, name, params, self.mcp_session_id)
