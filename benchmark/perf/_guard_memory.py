"""Resident memory a ``Guard`` adds when it is built, in a fresh process.

    python -m tpguard.benchmark.perf._guard_memory 100000

Prints one JSON object: ``bytes`` — the process's resident set (``/proc/self/statm``) after the
guard is built and a full collection, minus the same before it (the policy, its atoms and every
import already resident); ``peak_bytes`` — the peak resident set (``ru_maxrss``) minus the resident
set before the build, when the build raised the peak (what building it needs at its worst), else
``bytes``; ``method`` — ``rss_delta``; ``build_cpu_s`` — the CPU time of the build (issue 33: a smaller
guard must not cost a slower build).

Why a process of its own and RSS rather than ``tracemalloc``: building a 100,000-atom guard takes
~6 CPU-s, ~35 under ``tracemalloc``; and in the benchmark's own process the heap the earlier series
freed would take part of the guard without raising the RSS. RSS also counts what the C libraries
allocate (the automata, compiled patterns), which ``tracemalloc`` sees only in part.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time

__all__ = ["guard_rss"]


def _resident() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _peak() -> int:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb if sys.platform == "darwin" else kb * 1024  # bytes on macOS, KiB on Linux


def guard_rss(n_atoms: int) -> dict[str, object]:
    from opentelemetry.trace import NoOpTracerProvider

    from tpguard import Guard

    from ._workload import policy

    kb = policy(n_atoms)
    gc.collect()
    before, peak_before = _resident(), _peak()
    cpu = time.process_time()
    guard = Guard(kb, mode="enforce", tracer_provider=NoOpTracerProvider())
    cpu = time.process_time() - cpu
    gc.collect()
    after = _resident()
    held = None if before is None or after is None else after - before
    # the high-water mark counts only when the build raised it (imports may have set it higher)
    peak_after = _peak()
    peak = held if before is None or peak_after <= peak_before else max(held or 0, peak_after - before)
    del guard
    return {"bytes": held, "peak_bytes": peak, "method": "rss_delta", "atoms": n_atoms,
            "build_cpu_s": round(cpu, 3)}


if __name__ == "__main__":
    print(json.dumps(guard_rss(int(sys.argv[1]))))
