"""What a tool returned, read once against its acquisition scope (PrivacyPeek, seed ``001_*`` §3, §6).

:func:`inspect_result` reads a result once: a text (or UTF-8 bytes) that holds records — JSON after
a BOM, a prefix line or in a fence, NDJSON, CSV, a markdown table — is read as those records
(:mod:`tpguard.stages._structured`), then walked into a leaf table (:mod:`tpguard.detect._walk`, with the guard's
:class:`~tpguard.detect._limits.Limits`). By the tool's :class:`~tpguard.policy.scope.ScopeBinding` it finds:

* **whole-result** items — the request named a source, subject or part outside the scope;
* **records** — found at any depth, their keys matched like fields, decided by
  :mod:`tpguard.stages._records` (a record of another subject, source or part, outside the window, without
  the subject or date the scope needs, or — in a set — carrying a confidentiality marker is out;
  fields outside the scope's fields are out);
* **text** (outside a record set) — parts started by ``part_pattern`` whose name is not in
  ``parts`` (or whose header carries a marker), and paragraphs (blank-line separated) carrying a
  marker (markers match case-insensitively after normalization; :mod:`tpguard.stages._parts`);
* **unapplied** dimensions — the scope names subjects, a window or fields (record dimensions) and
  the result holds text but no record: the scope cannot be applied (unless the binding declares
  ``results: "text"``);
* **atoms** — every registered atom in the texts (the session's scanner: O(text), flat in atoms);
  when ``scope.atoms`` is set, an atom whose id and type are not listed is out of scope.

It returns findings (value-free), the filtered payload (records and fields dropped, parts and
paragraphs replaced by a placeholder line, out-of-scope atoms by their session placeholder; written
back as the same kind of text it was read from) and the values under ``atom_keys`` (matched like
fields) to register as tainted atoms. Cost: one parse, one walk, one marker search and one scan per
text — O(size of the result) — plus O(copied containers) to build the filtered payload.

The stage's three steps (:mod:`tpguard.stages`): :func:`inspect_result` reads (and, with ``build``,
acts: the filtered payload, :func:`rebuild_filtered`, is built where the texts it rewrote are at
hand), :func:`decide_result` decides — ``audit`` records out-of-scope items, ``redact`` delivers
the filtered payload, ``enforce`` withholds a result that still holds any — and registers
provenance and taint for what reaches the model; :func:`check_result` runs them fail-safe for
:meth:`Guard.check_result`. The decisions are recorded on the call's span by
:class:`tpguard.decision.Interception` (through :func:`tpguard.decision.record_on`).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..decision import Action, Decision, Mode, scope_summary
from ..detect._bulk import with_verdicts
from ..detect._leaves import LEAF, NODE, Leaf, LeafTable
from ..detect._limits import Limits, Problem
from ..detect._walk import walk
from ..detect.detector import Finding, new_finding
from ..policy.kb import ToolSpec
from ..policy.scope import AcquisitionScope, ScopeFinding, fold_key
from ..redaction import Operator, PlaceholderOperator, rewrite_text
from ._parts import PARA_WITHHELD, PART_WITHHELD, withheld_parts
from ._records import Marker, read_records
from ._structured import Structured, read_structured
from .session import Session

__all__ = ["PARA_WITHHELD", "PART_WITHHELD", "UNAPPLIED", "ResultView", "check_result", "decide_result",
           "inspect_result"]

_log = logging.getLogger("tpguard")

#: ``Decision.error`` of a result the scope's record dimensions could not be applied to
UNAPPLIED = "scope:unapplied"
Scan = Callable[[str, str, bool], list[Finding]]


class _Everything:
    """Every key is a free-text slot: a result's texts are all rewritten in place."""

    def __contains__(self, _: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


_ALL: Any = _Everything()


@functools.lru_cache(maxsize=64)
def _marker(markers: tuple[str, ...]) -> Marker:
    return Marker(markers)


@dataclass
class ResultView:
    """One result as the guard read it (see the module docstring)."""

    payload: Any
    table: LeafTable | None = None
    problem: Problem | None = None
    scope: list[ScopeFinding] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    whole: bool = False  # the whole result is out of scope
    filtered: Any = None  # the payload without out-of-scope items (built on demand)
    delivered: list[Finding] = field(default_factory=list)  # atoms left in the filtered payload
    taints: list[tuple[str, str, str]] = field(default_factory=list)  # (key, atom type, value)
    #: record dimensions the scope names but the result gave no record to hold them to
    unapplied: tuple[str, ...] = ()

    @property
    def out_of_scope(self) -> bool:
        return self.whole or bool(self.scope) or any(f.authorized is False for f in self.findings)


def _parse(result: Any, scope: AcquisitionScope | None) -> tuple[Any, Structured | None]:
    if scope is None or not scope.binding.parse_json:
        return result, None
    found = read_structured(result)
    return (result, None) if found is None else (found.payload, found)


def check_result(sess: Session, spec: ToolSpec, arguments: Any, result: Any, mode: Mode,
                 call_id: str | None, limits: Limits, untainted: set[str]) -> Decision:
    """Decide what a call to ``spec`` returned, in ``sess`` (:meth:`Guard.check_result`): inspect →
    decide (→ act). Never raises: an internal error withholds the result in enforce/redact and
    passes it in audit. ``untainted``: the tools whose taint was refused outside a session (the
    guard's; each logged once)."""
    try:
        scope = sess.scope_for(spec)
        allowed = None if scope is None or scope.atoms is None else frozenset(scope.atoms)
        view = inspect_result(
            result, arguments, scope, scan=sess.scanner(), limits=limits,
            placeholder=PlaceholderOperator(sess.placeholder),
            forbidden_atom=(lambda f: False) if allowed is None else (
                lambda f: f.atom_id not in allowed and f.atom_type not in allowed),
            build=mode == "redact", deliver_all=mode == "audit")
        return decide_result(view, sess, spec, scope, result, mode, call_id, untainted)
    except Exception as e:  # the guard must never crash the agent
        kind = type(e).__qualname__
        _log.error("tpguard: internal error (%s) while checking a result of %s", kind, spec.name)
        if mode == "audit":
            return Decision(spec.name, mode, "allow", arguments=result, error=kind, stage="result")
        msg = f"tpguard could not check the result of {spec.name} ({kind}) and withheld it."
        return Decision(spec.name, mode, "block", arguments=result, message=msg, error=kind,
                        stage="result")


def inspect_result(
    result: Any, arguments: Any, scope: AcquisitionScope | None, *, scan: Scan, limits: Limits,
    placeholder: Operator, forbidden_atom: Callable[[Finding], bool], build: bool = True,
    deliver_all: bool = False,
) -> ResultView:
    """Read ``result`` once against ``scope`` (``None``: atoms only, for provenance). ``build``:
    make the filtered payload; ``deliver_all``: everything reaches the model (audit) — every atom
    found counts as delivered and every ``atom_keys`` value is tainted."""
    payload, structured = _parse(result, scope)
    table = walk(payload, _ALL, limits)
    view = ResultView(payload, table, table.problem)
    if table.problem is not None:
        return view
    texts: dict[int, str] = {}
    drops: set[tuple[int, Any]] = set()
    dropped_nodes: set[int] = set()
    if scope is not None:
        wrapped = structured is not None and structured.wrapped
        _structure(view, table, scope, arguments, texts, drops, dropped_nodes, wrapped)
    dropped_leaf = set() if deliver_all else _dropped_leaves(table, drops, dropped_nodes)
    whole = view.whole and not deliver_all
    _atoms(view, table, scan, forbidden_atom, placeholder, texts, dropped_leaf, whole, build, deliver_all)
    if scope is not None and scope.binding.atom_keys and not whole:
        _taints(view, table, scope, dropped_leaf, {} if deliver_all else texts)
    if build and not view.whole:
        if not (texts or drops):
            view.filtered = result
        else:
            view.filtered = rebuild_filtered(table, texts, drops)
            if structured is not None:
                view.filtered = structured.render(view.filtered)
    return view


def decide_result(view: ResultView, sess: Session, spec: ToolSpec, scope: AcquisitionScope | None,
                  result: Any, mode: Mode, call_id: str | None, untainted: set[str]) -> Decision:
    """Allow, block or redact ``view`` (``stage="result"``); what reaches the model has its atoms'
    provenance recorded and its ``atom_keys`` values tainted (:func:`_taint`)."""
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
        _taint(sess, spec, view, call_id, untainted)
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
    _taint(sess, spec, view, call_id, untainted)
    return decided("redact", view.filtered, f"tpguard removed {summary} from the result of "
                   f"{spec.name} (outside this task's scope).")


def _taint(sess: Session, spec: ToolSpec, view: ResultView, call_id: str | None, untainted: set[str]) -> None:
    """Provenance and taint live in the request's session; outside one they are not kept
    (docs/acquisition-guard.md), and the first refusal per tool is logged."""
    if not sess.keeps_taint:
        if view.taints and spec.name not in untainted:
            untainted.add(spec.name)
            _log.warning("tpguard: values under atom_keys in a result of %s were not registered as "
                         "tainted atoms: no guard.session() is open, and taint lives only in the "
                         "request's session. Open one per request.", spec.name)
        return
    # once per atom (provenance is a set per atom): a result may repeat an atom 10^5 times
    for atom_id in dict.fromkeys(f.atom_id for f in view.delivered if f.method != "pii"):
        sess.record_provenance(atom_id, spec.name, call_id)
    for key, atom_type, value in view.taints:
        sess.taint(atom_type, value, key, spec.name, call_id)


def _record_dimensions(scope: AcquisitionScope) -> list[str]:
    """The scope's dimensions that only records can be held to (none for ``results: text``)."""
    b = scope.binding
    if b.results == "text":
        return []
    dims = []
    if b.subject_key and scope.subjects is not None:
        dims.append("subject")
    if b.date_key and scope.has_window:
        dims.append("window")
    if scope.fields is not None or scope.fields_by_source:
        dims.append("field")
    return dims


def _structure(view: ResultView, table: LeafTable, scope: AcquisitionScope, arguments: Any,
               texts: dict[int, str], drops: set[tuple[int, Any]], dropped_nodes: set[int],
               wrapped: bool) -> None:
    """Whole-result, record, field, part and paragraph verdicts (no atom scanning)."""
    _whole(view, scope, arguments)
    marker = None if scope.confidential or not scope.markers else _marker(scope.markers)
    transparent = table.root[2] if wrapped and table.root[1] == NODE else -1
    found = read_records(table, scope, marker, transparent)
    view.scope.extend(found.findings)
    view.whole = view.whole or found.whole
    drops |= found.drops
    dropped_nodes |= found.dropped_nodes
    in_set = found.in_set
    has_text = False
    for i, leaf in enumerate(table.leaves):
        if leaf.is_key or leaf.parent in in_set or _under(table, leaf, dropped_nodes):
            continue
        has_text = has_text or bool(leaf.text.strip())
        new = withheld_parts(view, scope, leaf, marker)
        if new is not None:
            texts[i] = new
    if not found.records and has_text:
        view.unapplied = tuple(_record_dimensions(scope))
        for dim in view.unapplied:
            view.scope.append(ScopeFinding(dim, "result", f"a result without records: its {dim} "  # type: ignore[arg-type]
                                           "could not be checked"))


def _atoms(view: ResultView, table: LeafTable, scan: Scan, forbidden_atom: Callable[[Finding], bool],
           placeholder: Operator, texts: dict[int, str], dropped_leaf: set[int], whole: bool,
           build: bool, deliver_all: bool) -> None:
    """One scan per text as read; a text the structure step rewrote is scanned again (only it).
    A key that holds an atom is shown as its placeholder in every path under it (findings, scope
    findings and so spans and messages never carry a value through a path), as at the exit stage."""
    def verdicts(text: str, path: str) -> list[Finding]:
        return with_verdicts(scan(text, path, True), lambda f: not forbidden_atom(f), new_finding)

    keys = {i: fs for i, leaf in enumerate(table.leaves) if leaf.is_key and leaf.text
            and (fs := verdicts(leaf.text, leaf.path))}
    shown = table.display_paths({i: rewrite_text(table.leaves[i].text, fs, placeholder)
                                 for i, fs in keys.items()}) if keys else None
    for i, leaf in enumerate(table.leaves):
        if not leaf.text:
            continue
        path = leaf.path if shown is None else shown[i]
        found = keys[i] if i in keys else verdicts(leaf.text, leaf.path)
        if path != leaf.path:
            found = [f._replace(path=path) for f in found]
        view.findings.extend(found)
        if i in dropped_leaf or whole:
            continue
        if i in texts and not deliver_all:
            found = [f._replace(authorized=not forbidden_atom(f)) for f in scan(texts[i], path, True)]
        view.delivered.extend(found)
        bad = [f for f in found if f.authorized is False]
        if bad:
            if build:
                texts[i] = rewrite_text(texts.get(i, leaf.text), bad, placeholder)
            for f in bad:
                view.scope.append(ScopeFinding("atom", path, f"a {f.atom_type} value outside the scope"))


def _whole(view: ResultView, scope: AcquisitionScope, arguments: Any) -> None:
    b = scope.binding
    if not isinstance(arguments, dict):
        return
    for dim, arg in (("source", b.source_arg), ("subject", b.subject_arg), ("part", b.part_arg)):
        if arg and arguments.get(arg) not in (None, "", "*") and not isinstance(arguments[arg], list):
            if not scope.allows(dim, arguments[arg]):  # type: ignore[arg-type]
                view.whole = True
                view.scope.append(ScopeFinding(dim, arg, f"the result of a {dim} outside the scope"))  # type: ignore[arg-type]


def _under(table: LeafTable, leaf: Leaf, dropped: set[int]) -> bool:
    n = leaf.parent
    while n >= 0:
        if n in dropped:
            return True
        n = table.nodes[n].parent
    return False


def _dropped_leaves(table: LeafTable, drops: set[tuple[int, Any]], dropped_nodes: set[int]) -> set[int]:
    out: set[int] = set()
    gone = set(dropped_nodes)
    for n, node in enumerate(table.nodes):  # parents come first
        if n not in gone and node.parent in gone:
            gone.add(n)
    for n in gone | {p for p, _ in drops}:
        for slot, kind, target, key_leaf in table.nodes[n].children:
            if n in gone or (n, slot) in drops:
                if kind == LEAF:
                    out.add(target)
                if key_leaf >= 0:
                    out.add(key_leaf)
    return out


def _taints(view: ResultView, table: LeafTable, scope: AcquisitionScope, dropped: set[int],
            texts: dict[int, str]) -> None:
    keys = {fold_key(k): (k, t) for k, t in scope.binding.atom_keys.items()}
    known = {(f.path, f.start, f.end) for f in view.delivered}
    for i, leaf in enumerate(table.leaves):
        if leaf.is_key or i in dropped or i in texts:
            continue
        hit = keys.get(fold_key(leaf.key))
        if hit is None:
            continue
        text = leaf.text.strip()
        if len(text) < 3 or (leaf.path, 0, len(leaf.text)) in known:
            continue
        view.taints.append((hit[0], hit[1], text))


def rebuild_filtered(table: LeafTable, texts: dict[int, str], drops: set[tuple[int, Any]]) -> Any:
    """The payload with leaf texts replaced and ``(node, slot)`` children left out. Containers on
    the way are copied (a model or dataclass that loses a field becomes a dict); the rest is shared.
    O(replaced leaves × depth + copied containers)."""
    _, kind, target, _ = table.root
    if kind == LEAF:
        return texts.get(target, table.leaves[target].value)
    if kind != NODE:
        return target
    dirty: set[int] = set()
    starts = [table.leaves[i].parent for i in texts] + [n for n, _ in drops]
    for n in starts:
        while n >= 0 and n not in dirty:
            dirty.add(n)
            n = table.nodes[n].parent
    built: dict[int, Any] = {}

    def value(ref: tuple[Any, int, Any, int]) -> Any:
        _, k, t, _ = ref
        if k == LEAF:
            return texts[t] if t in texts else table.leaves[t].value
        if k == NODE:
            return built[t] if t in built else table.nodes[t].obj
        return t

    for n in sorted(dirty, reverse=True):
        node = table.nodes[n]
        kept = [ref for ref in node.children if (n, ref[0]) not in drops]
        if node.kind in ("list", "tuple"):
            items = [value(ref) for ref in kept]
            built[n] = items if node.kind == "list" else tuple(items)
        elif node.kind in ("dict", "mapping") or len(kept) < len(node.children):
            built[n] = {texts.get(ref[3], ref[0]) if ref[3] >= 0 else ref[0]: value(ref) for ref in kept}
        elif node.kind == "model":
            built[n] = node.obj.model_copy(update={ref[0]: value(ref) for ref in kept})
        else:
            built[n] = dataclasses.replace(node.obj, **{ref[0]: value(ref) for ref in kept})
    return built[target]
