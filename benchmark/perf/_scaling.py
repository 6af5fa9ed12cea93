"""The scaling measurements: argument length, nested leaves, sessions, ``register`` and memory.

* ``single_<size>`` / ``multiline_<size>`` — ``check`` (redact) of the typical call whose note is
  an e-mail thread of that size, single-spaced or with newlines, tabs, double spaces and CRLF;
  a few atom occurrences per 500 characters, so the offset-mapping and rewriting paths run.
* ``redact_<n>_leaves`` — ``check`` (redact) of a bulk update with ``n`` leaves, forbidden phone
  numbers in every third free-text comment.
* ``session_entry_<n>_atoms`` — entering and leaving ``guard.session(atoms=[5 atoms])`` with ``n``
  policy atoms.
* ``register_<k>_one_by_one`` / ``register_<k>_at_once`` — ``k`` new atoms registered inside a
  session (entered untimed), one call each or one call with all of them, then one ``check`` of
  the typical call: registered atoms are compiled lazily, at the next check, so that check is
  where registering costs what it costs (without it the figure would time 1,000 Python calls
  against one, and say nothing about recompiling).
* memory ``session_<n>_atoms`` — bytes a live 5-atom session holds (``tracemalloc``).
"""

from __future__ import annotations

import gc
import tracemalloc
from contextlib import ExitStack
from functools import partial
from typing import Any

from ._cases import Bench
from ._measure import MeasurementTimeout, deadline
from ._workload import (
    NESTED_SPEC,
    SPEC,
    count_label,
    long_text,
    make_atoms,
    nested_arguments,
    size_label,
    typical_arguments,
)

__all__ = ["length_series", "nested_series", "session_figures"]

# tracemalloc slows allocation-heavy code down several times: the memory figure may take 10× the
# session entry (between three and six caps) before it is reported as timed out; it is skipped
# when the session entry itself timed out.
_MEMORY_SLOWDOWN = 10


def _text_guard_atoms(bench: Bench) -> int:
    """Length and nesting run against a 1,000-atom policy (fewer in the test-only sizes)."""
    return min(1_000, bench.sizes.policy_atoms)


def length_series(bench: Bench) -> None:
    guard = bench.guard(_text_guard_atoms(bench))
    base = typical_arguments()

    def make(size: int, multiline: bool) -> Any:
        args = {**base, "note": long_text(size, multiline=multiline)}
        return lambda: guard.check(SPEC, args, mode="redact")

    # The figures of both length targets — multiline/single at the big size, big/small multi-line
    # — are one group: the small and the big size, both kinds, every figure sampled in the same
    # rounds, so a numerator and its denominator see the same load (measured one size after the
    # other, the 100 KB/10 KB ratio read 9.6 and 15.2 in two runs a minute apart). Every other
    # size's pair is a group of its own.
    sizes = bench.sizes
    groups = [[n] for n in sizes.lengths if n not in (sizes.length_small, sizes.length_big)]
    groups.append([sizes.length_small, sizes.length_big])
    bench.series({f"{kind}_{size_label(n)}": partial(make, n, kind == "multiline")
                  for n in group for kind in ("single", "multiline")} for group in sorted(groups))


def nested_series(bench: Bench) -> None:
    guard = bench.guard(_text_guard_atoms(bench))

    def make(leaves: int) -> Any:
        args = nested_arguments(leaves)
        return lambda: guard.check(NESTED_SPEC, args, mode="redact")

    # One group, every figure in the same rounds: their ratio is a target (measured one after the
    # other, 10k/1k read 8.2 and 13.4 in two runs minutes apart).
    bench.series([{f"redact_{count_label(n)}_leaves": partial(make, n) for n in bench.sizes.leaves}])


def session_figures(bench: Bench) -> None:
    """Session entry, ``register`` one by one vs at once, and session memory, all at the run's
    largest policy."""
    n = bench.sizes.policy_atoms
    guard = bench.guard(n)
    five = make_atoms(5, prefix="s")

    def enter() -> None:
        with guard.session(atoms=five):
            pass

    entry = bench.time(f"session_entry_{count_label(n)}_atoms", enter, batch=False)
    _register(bench, guard)
    name = f"session_{count_label(n)}_atoms"
    if entry.timed_out:  # under tracemalloc it would be slower still: report, do not wait
        bench.memory[name] = {"bytes": None, "timed_out": True, "skipped": True}
        return
    bench.progress("session memory")
    cap = bench.sizes.cap_s
    cap_s = min(max(3 * cap, _MEMORY_SLOWDOWN * (entry.estimate_ns or 0) / 1e9), 6 * cap)
    bench.memory[name] = _session_memory(guard, five, cap_s)


def _register(bench: Bench, guard: Any) -> None:
    k = bench.sizes.register
    atoms = make_atoms(k, prefix="r")
    stack = ExitStack()
    done = [0]

    def setup() -> None:
        done[0] = 0
        stack.enter_context(guard.session())

    args = typical_arguments()

    def one_by_one() -> None:
        for a in atoms:
            guard.register(a)
            done[0] += 1
        guard.check(SPEC, args)

    def at_once() -> None:
        guard.register(*atoms)
        guard.check(SPEC, args)

    kw: dict[str, Any] = {"setup": setup, "teardown": stack.close, "batch": False, "min_repeats": 3}
    bench.time(f"register_{k}_at_once", at_once, **kw)
    name = f"register_{k}_one_by_one"
    fig = bench.time(name, one_by_one, **kw)
    if fig.timed_out and done[0]:  # later calls cost at least as much as the first ones
        bench.figures[name] = fig.at_least(bench.sizes.cap_s * 1e9 * k / done[0])


def _session_memory(guard: Any, atoms: list[Any], cap_s: float) -> dict[str, Any]:
    """Bytes allocated by entering a session and still held while it is live."""
    gc.collect()
    tracemalloc.start()
    try:
        with deadline(cap_s):
            before = tracemalloc.get_traced_memory()[0]
            with guard.session(atoms=atoms):
                gc.collect()
                held = tracemalloc.get_traced_memory()[0] - before
        return {"bytes": held, "timed_out": False, "skipped": False}
    except MeasurementTimeout:
        return {"bytes": None, "timed_out": True, "skipped": False, "cap_s": cap_s}
    finally:
        tracemalloc.stop()
