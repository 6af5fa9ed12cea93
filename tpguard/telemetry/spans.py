"""One span per intercepted tool call: ``execute_tool {tool}`` with GenAI and ``tpguard.*``
attributes (issue 9, item 7: cheap by default), OpenInference's names of the same facts on request.

Every value costs the OpenTelemetry SDK a validation pass (~5–7 k instructions for a string or a
number, ~10 k plus ~4 k per element for a list; an event ~28 k plus its attributes; docs/perf.md),
so the default span records each fact once: no OpenInference twins (``openinference=True`` adds
``openinference.span.kind``, ``tool.*``, ``input.*``), no argument content unless the content
policy records it, no per-finding events.

Findings are summarized as attributes — ``tpguard.finding.count``, ``tpguard.findings.types``,
``tpguard.forbidden.count`` and, when something was forbidden, ``tpguard.forbidden.{atom_ids,
atom_types, fields}`` — which is all a dashboard, an alert or a trace search needs — and, when
anything was found, ``tpguard.findings.table``: one compact JSON string with a row per distinct finding
(atom id, type, display path, method, free text, authorized; no offsets, no values), which is what
``tpguard audit`` scores from, so a default span is enough for the audit (issue 34). Per-finding
detail (offsets, method, severity) is opt-in: ``events="forbidden"`` gives each forbidden finding
one ``tpguard.finding`` event (ids, types, paths, offsets — no values), ``"all"`` every finding
(forbidden first; what ``tpguard audit --spans`` scores from), up to ``max_events`` per span
(default 16, ``None`` = uncapped); ``tpguard.finding.events_dropped`` says how many were left out.
Nothing is rendered for a span that is not recording; paths are display paths (a key that is an
atom shows as its placeholder).

The same span covers the result stage (issue 10): :func:`record_result` sets ``tpguard.result.*``
(decision, counts, scope dimensions, atom ids and types) and one ``tpguard.result.finding`` event
per out-of-scope item (dimension, path, a value-free description), capped like finding events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from itertools import compress
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from . import _attributes as A
from ._attributes import DEFAULT_SESSION_ID

if TYPE_CHECKING:
    from ..detect._leaves import CallView
    from ..detect.detector import Finding
    from ..guard import Decision
    from ..policy.kb import ToolSpec
    from .content import ContentPolicy

__all__ = ["DEFAULT_FINDING_EVENTS", "FINDING_EVENTS", "FindingEvents", "record_decision",
           "record_error", "record_result", "start_tool_span"]

#: ``tpguard.finding`` events per span unless the guard says otherwise
DEFAULT_FINDING_EVENTS = 16
#: which findings get a ``tpguard.finding`` event: none (default: the summary only), the forbidden
#: ones, or all
FindingEvents = Literal["none", "forbidden", "all"]
FINDING_EVENTS: tuple[FindingEvents, ...] = ("none", "forbidden", "all")


#: (id(spec), openinference) → (spec, its span attributes): a spec's attributes (its schema as
#: JSON included) are built once, not per call; the spec is kept so an id is never reused for
#: another spec
_SPEC_ATTRIBUTES: dict[tuple[int, bool], tuple[ToolSpec, dict[str, Any]]] = {}
_SPEC_CACHE_SIZE = 1024


def _spec_attributes(spec: ToolSpec, openinference: bool) -> dict[str, Any]:
    cached = _SPEC_ATTRIBUTES.get((id(spec), openinference))
    if cached is not None and cached[0] is spec:
        return cached[1]
    attributes: dict[str, Any] = {
        A.GEN_AI_OPERATION_NAME: A.GEN_AI_OPERATION_EXECUTE_TOOL,
        A.GEN_AI_TOOL_NAME: spec.name,
        A.GEN_AI_TOOL_TYPE: "function",
        A.TPGUARD_SINK: spec.sink,
    }
    description = spec.description
    if description:
        attributes[A.GEN_AI_TOOL_DESCRIPTION] = description
    if spec.purpose:
        attributes[A.TPGUARD_PURPOSE] = spec.purpose
    if openinference:
        attributes[A.OPENINFERENCE_SPAN_KIND] = "TOOL"
        attributes[A.OPENINFERENCE_TOOL_NAME] = spec.name
        if description:
            attributes[A.OPENINFERENCE_TOOL_DESCRIPTION] = description
        if spec.input_schema:
            attributes[A.OPENINFERENCE_TOOL_PARAMETERS] = json.dumps(spec.input_schema, sort_keys=True)
    if len(_SPEC_ATTRIBUTES) >= _SPEC_CACHE_SIZE:
        _SPEC_ATTRIBUTES.clear()
    _SPEC_ATTRIBUTES[(id(spec), openinference)] = (spec, attributes)
    return attributes


def start_tool_span(tracer: Tracer, spec: ToolSpec, call_id: str | None,
                    openinference: bool = False) -> Span:
    """The ``execute_tool {tool}`` span; the spec's attributes come from a per-spec cache (the
    span gets a copy), so a call costs the span itself plus the call id. ``openinference`` adds
    the OpenInference names of the same facts (``openinference.span.kind=TOOL``, ``tool.*``)."""
    attributes = dict(_spec_attributes(spec, openinference))  # a copy: a tracer may keep it
    if call_id:
        attributes[A.GEN_AI_TOOL_CALL_ID] = call_id
        if openinference:
            attributes[A.OPENINFERENCE_TOOL_ID] = call_id
    return tracer.start_span(f"execute_tool {spec.name}", kind=SpanKind.INTERNAL, attributes=attributes)


def record_decision(
    span: Span, decision: Decision, content: ContentPolicy, call: CallView | None,
    canonical: Callable[[str], str | None] | None = None,
    max_events: int | None = DEFAULT_FINDING_EVENTS, events: FindingEvents = "none",
    openinference: bool = False,
) -> None:
    """Attributes, capped finding events and (when the content policy records them) rendered
    arguments of one decided call. O(findings + size of the call); nothing at all when the span
    is not recording."""
    if not span.is_recording():
        return
    findings, forbidden = decision.findings, decision.forbidden
    attrs = _summary(decision)
    rendered = None
    if call is not None:  # (no table: the guard failed before it had one; record no arguments)
        leaves = call.table.leaves
        # the non-empty free-text slots (FTSlotRate); candidates picked in C (most leaves are not)
        free = list(compress(range(len(leaves)), map(_FREE, leaves)))
        if free:  # (an empty list says the call's free-text slots were all empty)
            attrs[A.TPGUARD_FREE_TEXT_SLOTS] = [call.path(i) for i in free
                                                if leaves[i].text and not leaves[i].is_key]
        rendered = content.render_call(call, canonical)  # None unless content is recorded
    if rendered is not None:
        attrs[A.TPGUARD_ARGUMENTS] = rendered
        attrs[A.TPGUARD_ARGUMENTS_MODE] = content.mode
        if openinference:
            attrs[A.OPENINFERENCE_INPUT_VALUE] = rendered
            attrs[A.OPENINFERENCE_INPUT_MIME_TYPE] = "application/json"
        if content.mode == "raw":
            attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS] = rendered
    eventful: Sequence[Finding] = (() if events == "none" else forbidden if events == "forbidden"
                                   else forbidden + tuple(f for f in findings if f.authorized))
    if max_events is not None and len(eventful) > max_events:
        attrs[A.TPGUARD_FINDING_EVENTS_DROPPED] = len(eventful) - max_events
        eventful = eventful[:max_events]
    if decision.action == "block":
        attrs[A.ERROR_TYPE] = "tpguard.blocked"
    span.set_attributes(attrs)
    for f in eventful:
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
        span.set_status(_BLOCKED)


def _sorted(field: Callable[[Any], str], findings: Sequence[Any]) -> list[str]:
    """Sorted unique values of one field (C-level ``map``/``set``: no Python code per finding)."""
    return sorted(set(map(field, findings)))


_ID, _TYPE, _PATH = (attrgetter(a) for a in ("atom_id", "atom_type", "path"))
_FREE = attrgetter("free_text")
_ROW = attrgetter(*A.FINDINGS_COLUMNS)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_ROW_CACHE_SIZE = 4096


class _RowText(dict[tuple[Any, ...], str]):
    """row → its JSON text, encoded once: the same (atom, path, method) recurs call after call,
    and a cached row costs a dict lookup in C where encoding it costs the JSON encoder's setup."""

    def __missing__(self, row: tuple[Any, ...]) -> str:
        if len(self) >= _ROW_CACHE_SIZE:
            self.clear()
        text = self[row] = _COMPACT(row)
        return text


