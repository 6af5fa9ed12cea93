"""``tpguard bench perf``: what the guard costs per tool call and how that cost scales, in one run.

One process measures, side by side: a bare LangChain tool call; ``Guard.check`` in every mode;
``Guard.intercept`` with the OpenTelemetry SDK recording; a guarded LangChain tool call; the
LangChain-PII and Presidio baselines; and the scaling series (atoms 10 → 100,000; argument length
1 KB → 1 MB single-spaced and multi-line; 1k → 10k nested leaves; session entry, ``register`` and
session memory at the largest policy; the adversarial series: a realistic 1 MB export against
text written to be slow, at the argument, result and exit stages; the realistic series of issue 33: a
realistic ticket note, a realistic export at every stage and policy size, their non-ASCII twins and
the memory of the largest guard); and an MCP call direct against through the proxy (``_mcp``).
The ratios and their targets are issues 9, 28, 30 and 33's (see
``docs/perf.md``). A benchmark, not a test: machines are noisy, read the ratios.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._adversarial import adversarial_series
from ._cases import Bench, atom_series, call_figures
from ._mcp import mcp_figures
from ._measure import Figure, MeasurementTimeout, measure, measure_interleaved
from ._realistic import export_series, guard_memory, realistic_series
from ._report import INFO_RATIOS, RATIOS, Ratio, info_ratios, ratios, render, to_json
from ._scaling import length_series, nested_series, session_figures
from ._workload import SIZES, Sizes

__all__ = ["INFO_RATIOS", "RATIOS", "SIZES", "Figure", "MeasurementTimeout", "PerfRun", "Ratio", "Sizes",
           "info_ratios", "machine", "measure", "measure_interleaved", "ratios", "render", "run_perf", "to_json"]


@dataclass(frozen=True)
class PerfRun:
    """The figures (ns per call), memory figures and sizes of one run."""

    sizes: Sizes
    figures: dict[str, Figure]
    memory: dict[str, dict[str, Any]]
    machine: dict[str, Any]


def machine() -> dict[str, Any]:
    """What the figures were measured on (shared machines: the load average matters)."""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"cpu_count": os.cpu_count(), "cpus_usable": affinity,
            "python": sys.version.split()[0], "implementation": platform.python_implementation(),
            "platform": platform.platform(), "load_average": load}


def run_perf(sizes: Sizes, progress: Callable[[str], None] = lambda _: None) -> PerfRun:
    """Run every measurement once, in a fixed order, and return the figures.

    The series that use small policies (the per-call figures: 10 atoms; length and nesting: 1,000)
    run before the 10,000- and 100,000-atom guards are built: those leave a heap of millions of
    small objects, freed and live, among which the word objects of a 100 KB scan are scattered
    (measured in one process, with and without them resident: a 100 KB normalization 0.88 against
    2.3 ms, the 100 KB/10 KB check 9.0 against 11.8). The long-text targets are about the scan's
    own growth with the text, not about another guard's garbage (docs/perf.md)."""
    mach = machine()
    bench = Bench(sizes, progress)
    call_figures(bench)
    mcp_figures(bench)  # the MCP proxy's cost per call (issue 30)
    realistic_series(bench)
    length_series(bench)
    nested_series(bench)
    adversarial_series(bench)
    guard_memory(bench)  # a process of its own: before this one holds the large guards
    atom_series(bench)
    export_series(bench)  # reuses the atom series' guards
    session_figures(bench)
    return PerfRun(sizes, bench.figures, bench.memory, mach)
