"""``tpguard mcp-proxy --policy FILE --mode M -- COMMAND [ARGS...]`` — guard any MCP server.

The proxy itself lives in :mod:`tpguard.adapters.mcp` (extra ``tpguard[mcp]``); this module only
reads the command line, imported when the command runs, so ``tpguard --help`` works without it.
In stdio mode stdout carries the protocol: everything the proxy says goes to stderr.
"""

from __future__ import annotations

import ipaddress
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..guard import MODES
from ._console import EXIT_INPUT, fail

__all__ = ["mcp_proxy"]

DEFAULT_IDLE_TIMEOUT = 1800.0
DEFAULT_MAX_SESSIONS = 100


def mcp_proxy(
    command: Annotated[list[str] | None, typer.Argument(
        help="The upstream MCP server to start (after --), e.g. -- python server.py.",
        show_default=False)] = None,
    policy: Annotated[Path | None, typer.Option("--policy", "-p", help="Policy file (YAML or JSON).")] = None,
    mode: Annotated[str | None, typer.Option(
        "--mode", "-m", help="audit | enforce | redact  [default: the config's, else enforce]")] = None,
    upstream: Annotated[str | None, typer.Option(
        "--upstream", help="Guard a streamable HTTP server at this URL instead of a command.")] = None,
    listen: Annotated[str | None, typer.Option(
        "--listen", help="Serve streamable HTTP on HOST:PORT (no authentication: keep it on "
                         "127.0.0.1) instead of stdio.")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", help="A config file of upstream servers with their tool specs (docs/mcp.md).")] = None,
    server: Annotated[str | None, typer.Option(
        "--server", help="With --config: the server to guard (default: all of them with --listen).")] = None,
    session_atoms: Annotated[Path | None, typer.Option(
        "--session-atoms", help="A policy-format file whose atoms are bound to every session.")] = None,
    hide_unknown: Annotated[bool, typer.Option(
        "--hide-unknown", help="Hide (and refuse) tools the policy does not name.")] = False,
    idle_timeout: Annotated[float, typer.Option(
        "--idle-timeout", help="HTTP: end a session after this many idle seconds.")] = DEFAULT_IDLE_TIMEOUT,
    max_sessions: Annotated[int, typer.Option(
        "--max-sessions", help="HTTP: at most this many open sessions.")] = DEFAULT_MAX_SESSIONS,
    spans: Annotated[Path | None, typer.Option(
        "--spans", help="Append every span to this JSONL file (OTLP export: the OTEL_EXPORTER_OTLP_* "
                        "variables).")] = None,
) -> None:
    """Guard an MCP server's tools: serve them on stdio (or --listen) with the policy applied.

    Prepend it to the server command in a client's config (docs/mcp.md). A refused call answers
    a tool error naming atom types and fields, never values.
    """
    from ._policy import load_or_exit

    if mode is not None and mode not in MODES:
        fail(f"--mode must be one of {', '.join(MODES)}")
    address = _address(listen) if listen else None
    try:
        from tpguard.adapters import mcp
    except ImportError:
        fail('mcp-proxy needs the MCP SDK: pip install "tpguard[mcp]"', EXIT_INPUT)
    from ..guard import Guard
    from ..telemetry import configure, otlp_requested

    provider = (configure(service_name="tpguard-mcp-proxy", jsonl=spans)
                if spans is not None or otlp_requested() else None)
    atoms = tuple(load_or_exit(session_atoms).atoms) if session_atoms else ()
    options = {"atoms": atoms, "tracer_provider": provider, "hide_unknown": hide_unknown}
    argv = tuple(command or ())
    servers: Any
    if config is not None:
        if argv or upstream:
            fail("--config names the upstream servers: drop the command after -- and --upstream")
        servers = _configured(mcp, config, server, policy, mode, address is not None, options)
    else:
        if bool(argv) == bool(upstream):
            fail("give the upstream server either as a command after -- or as --upstream URL (not both)")
        if policy is None:
            fail("--policy is required (or --config with a policy)")
        guard = Guard(load_or_exit(policy), mode=mode or "enforce", tracer_provider=provider)  # type: ignore[arg-type]
        servers = mcp.ProxySessions(guard, mcp.ToolCatalog(guard, hide_unknown=hide_unknown),
                                    mcp.Upstream(command=argv, url=upstream), atoms=atoms,
                                    tracer_provider=provider)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    _run(servers, address, idle_timeout, max_sessions)


def _configured(mcp: Any, path: Path, only: str | None, policy: Path | None, mode: str | None,
                listening: bool, options: dict[str, Any]) -> Any:
    """The config file's servers as ProxySessions: one (``--server``, or the only one) or, with
    ``--listen``, all of them by name."""
    from ..errors import PolicyError

    try:
        conf = mcp.load_config(path)
    except PolicyError as e:
        fail(f"invalid config: {e}")
    if only is not None and only not in conf.servers:
        fail(f"--server: {path} has no server {only!r} (it has {', '.join(sorted(conf.servers))})")
    names = [only] if only else list(conf.servers)
    if len(names) > 1 and not listening:
        fail(f"{path} lists {len(names)} servers: choose one with --server NAME (stdio serves one), "
             "or serve them all with --listen")
    try:
        built = mcp.build_sessions(conf, names, policy=policy, mode=mode, **options)
    except PolicyError as e:
        fail(f"invalid policy: {e}")
    return built[names[0]] if len(names) == 1 and (only or not listening) else built


def _run(servers: Any, address: tuple[str, int] | None, idle_timeout: float, max_sessions: int) -> None:
    import anyio

    from tpguard.adapters.mcp import serve_http, serve_stdio

    def ready(urls: list[str]) -> None:
        for url in urls:
            print(f"tpguard mcp-proxy: listening on {url}", file=sys.stderr, flush=True)

    try:
        if address is None:
            anyio.run(serve_stdio, servers)
        else:
            host, port = address
            anyio.run(lambda: serve_http(servers, host, port, ready=ready, idle_timeout=idle_timeout,
                                         max_sessions=max_sessions))
    except KeyboardInterrupt:
        return
    except Exception as e:  # the command could not start, the URL or port is unusable: one line
        fail(f"mcp-proxy stopped: {_describe(e)}")


def _describe(error: BaseException) -> str:
    """The first leaf of an exception group: its type, and for an OS error its reason and file
    (the upstream command or the address) — never the text of another error, which could quote
    a message of the session."""
    while isinstance(getattr(error, "exceptions", None), tuple) and error.exceptions:  # type: ignore[attr-defined]
        error = error.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename}" if error.filename else ""
        return f"{type(error).__name__}: {error.strerror}{where}"
    return type(error).__name__


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        fail("--listen: expected HOST:PORT, e.g. 127.0.0.1:8765")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        print(f"tpguard mcp-proxy: WARNING: listening on {host}, not loopback; the proxy has no "
              "authentication — anyone who can reach it can call the upstream's tools.",
              file=sys.stderr, flush=True)
    return host, int(port)
