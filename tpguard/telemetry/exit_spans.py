"""The exit stage on spans (issue 11): ``exit {channel}`` spans and ``tpguard.exit.*`` attributes.

:meth:`tpguard.Guard.check_exit` opens one ``exit {channel}`` span per checked payload (a child of
the current span: the agent's, or a tool's); a tool whose call is an exit (``ToolSpec.exit``)
records the same attributes on its own ``execute_tool`` span. Attributes are value-free: the
channel, whether it is a visible exit, the recipient ids (an undeclared address is
``undeclared``) and kinds, the decision, counts, atom ids and types and display paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from . import _attributes as A

if TYPE_CHECKING:
    from ..guard import Decision

__all__ = ["record_exit", "start_exit_span"]

EXIT_CHANNEL: Final = "tpguard.exit.channel"
EXIT_VISIBLE: Final = "tpguard.exit.visible"
EXIT_RECIPIENTS: Final = "tpguard.exit.recipients"
EXIT_RECIPIENT_KINDS: Final = "tpguard.exit.recipient_kinds"
EXIT_MODE: Final = "tpguard.exit.mode"
EXIT_DECISION: Final = "tpguard.exit.decision"
EXIT_FINDING_COUNT: Final = "tpguard.exit.finding.count"
EXIT_FORBIDDEN_COUNT: Final = "tpguard.exit.forbidden.count"
EXIT_ATOM_IDS: Final = "tpguard.exit.atom_ids"
EXIT_ATOM_TYPES: Final = "tpguard.exit.atom_types"
EXIT_FORBIDDEN_ATOM_IDS: Final = "tpguard.exit.forbidden.atom_ids"
EXIT_FORBIDDEN_ATOM_TYPES: Final = "tpguard.exit.forbidden.atom_types"
EXIT_FIELDS: Final = "tpguard.exit.fields"
EXIT_ERROR: Final = "tpguard.exit.error"


def start_exit_span(tracer: Tracer, channel: str) -> Span:
    return tracer.start_span(f"exit {channel}", kind=SpanKind.INTERNAL,
                             attributes={EXIT_CHANNEL: channel})


def record_exit(span: Span, decision: Decision, *, own_span: bool) -> None:
    """``tpguard.exit.*`` of one exit decision; on its own span a block also sets the status.
    O(findings); nothing when the span is not recording."""
    if not span.is_recording():
        return
    findings, forbidden = decision.findings, decision.forbidden
    recipients = decision.recipients
    attrs: dict[str, Any] = {
        EXIT_CHANNEL: decision.tool,
        EXIT_VISIBLE: decision.visible,
        EXIT_RECIPIENTS: sorted({r.id for r in recipients}),
        EXIT_RECIPIENT_KINDS: sorted({r.kind for r in recipients}),
        EXIT_MODE: decision.mode,
        EXIT_DECISION: decision.action,
        EXIT_FINDING_COUNT: len(findings),
        EXIT_FORBIDDEN_COUNT: len(forbidden),
        EXIT_ATOM_IDS: sorted({f.atom_id for f in findings}),
        EXIT_ATOM_TYPES: sorted({f.atom_type for f in findings}),
        EXIT_FORBIDDEN_ATOM_IDS: sorted({f.atom_id for f in forbidden}),
        EXIT_FORBIDDEN_ATOM_TYPES: sorted({f.atom_type for f in forbidden}),
        EXIT_FIELDS: sorted({f.path for f in findings}),
    }
    if decision.error:
        attrs[EXIT_ERROR] = decision.error
    if own_span and decision.session_id:
        attrs[A.TPGUARD_SESSION_ID] = decision.session_id
    span.set_attributes(attrs)
    if own_span and decision.blocked:
        span.set_attribute(A.ERROR_TYPE, "tpguard.blocked")
        span.set_status(Status(StatusCode.ERROR, "blocked by tpguard"))
