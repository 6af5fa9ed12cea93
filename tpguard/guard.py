"""The guard: the facade that owns sessions and calls the three stages (:mod:`tpguard.stages`).

* ``audit``   — record, change nothing;
* ``enforce`` — block a call that carries a forbidden atom, with a message naming the atom *types*
  and argument fields (never the values), so a model can retry with less;
* ``redact``  — rewrite forbidden atoms in free-text slots to typed placeholders (stable within a
  session) and let the call proceed; a forbidden atom in a structured field is blocked.

Internal errors fail closed in enforce/redact and open in audit; either way they are logged (error
type only) and recorded. Stages (STYLE §12): :meth:`Guard.check` decides a *request*
(:mod:`~tpguard.stages.arguments`), :meth:`Guard.check_result` what the tool *returned* (PrivacyPeek,
seed ``001_*`` §3, §6; :mod:`~tpguard.stages.results`), :meth:`Guard.check_exit` what a recipient
sees (:mod:`~tpguard.stages.exits`); each returns a :class:`Decision` whose ``stage`` says which and
whose ``arguments`` carry that stage's payload. For a tool with an :class:`~tpguard.policy.scope.AcquisitionScope`
(``ToolSpec.scope`` or ``guard.session(scopes=...)``), ``enforce`` and ``redact`` *narrow* the request
to the scope (:mod:`tpguard.stages._narrow`; action ``redact``, the narrowed arguments, a value-free
message) or refuse it; on the result ``audit`` records out-of-scope items, ``redact`` filters them
out and ``enforce`` withholds a result that still holds any.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from .decision import MODES, Action, Decision, Interception, Mode, Stage, record_on
from .detect._limits import DEFAULT_LIMITS, Limits
from .detect.detector import Detector
from .detect.presidio import PiiDetector
from .errors import GuardViolation
from .policy.exposure import Disclosure, Recipient
from .policy.kb import PolicyKB, PrivateAtom, ToolSpec
from .policy.scope import AcquisitionScope
from .stages.arguments import check_call, placeholder_call_of, record_call
from .stages.exits import check_exit, record_exit_span
from .stages.feedback import PlaceholderCall, Refusals
from .stages.results import check_result
from .stages.session import DEFAULT_SESSION_ID, BaseLayer, Session, bindings
from .telemetry._attributes import TPGUARD_VERSION
from .telemetry._env import TPGUARD_OPENINFERENCE
from .telemetry.content import ArgumentRecording, ContentPolicy
from .telemetry.exit_spans import start_exit_span
from .telemetry.spans import (
    DEFAULT_FINDING_EVENTS,
    FINDING_EVENTS,
    FindingEvents,
    record_error,
    start_tool_span,
)

__all__ = ["MODES", "Action", "Decision", "Guard", "Interception", "Limits", "Mode", "Stage"]

_ids = itertools.count(1)
_SESSIONS: ContextVar[Mapping[int, Session]] = ContextVar("tpguard_sessions", default=MappingProxyType({}))


class Guard:
    """``Guard(policy, mode="enforce")`` — one per deployment; thread- and async-safe.

    ``policy`` is a :class:`PolicyKB`, a path to a policy file, or ``None`` (tools and atoms
    registered later). Spans go to ``tracer_provider`` (default: the global provider).
    ``limits`` bounds what one call may hold (:class:`Limits`). ``finding_events`` says which
    findings get a ``tpguard.finding`` span event — ``"none"`` (default), ``"forbidden"`` or
    ``"all"``; every finding is summarized in span attributes whatever it says — and
    ``max_finding_events`` caps them per span (``None``: uncapped). ``record_arguments`` says
    whether spans carry the arguments (default ``"none"``: content capture is opt-in) and
    ``openinference=True`` (or ``TPGUARD_OPENINFERENCE=1``) adds OpenInference's names for
    Phoenix-style UIs (docs/telemetry.md). ``escalate="redact"`` (``enforce`` only) blocks a call
    first and rewrites, as ``redact`` would, a later call to the same tool that carries only atom
    types it was already refused in this session (``tpguard.escalated`` span event).
    """

    def __init__(
        self, policy: PolicyKB | str | Path | None = None, *, mode: Mode = "audit", fuzzy: bool = True,
        pii: PiiDetector | None = None, record_arguments: ArgumentRecording | None = None,
        allow_raw_arguments: bool = False, hash_key: bytes | str | None = None,
        tracer_provider: TracerProvider | None = None, limits: Limits | None = None,
        max_finding_events: int | None = DEFAULT_FINDING_EVENTS, finding_events: FindingEvents = "none",
        openinference: bool | None = None, escalate: Mode | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
        if escalate not in (None, "redact") or (escalate is not None and mode != "enforce"):
            raise ValueError(f"escalate={escalate!r}: only mode='enforce' escalates, and only to "
                             "'redact' (block first; rewrite a call that repeats a refused one)")
        if finding_events not in FINDING_EVENTS:
            raise ValueError(f"finding_events must be one of {', '.join(FINDING_EVENTS)} "
                             f"(got {finding_events!r})")
        if isinstance(policy, str | Path):
            policy = PolicyKB.from_file(policy)
        self.mode: Mode = mode
        self.policy: PolicyKB = policy or PolicyKB()
        self.limits: Limits = limits or DEFAULT_LIMITS
        self.max_finding_events = max_finding_events
        self.finding_events: FindingEvents = finding_events
        self.escalate: Mode | None = escalate
        self._refusals = Refusals()
        self._id = next(_ids)
        self._fuzzy = fuzzy
        self._pii = pii
        self._tools: dict[str, ToolSpec] = {t.name: t for t in self.policy.tools}
        self._content = ContentPolicy(record_arguments, allow_raw=allow_raw_arguments, hash_key=hash_key)
        self.openinference: bool = (os.environ.get(TPGUARD_OPENINFERENCE) == "1" if openinference is None
                                    else openinference)
        self._tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer("tpguard", TPGUARD_VERSION)
        # The policy's atoms compile once, here; sessions and register() add small overlays.
        self._base = BaseLayer(self.policy, Detector(self.policy.atoms, fuzzy=fuzzy, pii=pii))
        self._default = Session(self._id, self._base, (), self._overlay, session_id=DEFAULT_SESSION_ID)
        self._untainted: set[str] = set()  # tools whose taint was refused outside a session (logged once)

    def __repr__(self) -> str:
        return f"Guard(mode={self.mode!r}, atoms={len(self.policy.atoms)}, tools={len(self._tools)})"

    def _overlay(self, atoms: Iterable[PrivateAtom]) -> Detector:
        """A session's own matcher: O(its atoms); PII stays in the base layer (found once)."""
        return Detector(atoms, fuzzy=self._fuzzy)

    @property
    def recording(self) -> ArgumentRecording:
        return self._content.mode

    # -- tools and atoms ----------------------------------------------------------------------
    def add_tool(self, spec: ToolSpec) -> ToolSpec:
        """Register (or replace) a tool's purpose, sink and free-text slots."""
        self._tools[spec.name] = spec
        return spec

    def has_tool(self, name: str) -> bool:
        """Whether a spec was registered for ``name`` (from the policy or :meth:`add_tool`)."""
        return name in self._tools

    def tool_spec(self, tool: str | ToolSpec) -> ToolSpec:
        """The registered spec; an unknown tool is an ``external`` sink with no stated purpose."""
        if isinstance(tool, ToolSpec):
            return tool
        spec = self._tools.get(tool)
        return spec if spec is not None else ToolSpec(name=tool, sink="external")

    def register(self, *atoms: PrivateAtom) -> None:
        """Add atoms learned mid-session (to the current session, else guard-wide). O(atoms): the
        session's overlay is rebuilt once, on its next scan. A registered id that is already in the
        policy overrides the policy's atom in that session."""
        self._session().register(*atoms)

    @contextmanager
    def session(
        self, atoms: Iterable[PrivateAtom] = (), *, session_id: str | None = None,
        scopes: Mapping[str, AcquisitionScope | Mapping[str, Any]] | None = None,
        recipients: Iterable[Recipient | Mapping[str, Any]] = (),
        disclosures: Iterable[Disclosure | Mapping[str, Any]] = (),
        exits: Iterable[str] | None = None, internal_channels: Iterable[str] | None = None,
    ) -> Iterator[Session]:
        """Bind one request's atoms (and per-tool acquisition ``scopes``: the task's minimum scope,
        overriding ``ToolSpec.scope``) to the current context (threads and asyncio tasks isolated).

        The exposure stage binds per request too: ``recipients`` (this task's requester),
        ``disclosures`` (``Auth`` entries; checked before the policy's), ``exits`` and
        ``internal_channels`` (replacing the policy's) — see :mod:`tpguard.exposure`.

        O(1) to enter: the atoms compile into a small overlay on the session's first scan. The
        session also sees the atoms, scopes, recipients and disclosures of the session it is entered
        from (and guard-wide atoms)."""
        bound, exposure = bindings(scopes, recipients, disclosures, exits, internal_channels)
        sess = Session(self._id, self._base, atoms, self._overlay, session_id=session_id,
                       parent=self._session(), scopes=bound, exposure=exposure)
        token = _SESSIONS.set({**_SESSIONS.get(), self._id: sess})
        try:
            yield sess
        finally:
            _SESSIONS.reset(token)

    def _session(self) -> Session:
        return _SESSIONS.get().get(self._id) or self._default

    @property
    def current_session(self) -> Session:
        return self._session()

    # -- deciding: the three stages (tpguard.stages) ------------------------------------------
    def check(self, tool: str | ToolSpec, arguments: Any, *, mode: Mode | None = None) -> Decision:
        """Decide one call. Never raises: an internal error fails closed (open in ``audit``).

        ``mode`` overrides the guard's mode for this call (an observe-only hook passes ``audit``).
        Cost: one walk of the arguments and one scan per text, O(size of the call), flat in atoms.
        """
        return check_call(self._session(), self.tool_spec(tool), arguments, mode or self.mode, self.limits,
                          self.escalate, self._refusals)[0]

    def placeholder_call(self, tool: str | ToolSpec, arguments: Any) -> PlaceholderCall | None:
        """The call in its value-free form: every forbidden atom (free text *and* structured
        fields) replaced by its session placeholder — what an adapter may show the model as its own
        call after a block (:mod:`tpguard.stages.feedback`). ``None`` when the call carries no forbidden
        atom or cannot be rewritten. Decides and records nothing; never raises. O(size of the call)."""
        return placeholder_call_of(self._session(), self.tool_spec(tool), arguments, self.limits)

    def requester(self) -> str:
        """The current session's requester: the first recipient of kind ``requester`` (declared
        in the session, an outer one or the policy), else the implicit ``"requester"``."""
        return self._session().exposure().requester()

    def check_exit(self, channel: str, recipient: str | Iterable[str] | None, payload: Any, *,
                   mode: Mode | None = None) -> Decision:
        """Decide what leaves through ``channel`` to ``recipient`` (``stage="exit"``).

        ``recipient`` is a declared recipient id or address, several of them, or ``None`` for the
        session's requester. ``payload`` is a text or a structure (an e-mail ``{to, subject,
        body}``); each atom in it is decided against ``Auth(recipient, atom)``. ``audit``
        records; ``enforce`` withholds the payload (``blocked``; ``message`` names the atom
        types and the channel, never a value); ``redact`` replaces the atoms a recipient may not
        receive with session placeholders (``payload``). An *internal* channel (tool arguments,
        raw returns) is evidence: recorded, never blocked or rewritten. Past a limit, enforce and
        redact withhold and audit records ``error``. Opens one ``exit {channel}`` span. Never
        raises: an internal error withholds in enforce/redact and passes in audit.

        Cost: one walk and one scan per text of the payload, O(size of the payload), flat in atoms.
        """
        span = start_exit_span(self._tracer, channel)
        try:
            decision = check_exit(self._session(), channel, recipient, payload, mode or self.mode, self.limits)
            record_on(span, record_exit_span, decision)
            return decision
        finally:
            span.end()

    def check_result(self, tool: str | ToolSpec, arguments: Any, result: Any, *,
                     mode: Mode | None = None, call_id: str | None = None) -> Decision:
        """Decide what a tool returned (``stage="result"``); ``decision.arguments`` is what the
        model should see (see :class:`Decision`). Never raises: an internal error withholds the
        result in enforce/redact and passes it in audit. Atoms delivered to the model are recorded
        with their provenance (``call_id``) in the current session; values under the scope's
        ``atom_keys`` are registered as atoms (taint).

        Cost: one walk and one scan per text of the result, O(size of the result), flat in atoms —
        measured ~0.1 s for a 140 KB JSON set of 800 records (8,000 values), ~9 ms for 140 KB of
        plain text; plus O(copied containers) when ``redact`` filters.
        """
        return check_result(self._session(), self.tool_spec(tool), arguments, result, mode or self.mode,
                            call_id, self.limits, self._untainted)

    # -- intercepting -------------------------------------------------------------------------
    def intercept(self, tool: str | ToolSpec, arguments: Any, *, call_id: str | None = None,
                  tracer_provider: TracerProvider | None = None, mode: Mode | None = None,
                  ) -> AbstractContextManager[Interception]:
        """Check a call inside its ``execute_tool {tool}`` span; run the tool inside the block.

        The span ends when the block exits; an exception from the block is recorded by type only.
        ``tracer_provider`` overrides the guard's own for this call (an instrumentor's provider);
        ``mode`` overrides the guard's mode (an observe-only callback records ``audit``).
        """
        return _Intercept(self, tool, arguments, call_id, tracer_provider, mode)


