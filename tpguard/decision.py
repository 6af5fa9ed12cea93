"""What the guard decided (:class:`Decision`), the call in flight (:class:`Interception`), how a
decision is recorded on its span (:func:`record_on`, the same for every stage) and the value-free
wording of its messages: types, fields and counts, never a value."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from operator import attrgetter, itemgetter
from typing import Any, Literal, Protocol

from opentelemetry.trace import Span

from .detect.detector import Finding
from .errors import GuardViolation
from .policy.exposure import Recipient
from .policy.kb import ToolSpec
from .policy.scope import ScopeFinding
from .telemetry.spans import record_result

__all__ = ["MODES", "Action", "Decision", "Interception", "Mode", "ResultChecker", "Stage", "record_on"]

Mode = Literal["audit", "enforce", "redact"]
Action = Literal["allow", "block", "redact"]
Stage = Literal["request", "result", "exit"]
MODES: tuple[str, ...] = ("audit", "enforce", "redact")

_log = logging.getLogger("tpguard")
_ATOM_TYPE = attrgetter("atom_type")
_PATH = attrgetter("path")


@dataclass(frozen=True, slots=True, init=False)
class Decision:
    """What the guard decided at one stage of one tool call.

    ``stage`` is ``"request"`` (:meth:`Guard.check`), ``"result"`` (:meth:`Guard.check_result`) or
    ``"exit"`` (:meth:`Guard.check_exit`; ``tool`` is then the channel). ``arguments`` carries the
    stage's payload (also as :attr:`payload`): for a request,
    the arguments the tool should receive (rewritten in ``redact``, narrowed to the scope in
    ``enforce``/``redact``); for a result, the result the model should see (filtered in
    ``redact``; the original otherwise — when ``blocked``, show ``message`` instead). ``message``
    is what the agent is told when something was withheld or rewritten. ``findings`` are atom
    findings; ``scope`` the items outside the tool's acquisition scope. Neither the message nor
    ``repr(decision)`` contains a private value. ``action="redact"`` means: proceed with the
    rewritten payload. For an exit, ``payload`` is what the recipient should receive (rewritten in
    ``redact``; when ``blocked``, show ``message`` instead) and ``forbidden`` the atoms a recipient
    may not receive.
    """

    tool: str
    mode: Mode
    action: Action
    findings: tuple[Finding, ...] = ()
    forbidden: tuple[Finding, ...] = ()
    arguments: Any = field(default=None, repr=False)
    message: str | None = None
    error: str | None = None
    session_id: str | None = None
    stage: Stage = "request"
    scope: tuple[ScopeFinding, ...] = ()
    # -- exit stage (issue 11): for an exit decision ``tool`` is the channel --
    #: who the payload was going to (an undeclared address is ``Recipient(id="undeclared")``)
    recipients: tuple[Recipient, ...] = ()
    #: whether the channel is a visible exit (None outside the exit stage)
    visible: bool | None = None
    #: for a tool whose call is an exit (``ToolSpec.exit``): that exit's own decision
    exit: Decision | None = field(default=None, repr=False)

    def __init__(self, tool: str, mode: Mode, action: Action, findings: tuple[Finding, ...] = (),
                 forbidden: tuple[Finding, ...] = (), arguments: Any = None, message: str | None = None,
                 error: str | None = None, session_id: str | None = None, stage: Stage = "request",
                 scope: tuple[ScopeFinding, ...] = (), recipients: tuple[Recipient, ...] = (),
                 visible: bool | None = None, exit: Decision | None = None) -> None:
        # The dataclass's own frozen ``__init__`` (same parameters, same defaults: a test holds
        # them equal), each field set through its slot descriptor instead of
        # ``object.__setattr__(self, name, …)``: 8.8 k fewer instructions per decision, 2.5 % of
        # a typical ``check``, which builds one (callgrind).
        s = _SLOT_SETTERS
        s[0](self, tool)
        s[1](self, mode)
        s[2](self, action)
        s[3](self, findings)
        s[4](self, forbidden)
        s[5](self, arguments)
        s[6](self, message)
        s[7](self, error)
        s[8](self, session_id)
        s[9](self, stage)
        s[10](self, scope)
        s[11](self, recipients)
        s[12](self, visible)
        s[13](self, exit)

    @property
    def payload(self) -> Any:
        """The stage's payload (the same object as ``arguments``)."""
        return self.arguments

    @property
    def narrowed(self) -> bool:
        """The request was narrowed to the tool's acquisition scope."""
        return self.stage == "request" and self.action == "redact" and bool(self.scope)

    @property
    def blocked(self) -> bool:
        return self.action == "block"

    @property
    def redacted(self) -> bool:
        return self.action == "redact"

    @property
    def allowed(self) -> bool:
        return self.action != "block"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool, "mode": self.mode, "action": self.action, "message": self.message,
            "error": self.error, "session_id": self.session_id, "stage": self.stage,
            "findings": [f.to_dict() for f in self.findings],
            "forbidden": [f.to_dict() for f in self.forbidden],
            "scope": [f.to_dict() for f in self.scope],
            "recipients": [r.id for r in self.recipients], "visible": self.visible,
            "exit": self.exit.to_dict() if self.exit is not None else None,
        }


#: the slot descriptors' ``__set__`` of :class:`Decision`'s fields, in declaration order
_SLOT_SETTERS = tuple(Decision.__dict__[f.name].__set__ for f in fields(Decision))


