"""Timing helpers: warm up, repeat, take the median, and never hang.

``measure(fn)`` calls ``fn`` once to warm up, then times batches of calls with
``time.perf_counter_ns`` (GC disabled during the batches) until it has ``min_repeats`` samples and
has spent ``budget_s`` (slow calls: fewer samples, within four budgets); the figure is the median
per call. An operation whose first call takes more than a second (and more than the budget) is
reported from that single call. One call longer than ``cap_s`` is interrupted (``SIGALRM``
on the main thread of a POSIX process) and reported as timed out, with the cap as a lower bound:
a quadratic core must show up as a figure, not as a run that never ends.

``measure_interleaved(fns)`` times several operations in turns — one batch of each per round —
so that figures whose ratio is a target share the machine's slow and fast phases: on a shared
machine the same call's median moves by ±30 % between two measurements seconds apart, which
measuring a numerator and its denominator one after the other turns into the ratio's own noise.

``pyperf``/``timeit`` were not used: ``timeit`` has no time budget or cap, and ``pyperf`` spawns
worker processes, which would rebuild the 100,000-atom guard in each.
"""

from __future__ import annotations

import gc
import signal
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Figure", "MeasurementTimeout", "deadline", "measure", "measure_interleaved"]

_BATCH_NS = 2_000_000  # a batch of fast calls lasts ~2 ms, far above the timer's resolution
_SLOW_NS = 1_000_000_000  # a first call this slow is the figure (cold-start effects are small)
_SETUP_CAPS = 3  # an untimed setup may take three caps before the figure is reported as timed out
_OVERRUN = 4  # slow calls may take fewer than min_repeats samples, within 4 budgets


class MeasurementTimeout(BaseException):
    """One call ran past its cap. A ``BaseException``, so the guard's own fail-closed
    ``except Exception`` cannot swallow it."""


@dataclass(frozen=True)
class Figure:
    """One measured figure: the median ns per call over ``n`` samples of ``calls`` calls each.

    A timed-out figure has no median; ``at_least_ns`` is a lower bound (the cap, or a projection
    from the part that finished). ``skipped`` means it was not run because a smaller size of the
    same series had already timed out."""

    median_ns: float | None
    n: int = 0
    calls: int = 0
    timed_out: bool = False
    at_least_ns: float | None = None
    skipped: bool = False
    cpu: bool = False  # timed with the process's CPU clock (``time.process_time_ns``), not the wall clock

    @property
    def estimate_ns(self) -> float | None:
        """The median, else the lower bound."""
        return self.median_ns if self.median_ns is not None else self.at_least_ns

    @classmethod
    def timeout(cls, at_least_ns: float, *, skipped: bool = False) -> Figure:
        return cls(None, timed_out=True, at_least_ns=at_least_ns, skipped=skipped)

    def at_least(self, ns: float) -> Figure:
        return replace(self, at_least_ns=max(ns, self.at_least_ns or 0.0))


def _raise_timeout(signum: int, frame: Any) -> None:
    raise MeasurementTimeout


@contextmanager
def deadline(cap_s: float) -> Iterator[None]:
    """Raise :class:`MeasurementTimeout` inside the block after ``cap_s`` seconds.

    Only the main thread of a POSIX process can take ``SIGALRM``; elsewhere the block runs
    uncapped (the series still stop at the first figure over the cap)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise_timeout)
    signal.setitimer(signal.ITIMER_REAL, cap_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


Clock = Callable[[], int]


def _timed(fn: Callable[[], Any], calls: int, cap_s: float, clock: Clock = time.perf_counter_ns) -> int:
    """ns for ``calls`` calls of ``fn`` by ``clock``, capped at ``cap_s`` (wall time)."""
    with deadline(cap_s):
        t0 = clock()
        for _ in range(calls):
            fn()
        return clock() - t0


def measure(
    fn: Callable[[], Any],
    *,
    budget_s: float,
    cap_s: float,
    min_repeats: int = 5,
    max_repeats: int = 200,
    setup: Callable[[], Any] | None = None,
    teardown: Callable[[], Any] | None = None,
    batch: bool = True,
) -> Figure:
    """Median ns per call of ``fn``. ``setup``/``teardown`` run untimed around each sample (a batch,
    or one call when ``batch`` is false)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _samples(fn, budget_s, cap_s, min_repeats, max_repeats, setup, teardown, batch)
    except MeasurementTimeout:
        return Figure.timeout(cap_s * 1e9)
    finally:
        if enabled:
            gc.enable()


def _one(fn: Callable[[], Any], calls: int, cap_s: float, setup: Callable[[], Any] | None,
         teardown: Callable[[], Any] | None, clock: Clock = time.perf_counter_ns) -> int:
    try:
        if setup is not None:
            with deadline(_SETUP_CAPS * cap_s):  # untimed, but bounded too
                setup()
        return _timed(fn, calls, cap_s, clock)
    finally:
        if teardown is not None:
            teardown()


