"""Per-request state, bound through contextvars so threads and asyncio tasks stay isolated.

Layered, not recompiled (issue 9, item 2): a :class:`Session` holds only its *own* atoms over the
policy compiled once per ``Guard`` (:class:`BaseLayer`); the overlay machinery and the scanner are
in :mod:`tpguard.stages._layers` (:class:`~tpguard.stages._layers.Layers`, a base of
:class:`Session`). A session sees the atoms of the session it was entered from (live), and every
session sees the guard-wide atoms registered outside any session.

Authorization of a session atom is resolved against the policy's own resolver
(``AccessResolver.access(atom, tool)`` with the atom object: its explicit ``(id, tool)`` pairs, else
its type's rules) — never by copying the policy. Code that hands work to a new thread must copy the
context (``contextvars.copy_context().run``); the framework adapters do this where the framework
does not.

Acquisition (seed ``001_*`` §3, §6): a session may bind per-tool :class:`~tpguard.policy.scope.AcquisitionScope`s
(the task's minimum scope; they override the policy's ``ToolSpec.scope`` and are seen by inner
sessions), and it keeps the *provenance* of every atom that arrived in a tool result — ``(tool,
call id)`` — registering values found under a scope's ``atom_keys`` as new atoms (taint), so the
purpose-bound argument checks apply to them downstream. Tainted atoms get value-free ids
(``records.phone#1``, numbered per guard so an inner session never reuses an outer one's id) and
are deduplicated by (type, case-folded value) across the session and the sessions it was entered
from. Taint lives in the session that produced it and ends with it; the guard's default session
(outside any ``guard.session()``) registers none (see :meth:`Session.taint`).
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable, Container, Iterable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NamedTuple

from ..detect.detector import Detector, Finding
from ..policy.exposure import Disclosure, Exposure, Recipient
from ..policy.kb import PolicyKB, PrivateAtom
from ..policy.scope import AcquisitionScope
from ..redaction import PlaceholderOperator
from ..telemetry._attributes import DEFAULT_SESSION_ID
from ._layers import MERGE_RATIO, BaseLayer, Layers, _Layer, _Withheld

if TYPE_CHECKING:
    from ..policy.kb import Access, ToolSpec

__all__ = ["DEFAULT_SESSION_ID", "MERGE_RATIO", "BaseLayer", "Provenance", "Session", "bindings", "current_session"]


class Provenance(NamedTuple):
    """Where an atom arrived from: the tool whose result carried it, and that call's id."""

    tool: str
    call_id: str | None


