"""The per-call measurements: a bare LangChain tool call beside the guard in every form, the
baselines, and the cost of one check as the policy grows from 10 to 100,000 atoms.

All of them decide the same typical call (:func:`~._workload.typical_arguments`): five fields, a
~200-character note naming a customer and an address (authorized for the ticket sink) and a phone
number (forbidden).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from opentelemetry.trace import NoOpTracerProvider

from tpguard import Guard
from tpguard.guard import Mode

from ._measure import Figure, measure, measure_interleaved
from ._workload import SPEC, Sizes, count_label, create_ticket, policy, typical_arguments

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["Bench", "atom_series", "call_figures"]

Make = Callable[[], Callable[[], Any]]


@dataclass
class Bench:
    """One run: its sizes, the figures so far, and the guards it built (one per atom count,
    built once and reused — a 100,000-atom guard takes seconds to build)."""

    sizes: Sizes
    progress: Callable[[str], None] = lambda _: None
    figures: dict[str, Figure] = field(default_factory=dict)
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)
    _guards: dict[int, Guard] = field(default_factory=dict)

    def guard(self, n_atoms: int) -> Guard:
        g = self._guards.get(n_atoms)
        if g is None:
            self.progress(f"building a guard with {n_atoms:,} atoms")
            g = self._guards[n_atoms] = Guard(policy(n_atoms), mode="enforce",
                                              tracer_provider=NoOpTracerProvider())
        return g

    def time(self, name: str, fn: Callable[[], Any], **kw: Any) -> Figure:
        self.progress(name)
        fig = self.figures[name] = measure(fn, budget_s=self.sizes.budget_s,
                                           cap_s=self.sizes.cap_s, **kw)
        return fig

    def time_together(self, fns: dict[str, tuple[Callable[[], Any], Callable[[], Any] | None]],
                      *, same_rounds: bool = False, budget_s: float | None = None, min_repeats: int = 5,
                      cpu: bool = False) -> None:
        """Figures measured in turns (:func:`~._measure.measure_interleaved`): the per-call
        figures whose ratios are targets see the same machine load (``same_rounds``: all of them
        sampled until the last one has its samples). ``budget_s``: this group's own budget;
        ``cpu``: timed in CPU time."""
        self.progress(", ".join(fns))
        self.figures.update(measure_interleaved(fns, budget_s=budget_s or self.sizes.budget_s,
                                                cap_s=self.sizes.cap_s, together=same_rounds,
                                                min_repeats=min_repeats, cpu=cpu))

    def series(self, groups: Iterable[dict[str, Make]]) -> None:
        """Measure groups of growing sizes in order, each group's figures together (in turns, in
        the same rounds: a group holds the figures of a target ratio). Once a figure times out,
        the later groups are skipped — neither built nor run, reported as timed out, at least as
        slow as the one that was stopped."""
        stopped: Figure | None = None
        for group in groups:
            if stopped is not None:
                for name in group:
                    self.figures[name] = Figure.timeout(stopped.at_least_ns or 0.0, skipped=True)
                continue
            self.time_together({name: (make(), None) for name, make in group.items()}, same_rounds=True)
            stopped = next((self.figures[name] for name in group if self.figures[name].timed_out), None)


def _bare_tool() -> Any:
    from langchain_core.tools import StructuredTool

    return StructuredTool.from_function(create_ticket)


def _intercept_sdk(args: dict[str, str], fns: dict[str, tuple[Callable[[], Any], Callable[[], Any] | None]]) -> Any:
    """intercept_sdk (enforce, the target figure: the same call and mode as ``check_enforce`` and
    ``guarded_langchain``, plus the span) and intercept_sdk_redact (informational: the call
    rewritten, re-scanned, its arguments' rewrite recorded, then the tool runs). Returns the
    provider, to shut down once they are measured."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    modes: tuple[tuple[Mode, str], ...] = (("enforce", "intercept_sdk"), ("redact", "intercept_sdk_redact"))
    for mode, name in modes:
        guard = Guard(policy(10), mode=mode, tracer_provider=provider)

        def call(guard: Guard = guard) -> None:  # the tool runs with the arguments the guard passes
            with guard.intercept(SPEC, args) as ic:
                if not ic.decision.blocked:
                    create_ticket(**ic.arguments)

        fns[name] = (call, exporter.clear)
    return provider


def _baselines(bench: Bench, args: dict[str, str]) -> None:
    # The benchmark's own baseline guards, exactly as the runner applies them to a call. Their
    # ``prepare`` ignores the case (they are purpose-blind), so none is built here.
    from ..guards.baselines import LangChainPII, PresidioRedact

    no_case = cast("Case", None)
    lc = LangChainPII().prepare(no_case)
    bench.time("langchain_pii", lambda: lc.process(SPEC, args))
    presidio = PresidioRedact().prepare(no_case)
    presidio.process(SPEC, args)  # its first call loads recognizers lazily (~1 s): not per call
    bench.time("presidio", lambda: presidio.process(SPEC, args))


def call_figures(bench: Bench) -> None:
    """bare_langchain, check_{audit,enforce,redact}, intercept_sdk(_redact), guarded_langchain (enforce),
    guarded_langchain_redact — all on the typical call, the guard holding 10 atoms, measured in
    turns so that each ratio to the bare call compares figures taken under the same load — then
    the baselines langchain_pii and presidio."""
    from tpguard.adapters.langchain import guard_tool

    args = typical_arguments()
    bare = _bare_tool()
    fns: dict[str, tuple[Callable[[], Any], Callable[[], Any] | None]] = {
        "bare_langchain": (lambda: bare.invoke(args), None)}
    guard = bench.guard(10)
    for mode in ("audit", "enforce", "redact"):
        fns[f"check_{mode}"] = (partial(guard.check, SPEC, args, mode=mode), None)
    provider = _intercept_sdk(args, fns)
    # Spans to a no-op provider: what a deployment without an OTel SDK runs. The target figure is
    # the default deployment, ``enforce`` (the typical call is withheld: LangChain hands the model
    # the guard's message); ``redact`` (rewrite, re-scan, then the tool runs) is its own figure,
    # shown beside it without a target.
    modes: tuple[tuple[Mode, str], ...] = (("enforce", "guarded_langchain"),
                                           ("redact", "guarded_langchain_redact"))
    for mode, name in modes:
        guarded = guard_tool(_bare_tool(), purpose=SPEC.purpose, sink=SPEC.sink,
                             free_text=SPEC.free_text,
                             guard=Guard(policy(10), mode=mode, tracer_provider=NoOpTracerProvider()))
        fns[name] = (partial(guarded.invoke, args), None)
    bench.time_together(fns)
    provider.shutdown()
    _baselines(bench, args)


def atom_series(bench: Bench) -> None:
    """atoms_N: ``check`` (enforce) of the typical call with N policy atoms, fuzzy candidates
    included (names and addresses share word prefixes with the note). One group: every guard is
    built, then the figures are measured in the same rounds — their ratio is a target, and a
    figure measured before the 100,000-atom guard exists sees a smaller heap than one measured
    after it (atoms_100k/atoms_10 read 1.4 and 3.1 with the series measured one after the other)."""
    args = typical_arguments()

    def make(n: int) -> Callable[[], Any]:
        return partial(bench.guard(n).check, SPEC, args)

    bench.series([{f"atoms_{count_label(n)}": partial(make, n) for n in bench.sizes.atoms}])
