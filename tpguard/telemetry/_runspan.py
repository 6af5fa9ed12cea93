"""A root span per agent run or benchmark case: ``invoke_agent {name}`` (GenAI conventions).

Every guarded ``execute_tool {tool}`` span started inside the block becomes its child, in call
order, so Jaeger shows one trace per run with the tool calls underneath:

    with agent_run_span(provider, "triage-agent", run_id="r1", case_id="healthcare-001"):
        agent.invoke(...)            # guarded tools → children of this span

An exception leaving the block marks the span ``ERROR`` with ``error.type`` set to the exception's
type only — exception messages can carry private values, so they are not recorded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.util.types import AttributeValue

from . import _attributes as A

__all__ = ["agent_run_span"]


@contextmanager
def agent_run_span(
    tracer_provider: TracerProvider | None,
    name: str,
    *,
    run_id: str | None = None,
    case_id: str | None = None,
    attributes: Mapping[str, AttributeValue] | None = None,
) -> Iterator[Span]:
    """Open ``invoke_agent {name}`` as the current span (``tracer_provider=None``: the global one).

    Attributes: ``gen_ai.operation.name=invoke_agent``, ``gen_ai.agent.name``, the OpenInference
    ``openinference.span.kind=AGENT`` / ``agent.name``, and ``tpguard.run.id`` / ``tpguard.case.id``
    when given (the case id is also the OpenInference ``session.id``, grouping a case's traces).
    """

    provider = tracer_provider or trace.get_tracer_provider()
    tracer = provider.get_tracer("tpguard", A.TPGUARD_VERSION)
    attrs: dict[str, AttributeValue] = {
        A.GEN_AI_OPERATION_NAME: A.GEN_AI_OPERATION_INVOKE_AGENT,
        A.GEN_AI_AGENT_NAME: name,
        A.OPENINFERENCE_SPAN_KIND: "AGENT",
        A.OPENINFERENCE_AGENT_NAME: name,
    }
    if run_id:
        attrs[A.TPGUARD_RUN_ID] = run_id
    if case_id:
        attrs[A.TPGUARD_CASE_ID] = case_id
        attrs[A.OPENINFERENCE_SESSION_ID] = case_id
    attrs.update(attributes or {})
    with tracer.start_as_current_span(
        f"{A.GEN_AI_OPERATION_INVOKE_AGENT} {name}", kind=SpanKind.INTERNAL, attributes=attrs,
        record_exception=False, set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except BaseException as e:
            span.set_attribute(A.ERROR_TYPE, type(e).__qualname__)
            span.set_status(Status(StatusCode.ERROR))
            raise