class Session(Layers):
    """Own atoms, overlay detector and placeholders of one request. Created by :meth:`Guard.session`."""

    def __init__(
        self,
        guard_id: int,
        base: BaseLayer,
        atoms: Iterable[PrivateAtom],
        make_overlay: Callable[[Iterable[PrivateAtom]], Detector],
        session_id: str | None = None,
        parent: Session | None = None,
        scopes: Mapping[str, AcquisitionScope] | None = None,
        exposure: Mapping[str, Any] | None = None,
    ) -> None:
        self.id = session_id or uuid.uuid4().hex[:16]
        self.guard_id = guard_id
        self._base = base
        self._parent = parent
        self._make_overlay = make_overlay
        self._lock = threading.Lock()
        self._own: dict[str, PrivateAtom] = {a.id: a for a in atoms}
        self._levels: list[tuple[Detector, list[PrivateAtom]]] = []
        self._pending: list[PrivateAtom] = list(self._own.values())
        self._replaced = False  # an id registered twice: its old value sits in a compiled level
        self._overlay: _Layer | None = None
        self._dirty = bool(self._own)
        self._root: Session = parent._root if parent is not None else self
        self._taint_ids = itertools.count(1)  # used on the root session only
        self._chain: tuple[tuple[_Layer | None, ...], list[tuple[Detector, Container[str]]],
                           Container[str]] | None = None
        self._policy: tuple[tuple[Any, ...], PolicyKB] | None = None
        self._placeholders: dict[str, str] = {}
        self._counters: dict[str, int] = {}
        self._scopes: dict[str, AcquisitionScope] = dict(scopes or {})
        self._provenance: dict[str, dict[Provenance, None]] = {}
        self._tainted: dict[tuple[str, str], str] = {}
        # exposure stage (issue 11): this session's recipients/disclosures/exits, and the resolver
        self._exposure_layer: Mapping[str, Any] = exposure or {}
        self._exposure: Exposure | None = None
        #: (atom id, (tool, purpose, sink)) → Access; reset whenever this session's atoms change
        self.access_cache: dict[tuple[str, tuple[str, str, str]], Access] = {}
        #: (tool, purpose, sink) → (verdict memo, allowed): see :meth:`verdicts`; reset with the cache
        self._verdicts: dict[tuple[str, str, str], tuple[dict[tuple[str, str], bool], Callable[[Finding, str], bool]]] = {}
        #: (tool, purpose, sink) → per detector, the atoms it may have to withhold: see :meth:`scanner`
        self._withheld: dict[tuple[str, str, str], dict[Detector, _Withheld]] = {}

    # -- atoms --------------------------------------------------------------------------------
    def register(self, *atoms: PrivateAtom) -> None:
        """Add atoms to this session. O(atoms); they compile into the overlay on the next scan."""
        with self._lock:
            for a in atoms:
                if a.id in self._own:
                    self._replaced = True
                self._own[a.id] = a
                self._pending.append(a)
            self._dirty = True
            self.access_cache = {}
            self._verdicts = {}  # after the cache: see verdicts()
            self._withheld = {}

    # -- scanning and deciding ------------------------------------------------------------------
    def access(self, atom_id: str, spec: ToolSpec) -> Access:
        """``A`` for one atom and tool: a session atom by its object, a policy atom by its id."""
        key = (atom_id, (spec.name, spec.purpose, spec.sink))
        cached = self.access_cache.get(key)
        if cached is None:
            atom = self._own_atom(atom_id)
            cached = self._base.resolver.access(atom if atom is not None else atom_id, spec)
            self.access_cache[key] = cached
        return cached

    def authorizer(self, spec: ToolSpec) -> Callable[[Finding, str], bool]:
        """``allowed(finding, path)``: ``A`` of one finding of a call to ``spec`` (the spec's cache
        key built once per call, not per finding). Unregistered PII is forbidden only by type rules."""
        return self._authorizer(spec, self.access_cache)

    def _authorizer(self, spec: ToolSpec, cache: dict[tuple[str, tuple[str, str, str]], Access]
                    ) -> Callable[[Finding, str], bool]:
        tool = (spec.name, spec.purpose, spec.sink)

        def allowed(f: Finding, path: str) -> bool:
            if f.method == "pii":
                acc = self.access_of_type(PrivateAtom(id=f.atom_id, type=f.atom_type, value="-"), spec)
                return acc.level == "default" or acc.permits(path, f.method)
            cached = cache.get((f.atom_id, tool))
            return (cached if cached is not None else self.access(f.atom_id, spec)).permits(path, f.method)

        return allowed

    def verdicts(self, spec: ToolSpec) -> tuple[dict[tuple[str, str], bool], Callable[[Finding, str], bool]]:
        """``(memo, allowed)`` for calls to ``spec``, built once per tool and session (reset when
        the session's atoms change). ``allowed`` is :meth:`authorizer`'s, and it records in ``memo``
        — ``(atom id, method) → verdict`` — each verdict that does not depend on the finding's path:
        every registered atom's but one whose access is conditional on fields (PII is decided by
        type, never memoized). A call looks its findings up in ``memo`` first: one dict look-up
        per finding instead of a resolver call. O(1) per finding."""
        tool = (spec.name, spec.purpose, spec.sink)
        # read before the access cache (register() replaces the cache first): a pair built on a
        # cache that register() has just replaced goes into the table register() replaced too
        table = self._verdicts
        pair = table.get(tool)
        if pair is not None:
            return pair
        memo: dict[tuple[str, str], bool] = {}
        cache = self.access_cache
        allowed = self._authorizer(spec, cache)

        def remembered(f: Finding, path: str) -> bool:
            ok = allowed(f, path)
            if f.method != "pii":
                acc = cache.get((f.atom_id, tool))
                if acc is not None and not (acc.state == "conditional" and acc.fields):
                    memo[f.atom_id, f.method] = ok
            return ok

        pair = (memo, remembered)
        table[tool] = pair
        return pair

    def access_of_type(self, atom: PrivateAtom, spec: ToolSpec) -> Access:
        """``A`` for an unregistered finding (PII) known by its type only."""
        return self._base.resolver.access(atom, spec)

    def atom_value(self, atom_id: str) -> str | None:
        """The canonical value of a registered atom (for keyed hashing in spans), else None."""
        atom = self._own_atom(atom_id)
        return atom.value if atom is not None else self._base.value(atom_id)

    # -- compatibility views (O(policy): not on the hot path) -----------------------------------
    @property
    def policy(self) -> PolicyKB:
        """The policy with this session's atoms merged in (computed on demand, then cached)."""
        key = tuple(self._layers()[0])
        cached = self._policy
        if cached is None or cached[0] != key:
            chain: list[Session] = []
            s: Session | None = self
            while s is not None:
                chain.append(s)
                s = s._parent
            merged: dict[str, PrivateAtom] = {}
            for sess in reversed(chain):
                merged.update(sess._own)
            cached = self._policy = (key, self._base.policy.with_atoms(merged.values()))
        return cached[1]

    @property
    def atoms(self) -> tuple[PrivateAtom, ...]:
        return self.policy.atoms

    # -- acquisition: scopes, provenance and taint ---------------------------------------------
    def scope_for(self, spec: ToolSpec) -> AcquisitionScope | None:
        """The tool's scope: bound in this session or an outer one, else the policy's. O(depth)."""
        s: Session | None = self
        while s is not None:
            scope = s._scopes.get(spec.name)
            if scope is not None:
                return scope
            s = s._parent
        return spec.scope

    def bind_scopes(self, scopes: Mapping[str, AcquisitionScope]) -> None:
        with self._lock:
            self._scopes.update(scopes)

    def record_provenance(self, atom_id: str, tool: str, call_id: str | None) -> None:
        """Note that ``atom_id`` arrived in a result of ``tool`` (call ``call_id``). O(1)."""
        with self._lock:
            self._provenance.setdefault(atom_id, {})[Provenance(tool, call_id)] = None

    def provenance(self, atom_id: str) -> tuple[Provenance, ...]:
        """Every tool result (tool, call id) the atom arrived in, in this session or outer ones."""
        out: dict[Provenance, None] = {}
        s: Session | None = self
        while s is not None:
            out.update(s._provenance.get(atom_id, {}))
            s = s._parent
        return tuple(out)

    @property
    def keeps_taint(self) -> bool:
        """Whether taint may live here: every session a request entered, never the guard's
        default session (its atoms would be every later request's: user B blocked naming user A's
        value)."""
        return self._parent is not None

    def taint(self, atom_type: str, value: str, key: str, tool: str, call_id: str | None) -> str | None:
        """Register ``value`` (found under result key ``key``) as an atom of ``atom_type`` with its
        provenance; returns its id — the same id for the same type and value here or in an outer
        session — or ``None`` in the default session, which keeps no taint (:attr:`keeps_taint`).
        O(depth) plus O(1) amortized registration."""
        if not self.keeps_taint:
            return None
        norm = (atom_type, " ".join(value.casefold().split()))
        with self._lock:
            atom_id = self._known_taint(norm)
            new = atom_id is None
            if atom_id is None:
                atom_id = f"{tool}.{key}#{next(self._root._taint_ids)}"
                self._tainted[norm] = atom_id
        if new:
            self.register(PrivateAtom(id=atom_id, type=atom_type, value=value))
        self.record_provenance(atom_id, tool, call_id)
        return atom_id

    def _known_taint(self, norm: tuple[str, str]) -> str | None:
        s: Session | None = self
        while s is not None:
            hit = s._tainted.get(norm)
            if hit is not None:
                return hit
            s = s._parent
        return None

    # -- exposure: recipients and Auth(r, e) (issue 11) ------------------------------------------
    def exposure(self) -> Exposure:
        """``Auth`` and the channel split seen here: this session's declarations, then outer
        sessions', then the policy's. Built once per session (O(recipients + disclosures))."""
        cached = self._exposure
        if cached is None:
            layers: list[Mapping[str, Any]] = []
            s: Session | None = self
            while s is not None:
                layers.append(s._exposure_layer)
                s = s._parent
            kb = self._base.policy
            layers.append({"recipients": kb.recipients, "disclosures": kb.disclosures,
                           "exits": kb.exits, "internal_channels": kb.internal_channels})
            cached = self._exposure = Exposure.layered(layers)
        return cached

    def placeholder(self, finding: Finding) -> str:
        label = self._placeholders.get(finding.atom_id)  # a label, once given, never changes
        if label is not None:
            return label
        with self._lock:
            label = self._placeholders.get(finding.atom_id)
            if label is None:
                n = self._counters.get(finding.atom_type, 0) + 1
                self._counters[finding.atom_type] = n
                label = PlaceholderOperator.label(finding.atom_type, n)
                self._placeholders[finding.atom_id] = label
            return label


