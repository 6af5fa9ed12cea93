"""One payload at one exit, read against ``Auth(r, e)`` (ASLEval, seed ``002_*`` §3.1–3.2).

:func:`inspect_exit` walks the payload once into a leaf table (:mod:`tpguard.detect._walk`, with the guard's
:class:`~tpguard.detect._limits.Limits`; every text is a free-text slot, dict keys included: an exit has no
structure the recipient does not also read), scans each text with the session's scanner, and marks
each finding authorized when *every* recipient may receive it
(:meth:`~tpguard.policy.exposure.Exposure.auth`; unregistered PII is forbidden only by a type rule). With
``build`` it also rewrites the unauthorized atoms to their session placeholders and re-scans the
rewritten texts (bounded rounds; ``None`` when that does not converge, as at the request stage).

Cost: one walk and one scan per text — O(size of the payload), flat in atoms — plus
O(rewritten texts + copied containers) when ``build`` is set.

The stage's three steps (:mod:`tpguard.stages`): :func:`inspect_exit` reads (and, with ``build``,
acts: the rewritten payload is built where the findings per text are at hand), :func:`decide_exit`
decides allow, block (a value-free message naming types, channel and recipients) or redact;
:func:`check_exit` runs them fail-safe for :meth:`Guard.check_exit`, :func:`exit_of_call` for a tool
whose call is an exit, and :func:`record_exit_span` records the decision on its ``exit`` span
(through :func:`tpguard.decision.record_on`).
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from opentelemetry.trace import Span

from ..decision import Action, Decision, Mode
from ..detect._bulk import with_verdicts
from ..detect._leaves import LeafTable, RebuildError
from ..detect._limits import Limits, Problem
from ..detect._markup import visible
from ..detect._walk import walk
from ..detect.detector import Finding, new_finding
from ..policy.exposure import UNDECLARED, Exposure, Recipient
from ..policy.kb import ToolSpec
from ..redaction import PlaceholderOperator, rewrite_text, widened
from ..telemetry.exit_spans import record_exit
from .results import _ALL
from .session import Session

__all__ = ["ExitView", "check_exit", "decide_exit", "denied", "exit_of_call", "inspect_exit",
           "read_as_shown", "recipient_label", "record_exit_span"]

_log = logging.getLogger("tpguard")

Scan = Callable[[str, str, bool], list[Finding]]
_ROUNDS = 3


@dataclass
class ExitView:
    """One payload as the exit stage read it: findings (``authorized`` = Auth for all recipients)
    with display paths, the rewritten payload when asked for, or the problem that stopped the walk."""

    findings: list[Finding] = field(default_factory=list)
    problem: Problem | None = None
    rewritten: Any = None
    rewrite_failed: str | None = None  # why the rewritten payload could not be built

    @property
    def forbidden(self) -> list[Finding]:
        return [f for f in self.findings if not f.authorized]


def recipient_label(recipients: Sequence[Recipient]) -> str:
    """Declared ids (sorted); an undeclared address is named as such, never shown."""
    names = sorted({"an undeclared recipient" if r.id == UNDECLARED else r.id for r in recipients})
    return ", ".join(names) if names else "nobody"


def denied(recipients: Sequence[Recipient], forbidden: Sequence[Finding], exposure: Exposure) -> list[Recipient]:
    """The recipients who may not receive at least one of ``forbidden`` (for messages); asked once
    per distinct atom, however often the payload repeats it."""
    atoms = {(f.atom_id, f.atom_type, f.method != "pii"): None for f in forbidden}
    return [r for r in recipients
            if any(not exposure.auth(atom_id, atom_type, r, registered=registered)
                   for atom_id, atom_type, registered in atoms)]


def check_exit(sess: Session, channel: str, recipient: str | Iterable[str] | None, payload: Any,
               mode: Mode, limits: Limits) -> Decision:
    """Decide what leaves through ``channel`` to ``recipient`` in ``sess`` (:meth:`Guard.check_exit`):
    inspect → decide (→ act). Never raises: an internal error withholds in enforce/redact and
    passes in audit."""
    try:
        exposure = sess.exposure()
        recipients = exposure.named(exposure.requester() if recipient is None else recipient)
        visible = exposure.is_exit(channel)
        act = mode if visible else "audit"  # internal channels are evidence only
        view = inspect_exit(payload, recipients, exposure, sess.scanner(), limits,
                            sess.placeholder, build=act == "redact")
        return decide_exit(view, channel, payload, mode, recipients, exposure, visible, sess.id)
    except Exception as e:  # the guard must never crash the agent
        kind = type(e).__qualname__
        _log.error("tpguard: internal error (%s) while checking an exit (%s)", kind, channel)
        if mode == "audit":
            return Decision(channel, mode, "allow", arguments=payload, error=kind, stage="exit")
        return Decision(channel, mode, "block", arguments=payload, error=kind, stage="exit",
                        message=f"tpguard could not check this {channel} ({kind}) and withheld it.")


def inspect_exit(payload: Any, recipients: Sequence[Recipient], exposure: Exposure, scan: Scan,
                 limits: Limits, placeholder: Callable[[Finding], str], *, build: bool) -> ExitView:
    scan = read_as_shown(scan)
    table = walk(payload, _ALL, limits)
    if table.problem is not None:
        return ExitView(problem=table.problem)

    verdicts: dict[tuple[str, str, bool], bool] = {}  # one per atom: a text may repeat it 10^5 times

    def authorized(f: Finding) -> bool:
        registered = f.method != "pii"
        key = (f.atom_id, f.atom_type, registered)
        ok = verdicts.get(key)
        if ok is None:
            ok = verdicts[key] = all(exposure.auth(f.atom_id, f.atom_type, r, registered=registered)
                                     for r in recipients)
        return ok

    per_leaf: dict[int, list[Finding]] = {}
    for i, leaf in enumerate(table.leaves):
        found = scan(leaf.text, leaf.path, True)
        if found:
            per_leaf[i] = with_verdicts(found, authorized, new_finding)
    if not per_leaf:
        return ExitView()
    op = PlaceholderOperator(placeholder)
    paths = _display_paths(table, per_leaf, op)
    view = ExitView([f for i, fs in per_leaf.items() for f in fs] if paths == [leaf.path for leaf in table.leaves]
                    else [_with(f, bool(f.authorized), paths[i]) for i, fs in per_leaf.items() for f in fs])
    if build and view.forbidden:
        try:
            view.rewritten = _rewrite(table, per_leaf, scan, authorized, op)
        except RebuildError as e:
            view.rewrite_failed = str(e)
        if view.rewritten is None and view.rewrite_failed is None:
            view.rewrite_failed = "a rewritten text still held a value its recipient may not receive"
    return view


def decide_exit(view: ExitView, channel: str, payload: Any, mode: Mode, recipients: tuple[Recipient, ...],
                exposure: Exposure, visible: bool, session_id: str) -> Decision:
    """Allow, block or redact ``view`` (``stage="exit"``): an internal channel (not ``visible``) is
    evidence only, decided as ``audit``; ``redact`` sends the payload :func:`inspect_exit` rewrote."""
    act = mode if visible else "audit"  # internal channels are evidence only
    to = recipient_label(recipients)
    where = channel.replace("_", " ")

    def decided(action: Action, out: Any = payload, message: str | None = None,
                error: str | None = None) -> Decision:
        return Decision(channel, mode, action, tuple(view.findings), tuple(view.forbidden), out,
                        message, error, session_id, "exit", recipients=recipients, visible=visible)

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


def exit_of_call(sess: Session, spec: ToolSpec, decision: Decision, mode: Mode, limits: Limits) -> Decision:
    """A tool whose call is an exit (``ToolSpec.exit``): the whole call — its recipient
    arguments too, which the other recipients read — goes through :func:`check_exit`'s
    decision for every recipient its recipient arguments name (``ExitBinding.named``; none is
    the undeclared external recipient). Enforce blocks the call; redact sends the rewritten
    payload, and blocks when a recipient argument itself would have to be rewritten."""
    binding = spec.exit
    args = decision.arguments
    if binding is None or not isinstance(args, Mapping):
        return decision
    ex = check_exit(sess, binding.channel, binding.named(args), dict(args), mode, limits)
    ex = replace(ex, tool=binding.channel)
    if ex.redacted and any(ex.arguments.get(k) != v for k, v in args.items() if binding.names_recipients(k)):
        ex = replace(ex, action="block", arguments=args,  # an address is never rewritten
                     message=f"tpguard withheld this {binding.channel}: a recipient argument "
                             "carried what a recipient may not receive, and an address is never rewritten.")
    if ex.blocked:
        who = recipient_label(denied(ex.recipients, ex.forbidden, sess.exposure()))
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


def record_exit_span(span: Span, decision: Decision) -> None:
    """The exit's decision on its own ``exit {channel}`` span (:func:`tpguard.decision.record_on`)."""
    record_exit(span, decision, own_span=True)


