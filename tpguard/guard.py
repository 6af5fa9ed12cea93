"""The guard: detect atoms in a tool call, decide against the policy, act by mode.

* ``audit``   — record, change nothing;
* ``enforce`` — block a call that carries a forbidden atom, with a message naming the atom *types*
  and argument fields (never the values), so a model can retry with less;
* ``redact``  — rewrite forbidden atoms in free-text slots to typed placeholders (stable within a
  session) and let the call proceed; a forbidden atom in a structured field is blocked.

Over-disclosure is ``O_{j,k} = D(p_j, a_k) · I[A_{j,i(k)} = 0]`` (ToolPrivacyBench, seed ``000_*``
§3.6): the detector gives ``D`` and the policy's resolver gives ``A``. Internal errors fail closed in
enforce/redact and open in audit; either way they are logged (error type only) and recorded.

A call is walked once into a leaf table (:mod:`tpguard.detect._walk`); detection, redaction and span
rendering read that table. Dict keys are scanned like values; a key that holds an atom is shown as
its session placeholder in every path (``extra.[PERSON_NAME_1]``), message and span. In ``redact``
mode a forbidden atom in a key is rewritten when the key's dict is a free-text slot, and blocks the
call otherwise (keys are structure). Past a :class:`~tpguard.detect._limits.Limits` bound, on a cycle or on
a value tpguard cannot read, ``enforce``/``redact`` withhold the call naming the limit and ``audit``
allows it with ``Decision.error`` set (``limit:max_depth``, ``cycle``, ``unreadable:deque``).
Redacted arguments are re-scanned before they are returned: a rewrite that still carries a
forbidden atom is rewritten again, and blocked if that does not clear it.

Stages (STYLE §12): :meth:`Guard.check` decides a *request* and :meth:`Guard.check_result` what the
tool *returned* (PrivacyPeek, seed ``001_*`` §3, §6); the exposure stage adds ``check_exit``. Each
returns a :class:`Decision` whose ``stage`` says which, and whose ``arguments`` carry that stage's
payload. For a tool with an :class:`~tpguard.policy.scope.AcquisitionScope` (``ToolSpec.scope`` or
``guard.session(scopes=...)``), ``enforce`` and ``redact`` *narrow* the request to the scope
(:mod:`tpguard.stages._narrow`; action ``redact``, the narrowed arguments, a value-free message) or refuse
it; on the result ``audit`` records out-of-scope items, ``redact`` filters them out and ``enforce``
withholds a result that still holds any (:mod:`tpguard.stages.results`).
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import replace
from itertools import filterfalse
from operator import attrgetter
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from .decision import (
    MODES,
    Action,
    Decision,
    Interception,
    Mode,
    Stage,
    describe_findings,
    scope_summary,
)
from .detect import _bulk
from .detect._leaves import CallView, LeafTable, RebuildError
from .detect._limits import DEFAULT_LIMITS, Limits, Problem
from .detect._walk import walk
from .detect.detector import Detector, Finding, new_finding
from .detect.presidio import PiiDetector
from .errors import GuardViolation
from .policy.exposure import Disclosure, Recipient
from .policy.kb import PolicyKB, PrivateAtom, ToolSpec
from .policy.scope import AcquisitionScope
from .redaction import PlaceholderOperator, rewrite_text, widened
from .stages._narrow import narrow
from .stages.exits import denied, inspect_exit, recipient_label
from .stages.feedback import PlaceholderCall, Refusals, placeholder_call, record_escalation
from .stages.results import UNAPPLIED, ResultView, inspect_result
from .stages.session import DEFAULT_SESSION_ID, BaseLayer, Session
from .telemetry._attributes import TPGUARD_VERSION
from .telemetry._env import TPGUARD_OPENINFERENCE
from .telemetry.content import ArgumentRecording, ContentPolicy
from .telemetry.exit_spans import record_exit, start_exit_span
from .telemetry.spans import (
    DEFAULT_FINDING_EVENTS,
    FINDING_EVENTS,
    FindingEvents,
    record_decision,
    record_error,
    start_tool_span,
)

__all__ = ["MODES", "Action", "Decision", "Guard", "Interception", "Limits", "Mode", "Stage"]


_log = logging.getLogger("tpguard")
_ids = itertools.count(1)
_AUTHORIZED = attrgetter("authorized")
_FREE_TEXT = attrgetter("free_text")
_FEW = 16  # findings of one leaf decided one by one; more go to _bulk (one verdict per atom and method)


def _decided(found: list[Finding], memo: Mapping[tuple[str, str], bool], allowed: Callable[[Finding, str], bool],
             path: str | None) -> list[Finding]:
    """One leaf's findings with ``authorized`` filled in, at ``path`` (the display path, where a key
    that is an atom shows as its placeholder) or where they are. A verdict comes from the session's
    ``memo`` (``(atom id, method)``, :meth:`Session.verdicts`) when it is there, else from
    ``allowed``; many findings go to :func:`_bulk.with_verdicts` (one verdict per atom and method)."""
    at = found[0][2] if path is None else path
    if len(found) >= _FEW:
        return _bulk.with_verdicts(found, lambda f: allowed(f, at), new_finding, path)
    out = []
    for f in found:
        atom_id, atom_type, where, method, start, end, score, free, severity, _ = f
        ok = memo.get((atom_id, method))
        if ok is None:
            ok = allowed(f, at)
        out.append(new_finding((atom_id, atom_type, where if path is None else path, method, start, end, score,
                                free, severity, ok)))
    return out


_SESSIONS: ContextVar[Mapping[int, Session]] = ContextVar(
    "tpguard_sessions", default=MappingProxyType({})
)


_REDACT_ROUNDS = 3


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
        self,
        policy: PolicyKB | str | Path | None = None,
        *,
        mode: Mode = "audit",
        fuzzy: bool = True,
        pii: PiiDetector | None = None,
        record_arguments: ArgumentRecording | None = None,
        allow_raw_arguments: bool = False,
        hash_key: bytes | str | None = None,
        tracer_provider: TracerProvider | None = None,
        limits: Limits | None = None,
        max_finding_events: int | None = DEFAULT_FINDING_EVENTS,
        finding_events: FindingEvents = "none",
        openinference: bool | None = None,
        escalate: Mode | None = None,
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
        provider = tracer_provider or trace.get_tracer_provider()
        self._tracer = provider.get_tracer("tpguard", TPGUARD_VERSION)
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
        exits: Iterable[str] | None = None,
        internal_channels: Iterable[str] | None = None,
    ) -> Iterator[Session]:
        """Bind one request's atoms (and per-tool acquisition ``scopes``: the task's minimum scope,
        overriding ``ToolSpec.scope``) to the current context (threads and asyncio tasks isolated).

        The exposure stage binds per request too: ``recipients`` (this task's requester),
        ``disclosures`` (``Auth`` entries; checked before the policy's), ``exits`` and
        ``internal_channels`` (replacing the policy's) — see :mod:`tpguard.policy.exposure`.

        O(1) to enter: the atoms compile into a small overlay on the session's first scan. The
        session also sees the atoms, scopes, recipients and disclosures of the session it is entered
        from (and guard-wide atoms)."""
        bound = {name: s if isinstance(s, AcquisitionScope) else AcquisitionScope.model_validate(s)
                 for name, s in (scopes or {}).items()}
        exposure = {
            "recipients": [r if isinstance(r, Recipient) else Recipient.model_validate(r) for r in recipients],
            "disclosures": [d if isinstance(d, Disclosure) else Disclosure.model_validate(d)
                            for d in disclosures],
            "exits": None if exits is None else tuple(exits),
            "internal_channels": None if internal_channels is None else tuple(internal_channels)}
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

    # -- deciding -----------------------------------------------------------------------------
    def check(self, tool: str | ToolSpec, arguments: Any, *, mode: Mode | None = None) -> Decision:
        """Decide one call. Never raises: an internal error fails closed (open in ``audit``).

        ``mode`` overrides the guard's mode for this call (an observe-only hook passes ``audit``).
        Cost: one walk of the arguments and one scan per text, O(size of the call), flat in atoms.
        """
        return self._decide(self.tool_spec(tool), arguments, mode or self.mode)[0]

    def _decide(self, spec: ToolSpec, arguments: Any, mode: Mode) -> tuple[Decision, CallView | None]:
        try:
            decision, call = self._check(spec, arguments, mode)
            if decision.forbidden and decision.blocked and mode == "enforce" and self.escalate:
                decision, call = self._escalated(spec, arguments, decision, call)
            decision = self._narrowed(spec, decision, mode)
            if spec.exit is not None and not decision.blocked:
                decision = self._tool_exit(spec, decision, mode)
            return decision, call
        except Exception as e:  # the guard must never crash the agent
            kind = type(e).__qualname__
            _log.error("tpguard: internal error (%s) while checking a call to %s", kind, spec.name)
            if mode == "audit":
                return Decision(spec.name, mode, "allow", arguments=arguments, error=kind), None
            msg = (f"tpguard could not check this call to {spec.name} ({kind}) and withheld it. "
                   "Try again with fewer personal details.")
            return Decision(spec.name, mode, "block", arguments=arguments, message=msg, error=kind), None

    def _check(self, spec: ToolSpec, arguments: Any, mode: Mode) -> tuple[Decision, CallView]:
        sess = self._session()
        clean = sess.known_clean()
        table = walk(arguments, spec.free_text, self.limits, clean)
        problem = table.problem
        error = problem.code if problem is not None else None
        if problem is not None:
            _log.warning("tpguard: %s in a call to %s (%s mode)", problem.code, spec.name, mode)
            if mode != "audit":
                return self._unreadable(spec, mode, arguments, problem, sess), CallView(table, {}, None)
        scan = sess.scanner()
        per_leaf: dict[int, list[Finding]] = {}
        for i, leaf in enumerate(table.leaves):
            if clean is not None and leaf.text in clean:  # scanned before, no atom: scan would say []
                continue
            found = scan(leaf.text, leaf.path, leaf.free_text)
            if found:
                per_leaf[i] = found
        if not per_leaf:
            decision = Decision(spec.name, mode, "allow", arguments=arguments, error=error, session_id=sess.id)
            return decision, CallView(table, per_leaf, None)
        paths = self._key_paths(sess, table, per_leaf)
        memo, allowed = sess.verdicts(spec)
        every: list[Finding] = []
        for i, found in per_leaf.items():
            decided = per_leaf[i] = _decided(found, memo, allowed, None if paths is None else paths[i])
            every += decided
        call = CallView(table, per_leaf, paths)
        found_all = tuple(every)
        forbidden = tuple(filterfalse(_AUTHORIZED, found_all))
        if not forbidden or mode == "audit":
            return Decision(spec.name, mode, "allow", found_all, forbidden, arguments, error=error,
                            session_id=sess.id), call
        if mode == "enforce" or not all(map(_FREE_TEXT, forbidden)):
            return Decision(spec.name, mode, "block", found_all, forbidden, arguments,
                            message=self._block_message(spec, forbidden), session_id=sess.id), call
        try:
            rewritten = self._redact(sess, spec, call)
        except RebuildError as e:
            msg = f"tpguard withheld this call to {spec.name}: {e}. Call it again without them."
            return Decision(spec.name, mode, "block", found_all, forbidden, arguments, message=msg,
                            error="RebuildError", session_id=sess.id), call
        if rewritten is None:
            return Decision(spec.name, mode, "block", found_all, forbidden, arguments,
                            message=self._block_message(spec, forbidden), session_id=sess.id), call
        types, fields = describe_findings(forbidden)
        msg = f"tpguard replaced {types} in {fields} with placeholders before calling {spec.name}."
        return Decision(spec.name, mode, "redact", found_all, forbidden, rewritten, message=msg,
                        session_id=sess.id), call

    def _escalated(self, spec: ToolSpec, arguments: Any, decision: Decision,
                   call: CallView) -> tuple[Decision, CallView]:
        """``escalate="redact"``: the first call carrying some withheld types is blocked; one that
        sends the same tool only types it was already refused (in this session) is decided as
        ``redact`` would decide it — free text rewritten, a structured leak still blocked."""
        sess = self._session()
        if not self._refusals.repeat(sess, spec.name, (f.atom_type for f in decision.forbidden)):
            return decision, call
        escalated, view = self._check(spec, arguments, self.escalate or "redact")
        if escalated.redacted and escalated.message:
            escalated = replace(escalated, message=f"{escalated.message} (sent again after tpguard "
                                "withheld it: rewritten this time)")
        return escalated, view

    def placeholder_call(self, tool: str | ToolSpec, arguments: Any) -> PlaceholderCall | None:
        """The call in its value-free form: every forbidden atom (free text *and* structured
        fields) replaced by its session placeholder — what an adapter may show the model as its own
        call after a block (:mod:`tpguard.stages.feedback`). ``None`` when the call carries no forbidden
        atom or cannot be rewritten. Decides and records nothing; never raises. O(size of the call)."""
        spec = self.tool_spec(tool)
        try:
            sess = self._session()
            decision, call = self._check(spec, arguments, "audit")
            if not decision.forbidden:
                return None
            rewritten = self._redact(sess, spec, call)
            if rewritten is None:
                return None
            return placeholder_call(spec.name, rewritten, decision.forbidden, sess.placeholder)
        except Exception as e:
            _log.error("tpguard: could not rewrite a call to %s (%s)", spec.name, type(e).__qualname__)
            return None

    def _narrowed(self, spec: ToolSpec, decision: Decision, mode: Mode) -> Decision:
        """The request cut to the tool's acquisition scope (enforce/redact), or the over-broad
        parts recorded (audit). O(arguments); nothing at all for an unscoped tool."""
        if decision.blocked:
            return decision
        scope = self._session().scope_for(spec)
        if scope is None:
            return decision
        n = narrow(scope, decision.arguments, spec.input_schema)
        if not n.findings:
            return decision
        if mode == "audit":
            return replace(decision, scope=n.findings)
        purpose = f" (purpose: {spec.purpose})" if spec.purpose else ""
        if n.refusal is not None:
            msg = (f"tpguard withheld this call to {spec.name}{purpose}: {n.refusal}. Call "
                   f"{spec.name} again within this task's scope.")
            return replace(decision, action="block", message=msg, scope=n.findings)
        what = "; ".join(f.description for f in n.findings)
        msg = f"tpguard narrowed this call to {spec.name} to this task's scope: {what}."
        if decision.message:
            msg = f"{decision.message} {msg}"
        return replace(decision, action="redact", arguments=n.arguments, message=msg, scope=n.findings)

    # -- exits (exposure stage) -----------------------------------------------------------------
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
        mode = mode or self.mode
        span = start_exit_span(self._tracer, channel)
        try:
            decision = self._decide_exit(channel, recipient, payload, mode)
            try:
                record_exit(span, decision, own_span=True)
            except Exception as e:  # recording must not break the exit
                _log.error("tpguard: could not record a span (%s)", type(e).__qualname__)
            return decision
        finally:
            span.end()

    def _decide_exit(self, channel: str, recipient: str | Iterable[str] | None, payload: Any,
                     mode: Mode) -> Decision:
        try:
            return self._check_exit(channel, recipient, payload, mode)
        except Exception as e:  # the guard must never crash the agent
            kind = type(e).__qualname__
            _log.error("tpguard: internal error (%s) while checking an exit (%s)", kind, channel)
            if mode == "audit":
                return Decision(channel, mode, "allow", arguments=payload, error=kind, stage="exit")
            return Decision(channel, mode, "block", arguments=payload, error=kind, stage="exit",
                            message=f"tpguard could not check this {channel} ({kind}) and withheld it.")

    def _check_exit(self, channel: str, recipient: str | Iterable[str] | None, payload: Any,
                    mode: Mode) -> Decision:
        sess = self._session()
        exposure = sess.exposure()
        recipients = exposure.named(exposure.requester() if recipient is None else recipient)
        visible = exposure.is_exit(channel)
        act = mode if visible else "audit"  # internal channels are evidence only
        view = inspect_exit(payload, recipients, exposure, sess.scanner(), self.limits,
                            sess.placeholder, build=act == "redact")
        to = recipient_label(recipients)
        where = channel.replace("_", " ")

        def decided(action: Action, out: Any = payload, message: str | None = None,
                    error: str | None = None) -> Decision:
            return Decision(channel, mode, action, tuple(view.findings), tuple(view.forbidden), out,
                            message, error, sess.id, "exit", recipients=recipients, visible=visible)

        if view.problem is not None:
            _log.warning("tpguard: %s in an exit (%s, %s mode)", view.problem.code, channel, mode)
            if act == "audit":
                return decided("allow", error=view.problem.code)
            return decided("block", message=f"tpguard could not read this {where} to {to} — "
                           f"{view.problem.text} — and withheld it.", error=view.problem.code)
        forbidden = view.forbidden
        if not forbidden or act == "audit":
            return decided("allow")
        types = ", ".join(sorted({f.atom_type for f in forbidden}))
        if act == "redact" and view.rewritten is not None:
            return decided("redact", view.rewritten,
                           f"tpguard replaced {types} with placeholders in this {where} to {to}.")
        who = recipient_label(denied(recipients, forbidden, exposure))
        return decided("block", message=f"tpguard withheld this {where} to {to}: it carried {types}, "
                       f"which {who} may not receive.", error=view.rewrite_failed and "RebuildError")

    def _tool_exit(self, spec: ToolSpec, decision: Decision, mode: Mode) -> Decision:
        """A tool whose call is an exit (``ToolSpec.exit``): the whole call — its recipient
        arguments too, which the other recipients read — goes through :meth:`check_exit`'s
        decision for every recipient its recipient arguments name (``ExitBinding.named``; none is
        the undeclared external recipient). Enforce blocks the call; redact sends the rewritten
        payload, and blocks when a recipient argument itself would have to be rewritten."""
        binding = spec.exit
        args = decision.arguments
        if binding is None or not isinstance(args, Mapping):
            return decision
        ex = self._decide_exit(binding.channel, binding.named(args), dict(args), mode)
        ex = replace(ex, tool=binding.channel)
        if ex.redacted and any(ex.arguments.get(k) != v for k, v in args.items() if binding.names_recipients(k)):
            ex = replace(ex, action="block", arguments=args,  # an address is never rewritten
                         message=f"tpguard withheld this {binding.channel}: a recipient argument "
                                 "carried what a recipient may not receive, and an address is never rewritten.")
        if ex.blocked:
            who = recipient_label(denied(ex.recipients, ex.forbidden, self._session().exposure()))
            what = (f"it carried {', '.join(sorted({f.atom_type for f in ex.forbidden}))}, which "
                    f"{who} may not receive" if ex.forbidden else
                    f"its {binding.channel} could not be checked ({ex.error})")
            msg = (f"tpguard withheld this call to {spec.name} ({binding.channel} to "
                   f"{recipient_label(ex.recipients)}): {what}. Call {spec.name} again without them.")
            return replace(decision, action="block", message=msg, exit=ex)
        if ex.redacted:
            msg = " ".join(m for m in (decision.message, ex.message) if m)
            return replace(decision, action="redact", arguments=ex.arguments, message=msg, exit=ex)
        return replace(decision, exit=ex)

    # -- results (acquisition stage) ------------------------------------------------------------
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
        return self._decide_result(self.tool_spec(tool), arguments, result, mode or self.mode, call_id)

    def _decide_result(self, spec: ToolSpec, arguments: Any, result: Any, mode: Mode,
                       call_id: str | None) -> Decision:
        try:
            return self._check_result(spec, arguments, result, mode, call_id)
        except Exception as e:  # the guard must never crash the agent
            kind = type(e).__qualname__
            _log.error("tpguard: internal error (%s) while checking a result of %s", kind, spec.name)
            if mode == "audit":
                return Decision(spec.name, mode, "allow", arguments=result, error=kind, stage="result")
            msg = f"tpguard could not check the result of {spec.name} ({kind}) and withheld it."
            return Decision(spec.name, mode, "block", arguments=result, message=msg, error=kind,
                            stage="result")

    def _check_result(self, spec: ToolSpec, arguments: Any, result: Any, mode: Mode,
                      call_id: str | None) -> Decision:
        sess = self._session()
        scope = sess.scope_for(spec)
        allowed = None if scope is None or scope.atoms is None else frozenset(scope.atoms)
        view = inspect_result(
            result, arguments, scope, scan=sess.scanner(), limits=self.limits,
            placeholder=PlaceholderOperator(sess.placeholder),
            forbidden_atom=(lambda f: False) if allowed is None else (
                lambda f: f.atom_id not in allowed and f.atom_type not in allowed),
            build=mode == "redact", deliver_all=mode == "audit")

        def decided(action: Action, payload: Any, message: str | None = None,
                    error: str | None = None) -> Decision:
            return Decision(spec.name, mode, action, tuple(view.findings),
                            tuple(f for f in view.findings if f.authorized is False), payload,
                            message, error, sess.id, "result", tuple(view.scope))

        if view.problem is not None:
            _log.warning("tpguard: %s in a result of %s (%s mode)", view.problem.code, spec.name, mode)
            if mode == "audit" or scope is None:  # unscoped: nothing to decide, recorded only
                return decided("allow", result, error=view.problem.code)
            return decided("block", result, f"tpguard could not read the result of {spec.name} — "
                           f"{view.problem.text} — and withheld it.", view.problem.code)
        if not view.out_of_scope or mode == "audit":
            self._taint(sess, spec, view, call_id)
            return decided("allow", result, error=UNAPPLIED if view.unapplied else None)
        if view.unapplied:  # free text where records were expected: nothing to filter by
            return decided("block", result, f"tpguard withheld the result of {spec.name}: it held no "
                           f"records to check this task's {', '.join(view.unapplied)} against. Ask "
                           f"{spec.name} for records within the task's scope.", UNAPPLIED)
        summary = scope_summary(view.scope)
        if mode == "enforce" or view.whole:
            return decided("block", result, f"tpguard withheld the result of {spec.name}: it held "
                           f"{summary}, outside this task's scope. Ask {spec.name} only for what "
                           "the task needs.")
        self._taint(sess, spec, view, call_id)
        return decided("redact", view.filtered, f"tpguard removed {summary} from the result of "
                       f"{spec.name} (outside this task's scope).")

    def _taint(self, sess: Session, spec: ToolSpec, view: ResultView, call_id: str | None) -> None:
        """Provenance and taint live in the request's session; outside one they are not kept
        (docs/acquisition-guard.md), and the first refusal per tool is logged."""
        if not sess.keeps_taint:
            if view.taints and spec.name not in self._untainted:
                self._untainted.add(spec.name)
                _log.warning("tpguard: values under atom_keys in a result of %s were not registered as "
                             "tainted atoms: no guard.session() is open, and taint lives only in the "
                             "request's session. Open one per request.", spec.name)
            return
        # once per atom (provenance is a set per atom): a result may repeat an atom 10^5 times
        for atom_id in dict.fromkeys(f.atom_id for f in view.delivered if f.method != "pii"):
            sess.record_provenance(atom_id, spec.name, call_id)
        for key, atom_type, value in view.taints:
            sess.taint(atom_type, value, key, spec.name, call_id)

    @staticmethod
    def _key_paths(sess: Session, table: LeafTable, per_leaf: Mapping[int, list[Finding]]) -> list[str] | None:
        """Display paths when a dict key holds an atom: the key becomes its placeholder."""
        keys = [i for i in per_leaf if table.leaves[i].is_key]
        if not keys:  # the common case: no key is an atom, leaf paths are shown as they are
            return None
        op = PlaceholderOperator(sess.placeholder)
        return table.display_paths({i: rewrite_text(table.leaves[i].text, per_leaf[i], op) for i in keys})

    @staticmethod
    def _block_message(spec: ToolSpec, forbidden: Iterable[Finding]) -> str:
        types, fields = describe_findings(forbidden)
        purpose = f" (purpose: {spec.purpose})" if spec.purpose else ""
        return (f"tpguard withheld this call to {spec.name}{purpose}: it does not need {types}, "
                f"found in {fields}. Call {spec.name} again without them — leave them out or "
                "refer to them generically.")

    @staticmethod
    def _unreadable(spec: ToolSpec, mode: Mode, arguments: Any, problem: Problem, sess: Session) -> Decision:
        msg = (f"tpguard could not read this call to {spec.name} — {problem.text} — and withheld "
               f"it. Call {spec.name} again with plain text, numbers, lists and objects.")
        return Decision(spec.name, mode, "block", arguments=arguments, message=msg, error=problem.code,
                        session_id=sess.id)

    def _redact(self, sess: Session, spec: ToolSpec, call: CallView) -> Any:
        """Rewrite forbidden atoms in their leaves and rebuild the arguments in one pass; re-scan
        each rewritten leaf and rewrite again (bounded) until it holds no forbidden atom — ``None``
        if that does not converge. O(rewritten leaves' text + copied containers). The re-scan looks
        for what may be forbidden only: its fuzzy pass aligns the atoms ``spec`` may withhold
        (:meth:`Session.scanner`), the same forbidden findings as a full scan."""
        scan = sess.scanner(spec)
        op = PlaceholderOperator(sess.placeholder)
        table = call.table
        memo, allowed = sess.verdicts(spec)
        todo: dict[int, list[Finding]] = {}
        texts: dict[int, str] = {}
        for i, fs in call.per_leaf.items():
            left = [f for f in fs if not f.authorized]
            if left:
                todo[i] = left
                texts[i] = table.leaves[i].text
        for round_ in range(_REDACT_ROUNDS):
            for i, fs in todo.items():
                texts[i] = rewrite_text(texts[i], widened(texts[i], fs, op.given) if round_ else fs, op)
            todo = {}
            for i, text in texts.items():
                leaf = table.leaves[i]
                found = scan(text, leaf.path, leaf.free_text)
                if not found:
                    continue
                path = call.path(i)
                left = []
                for f in found:
                    ok = memo.get((f[0], f[3]))
                    if not (allowed(f, path) if ok is None else ok):
                        left.append(f)
                if left:
                    todo[i] = left
            if not todo:
                return table.rebuild(texts)
        return None

    # -- intercepting -------------------------------------------------------------------------
    def intercept(
        self, tool: str | ToolSpec, arguments: Any, *, call_id: str | None = None,
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
        tracer = (guard._tracer if tracer_provider is None
                  else tracer_provider.get_tracer("tpguard", TPGUARD_VERSION))
        span = self._span = start_tool_span(tracer, spec, call_id, guard.openinference)
        self._token = otel_context.attach(trace.set_span_in_context(span))
        try:
            decision, call = guard._decide(spec, arguments, mode or guard.mode)
        except BaseException as e:  # (KeyboardInterrupt: _decide turns every Exception into a decision)
            self.__exit__(type(e), e, e.__traceback__)
            raise
        try:
            if span.is_recording():  # nothing is rendered for a span nobody records
                record_decision(span, decision, guard._content, call,
                                guard._session().atom_value, guard.max_finding_events,
                                guard.finding_events, guard.openinference)
                if decision.exit is not None:
                    record_exit(span, decision.exit, own_span=False)
                if decision.mode != (mode or guard.mode):
                    record_escalation(span, mode or guard.mode, decision.mode)
        except Exception as e:  # recording must not break the call
            _log.error("tpguard: could not record a span (%s)", type(e).__qualname__)
        return Interception(decision, span, guard, spec, mode, call_id)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc is not None and not isinstance(exc, GuardViolation):
                record_error(self._span, exc)
        finally:
            otel_context.detach(self._token)
            self._span.end()
