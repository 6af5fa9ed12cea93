"""What goes *into* a tool's arguments (ToolPrivacyBench, seed ``000_*``): the request stage.

Over-disclosure is ``O_{j,k} = D(p_j, a_k) · I[A_{j,i(k)} = 0]`` (§3.6): the session's scanner gives
``D`` and the policy's resolver ``A``.

A call is walked once into a leaf table (:mod:`tpguard.detect._walk`); detection, redaction and span
rendering read that table. Dict keys are scanned like values; a key that holds an atom is shown as
its session placeholder in every path (``extra.[PERSON_NAME_1]``), message and span. In ``redact``
mode a forbidden atom in a key is rewritten when the key's dict is a free-text slot, and blocks the
call otherwise (keys are structure). Past a :class:`~tpguard.detect._limits.Limits` bound, on a cycle or on
a value tpguard cannot read, ``enforce``/``redact`` withhold the call naming the limit and ``audit``
allows it with ``Decision.error`` set (``limit:max_depth``, ``cycle``, ``unreadable:deque``).
Redacted arguments are re-scanned before they are returned: a rewrite that still carries a
forbidden atom is rewritten again, and blocked if that does not clear it.

The stage's three steps (:mod:`tpguard.stages`):

* :func:`inspect_call` — the call walked once into a leaf table (:mod:`tpguard.detect._walk`, with
  the guard's :class:`~tpguard.detect._limits.Limits`) and each text scanned: a
  :class:`~tpguard.detect._leaves.CallView`;
* :func:`decide_call` — a verdict per finding (the session's memo, else the resolver), display
  paths when a key holds an atom, and the action by mode: allow, block with a value-free message,
  or (``redact``) the act step :func:`rewrite_call` — forbidden atoms rewritten to their session
  placeholders, re-scanned and rewritten again (bounded) until none is left;
* :func:`check_call` — both, fail-safe (an internal error fails closed, open in ``audit``), then
  the ``enforce:then-redact`` escalation, the narrowing to the tool's acquisition scope
  (:mod:`tpguard.stages._narrow`) and, for a tool whose call is an exit, the exit stage
  (:func:`tpguard.stages.exits.exit_of_call`).

:func:`record_call` records the decision on the call's span (through
:func:`tpguard.decision.record_on`). Cost: one walk of the arguments and one scan per text,
O(size of the call), flat in atoms.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from itertools import filterfalse
from operator import attrgetter
from typing import Any

from opentelemetry.trace import Span

from ..decision import Decision, Mode, describe_findings
from ..detect import _bulk
from ..detect._leaves import CallView, LeafTable, RebuildError
from ..detect._limits import Limits, Problem
from ..detect._walk import walk
from ..detect.detector import Finding, new_finding
from ..policy.kb import ToolSpec
from ..redaction import PlaceholderOperator, rewrite_text, widened
from ..telemetry.content import ContentPolicy
from ..telemetry.exit_spans import record_exit
from ..telemetry.spans import FindingEvents, record_decision
from ._narrow import narrow
from .exits import exit_of_call
from .feedback import PlaceholderCall, Refusals, placeholder_call, record_escalation
from .session import Session

__all__ = ["check_call", "decide_call", "inspect_call", "placeholder_call_of", "record_call",
           "rewrite_call"]

_log = logging.getLogger("tpguard")
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


_REDACT_ROUNDS = 3


def check_call(sess: Session, spec: ToolSpec, arguments: Any, mode: Mode, limits: Limits,
               escalate: Mode | None, refusals: Refusals) -> tuple[Decision, CallView | None]:
    """Decide one call to ``spec`` in ``sess`` (:meth:`Guard.check`): inspect → decide → act, then
    escalation, narrowing and the tool's exit. Never raises: an internal error fails closed (open
    in ``audit``)."""
    try:
        call = inspect_call(sess, spec, arguments, limits, mode)
        decision = decide_call(call, sess, spec, arguments, mode)
        if decision.forbidden and decision.blocked and mode == "enforce" and escalate:
            decision, call = _escalated(sess, spec, arguments, decision, call, limits, escalate, refusals)
        decision = _narrowed(sess, spec, decision, mode)
        if spec.exit is not None and not decision.blocked:
            decision = exit_of_call(sess, spec, decision, mode, limits)
        return decision, call
    except Exception as e:  # the guard must never crash the agent
        kind = type(e).__qualname__
        _log.error("tpguard: internal error (%s) while checking a call to %s", kind, spec.name)
        if mode == "audit":
            return Decision(spec.name, mode, "allow", arguments=arguments, error=kind), None
        msg = (f"tpguard could not check this call to {spec.name} ({kind}) and withheld it. "
               "Try again with fewer personal details.")
        return Decision(spec.name, mode, "block", arguments=arguments, message=msg, error=kind), None


def inspect_call(sess: Session, spec: ToolSpec, arguments: Any, limits: Limits, mode: Mode) -> CallView:
    """The call as the stage reads it: its leaf table and each leaf's findings (no verdict yet).
    Past a limit or on a value tpguard cannot read (logged), the scan is skipped unless ``mode``
    is ``audit`` (which records what it could read)."""
    clean = sess.known_clean()
    table = walk(arguments, spec.free_text, limits, clean)
    problem = table.problem
    if problem is not None:
        _log.warning("tpguard: %s in a call to %s (%s mode)", problem.code, spec.name, mode)
    per_leaf: dict[int, list[Finding]] = {}
    if problem is None or mode == "audit":
        scan = sess.scanner()
        for i, leaf in enumerate(table.leaves):
            if clean is not None and leaf.text in clean:  # scanned before, no atom: scan would say []
                continue
            found = scan(leaf.text, leaf.path, leaf.free_text)
            if found:
                per_leaf[i] = found
    return CallView(table, per_leaf, None)


def decide_call(call: CallView, sess: Session, spec: ToolSpec, arguments: Any, mode: Mode) -> Decision:
    """A verdict per finding of ``call`` (filled in ``call.per_leaf``, with display paths in
    ``call.paths`` when a key holds an atom) and the decision by ``mode``; ``redact`` acts here
    (:func:`rewrite_call`)."""
    table = call.table
    problem = table.problem
    error = problem.code if problem is not None else None
    if problem is not None and mode != "audit":
        return _unreadable(spec, mode, arguments, problem, sess)
    per_leaf = call.per_leaf
    if not per_leaf:
        return Decision(spec.name, mode, "allow", arguments=arguments, error=error, session_id=sess.id)
    paths = call.paths = _key_paths(sess, table, per_leaf)
    memo, allowed = sess.verdicts(spec)
    every: list[Finding] = []
    for i, found in per_leaf.items():
        decided = per_leaf[i] = _decided(found, memo, allowed, None if paths is None else paths[i])
        every += decided
    found_all = tuple(every)
    forbidden = tuple(filterfalse(_AUTHORIZED, found_all))
    if not forbidden or mode == "audit":
        return Decision(spec.name, mode, "allow", found_all, forbidden, arguments, error=error,
                        session_id=sess.id)
    if mode == "enforce" or not all(map(_FREE_TEXT, forbidden)):
        return Decision(spec.name, mode, "block", found_all, forbidden, arguments,
                        message=_block_message(spec, forbidden), session_id=sess.id)
    try:
        rewritten = rewrite_call(sess, spec, call)
    except RebuildError as e:
        msg = f"tpguard withheld this call to {spec.name}: {e}. Call it again without them."
        return Decision(spec.name, mode, "block", found_all, forbidden, arguments, message=msg,
                        error="RebuildError", session_id=sess.id)
    if rewritten is None:
        return Decision(spec.name, mode, "block", found_all, forbidden, arguments,
                        message=_block_message(spec, forbidden), session_id=sess.id)
    types, fields = describe_findings(forbidden)
    msg = f"tpguard replaced {types} in {fields} with placeholders before calling {spec.name}."
    return Decision(spec.name, mode, "redact", found_all, forbidden, rewritten, message=msg,
                    session_id=sess.id)


def _escalated(sess: Session, spec: ToolSpec, arguments: Any, decision: Decision, call: CallView,
               limits: Limits, escalate: Mode, refusals: Refusals) -> tuple[Decision, CallView]:
    """``escalate="redact"``: the first call carrying some withheld types is blocked; one that
    sends the same tool only types it was already refused (in this session) is decided as
    ``redact`` would decide it — free text rewritten, a structured leak still blocked."""
    if not refusals.repeat(sess, spec.name, (f.atom_type for f in decision.forbidden)):
        return decision, call
    view = inspect_call(sess, spec, arguments, limits, escalate)
    escalated = decide_call(view, sess, spec, arguments, escalate)
    if escalated.redacted and escalated.message:
        escalated = replace(escalated, message=f"{escalated.message} (sent again after tpguard "
                            "withheld it: rewritten this time)")
    return escalated, view


def placeholder_call_of(sess: Session, spec: ToolSpec, arguments: Any, limits: Limits) -> PlaceholderCall | None:
    """The call in its value-free form (:meth:`Guard.placeholder_call`): every forbidden atom (free
    text *and* structured fields) replaced by its session placeholder. ``None`` when the call
    carries no forbidden atom or cannot be rewritten. Decides and records nothing; never raises."""
    try:
        call = inspect_call(sess, spec, arguments, limits, "audit")
        decision = decide_call(call, sess, spec, arguments, "audit")
        if not decision.forbidden:
            return None
        rewritten = rewrite_call(sess, spec, call)
        if rewritten is None:
            return None
        return placeholder_call(spec.name, rewritten, decision.forbidden, sess.placeholder)
    except Exception as e:
        _log.error("tpguard: could not rewrite a call to %s (%s)", spec.name, type(e).__qualname__)
        return None


def _narrowed(sess: Session, spec: ToolSpec, decision: Decision, mode: Mode) -> Decision:
    """The request cut to the tool's acquisition scope (enforce/redact), or the over-broad
    parts recorded (audit). O(arguments); nothing at all for an unscoped tool."""
    if decision.blocked:
        return decision
    scope = sess.scope_for(spec)
    if scope is None:
        return decision
    n = narrow(scope, decision.arguments, spec.input_schema)
    if not n.findings:
        return decision
    if mode == "audit":
        return replace(decision, scope=n.findings)
    purpose = f" (purpose: {spec.purpose})" if spec.purpose else ""
    if n.unreachable:  # no call to this tool can be in scope: do not invite another
        msg = (f"tpguard withheld this call to {spec.name}{purpose}: this task needs nothing "
               f"from {spec.name}. Do not call {spec.name} again for this task; go on with the "
               "other tools.")
        return replace(decision, action="block", message=msg, scope=n.findings)
    if n.refusal is not None:
        msg = (f"tpguard withheld this call to {spec.name}{purpose}: {n.refusal}. Call "
               f"{spec.name} again within this task's scope.")
        return replace(decision, action="block", message=msg, scope=n.findings)
    what = "; ".join(f.description for f in n.findings)
    msg = f"tpguard narrowed this call to {spec.name} to this task's scope: {what}."
    if decision.message:
        msg = f"{decision.message} {msg}"
    return replace(decision, action="redact", arguments=n.arguments, message=msg, scope=n.findings)


def _key_paths(sess: Session, table: LeafTable, per_leaf: Mapping[int, list[Finding]]) -> list[str] | None:
    """Display paths when a dict key holds an atom: the key becomes its placeholder."""
    keys = [i for i in per_leaf if table.leaves[i].is_key]
    if not keys:  # the common case: no key is an atom, leaf paths are shown as they are
        return None
    op = PlaceholderOperator(sess.placeholder)
    return table.display_paths({i: rewrite_text(table.leaves[i].text, per_leaf[i], op) for i in keys})


def _block_message(spec: ToolSpec, forbidden: Iterable[Finding]) -> str:
    types, fields = describe_findings(forbidden)
    purpose = f" (purpose: {spec.purpose})" if spec.purpose else ""
    return (f"tpguard withheld this call to {spec.name}{purpose}: it does not need {types}, "
            f"found in {fields}. Call {spec.name} again without them — leave them out or "
            "refer to them generically.")


def _unreadable(spec: ToolSpec, mode: Mode, arguments: Any, problem: Problem, sess: Session) -> Decision:
    msg = (f"tpguard could not read this call to {spec.name} — {problem.text} — and withheld "
           f"it. Call {spec.name} again with plain text, numbers, lists and objects.")
    return Decision(spec.name, mode, "block", arguments=arguments, message=msg, error=problem.code,
                    session_id=sess.id)


def rewrite_call(sess: Session, spec: ToolSpec, call: CallView) -> Any:
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


def record_call(span: Span, decision: Decision, call: CallView | None, content: ContentPolicy,
                canonical: Callable[[str], str | None], max_events: int | None, events: FindingEvents,
                openinference: bool, requested: Mode) -> None:
    """The request's decision on its ``execute_tool`` span (:func:`tpguard.decision.record_on`
    calls it when the span records): attributes and finding events, the tool exit's decision,
    and a ``tpguard.escalated`` event when the decision's mode is not the ``requested`` one."""
    record_decision(span, decision, content, call, canonical, max_events, events, openinference)
    if decision.exit is not None:
        record_exit(span, decision.exit, own_span=False)
    if decision.mode != requested:
        record_escalation(span, requested, decision.mode)
