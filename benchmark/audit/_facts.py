"""What one exported tool span says about its call, read back without values (issue 34, item 1).

A guard span records by default ``tpguard.findings.table`` — one row per distinct finding (atom id,
type, display path, method, free text, authorized) — beside the tool, sink, purpose, mode,
decision and session. That is enough to score the call. Spans from before that attribute carry the
findings only as ``tpguard.finding`` events, which are complete only when every finding got one
(``finding_events="all"``, uncapped). A span that has findings but neither a table nor a complete
set of events cannot be scored: :class:`UnscorableSpan` says which span and what it lacks, and the
audit refuses it rather than scoring the call as leak-free.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tpguard import Finding
from tpguard.telemetry import _attributes as A
from tpguard.telemetry import exit_spans as X

__all__ = ["TOOL_PREFIX", "CallFacts", "UnscorableSpan", "call_facts", "call_facts_of", "is_tool_span"]

TOOL_PREFIX = "execute_tool "
_EXIT_PREFIX = "exit "
_WIDTH = len(A.FINDINGS_COLUMNS)


class UnscorableSpan(ValueError):
    """A span that cannot be scored: it does not carry the facts the audit needs."""


@dataclass(frozen=True, slots=True)
class CallFacts:
    """One checked call (or exit) as a span recorded it: who, where, what was found; no values."""

    tool: str
    trace_id: str
    span_id: str
    start_ns: int
    stage: str                      # "request" (a tool call) or "exit" (an ``exit {channel}`` span)
    sink: str = ""
    purpose: str = ""
    mode: str = ""
    decision: str = ""
    session: str = ""
    findings: tuple[Finding, ...] = ()
    free_text_slots: tuple[str, ...] | None = None
    ok: bool = True
    #: result stage (on the tool's span): the guard's decision and the types forbidden there
    result_decision: str = ""
    result_forbidden_types: tuple[str, ...] = ()
    result_scope_count: int = 0
    #: exit stage: the channel's decision, forbidden atom ids/types and the fields found
    exit_decision: str = ""
    exit_forbidden_ids: tuple[str, ...] = ()
    exit_forbidden_types: tuple[str, ...] = ()
    exit_fields: tuple[str, ...] = ()
    exit_recipients: tuple[str, ...] = ()
    exit_visible: bool | None = None

    @property
    def forbidden(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.authorized is False)


def is_tool_span(span: dict[str, Any]) -> bool:
    return str(span.get("name", "")).startswith(TOOL_PREFIX)


def _where(span: dict[str, Any]) -> str:
    return f"span {span.get('span_id') or '?'} ({span.get('name', '?')}, trace {span.get('trace_id') or '?'})"


def _table(text: Any, span: dict[str, Any]) -> tuple[Finding, ...]:
    try:  # (a backend may hand back the JSON text parsed: Jaeger's list-looking tags)
        rows = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        rows = None
    if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == _WIDTH for r in rows):
        raise UnscorableSpan(
            f"{_where(span)}: {A.TPGUARD_FINDINGS} is not a JSON list of "
            f"[{', '.join(A.FINDINGS_COLUMNS)}] rows (cut by an attribute length limit, or from "
            "another tpguard version)")
    return tuple(Finding(str(a), str(t), str(p), m, 0, 0, 1.0, bool(ft), 1.0,
                         None if ok is None else bool(ok)) for a, t, p, m, ft, ok in rows)


def _event(event: dict[str, Any]) -> Finding | None:
    a = event.get("attributes") or {}
    if event.get("name") != A.TPGUARD_FINDING_EVENT or A.FINDING_ATOM_ID not in a:
        return None
    auth = a.get(A.FINDING_AUTHORIZED)
    return Finding(
        a[A.FINDING_ATOM_ID], a.get(A.FINDING_ATOM_TYPE, ""), a.get(A.FINDING_PATH, ""),
        a.get(A.FINDING_METHOD, "exact"), int(a.get(A.FINDING_START, 0)), int(a.get(A.FINDING_END, 0)),
        1.0, bool(a.get(A.FINDING_FREE_TEXT, False)), float(a.get(A.FINDING_SEVERITY, 1.0)),
        None if auth is None else bool(auth),
    )


def _findings(span: dict[str, Any], a: dict[str, Any]) -> tuple[Finding, ...]:
    """The call's findings: the table, else complete events, else :class:`UnscorableSpan`."""
    if A.TPGUARD_FINDINGS in a:
        return _table(a[A.TPGUARD_FINDINGS], span)
    count = a.get(A.TPGUARD_FINDING_COUNT)
    events = tuple(f for f in map(_event, span.get("events") or ()) if f is not None)
    if count is None:
        if events:  # (spans of the first releases: events, no summary)
            return events
        raise UnscorableSpan(f"{_where(span)}: no {A.TPGUARD_FINDING_COUNT} and no findings: "
                             "not a tpguard guard span, or its attributes were dropped")
    if int(count) == 0:
        return ()
    dropped = int(a.get(A.TPGUARD_FINDING_EVENTS_DROPPED, 0) or 0)
    if len(events) >= int(count) and not dropped:
        return events
    raise UnscorableSpan(
        f"{_where(span)}: {count} finding(s) but no {A.TPGUARD_FINDINGS} attribute and "
        f"{len(events)} {A.TPGUARD_FINDING_EVENT} event(s) ({dropped} dropped): recorded by an "
        "older tpguard, which kept per-finding detail only in events, with finding_events other "
        "than 'all' or under a max_finding_events cap. Re-record with this tpguard (default settings "
        "suffice) or with Guard(finding_events='all', max_finding_events=None)")


