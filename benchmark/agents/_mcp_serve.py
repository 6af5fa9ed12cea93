"""The benchmark's MCP path (issue 30, item 4): a case's tools served as an in-process MCP server,
tpguard's MCP proxy in front of it, and the client side agents talk to.

::

    agent ─▶ MCP client ─▶ GuardedMCPSession (tpguard decides) ─▶ case server ─▶ runner's Gateway ─▶ backends

* The **case server** (the SDK's low-level ``Server``) lists the gateway's :class:`~.base.ToolView`
  s as MCP tools and answers each ``tools/call`` with ``gateway.call(name, arguments,
  call_id=<JSON-RPC id>)``: the gateway records the call and runs the mock backend, as on every
  other path. Its input is not validated against the schema here: the backend rejects a bad call
  with the same message as on the other paths.
* The **proxy** is the product's own :class:`~tpguard.adapters.mcp.GuardedMCPSession`, guarding with
  the guard the gateway hands out (``Gateway.delegate("mcp")``, which reports every decision back).
  The proxy's call id is the JSON-RPC id, and it forwards the request upstream under the same id,
  so the gateway matches the proxy's decision to the call that arrives by that id. (A contextvar
  cannot carry it: the proxy decides in its own task and the server answers in another.)
  ``off`` and the baselines are not tpguard: no proxy, the client talks to the case server and the
  gateway decides there.
* **Trace context**: the client puts the caller's W3C ``traceparent`` in ``params._meta``, the proxy
  continues it upstream, and the case server attaches it around ``gateway.call``, so the recorder's
  ``execute_tool`` span stays under the run's ``invoke_agent`` span.

:func:`connect` opens all of it in the current event loop, :func:`mcp_portal` in a thread of its
own; :class:`McpGateway` is the synchronous :class:`~.base.ToolGateway` over a client session for
agents that call tools one at a time. Framework agents load the session's tools with their own MCP
client library (``langchain-mcp-adapters``, ``mcpadapt``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

import anyio
from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.trace import NoOpTracerProvider

from .base import Observation, ToolGateway, ToolView, adapter_guard

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal
    from mcp import ClientSession
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult

__all__ = ["MCP_PATH", "OBSERVATION_KEY", "McpGateway", "case_server", "connect", "mcp_portal",
           "observation"]

#: the guard path of an agent whose tools reach it over MCP through tpguard's proxy
MCP_PATH = "mcp"
#: ``_meta`` key of the case server's result: the gateway's observation flags (ok, blocked, rewritten)
OBSERVATION_KEY = "tpguard.benchmark/observation"


def case_server(gateway: ToolGateway) -> Server:
    """The case's tools as an MCP server answering through ``gateway``."""
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, TextContent, Tool

    server: Server = Server("tpguard-benchmark-case")
    tools = [Tool(name=v.name, description=v.description, inputSchema=dict(v.input_schema))
             for v in gateway.tools]

    @server.list_tools()
    async def list_tools() -> list[Tool]:
        return tools

    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> CallToolResult:
        ctx = server.request_context
        meta = ctx.meta.model_dump(exclude_none=True) if ctx.meta is not None else {}
        token = otel_context.attach(propagate.extract(meta))
        try:
            obs = gateway.call(name, arguments, call_id=str(ctx.request_id))
        finally:
            otel_context.detach(token)
        flags = {"ok": obs.ok, "blocked": obs.blocked, "rewritten": obs.rewritten}
        return CallToolResult(content=[TextContent(type="text", text=obs.content)], isError=not obs.ok,
                              _meta={OBSERVATION_KEY: flags})

    return server


def observation(result: CallToolResult) -> Observation:
    """What the agent sees of an MCP tool result: the case server's observation, as the proxy let
    it through (text possibly filtered), or the proxy's refusal (``blocked``)."""
    from mcp.types import TextContent

    from tpguard.adapters.mcp import META_KEY

    text = "\n".join(p.text for p in result.content if isinstance(p, TextContent))
    meta = result.meta or {}
    flags = meta.get(OBSERVATION_KEY)
    if isinstance(flags, Mapping):
        return Observation(bool(flags.get("ok")), text, blocked=bool(flags.get("blocked")),
                           rewritten=bool(flags.get("rewritten")))
    marker = meta.get(META_KEY)
    refused = bool(result.isError) and isinstance(marker, Mapping) and marker.get("action") == "block"
    return Observation(not result.isError, text, blocked=refused)


@asynccontextmanager
async def connect(gateway: ToolGateway, path: str = MCP_PATH) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session to the case's tools: through tpguard's proxy when the
    gateway delegates to tpguard (recorded as guard path ``path``), else straight to the case
    server."""
    from mcp import ClientSession
    from mcp.shared.memory import create_client_server_memory_streams

    from tpguard.adapters.mcp import GuardedMCPSession, ToolCatalog

    server = case_server(gateway)
    guard = adapter_guard(gateway, path)
    async with AsyncExitStack() as stack:
        tg = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tg.cancel_scope.cancel)  # the servers run until the client is done
        client_side, server_side = await stack.enter_async_context(create_client_server_memory_streams())
        upstream = server_side
        if guard is not None:
            proxy_up, upstream = await stack.enter_async_context(create_client_server_memory_streams())
            proxy = GuardedMCPSession(guard, ToolCatalog(guard), tracer_provider=NoOpTracerProvider())
            tg.start_soon(proxy.run, server_side, proxy_up)
        tg.start_soon(functools.partial(server.run, upstream[0], upstream[1],
                                        server.create_initialization_options()))
        client = await stack.enter_async_context(ClientSession(*client_side))
        await client.initialize()
        yield client


@contextmanager
def mcp_portal(gateway: ToolGateway, path: str = MCP_PATH) -> Iterator[tuple[BlockingPortal, ClientSession]]:
    """:func:`connect` in a blocking portal's event loop (its own thread) for one case-run: the
    portal and the client session, for synchronous callers."""
    from anyio.from_thread import start_blocking_portal

    with start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(connect(gateway, path)) as client:
        yield portal, client


class McpGateway:
    """A :class:`~.base.ToolGateway` whose calls go over MCP (``portal`` runs the event loop the
    ``client`` lives in). Thread-safe as the portal is."""

    def __init__(self, tools: tuple[ToolView, ...], portal: BlockingPortal, client: ClientSession) -> None:
        self._tools = tools
        self._portal = portal
        self._client = client

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return self._tools

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)  # the caller's trace, continued by the proxy and the case server
        try:
            result = self._portal.call(functools.partial(
                self._client.call_tool, name, arguments, meta=carrier or None))
        except Exception as e:  # a transport failure reaches the agent as a failed call, by type
            return Observation(False, f"{name}: the MCP call failed ({type(e).__qualname__})")
        return observation(result)