def bindings(
    scopes: Mapping[str, AcquisitionScope | Mapping[str, Any]] | None,
    recipients: Iterable[Recipient | Mapping[str, Any]], disclosures: Iterable[Disclosure | Mapping[str, Any]],
    exits: Iterable[str] | None, internal_channels: Iterable[str] | None,
) -> tuple[dict[str, AcquisitionScope], dict[str, Any]]:
    """What ``guard.session(...)`` binds, validated: the per-tool acquisition scopes and the
    exposure layer (``exits``/``internal_channels`` ``None``: the outer session's or the policy's)."""
    bound = {name: s if isinstance(s, AcquisitionScope) else AcquisitionScope.model_validate(s)
             for name, s in (scopes or {}).items()}
    exposure = {
        "recipients": [r if isinstance(r, Recipient) else Recipient.model_validate(r) for r in recipients],
        "disclosures": [d if isinstance(d, Disclosure) else Disclosure.model_validate(d)
                        for d in disclosures],
        "exits": None if exits is None else tuple(exits),
        "internal_channels": None if internal_channels is None else tuple(internal_channels)}
    return bound, exposure


_CURRENT: ContextVar[Session | None] = ContextVar("tpguard_session", default=None)


def current_session() -> Session | None:
    return _CURRENT.get()


def bind(session: Session | None):
    return _CURRENT.set(session)


def unbind(token) -> None:
    _CURRENT.reset(token)