_ROW_TEXT = _RowText().__getitem__


def _table(findings: Sequence[Finding]) -> str:
    """``tpguard.findings.table``: distinct ``(atom_id, atom_type, path, method, free_text, authorized)``
    rows as compact JSON, in finding order (rows built, deduplicated and joined in C). O(findings)."""
    return "[" + ",".join(map(_ROW_TEXT, dict.fromkeys(map(_ROW, findings)))) + "]"


def _summary(decision: Decision) -> dict[str, Any]:
    findings, forbidden = decision.findings, decision.forbidden
    attrs: dict[str, Any] = {
        A.TPGUARD_MODE: decision.mode,
        A.TPGUARD_DECISION: decision.action,
        A.TPGUARD_FINDING_COUNT: len(findings),
        A.TPGUARD_FORBIDDEN_COUNT: len(forbidden),
    }
    if forbidden:  # absent lists are empty ones: list attributes cost the SDK ~3x a string
        attrs[A.TPGUARD_FORBIDDEN_ATOM_IDS] = _sorted(_ID, forbidden)
        attrs[A.TPGUARD_FORBIDDEN_ATOM_TYPES] = _sorted(_TYPE, forbidden)
        attrs[A.TPGUARD_FORBIDDEN_FIELDS] = _sorted(_PATH, forbidden)
    if findings:
        attrs[A.TPGUARD_FINDINGS_TYPES] = _sorted(_TYPE, findings)
        attrs[A.TPGUARD_FINDINGS] = _table(findings)
    if decision.scope:
        attrs[A.TPGUARD_SCOPE_DIMENSIONS] = sorted({f.dimension for f in decision.scope})
        attrs[A.TPGUARD_SCOPE_ARGUMENTS] = sorted({f.path for f in decision.scope})
    if decision.session_id and decision.session_id != DEFAULT_SESSION_ID:  # (it says nothing)
        attrs[A.TPGUARD_SESSION_ID] = decision.session_id
    if decision.error:
        attrs[A.TPGUARD_ERROR] = decision.error
    return attrs


