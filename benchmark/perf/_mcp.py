"""What the MCP proxy costs per tool call: a direct MCP call against the same call through
:class:`~tpguard.adapters.mcp.GuardedMCPSession`, both in process (issue 30's target: ≤ 1.3× in
``enforce``).

Direct: the official SDK's ``ClientSession`` ↔ a FastMCP server over in-memory streams. Proxied:
the same client and server with the guarded session between them (two more stream hops, the
guard's request and result checks, its ``execute_tool`` span and the proxy's server span, on a
recording SDK tracer provider). The call is the healthcare hand-off, authorized, so it reaches the
server on both paths. Calls alternate between the two paths in rounds so drift hits both alike;
the figure is the ratio of medians.

    python -m tpguard.benchmark.perf._mcp [--calls 300] [--mode enforce] [--no-spans]

``--no-spans`` uses OpenTelemetry's no-op provider: what ``tpguard mcp-proxy`` runs with when
neither ``--spans`` nor OTLP export is configured.

``tpguard bench perf`` runs it once (:func:`mcp_figures`, no-op spans, ``enforce``): figures
``mcp_direct``/``mcp_proxied`` (wall) and ``mcp_direct_cpu``/``mcp_proxied_cpu`` (CPU time of this
process), the target ``mcp_proxied_cpu/mcp_direct_cpu`` ≤ 1.3 and the wall ratio beside it. The
CPU ratio is the target because the call is single-threaded and other processes' load on a shared
machine does not enter it. Without the ``mcp`` extra the figures are reported as skipped.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ._measure import Figure

if TYPE_CHECKING:
    from ._cases import Bench

__all__ = ["FIGURES", "McpOverhead", "mcp_figures", "measure_mcp_overhead"]

#: the figures :func:`mcp_figures` adds to a ``bench perf`` run
FIGURES = ("mcp_direct", "mcp_proxied", "mcp_direct_cpu", "mcp_proxied_cpu")
_CALLS_PER_BUDGET_S = 1600  # calls per path per second of a run's budget: full 400, quick 160, tiny 20

POLICY = Path(__file__).resolve().parents[2] / "examples" / "healthcare_policy.yaml"
CALL = {"summary": "Prescription RX-88213 is ready for pickup.", "pickup_id": "RX-88213"}


@dataclass(frozen=True)
class McpOverhead:
    """Medians per call, wall-clock and CPU time of this process (the CPU figure is the steadier
    one on a shared machine: other processes' load does not enter it)."""

    mode: str
    calls: int
    spans: bool
    direct_us: float
    proxied_us: float
    direct_cpu_us: float
    proxied_cpu_us: float

    @property
    def ratio(self) -> float:
        return self.proxied_us / self.direct_us

    @property
    def cpu_ratio(self) -> float:
        return self.proxied_cpu_us / self.direct_cpu_us

    def line(self) -> str:
        recording = "recording spans" if self.spans else "no-op spans"
        return (f"MCP call, {self.mode}, {recording} (median of {self.calls} calls each): wall direct "
                f"{self.direct_us:.0f} µs, through the proxy {self.proxied_us:.0f} µs — "
                f"{self.ratio:.2f}×; CPU {self.direct_cpu_us:.0f} µs vs {self.proxied_cpu_us:.0f} µs — "
                f"{self.cpu_ratio:.2f}×")


def _server() -> Any:
    from mcp.server.fastmcp import FastMCP

    server = FastMCP("perf", log_level="WARNING")

    @server.tool()
    def team_handoff(summary: str, pickup_id: str = "") -> str:
        """Hand the case to the pharmacy team."""
        return f"Handoff queued for pickup {pickup_id}."

    return server


@asynccontextmanager
async def _client(proxy: Any | None) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.shared.memory import create_client_server_memory_streams

    low = _server()._mcp_server
    async with anyio.create_task_group() as tg:
        async with create_client_server_memory_streams() as (client_side, server_side):
            if proxy is None:
                tg.start_soon(lambda: low.run(server_side[0], server_side[1],
                                              low.create_initialization_options()))
                async with ClientSession(*client_side) as client:
                    await client.initialize()
                    yield client
            else:
                async with create_client_server_memory_streams() as (proxy_up, upstream_side):
                    tg.start_soon(lambda: low.run(upstream_side[0], upstream_side[1],
                                                  low.create_initialization_options()))
                    tg.start_soon(proxy.run, server_side, proxy_up)
                    async with ClientSession(*client_side) as client:
                        await client.initialize()
                        await client.list_tools()
                        yield client
        tg.cancel_scope.cancel()


async def _timed(call: Callable[[], Awaitable[Any]], n: int, out: list[tuple[float, float]]) -> None:
    for _ in range(n):
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        await call()
        out.append(((time.perf_counter_ns() - t0) / 1000, (time.process_time_ns() - c0) / 1000))


async def _measure(calls: int, mode: str, rounds: int, spans: bool) -> McpOverhead:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import NoOpTracerProvider

    from tpguard import Guard
    from tpguard.adapters.mcp import GuardedMCPSession, ToolCatalog

    # recording, no exporter: the spans are built, not shipped
    provider = TracerProvider() if spans else NoOpTracerProvider()
    guard = Guard(POLICY, mode=mode, tracer_provider=provider)  # type: ignore[arg-type]
    proxy = GuardedMCPSession(guard, ToolCatalog(guard), tracer_provider=provider)
    direct: list[tuple[float, float]] = []
    proxied: list[tuple[float, float]] = []
    async with _client(None) as plain, _client(proxy) as guarded:
        for client in (plain, guarded):  # warm up both paths
            for _ in range(20):
                await client.call_tool("team_handoff", CALL)
        per_round = max(1, calls // rounds)
        for _ in range(rounds):
            await _timed(lambda: plain.call_tool("team_handoff", CALL), per_round, direct)
            await _timed(lambda: guarded.call_tool("team_handoff", CALL), per_round, proxied)
    med = statistics.median
    return McpOverhead(mode, len(direct), spans, med(w for w, _ in direct), med(w for w, _ in proxied),
                       med(c for _, c in direct), med(c for _, c in proxied))


def measure_mcp_overhead(calls: int = 300, mode: str = "enforce", rounds: int = 10,
                         spans: bool = True) -> McpOverhead:
    """Median per-call latency of a direct and a proxied MCP call (see the module docstring)."""
    return anyio.run(_measure, calls, mode, rounds, spans)


def mcp_figures(bench: Bench) -> None:
    """Add :data:`FIGURES` to ``bench`` (enforce, no-op spans: ``tpguard mcp-proxy``'s default).

    The number of calls per path follows the run's budget (at least 20). Not capped per call like
    the other figures: the call is one fixed, small hand-off, constant in every size."""
    bench.progress("mcp_direct, mcp_proxied")
    if find_spec("mcp") is None:  # reported as skipped, never silently absent
        for name in FIGURES:
            bench.figures[name] = Figure(None, skipped=True)
        return
    calls = max(20, int(bench.sizes.budget_s * _CALLS_PER_BUDGET_S))
    m = measure_mcp_overhead(calls, "enforce", spans=False)
    for name, us in zip(FIGURES, (m.direct_us, m.proxied_us, m.direct_cpu_us, m.proxied_cpu_us),
                        strict=True):
        bench.figures[name] = Figure(us * 1000, n=m.calls, calls=1)


def main() -> None:
    parser = argparse.ArgumentParser(description="MCP proxy overhead per tool call")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--mode", default="enforce", choices=["audit", "enforce", "redact"])
    parser.add_argument("--no-spans", action="store_true", help="OpenTelemetry's no-op provider")
    args = parser.parse_args()
    print(measure_mcp_overhead(args.calls, args.mode, spans=not args.no_spans).line())


if __name__ == "__main__":
    main()
