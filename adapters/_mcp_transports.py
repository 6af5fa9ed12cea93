"""The proxy's two sides over the SDK's transports: stdio and streamable HTTP.

* Upstream: a command started as a subprocess (``stdio_client``; it inherits the proxy's
  environment, as the command would have without the proxy) or a streamable HTTP URL
  (``streamable_http_client``).
* Client side: the proxy's own stdin/stdout (``stdio_server``: one process, one session) or a
  streamable HTTP endpoint at ``http://HOST:PORT/mcp`` (the SDK's ``StreamableHTTPSessionManager``:
  one session per ``Mcp-Session-Id``, at most ``max_sessions`` open, each ended by ``DELETE`` or
  after ``idle_timeout`` seconds without a request). Each HTTP session opens its own upstream
  session (for a command: its own subprocess). There is **no authentication**: listen on loopback
  (the default) — DNS-rebinding protection then admits only loopback ``Host``/``Origin`` headers.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from opentelemetry.trace import TracerProvider

from tpguard.guard import Guard
from tpguard.policy import PrivateAtom

from ._mcp_catalog import ToolCatalog
from ._mcp_session import GuardedMCPSession, Streams

__all__ = ["LOOPBACK", "MCP_PATH", "ProxySessions", "Upstream", "bind", "http_app", "open_upstream", "serve_http", "serve_stdio"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MCP_PATH = "/mcp"


@dataclass(frozen=True)
class Upstream:
    """Where the guarded server is: a ``command`` (argv) to start, or a streamable HTTP ``url``."""

    command: tuple[str, ...] = ()
    url: str | None = None
    cwd: str | None = None
    #: added to the proxy's environment for the command
    env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if bool(self.command) == bool(self.url):
            raise ValueError("give the upstream server as a command or as a URL (exactly one)")


@contextlib.asynccontextmanager
async def open_upstream(upstream: Upstream) -> AsyncIterator[Streams]:
    """(read, write) streams of one session to the upstream server."""
    if upstream.url is not None:
        async with streamable_http_client(upstream.url) as (read, write, _session_id):
            yield read, write
        return
    command, *args = upstream.command
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **dict(upstream.env)},
                                   cwd=upstream.cwd)
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        yield read, write


@dataclass
class ProxySessions:
    """What every guarded session of one proxy shares: the guard, the catalog, the upstream."""

    guard: Guard
    catalog: ToolCatalog
    upstream: Upstream
    atoms: tuple[PrivateAtom, ...] = ()
    tracer_provider: TracerProvider | None = None

    def session(self) -> GuardedMCPSession:
        return GuardedMCPSession(self.guard, self.catalog, atoms=self.atoms,
                                 tracer_provider=self.tracer_provider)

    async def serve(self, client: Streams) -> None:
        """Guard one client session: open an upstream session and pump until either side ends."""
        try:
            async with open_upstream(self.upstream) as up:
                await self.session().run(client, up)
        finally:  # the client transport's writer ends when its stream closes (stdio: at stdin EOF)
            await client[1].aclose()

    # The two methods StreamableHTTPSessionManager calls on its ``app`` (a lowlevel Server there).
    def create_initialization_options(self) -> None:
        return None

    async def run(self, read: Any, write: Any, _options: Any, stateless: bool = False) -> None:
        await self.serve((read, write))


async def serve_stdio(sessions: ProxySessions) -> None:
    """Serve one session on this process's stdin/stdout."""
    async with stdio_server() as client:
        await sessions.serve(client)


def _security(host: str) -> TransportSecuritySettings | None:
    if host not in LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])


def http_app(servers: ProxySessions | Mapping[str, ProxySessions], *, host: str = "127.0.0.1",
             idle_timeout: float = 1800, max_sessions: int = 100) -> Any:
    """A Starlette app serving one guarded server at ``/mcp``, or several at ``/{name}/mcp``
    (streamable HTTP; one session manager, with its own bounds, per server)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    named = {"": servers} if isinstance(servers, ProxySessions) else dict(servers)
    managers = {name: StreamableHTTPSessionManager(
        app=cast(Any, sessions), security_settings=_security(host),
        session_idle_timeout=idle_timeout, max_sessions=max_sessions) for name, sessions in named.items()}

    class _Endpoint:  # an ASGI app as a Route endpoint (Starlette passes scope/receive/send)
        def __init__(self, manager: StreamableHTTPSessionManager) -> None:
            self.manager = manager

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await self.manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for manager in managers.values():
                await stack.enter_async_context(manager.run())
            yield

    routes = [Route(path(name), endpoint=_Endpoint(m)) for name, m in managers.items()]
    return Starlette(routes=routes, lifespan=lifespan)


def path(name: str) -> str:
    """Where a server is served: ``/mcp``, or ``/{name}/mcp`` beside others."""
    return f"/{name}{MCP_PATH}" if name else MCP_PATH


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (``port`` 0: any free port; read it back from ``getsockname()``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


async def serve_http(servers: ProxySessions | Mapping[str, ProxySessions], host: str, port: int, *,
                     ready: Callable[[list[str]], Awaitable[None] | None] | None = None,
                     idle_timeout: float = 1800, max_sessions: int = 100) -> None:
    """Serve streamable HTTP on ``host:port`` until cancelled; ``ready(urls)`` once listening
    (one URL per server)."""
    import uvicorn

    sock = bind(host, port)
    base = f"http://{_url_host(host)}:{sock.getsockname()[1]}"
    names = [""] if isinstance(servers, ProxySessions) else list(servers)
    app = http_app(servers, host=host, idle_timeout=idle_timeout, max_sessions=max_sessions)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    if ready is not None:
        maybe = ready([base + path(name) for name in names])
        if maybe is not None:
            await maybe
    await server.serve(sockets=[sock])


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