def read_as_shown(scan: Scan) -> Scan:
    """``scan`` over a text as written and, when it holds markup, as a person reads it
    (:func:`tpguard.detect._markup.visible`); a finding of the rendering is mapped back to the written
    text and kept unless the written text already has it (same atom, overlapping span)."""

    def both(text: str, path: str, free: bool) -> list[Finding]:
        found = scan(text, path, free)
        shown = visible(text)
        if shown is None:
            return found
        extra = []
        # the written text's spans per atom, sorted by start: an overlap test is a bisect, not a
        # walk over every finding (a table of repeated cells has one finding per cell)
        spans: dict[str, tuple[list[int], list[int]]] = {}
        for g in sorted(found, key=lambda g: g.start):
            starts, ends = spans.setdefault(g.atom_id, ([], []))
            starts.append(g.start)
            ends.append(max(g.end, ends[-1]) if ends else g.end)  # running max: any earlier span reaching e
        for f in scan(shown.text, path, free):
            s, e = shown.span(f.start, f.end)
            written = spans.get(f.atom_id)
            k = bisect_left(written[0], e) if written else 0  # written spans starting before e
            if not (k and written and written[1][k - 1] > s):
                extra.append(f._replace(start=s, end=e))
        return found + extra if extra else found

    return both


def _with(f: Finding, ok: bool, path: str | None = None) -> Finding:
    return new_finding((f[0], f[1], f[2] if path is None else path, *f[3:9], ok))


def _display_paths(table: LeafTable, per_leaf: dict[int, list[Finding]], op: PlaceholderOperator) -> list[str]:
    """A key that holds an atom is shown as its placeholder, in every path under it."""
    labels = {i: rewrite_text(table.leaves[i].text, fs, op)
              for i, fs in per_leaf.items() if table.leaves[i].is_key}
    return table.display_paths(labels)


def _rewrite(table: LeafTable, per_leaf: dict[int, list[Finding]], scan: Scan,
             authorized: Callable[[Finding], bool], op: PlaceholderOperator) -> Any:
    todo = {i: [f for f in fs if not f.authorized] for i, fs in per_leaf.items()}
    texts = {i: table.leaves[i].text for i, fs in todo.items() if fs}
    for round_ in range(_ROUNDS):
        for i, fs in todo.items():
            if fs:
                texts[i] = rewrite_text(texts[i], widened(texts[i], fs, op.given) if round_ else fs, op)
        todo = {}
        for i, text in texts.items():
            left = [f for f in scan(text, table.leaves[i].path, True) if not authorized(f)]
            if left:
                todo[i] = left
        if not todo:
            return table.rebuild(texts)
    return None
