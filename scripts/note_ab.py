"""The realistic note's ``check`` (enforce, redact), CPU time — one side of an A/B (docs/perf.md).

    python scripts/note_ab.py                    # this checkout's tpguard and harness
    python scripts/note_ab.py /path/to/checkout  # another checkout's (e.g. `git worktree add`)

Run the two sides alternately, a few times, on an otherwise idle machine: best of 7 rounds of
2,000 checks each, after 300 warm-up checks per mode.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path


def best_us(fn: Callable[[], object], n: int = 2000, rounds: int = 7) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time() - start) / n * 1e6)
    return best


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    sys.path.insert(0, str(root))  # that checkout's tpguard and benchmark, before the installed ones
    from opentelemetry.trace import NoOpTracerProvider

    import tpguard
    from benchmark.perf._realistic import realistic_arguments, realistic_policy
    from benchmark.perf._workload import SPEC

    args = realistic_arguments()
    guard = tpguard.Guard(realistic_policy(), mode="enforce", tracer_provider=NoOpTracerProvider())
    for _ in range(300):
        guard.check(SPEC, args)
        guard.check(SPEC, args, mode="redact")
    enforce = best_us(lambda: guard.check(SPEC, args))
    redact = best_us(lambda: guard.check(SPEC, args, mode="redact"))
    print(f"{tpguard.__file__}: enforce {enforce:.1f} us, redact {redact:.1f} us")


if __name__ == "__main__":
    main()
