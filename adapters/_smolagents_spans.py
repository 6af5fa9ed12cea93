"""Opening the ``execute_tool`` span for one smolagents call.

``Guard.intercept`` spans go to the guard's tracer provider. The instrumentor also accepts its own
``tracer_provider`` (OpenTelemetry-instrumentor convention); the core has no public hook for that
yet, so :func:`intercept` re-creates ``Guard.intercept`` with another tracer from the same public
telemetry helpers (the guard's argument-recording policy is kept).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Tracer

from tpguard import Guard, ToolSpec
from tpguard.guard import Interception
from tpguard.telemetry.spans import record_decision, record_error, start_tool_span

__all__ = ["intercept"]

_log = logging.getLogger("tpguard")


@contextmanager
def intercept(
    guard: Guard, spec: ToolSpec, arguments: Any, *, call_id: str | None, tracer: Tracer | None
) -> Iterator[Interception]:
    """``guard.intercept(spec, arguments, call_id=...)``, on ``tracer`` when one is given."""
    if tracer is None:
        with guard.intercept(spec, arguments, call_id=call_id) as call:
            yield call
        return
    span = start_tool_span(tracer, spec, call_id)
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        decision = guard.check(spec, arguments)
        try:
            record_decision(span, decision, arguments, guard._content)
        except Exception as e:  # recording must not break the call
            _log.error("tpguard: could not record a span (%s)", type(e).__qualname__)
        yield Interception(decision, span)
    except BaseException as e:
        record_error(span, e)
        raise
    finally:
        otel_context.detach(token)
        span.end()