def _calibrate(fn: Callable[[], Any], budget_s: float, cap_s: float, setup: Callable[[], Any] | None,
               teardown: Callable[[], Any] | None, batch: bool, clock: Clock = time.perf_counter_ns,
               ) -> Figure | int:
    """Warm up, then calibrate on a second call (the first one fills caches and memos): the
    figure itself for an operation whose first call is slow, else the calls per batch."""
    warm = _one(fn, 1, cap_s, setup, teardown, clock)
    if warm >= max(budget_s * 1e9, _SLOW_NS):  # a slow operation: its one call is the figure
        return Figure(float(warm), n=1, calls=1, cpu=clock is time.process_time_ns)
    calls = 1
    if batch:
        calls = max(1, _BATCH_NS // max(_one(fn, 1, cap_s, setup, teardown, clock), 1))
        if calls > 1:
            _one(fn, calls, cap_s, setup, teardown, clock)
    return calls


def _enough(samples: int, spent: int, last: int, budget_ns: float, cap_ns: float, min_repeats: int,
            max_repeats: int) -> bool:
    """Stop sampling: the budget and the repeats are reached, or the calls are slow (fewer samples
    rather than a run that takes minutes)."""
    return ((spent >= budget_ns and samples >= min_repeats) or samples >= max_repeats
            or spent >= _OVERRUN * budget_ns or spent + last > cap_ns)


def _samples(fn: Callable[[], Any], budget_s: float, cap_s: float, min_repeats: int,
             max_repeats: int, setup: Callable[[], Any] | None,
             teardown: Callable[[], Any] | None, batch: bool) -> Figure:
    calls = _calibrate(fn, budget_s, cap_s, setup, teardown, batch)
    if isinstance(calls, Figure):
        return calls
    budget_ns, cap_ns = budget_s * 1e9, cap_s * 1e9
    samples: list[float] = []
    spent = 0
    while True:
        ns = _one(fn, calls, cap_s, setup, teardown)
        spent += ns
        samples.append(ns / calls)
        if _enough(len(samples), spent, ns, budget_ns, cap_ns, min_repeats, max_repeats):
            return Figure(statistics.median(samples), n=len(samples), calls=calls)


@dataclass
class _Turn:
    fn: Callable[[], Any]
    setup: Callable[[], Any] | None
    calls: int = 1
    spent: int = 0
    samples: list[float] = field(default_factory=list)
    figure: Figure | None = None  # set when the operation is done (slow, timed out, or sampled)
    enough: bool = False  # it has its samples (it may go on, for figures measured together)


def _median(t: _Turn, cpu: bool) -> Figure:
    return Figure(statistics.median(t.samples), n=len(t.samples), calls=t.calls, cpu=cpu)


def measure_interleaved(
    fns: dict[str, tuple[Callable[[], Any], Callable[[], Any] | None]],
    *,
    budget_s: float,
    cap_s: float,
    min_repeats: int = 5,
    max_repeats: int = 200,
    together: bool = False,
    cpu: bool = False,
) -> dict[str, Figure]:
    """Median ns per call of each ``fn`` (``name → (fn, setup)``), sampled in rounds: every round
    times one batch of each operation still running, so all of them see the same load. Each one is
    warmed up, calibrated and stopped exactly as :func:`measure` does (batched; a timeout ends
    only its own figure).

    ``together``: an operation that has its samples keeps being sampled (up to ``max_repeats``)
    until every operation has them, so all figures cover the same rounds — for a ratio of a
    slow call to a fast one, whose samples would otherwise come from different seconds.

    ``cpu``: time with the process's CPU clock (``time.process_time_ns``) instead of the wall
    clock — on a machine shared with other processes, the figures a CPU-time target reads (MB per
    CPU-second) do not count the seconds another process held the core. The cap stays wall time."""
    clock: Clock = time.process_time_ns if cpu else time.perf_counter_ns
    enabled = gc.isenabled()
    gc.disable()
    try:
        turns = {name: _Turn(fn, setup) for name, (fn, setup) in fns.items()}
        budget_ns, cap_ns = budget_s * 1e9, cap_s * 1e9
        for t in turns.values():
            try:
                calls = _calibrate(t.fn, budget_s, cap_s, t.setup, None, True, clock)
            except MeasurementTimeout:
                calls = Figure.timeout(cap_ns)
            if isinstance(calls, Figure):
                t.figure = calls
            else:
                t.calls = calls
        while running := [t for t in turns.values() if t.figure is None]:
            # untimed: the cyclic garbage of the last round (LangChain's run managers, spans)
            # goes, as it would between two figures measured one after the other
            gc.collect(0)
            for t in running:
                try:
                    ns = _one(t.fn, t.calls, cap_s, t.setup, None, clock)
                except MeasurementTimeout:
                    t.figure = Figure.timeout(cap_ns)
                    continue
                t.spent += ns
                t.samples.append(ns / t.calls)
                t.enough = _enough(len(t.samples), t.spent, ns, budget_ns, cap_ns, min_repeats, max_repeats)
                if t.enough and (not together or len(t.samples) >= max_repeats):
                    t.figure = _median(t, cpu)
            if together and all(t.enough for t in running if t.figure is None):
                for t in running:
                    if t.figure is None:
                        t.figure = _median(t, cpu)
        return {name: t.figure for name, t in turns.items() if t.figure is not None}
    finally:
        if enabled:
            gc.enable()