def _strings(v: Any) -> tuple[str, ...]:
    return tuple(map(str, v)) if isinstance(v, list | tuple) else ()


def call_facts_of(spans: Iterable[dict[str, Any]]) -> list[CallFacts]:
    """The facts of every tool and exit span (other spans skipped); an unscorable one raises."""
    return [f for f in map(call_facts, spans) if f is not None]


def call_facts(span: dict[str, Any]) -> CallFacts | None:
    """The facts of a tool span or an ``exit`` span; ``None`` for any other span. A tool span
    without what scoring needs raises :class:`UnscorableSpan`."""
    name = str(span.get("name", ""))
    a = span.get("attributes") or {}
    exit_only = name.startswith(_EXIT_PREFIX) and not name.startswith(TOOL_PREFIX)
    if not (name.startswith(TOOL_PREFIX) or exit_only):
        return None
    base: dict[str, Any] = dict(
        trace_id=str(span.get("trace_id") or ""), span_id=str(span.get("span_id") or ""),
        start_ns=int(span.get("start_time_unix_nano") or 0),
        session=str(a.get(A.TPGUARD_SESSION_ID) or ""),
        exit_decision=str(a.get(X.EXIT_DECISION) or ""),
        exit_forbidden_ids=_strings(a.get(X.EXIT_FORBIDDEN_ATOM_IDS)),
        exit_forbidden_types=_strings(a.get(X.EXIT_FORBIDDEN_ATOM_TYPES)),
        exit_fields=_strings(a.get(X.EXIT_FIELDS)),
        exit_recipients=_strings(a.get(X.EXIT_RECIPIENTS)),
        exit_visible=None if a.get(X.EXIT_VISIBLE) is None else bool(a.get(X.EXIT_VISIBLE)),
    )
    if exit_only:
        return CallFacts(tool=str(a.get(X.EXIT_CHANNEL) or name[len(_EXIT_PREFIX):]), stage="exit",
                         mode=str(a.get(X.EXIT_MODE) or ""), decision=str(a.get(X.EXIT_DECISION) or ""),
                         **base)
    slots = a.get(A.TPGUARD_FREE_TEXT_SLOTS)
    return CallFacts(
        tool=str(a.get(A.GEN_AI_TOOL_NAME) or name[len(TOOL_PREFIX):]), stage="request",
        sink=str(a.get(A.TPGUARD_SINK) or ""), purpose=str(a.get(A.TPGUARD_PURPOSE) or ""),
        mode=str(a.get(A.TPGUARD_MODE) or ""), decision=str(a.get(A.TPGUARD_DECISION) or ""),
        findings=_findings(span, a),
        free_text_slots=_strings(slots) if slots is not None else None,
        ok=(span.get("status") or {}).get("code") != "ERROR",
        result_decision=str(a.get(A.TPGUARD_RESULT_DECISION) or ""),
        result_forbidden_types=_strings(a.get(A.TPGUARD_RESULT_FORBIDDEN_ATOM_TYPES)),
        result_scope_count=int(a.get(A.TPGUARD_RESULT_SCOPE_COUNT) or 0),
        **base,
    )
