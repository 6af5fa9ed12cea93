"""One case-run away from the driver: what a Ray worker runs (and needs nothing of Ray).

:func:`run_case` rebuilds the agent and the guard from their specs (names and options — nothing is
downloaded at run time), runs :func:`._execute.execute_case` against a fresh backend of its own (an
in-memory audit log and an in-memory span exporter) and returns a :class:`CaseRun`: the record, the
audit rows and the spans as plain data. The driver writes them (:mod:`._ray`).

Transient agent errors are retried here with exponential backoff (:func:`with_retries`); which
errors are transient is deliberately narrow (:data:`TRANSIENT_ERRORS`): the connection failed, the
request timed out, or the endpoint rate-limited it. Anything else is a measurement and is recorded
as it came.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ..backends import AuditLog
from ..cases.schema import Case
from ..guards import GuardUnderTest, make_guard
from ..metrics import CaseScorer
from ._execute import execute_case
from .gateway import Recorders

__all__ = ["TRANSIENT_ERRORS", "CaseRun", "WorkerSpec", "run_case", "span_data", "with_retries"]

#: Agent error types retried with backoff: the connection failed (OpenAI's ``APIConnectionError``,
#: httpx's ``ConnectError``, the builtin ``ConnectionError`` family), the request timed out
#: (``APITimeoutError``, ``TimeoutError``, httpx's ``ConnectTimeout``/``ReadTimeout``), or it was
#: rate-limited (``RateLimitError``). Not retried: authentication, bad requests, unknown models,
#: server errors, replay misses — retrying those cannot change the answer.
TRANSIENT_ERRORS = frozenset({
    "APIConnectionError", "APITimeoutError", "RateLimitError",
    "ConnectionError", "ConnectionResetError", "ConnectionRefusedError", "ConnectionAbortedError",
    "TimeoutError", "ConnectError", "ConnectTimeout", "ReadTimeout",
})


@dataclass(frozen=True)
class WorkerSpec:
    """What every task needs besides its case: the agents' options and the guards' options (specs,
    not objects), the run's seed and id, and the retry policy. Sent to the cluster once."""

    agent_options: dict[str, Any]
    knows_variants: bool
    presidio_model: str | None
    seed: int
    run_id: str
    tpguard_version: str = ""  # the driver's; a worker with another one refuses to measure
    retries: int = 4  # transient agent errors: attempts after the first
    backoff_s: float = 1.0  # first delay; doubles per attempt, jittered, capped at 60 s
    hook: Callable[[Case, str, str], None] | None = field(default=None, compare=False)


@dataclass
class CaseRun:
    """A finished case-run as data: the record, the audit log's rows, the spans."""

    record: dict[str, Any]
    audit_rows: list[dict[str, Any]]
    spans: list[dict[str, Any]]
    tries: int = 1


def transient(run: CaseRun) -> bool:
    """Whether the case-run failed in its agent with a transient error."""
    err = run.record.get("error") or {}
    return err.get("stage") == "agent" and err.get("type") in TRANSIENT_ERRORS


def with_retries(once: Callable[[], CaseRun], *, retries: int, backoff_s: float,
                 sleep: Callable[[float], None] = time.sleep) -> CaseRun:
    """``once()`` until it is not :func:`transient` or ``retries`` retries are spent; the delay
    before retry ``k`` (0-based) is ``min(60, backoff_s·2^k)`` scaled by a jitter in [0.5, 1].

    Hand-written (ten lines) rather than ``tenacity``: tenacity is not a dependency of ours, only a
    transitive one of langchain's."""
    for attempt in range(retries + 1):
        run = once()
        run.tries = attempt + 1
        if attempt == retries or not transient(run):
            return run
        sleep(min(60.0, backoff_s * 2 ** attempt) * random.uniform(0.5, 1.0))
    raise AssertionError("unreachable")  # pragma: no cover - the loop always returns


@lru_cache(maxsize=32)
def _guard(name: str, knows_variants: bool, presidio_model: str | None) -> GuardUnderTest:
    """Guards are built once per worker process (a local run shares one per name, too)."""
    return make_guard(name, knows_variants=knows_variants, presidio_model=presidio_model)


_SCORERS: dict[tuple[str, str], CaseScorer] = {}
_RECORDERS = Recorders()  # a worker's per-case span recorders (a local run keeps one per case)


def _scorer(case: Case) -> CaseScorer:
    """One scorer per case per worker process, as a local run keeps one per case."""
    key = (case.suite, case.id)
    if key not in _SCORERS:
        if len(_SCORERS) >= 256:
            _SCORERS.clear()
        _SCORERS[key] = CaseScorer(case)
    return _SCORERS[key]


def run_case(spec: WorkerSpec, case: Case, agent_spec: str, guard_name: str) -> CaseRun:
    """The Ray task: one (agent, guard, case) against its own fresh backend."""
    from tpguard import __version__

    from ..agents.registry import make_agent

    if spec.tpguard_version and spec.tpguard_version != __version__:
        return _refused(case, agent_spec, guard_name, spec.seed)
    if spec.hook is not None:
        spec.hook(case, agent_spec, guard_name)
    guard = _guard(guard_name, spec.knows_variants, spec.presidio_model)
    scorer = _scorer(case)

    def once() -> CaseRun:
        spans = InMemorySpanExporter()
        provider = TracerProvider(shutdown_on_exit=False)  # one per task: no atexit hook piles up
        provider.add_span_processor(SimpleSpanProcessor(spans))
        with AuditLog(":memory:") as audit:
            record = execute_case(case, make_agent(agent_spec, **spec.agent_options), agent_spec,
                                  guard, audit=audit, scorer=scorer, seed=spec.seed,
                                  run_id=spec.run_id, tracer_provider=provider,
                                  recorders=_RECORDERS)
            rows = audit.rows()
        provider.shutdown()
        return CaseRun(record, rows, [span_data(s) for s in spans.get_finished_spans()])

    return with_retries(once, retries=spec.retries, backoff_s=spec.backoff_s)


def _refused(case: Case, agent: str, guard: str, seed: int) -> CaseRun:
    """A worker whose tpguard differs from the driver's: an errored record, not a measurement of
    other code mixed into this run."""
    from ._errors import case_error
    from ._execute import _failed

    base = {"agent": agent, "guard": guard, "suite": case.suite, "case_id": case.id,
            "domain": case.domain, "seed": seed}
    return CaseRun(_failed(base, case_error("TpguardVersionMismatch", "backend"),
                           time.perf_counter()), [], [], 0)


def span_data(span: ReadableSpan) -> dict[str, Any]:
    """A finished span as plain data (no locks, no SDK objects), rebuilt by the driver."""
    ctx, parent, scope = span.get_span_context(), span.parent, span.instrumentation_scope
    return {
        "name": span.name, "kind": span.kind.value,
        "trace_id": ctx.trace_id if ctx else 0, "span_id": ctx.span_id if ctx else 0,
        "trace_flags": int(ctx.trace_flags) if ctx else 1,
        "parent": (parent.trace_id, parent.span_id, parent.is_remote) if parent else None,
        "start": span.start_time, "end": span.end_time,
        "status": (span.status.status_code.value, span.status.description),
        "attributes": dict(span.attributes or {}),
        "events": [(e.name, e.timestamp, dict(e.attributes or {})) for e in span.events],
        "scope": (scope.name, scope.version, scope.schema_url) if scope else None,
    }