def record_on(span: Span, render: Callable[..., None], *args: Any) -> None:
    """Record a stage's decision on its span: ``render(span, *args)`` when the span records (the
    request's :func:`tpguard.stages.arguments.record_call`, the results' ``record_result``, the
    exit's :func:`tpguard.stages.exits.record_exit_span`). Never raises: recording must not break
    the call (the error is logged by type only)."""
    try:
        if span.is_recording():  # nothing is rendered for a span nobody records
            render(span, *args)
    except Exception as e:  # recording must not break the call
        _log.error("tpguard: could not record a span (%s)", type(e).__qualname__)


class ResultChecker(Protocol):
    """What an :class:`Interception` needs of its guard: the public result stage and the cap on
    span events (a :class:`~tpguard.guard.Guard` is one)."""

    max_finding_events: int | None

    def check_result(self, tool: str | ToolSpec, arguments: Any, result: Any, *,
                     mode: Mode | None = None, call_id: str | None = None) -> Decision: ...


class Interception:
    """One intercepted call in flight (yielded by :meth:`Guard.intercept`): the request's
    ``decision``, and :meth:`check_result` for what the tool returns (same span, same session)."""

    __slots__ = ("_call_id", "_guard", "_mode", "_spec", "decision", "results", "span")

    def __init__(self, decision: Decision, span: Span, guard: ResultChecker | None = None,
                 spec: ToolSpec | None = None, mode: Mode | None = None,
                 call_id: str | None = None) -> None:
        self.decision = decision
        self.span = span
        self.results: list[Decision] = []
        self._guard = guard
        self._spec = spec
        self._mode = mode
        self._call_id = call_id

    @property
    def arguments(self) -> Any:
        return self.decision.arguments

    @property
    def result_decision(self) -> Decision | None:
        """The decision on the last result checked (None before :meth:`check_result`)."""
        return self.results[-1] if self.results else None

    def raise_if_blocked(self) -> None:
        if self.decision.blocked:
            raise GuardViolation(self.decision)

    def check_result(self, result: Any) -> Any:
        """Decide what the tool returned and give back what the model should see: the result,
        the filtered result (``redact``) or the guard's message (withheld). Recorded on the span
        (``tpguard.result.*``); may be called once per payload (content, then artifact)."""
        if self._guard is None or self._spec is None:
            return result
        guard = self._guard
        decision = guard.check_result(self._spec, self.decision.arguments, result, mode=self._mode,
                                      call_id=self._call_id)
        self.results.append(decision)
        record_on(self.span, record_result, self.results, guard.max_finding_events)
        if decision.blocked:
            return decision.message
        return decision.arguments


_MESSAGE_FIELDS = 10  # fields named in a message; the rest are counted


_SCOPE_NOUNS = {"source": "items of another source", "field": "fields", "subject": "records of other subjects",
                "window": "records outside the time window", "part": "parts outside the task's parts",
                "confidential": "confidential-marked items", "atom": "private values"}


_FIELD_TAIL = " outside the purpose's fields"


def scope_summary(found: Iterable[ScopeFinding]) -> str:
    """``"2 records of other subjects, fields ssn, diagnosis"`` — counts and field names only."""
    by_dim: dict[str, list[ScopeFinding]] = {}
    for f in found:
        by_dim.setdefault(f.dimension, []).append(f)
    parts = []
    for dim, fs in by_dim.items():
        if dim == "field":
            names = sorted({f.description.removeprefix("field ").removesuffix(_FIELD_TAIL) for f in fs})
            shown = ", ".join(names[:_MESSAGE_FIELDS])
            parts.append(f"fields {shown}" + (f" and {len(names) - _MESSAGE_FIELDS} more"
                                              if len(names) > _MESSAGE_FIELDS else ""))
        else:
            parts.append(f"{len(fs)} {_SCOPE_NOUNS[dim]}")
    return ", ".join(parts)


#: ``(type, path)`` of each finding → :func:`describe_findings`' answer: a guard is told of the same
#: few types in the same few fields again and again. Value-free (types and display paths only);
#: cleared when it reaches :data:`_DESCRIBED_MAX` entries; kept for lists of up to 32 findings.
_DESCRIBED: dict[tuple[tuple[str, str], ...], tuple[str, str]] = {}
_DESCRIBED_MAX = 512
_DESCRIBED_FINDINGS = 32
_TYPE_PATH = itemgetter(1, 2)


def describe_findings(findings: Iterable[Finding]) -> tuple[str, str]:
    """``("email, phone", "note, items[0].comment")``: the findings' types and fields, sorted (at
    most :data:`_MESSAGE_FIELDS` fields named, the rest counted). O(findings)."""
    fs = findings if isinstance(findings, tuple | list) else list(findings)
    if len(fs) > _DESCRIBED_FINDINGS:  # a long list is not kept (its key would be as long)
        return _describe(fs)
    key = tuple(map(_TYPE_PATH, fs))
    hit = _DESCRIBED.get(key)
    if hit is not None:
        return hit
    if len(_DESCRIBED) >= _DESCRIBED_MAX:
        _DESCRIBED.clear()
    hit = _DESCRIBED[key] = _describe(fs)
    return hit


def _describe(fs: list[Finding] | tuple[Finding, ...]) -> tuple[str, str]:
    types = ", ".join(sorted(set(map(_ATOM_TYPE, fs))))
    paths = sorted(set(map(_PATH, fs)))
    fields = ", ".join(paths[:_MESSAGE_FIELDS])
    if len(paths) > _MESSAGE_FIELDS:
        fields += f" and {len(paths) - _MESSAGE_FIELDS} more"
    return types, fields