class _Intercept:
    """``with guard.intercept(...)``: the call is checked on entering the block and its span ends
    on leaving it. A class rather than ``@contextmanager``, which costs ~7 k instructions per
    call more on this hot path (docs/perf.md)."""

    __slots__ = ("_args", "_guard", "_span", "_token")

    def __init__(self, guard: Guard, tool: str | ToolSpec, arguments: Any, call_id: str | None,
                 tracer_provider: TracerProvider | None, mode: Mode | None) -> None:
        self._guard = guard
        self._args = (tool, arguments, call_id, tracer_provider, mode)

    def __enter__(self) -> Interception:
        guard = self._guard
        tool, arguments, call_id, tracer_provider, mode = self._args
        spec = guard.tool_spec(tool)
        tracer = guard._tracer if tracer_provider is None else tracer_provider.get_tracer("tpguard", TPGUARD_VERSION)
        span = self._span = start_tool_span(tracer, spec, call_id, guard.openinference)
        self._token = otel_context.attach(trace.set_span_in_context(span))
        sess = guard._session()
        try:
            decision, call = check_call(sess, spec, arguments, mode or guard.mode, guard.limits, guard.escalate,
                                        guard._refusals)
        except BaseException as e:  # (KeyboardInterrupt: check_call turns every Exception into a decision)
            self.__exit__(type(e), e, e.__traceback__)
            raise
        record_on(span, record_call, decision, call, guard._content, sess.atom_value, guard.max_finding_events,
                  guard.finding_events, guard.openinference, mode or guard.mode)
        return Interception(decision, span, guard, spec, mode, call_id)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc is not None and not isinstance(exc, GuardViolation):
                record_error(self._span, exc)
        finally:
            otel_context.detach(self._token)
            self._span.end()