#: built once: a ``Status`` costs ~8 k instructions to construct (it validates its arguments)
_BLOCKED = Status(StatusCode.ERROR, "blocked by tpguard")
_SEVERITY = {"allow": 0, "redact": 1, "block": 2}


def record_result(span: Span, decisions: Sequence[Decision],
                  max_events: int | None = DEFAULT_FINDING_EVENTS) -> None:
    """``tpguard.result.*`` over every result checked in this call (content and artifact are two),
    the last call's events added. O(findings); nothing when the span is not recording."""
    if not span.is_recording() or not decisions:
        return
    scope = [f for d in decisions for f in d.scope]
    findings = [f for d in decisions for f in d.findings]
    worst = max(decisions, key=lambda d: _SEVERITY[d.action])
    attrs: dict[str, Any] = {
        A.TPGUARD_RESULT_DECISION: worst.action,
        A.TPGUARD_RESULT_SCOPE_COUNT: len(scope),
        A.TPGUARD_RESULT_SCOPE_DIMENSIONS: sorted({f.dimension for f in scope}),
        A.TPGUARD_RESULT_FINDING_COUNT: len(findings),
        A.TPGUARD_RESULT_ATOM_IDS: sorted({f.atom_id for f in findings}),
        A.TPGUARD_RESULT_ATOM_TYPES: sorted({f.atom_type for f in findings}),
        A.TPGUARD_RESULT_FORBIDDEN_ATOM_TYPES: sorted({f.atom_type for f in findings if f.authorized is False}),
    }
    errors = sorted({d.error for d in decisions if d.error})
    if errors:
        attrs[A.TPGUARD_RESULT_ERROR] = errors
    last = decisions[-1].scope
    events = last if max_events is None else last[:max_events]
    if len(events) < len(last):
        attrs[A.TPGUARD_RESULT_EVENTS_DROPPED] = len(last) - len(events)
    span.set_attributes(attrs)
    for f in events:
        span.add_event(A.TPGUARD_RESULT_EVENT, {A.RESULT_DIMENSION: f.dimension,
                                                A.RESULT_PATH: f.path,
                                                A.RESULT_DESCRIPTION: f.description})


def record_error(span: Span, exc: BaseException) -> None:
    """The tool (or the framework) raised: record the type only — messages may carry values."""
    if span.is_recording():
        span.set_attribute(A.ERROR_TYPE, type(exc).__qualname__)
        span.set_status(Status(StatusCode.ERROR))
