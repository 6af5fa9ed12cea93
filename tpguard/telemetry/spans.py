"""One span per intercepted tool call: ``execute_tool {tool}`` with GenAI, OpenInference and
``tpguard.*`` attributes, and one ``tpguard.finding`` event per finding (ids, types, paths — no values).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from .._walk import iter_leaves
from . import _attributes as A

if TYPE_CHECKING:
    from ..guard import Decision
    from ..policy import ToolSpec
    from .content import ContentPolicy

__all__ = ["record_decision", "record_error", "start_tool_span"]


def start_tool_span(tracer: Tracer, spec: ToolSpec, call_id: str | None) -> Span:
    attributes: dict[str, Any] = {
        A.GEN_AI_OPERATION_NAME: A.GEN_AI_OPERATION_EXECUTE_TOOL,
        A.GEN_AI_TOOL_NAME: spec.name,
        A.GEN_AI_TOOL_TYPE: "function",
        A.OPENINFERENCE_SPAN_KIND: "TOOL",
        A.OPENINFERENCE_TOOL_NAME: spec.name,
        A.TPGUARD_SINK: spec.sink,
    }
    description = spec.description or spec.purpose
    if description:
        attributes[A.GEN_AI_TOOL_DESCRIPTION] = description
        attributes[A.OPENINFERENCE_TOOL_DESCRIPTION] = description
    if spec.purpose:
        attributes[A.TPGUARD_PURPOSE] = spec.purpose
    if spec.free_text:
        attributes[A.TPGUARD_FREE_TEXT] = list(spec.free_text)
    if spec.input_schema:
        attributes[A.OPENINFERENCE_TOOL_PARAMETERS] = json.dumps(spec.input_schema, sort_keys=True)
    if call_id:
        attributes[A.GEN_AI_TOOL_CALL_ID] = call_id
        attributes[A.OPENINFERENCE_TOOL_ID] = call_id
    return tracer.start_span(f"execute_tool {spec.name}", kind=SpanKind.INTERNAL, attributes=attributes)


def record_decision(
    span: Span, decision: Decision, arguments: Any, content: ContentPolicy,
    canonical: Callable[[str], str | None] | None = None, free_text: tuple[str, ...] = (),
) -> None:
    if not span.is_recording():
        return
    forbidden = decision.forbidden
    span.set_attributes({
        A.TPGUARD_MODE: decision.mode,
        A.TPGUARD_DECISION: decision.action,
        A.TPGUARD_FINDING_COUNT: len(decision.findings),
        A.TPGUARD_FORBIDDEN_ATOM_IDS: sorted({f.atom_id for f in forbidden}),
        A.TPGUARD_FORBIDDEN_ATOM_TYPES: sorted({f.atom_type for f in forbidden}),
        A.TPGUARD_FORBIDDEN_FIELDS: sorted({f.path for f in forbidden}),
        A.TPGUARD_ARGUMENTS_MODE: content.mode,
    })
    if decision.session_id:
        span.set_attribute(A.TPGUARD_SESSION_ID, decision.session_id)
    if decision.error:
        span.set_attribute(A.TPGUARD_ERROR, decision.error)
    if free_text:
        slots = [p for p, key, _ in iter_leaves(arguments) if key in free_text or p in free_text]
        span.set_attribute(A.TPGUARD_FREE_TEXT_SLOTS, slots)
    rendered = content.render(arguments, decision.findings, canonical)
    if rendered is not None:
        span.set_attribute(A.TPGUARD_ARGUMENTS, rendered)
        span.set_attribute(A.OPENINFERENCE_INPUT_VALUE, rendered)
        span.set_attribute(A.OPENINFERENCE_INPUT_MIME_TYPE, "application/json")
        if content.mode == "raw":
            span.set_attribute(A.GEN_AI_TOOL_CALL_ARGUMENTS, rendered)
    for f in decision.findings:
        span.add_event(A.TPGUARD_FINDING_EVENT, {
            A.FINDING_ATOM_ID: f.atom_id,
            A.FINDING_ATOM_TYPE: f.atom_type,
            A.FINDING_PATH: f.path,
            A.FINDING_METHOD: f.method,
            A.FINDING_AUTHORIZED: bool(f.authorized),
            A.FINDING_FREE_TEXT: f.free_text,
            A.FINDING_SEVERITY: f.severity,
            A.FINDING_START: f.start,
            A.FINDING_END: f.end,
        })
    if decision.action == "block":
        span.set_status(Status(StatusCode.ERROR, "blocked by tpguard"))
        span.set_attribute(A.ERROR_TYPE, "tpguard.blocked")


def record_error(span: Span, exc: BaseException) -> None:
    """The tool (or the framework) raised: record the type only — messages may carry values."""
    if span.is_recording():
        span.set_attribute(A.ERROR_TYPE, type(exc).__qualname__)
        span.set_status(Status(StatusCode.ERROR))
