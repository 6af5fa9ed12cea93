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
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..detect._bulk import with_verdicts
from ..detect._leaves import LeafTable, RebuildError
from ..detect._limits import Limits, Problem
from ..detect._markup import visible
from ..detect._walk import walk
from ..detect.detector import Finding, new_finding
from ..policy.exposure import UNDECLARED, Exposure, Recipient
from ..redaction import PlaceholderOperator, rewrite_text, widened
from .results import _ALL

__all__ = ["ExitView", "denied", "inspect_exit", "read_as_shown", "recipient_label"]

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
