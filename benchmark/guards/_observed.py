"""``ObservedGuard``: the tpguard ``Guard`` handed to tpguard's own adapters in a benchmark run.

When a framework agent is measured *as deployed* (issue 12, item 8), the decision is taken by the
product's interceptor (``PurposeBoundMiddleware``, ``guard_tool`` / ``@purpose_bound``,
``SmolagentsInstrumentor``), not by the runner's gateway. Every adapter decides through
:meth:`Guard.intercept`; this subclass reports each decision it takes there — tool spec, the
arguments the adapter checked, the :class:`~tpguard.Decision`, the call id — to a listener (the
gateway), which records it as the call's attempt: a blocked call never reaches the gateway, so
this is the only place it can be seen.

Its own ``execute_tool`` spans are not recorded: the gateway's recorder writes the one span per
call that scoring from traces reads (with the evaluator's atoms). OpenTelemetry's no-op tracer
returns the current span's context as a non-recording span, so the recorder span stays a child of
the run's ``invoke_agent`` span (a test holds this).

Cost: one listener call per tool call, on top of the adapter's own check.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from opentelemetry.trace import NoOpTracerProvider, TracerProvider

from tpguard import Decision, Guard, PolicyKB, ToolSpec
from tpguard.guard import Interception, Mode

__all__ = ["DecisionListener", "ObservedGuard"]

#: The ObservedGuard whose agent is running in this context (see :meth:`ObservedGuard.running`).
_RUNNING: ContextVar[ObservedGuard | None] = ContextVar("tpguard_bench_observed", default=None)


class DecisionListener(Protocol):
    def __call__(self, spec: ToolSpec, arguments: Any, decision: Decision,
                 call_id: str | None) -> None: ...


_PROVIDER = NoOpTracerProvider()


class ObservedGuard(Guard):
    """A :class:`Guard` that reports every decision of :meth:`intercept` to ``listener``.

    With ``scoped=True`` only calls made inside :meth:`running` are reported: a process-wide
    instrumentor patches every smolagents tool, also those of agents other runner threads drive.
    """

    def __init__(self, policy: PolicyKB, *, mode: Mode, listener: DecisionListener,
                 escalate: Mode | None = None) -> None:
        super().__init__(policy, mode=mode, tracer_provider=_PROVIDER, escalate=escalate)
        self._listener = listener
        self.scoped = False
        #: whether the agent's adapter rewrites a blocked call in its memory (``enforce:message``: no)
        self.rewrite_blocked = True
        #: whether it also drops the blocked turn once its resend went through (``enforce:no-compact``: no)
        self.compact_after_resend = True

    @contextmanager
    def running(self) -> Iterator[None]:
        """Mark this context (and the threads that copy it) as this guard's agent run."""
        token = _RUNNING.set(self)
        try:
            yield
        finally:
            _RUNNING.reset(token)

    @contextmanager
    def intercept(
        self, tool: str | ToolSpec, arguments: Any, *, call_id: str | None = None,
        tracer_provider: TracerProvider | None = None, mode: Mode | None = None,
    ) -> Iterator[Interception]:
        # The adapter may pass its own provider (the instrumentor does); ours always wins.
        with super().intercept(tool, arguments, call_id=call_id, tracer_provider=_PROVIDER,
                               mode=mode) as call:
            if not self.scoped or _RUNNING.get() is self:
                self._listener(self.tool_spec(tool), arguments, call.decision, call_id)
            yield call
