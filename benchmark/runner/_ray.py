"""``--executor ray``: every case-run is a Ray task; this process (the driver) alone writes.

What travels to the workers: the cases (each put in the object store once) and one
:class:`._remote.WorkerSpec` — agent specs and options, guard names and options, seed, run id. The
workers rebuild agents and guards from those (nothing is downloaded at run time) and send back a
:class:`._remote.CaseRun`. The driver writes its audit rows to ``audit.sqlite``, its spans through
the run's tracer provider (``spans.jsonl`` and any OTLP exporter) and its record to
``records.jsonl`` — the writers a local run uses — so the run directory, resume, error accounting
and reports are those of a local run.

Scheduling: at most ``max_concurrency`` case-runs per agent spec are in flight (default: the
cluster's CPUs), so a rate-limited API sees a bounded number of concurrent requests. A worker that
dies mid-task is Ray's to handle: the task is re-run (``max_retries``), and its result reaches the
driver once. The driver still writes each key at most once. A task that fails for good (its worker
died on every attempt) becomes an errored record of type ``WorkerCrashedError`` (stage
``backend``), which a resumed run retries. See ``docs/distributed.md``.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from ..backends import AuditLog
from ..cases.schema import Case
from ._errors import case_error
from ._executor import progress_bar
from ._remote import CaseRun, WorkerSpec, run_case

__all__ = ["TASK_MAX_RETRIES", "connect", "readable_span", "run_on_ray", "store_case_run"]

TASK_MAX_RETRIES = 3  #: re-runs of a task whose worker died (Ray's ``max_retries``)

Task = tuple[Case, str, str]  # (case, agent spec, guard name)


def connect(address: str | None, num_cpus: int | None) -> bool:
    """Join the cluster at ``address`` (else ``RAY_ADDRESS``), or start a local instance bound to
    loopback with ``num_cpus`` (default: the machine's). ``False`` if Ray was already initialized
    by the caller (then the caller shuts it down), ``True`` if this call started it."""
    import ray

    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address:
        ray.init(address=address, **quiet)
    else:
        # An instance started for one run reports nothing home unless the user asked for it.
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False,
                 _node_ip_address="127.0.0.1", **quiet)
    return True


def run_on_ray(tasks: list[Task], spec: WorkerSpec, write: Callable[[CaseRun], None], *,
               progress: bool, address: str | None = None, num_cpus: int | None = None,
               max_concurrency: int | None = None) -> None:
    """Run every task on Ray; ``write`` is called in this process once per task, in completion
    order, with its :class:`CaseRun`."""
    import ray

    started = connect(address, num_cpus)
    try:
        limit = max_concurrency or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(max_retries=TASK_MAX_RETRIES, retry_exceptions=False)(run_case)
        spec_ref = ray.put(spec)
        case_refs: dict[tuple[str, str], Any] = {}
        queues: dict[str, deque[Task]] = {}
        for t in tasks:
            queues.setdefault(t[1], deque()).append(t)
        in_flight: dict[Any, Task] = {}
        per_agent: Counter[str] = Counter()
        written: set[tuple[str, str, str, str]] = set()
        with progress_bar(len(tasks), progress) as advance:
            while in_flight or any(queues.values()):
                for agent, queue in queues.items():
                    while queue and per_agent[agent] < limit:
                        case, _, guard = t = queue.popleft()
                        ref = case_refs.get((case.suite, case.id))
                        if ref is None:
                            ref = case_refs[(case.suite, case.id)] = ray.put(case)
                        in_flight[remote.remote(spec_ref, ref, agent, guard)] = t
                        per_agent[agent] += 1
                for ref in _finished(list(in_flight)):
                    t = in_flight.pop(ref)
                    per_agent[t[1]] -= 1
                    key = (t[1], t[2], t[0].suite, t[0].id)
                    if key not in written:  # one record per key, whatever Ray re-ran
                        write(_result(ref, t, spec.seed))
                        written.add(key)
                    advance()
    finally:
        if started:
            ray.shutdown()


def _finished(refs: list[Any]) -> list[Any]:
    """Block until one task finishes, then take every other one already finished."""
    import ray

    ready, rest = ray.wait(refs, num_returns=1)
    if rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    return ready


def _result(ref: Any, task: Task, seed: int) -> CaseRun:
    """The task's :class:`CaseRun`; a task Ray gave up on becomes an errored record."""
    import ray
    from ray.exceptions import RayError

    try:
        run: CaseRun = ray.get(ref)
        return run
    except RayError as e:
        from ._execute import _failed

        case, agent, guard = task
        base = {"agent": agent, "guard": guard, "suite": case.suite, "case_id": case.id,
                "domain": case.domain, "seed": seed}
        return CaseRun(_failed(base, case_error(type(e).__qualname__, "backend"), time.perf_counter()),
                       [], [], 0)


def store_case_run(run: CaseRun, audit: AuditLog, provider: TracerProvider) -> None:
    """Write a worker's audit rows and spans as if they had happened here: the case's earlier rows
    are cleared (as a local run's fresh environment does), the rows keep their steps' order and
    times, and the spans go through the provider's processors with the provider's resource."""
    r = run.record
    audit.clear_case(f"{r['agent']}/{r['guard']}", r["case_id"])
    for row in run.audit_rows:
        audit.record(run_id=row["run_id"], case_id=row["case_id"], tool=row["tool"],
                     sink=row["sink"], arguments=row["arguments"], outcome=row["outcome"],
                     result=row["result"], agent=row["agent"], guard=row["guard"], ts=row["ts"])
    # The SDK has no public way to hand a finished span to a provider's processors; this attribute
    # has held them since opentelemetry-sdk 1.0.
    processor = provider._active_span_processor
    for data in run.spans:
        processor.on_end(readable_span(data, provider.resource))


def readable_span(d: dict[str, Any], resource: Resource) -> ReadableSpan:
    """The span :func:`._remote.span_data` described, under ``resource``."""
    flags = TraceFlags(d["trace_flags"])
    parent = (SpanContext(d["parent"][0], d["parent"][1], d["parent"][2], flags)
              if d["parent"] else None)
    scope = InstrumentationScope(*d["scope"]) if d["scope"] else None
    return ReadableSpan(
        name=d["name"], context=SpanContext(d["trace_id"], d["span_id"], False, flags),
        parent=parent, resource=resource, attributes=d["attributes"],
        events=[Event(name, attributes, ts) for name, ts, attributes in d["events"]],
        kind=SpanKind(d["kind"]), status=Status(StatusCode(d["status"][0]), d["status"][1]),
        start_time=d["start"], end_time=d["end"], instrumentation_scope=scope)
