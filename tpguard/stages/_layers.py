"""The detectors a session scans with: the policy compiled once per guard (:class:`BaseLayer`) and
each session's own atoms in small overlay levels (:class:`Layers`, a base of
:class:`~tpguard.stages.session.Session`).

Layered, not recompiled (issue 9, item 2): the policy's atoms are compiled once per ``Guard`` into a
:class:`BaseLayer`. A :class:`Session` holds only its *own* atoms (those it was entered with and those
``register()``-ed into it) and small overlay :class:`~tpguard.detect.detector.Detector` s for them, built
lazily on the first scan after a change — entering a session costs O(1), ``register`` O(1), and
memory per session is O(its atoms). The overlay is *incremental* (issue 28, item 4): atoms
registered since the last scan compile into a new level, and a level is merged with the one below
it only while that one is at most :data:`MERGE_RATIO` times its size — so a session that gains one
tainted atom per result compiles each atom O(log n) times over its life (amortized O(new atoms ×
log n) per registration, never O(all atoms)), and a scan runs over at most ~log₄ n levels. A session sees the atoms of the
session it was entered from (live), and every session sees the guard-wide atoms registered outside
any session. An atom whose id is already in the policy (or an outer session) *overrides* it there:
the outer layer's findings for that id are dropped and the session's value is used.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Container, Iterable, Iterator
from operator import is_
from typing import TYPE_CHECKING, Any, cast

from ..detect._normalize import normalize
from ..detect.detector import MEMO_LEN, Detector, Finding
from ..policy.kb import PolicyKB, PrivateAtom

if TYPE_CHECKING:
    from ..policy.kb import ToolSpec
    from .session import Session

__all__ = ["MERGE_RATIO", "BaseLayer", "Layers"]

#: an overlay level is merged into the new one while it holds at most this many times its atoms
MERGE_RATIO = 4


class _Ids:
    """The atom ids of several sessions, as one live container (``in`` is O(sessions))."""

    __slots__ = ("_keys",)

    def __init__(self, keys: tuple[Any, ...]) -> None:
        self._keys = keys

    def __contains__(self, atom_id: object) -> bool:
        return any(atom_id in k for k in self._keys)

    def __len__(self) -> int:
        return sum(len(k) for k in self._keys)

    def __iter__(self) -> Iterator[str]:
        return itertools.chain.from_iterable(self._keys)


#: one session's overlay: its compiled levels and its own atom ids (a live view)
_Layer = tuple[tuple[Detector, ...], Any]


class BaseLayer:
    """The policy compiled once per guard: its detector (with the optional PII detector) and its
    access resolver."""

    __slots__ = ("_values", "detector", "policy", "resolver")

    def __init__(self, policy: PolicyKB, detector: Detector) -> None:
        self.policy = policy
        self.detector = detector
        self.resolver = policy.resolver()
        self._values: dict[str, str] | None = None

    def value(self, atom_id: str) -> str | None:
        if self._values is None:
            self._values = {a.id: a.value for a in self.policy.atoms}
        return self._values.get(atom_id)


class _Withheld:
    """The indices of a detector's atoms whose *fuzzy* findings a call to one tool may have to
    withhold, as a container: ``idx in withheld`` is True unless the atom's access permits a fuzzy
    finding at every path (authorized, or conditional on forms that include ``fuzzy`` and on no
    fields). Decided on first use per atom and kept (a redact's second scan asks about the few
    atoms it has candidates for: flat in the policy's size, nothing computed per session for the
    atoms never asked about)."""

    __slots__ = ("_atoms", "_memo", "_session", "_spec")

    def __init__(self, atoms: tuple[PrivateAtom, ...], session: Session, spec: ToolSpec) -> None:
        self._atoms = atoms
        self._session = session
        self._spec = spec
        self._memo: dict[int, bool] = {}

    def __contains__(self, idx: Any) -> bool:
        got = self._memo.get(idx)
        if got is None:
            # permits(None, ...): a conditional access with fields says False without a path
            access = self._session.access(self._atoms[idx].id, self._spec)
            got = self._memo[idx] = not access.permits(None, "fuzzy")
        return got


_NO_LAYERS: tuple[list[tuple[Detector, Container[str]]], Container[str]] = ([], frozenset())


class Layers:
    """The overlay half of a :class:`~tpguard.stages.session.Session`: its own atoms compiled into
    levels over the guard's :class:`BaseLayer` (see the module docstring) and the scanner over all
    of them. Its state is set by ``Session.__init__``."""

    _base: BaseLayer
    _parent: Session | None
    _make_overlay: Callable[[Iterable[PrivateAtom]], Detector]
    _lock: threading.Lock
    _own: dict[str, PrivateAtom]
    _levels: list[tuple[Detector, list[PrivateAtom]]]
    _pending: list[PrivateAtom]
    _replaced: bool
    _overlay: _Layer | None
    _dirty: bool
    _chain: tuple[tuple[_Layer | None, ...], list[tuple[Detector, Container[str]]], Container[str]] | None
    _withheld: dict[tuple[str, str, str], dict[Detector, _Withheld]]

    def _layer(self) -> _Layer | None:
        if self._dirty:
            with self._lock:
                if self._dirty:
                    self._compile()
                    self._dirty = False
        return self._overlay

    def _compile(self) -> None:
        """Pending atoms into a new level, merged with smaller levels below (see the module
        docstring); everything at once when an id was replaced. Called under the lock."""
        if self._replaced:
            self._levels, self._pending, self._replaced = [], list(self._own.values()), False
        new = self._pending
        self._pending = []
        levels = self._levels
        while levels and len(levels[-1][1]) <= MERGE_RATIO * len(new):
            new = levels.pop()[1] + new
        if new:
            levels.append((self._make_overlay(new), new))
        self._overlay = (tuple(d for d, _ in levels), self._own.keys()) if levels else None

    def _layers(self) -> tuple[list[tuple[Detector, Container[str]]], Container[str]]:
        """Overlay detectors from this session outwards, each with the ids a closer session
        overrides, and the ids all of them shadow in the base layer. Recomputed only when a layer
        changed; the id sets are live views of the sessions' atoms (no copy per change)."""
        if self._parent is None and not self._dirty and self._overlay is None:
            return _NO_LAYERS  # the default session, or one without atoms: the base layer alone
        own: list[_Layer | None] = []
        s: Layers | None = self
        while s is not None:
            own.append(s._layer())
            s = s._parent
        key = tuple(own)
        chain = self._chain
        if chain is None or len(chain[0]) != len(key) or not all(map(is_, chain[0], key)):
            layers: list[tuple[Detector, Container[str]]] = []
            closer: tuple[Any, ...] = ()
            for layer in own:
                if layer is not None:
                    overridden: Container[str] = _Ids(closer) if closer else frozenset()
                    layers += [(det, overridden) for det in layer[0]]
                    closer = (*closer, layer[1])
            chain = self._chain = (key, layers, _Ids(closer) if closer else frozenset())
        return chain[1], chain[2]

    def _own_atom(self, atom_id: str) -> PrivateAtom | None:
        s: Layers | None = self
        while s is not None:
            atom = s._own.get(atom_id)
            if atom is not None:
                return atom
            s = s._parent
        return None

    @property
    def has_overlay(self) -> bool:
        return bool(self._layers()[0])

    def scanner(self, withheld_by: ToolSpec | None = None) -> Callable[[str, str, bool], list[Finding]]:
        """``scan(text, path, free_text)`` over the base layer and every overlay, the layers
        resolved once per call. Each scan is O(text) and flat in atoms.

        ``withheld_by``: a scan for the findings a call to that tool may have to withhold (redact's
        second scan of a rewritten text): the fuzzy pass aligns only the atoms whose fuzzy findings
        the tool's access may forbid (:meth:`Detector.scan_text`'s ``wanted``); the other atoms'
        fuzzy findings, all of them authorized, may be missing. Every other finding is the same."""
        detector = self._base.detector
        layers, shadow = self._layers()
        wanted = None if withheld_by is None else self._withheld_atoms(withheld_by)
        if not layers:
            if wanted is None:
                return detector.scan_leaf
            only = wanted(detector)
            return lambda text, path, free: detector.scan_text(text, path=path, free_text=free, wanted=only)
        base = detector.scan_text
        base_wanted = None if wanted is None else wanted(detector)
        layer_wanted = [None if wanted is None else wanted(det) for det, _ in layers]

        def scan(text: str, path: str, free: bool) -> list[Finding]:
            # Normalized once per leaf and shared by every layer; short texts are memoized by
            # each detector (a hit costs less than normalizing).
            norm = normalize(text) if len(text) > MEMO_LEN else None
            out = [f for f in base(text, path=path, free_text=free, norm=norm, wanted=base_wanted)
                   if f.atom_id not in shadow]
            for (det, overridden), det_wanted in zip(layers, layer_wanted, strict=True):
                # closest session first: its atoms override outer ones
                found = det.scan_text(text, path=path, free_text=free, norm=norm, wanted=det_wanted)
                if overridden:
                    found = [f for f in found if f.atom_id not in overridden]
                out.extend(found)
            if len(out) > 1:
                out.sort(key=lambda f: (f.start, -f.end))
            return out

        return scan

    def _withheld_atoms(self, spec: ToolSpec) -> Callable[[Detector], _Withheld]:
        """Per detector of this session's layers, its atoms a call to ``spec`` may have to withhold
        when found fuzzy (:class:`_Withheld`), kept per tool and detector until the session's
        atoms change (then its layers and their access may change)."""
        table = self._withheld  # read before the access cache, as verdicts() does
        per_detector = table.get((spec.name, spec.purpose, spec.sink))
        if per_detector is None:
            per_detector = table[(spec.name, spec.purpose, spec.sink)] = {}

        def withheld(det: Detector) -> _Withheld:
            got = per_detector.get(det)
            if got is None:
                got = per_detector[det] = _Withheld(det.atoms, cast("Session", self), spec)
            return got

        return withheld

    def known_clean(self) -> Container[str] | None:
        """The texts the base layer has already scanned and found no atom in (its memo of short
        texts — dict keys repeat across calls), as a container: ``key in clean`` is one set
        look-up. ``None`` when something else would scan them too (an overlay, a PII detector)."""
        det = self._base.detector
        if det.pii is not None or self._layers()[0]:
            return None
        return det.known_clean
