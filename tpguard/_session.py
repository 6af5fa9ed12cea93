"""Per-request state, bound through contextvars so threads and asyncio tasks stay isolated.

A session holds the atoms of one task or request (on top of the policy's), the detector compiled
for them, and the placeholder map that keeps redaction consistent (same atom → same placeholder).
Code that hands work to a new thread must copy the context (``contextvars.copy_context().run``);
the framework adapters do this where the framework does not.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING

from .detection import Detector, Finding
from .policy import PrivateAtom
from .redaction import PlaceholderOperator

if TYPE_CHECKING:
    from .policy import Access, AccessResolver, PolicyKB

__all__ = ["Session", "current_session"]


class Session:
    """Atoms, detector and placeholders of one request. Created by :meth:`Guard.session`."""

    def __init__(
        self,
        guard_id: int,
        policy: PolicyKB,
        atoms: Iterable[PrivateAtom],
        make_detector: Callable[[Iterable[PrivateAtom]], Detector],
        session_id: str | None = None,
    ) -> None:
        self.id = session_id or uuid.uuid4().hex[:16]
        self.guard_id = guard_id
        self._lock = threading.Lock()
        self._make_detector = make_detector
        self._placeholders: dict[str, str] = {}
        self._values: tuple[PolicyKB, dict[str, str]] | None = None
        self._counters: dict[str, int] = {}
        self._base = policy
        self._extra: dict[str, PrivateAtom] = {a.id: a for a in atoms}
        self.policy: PolicyKB = policy
        self.resolver: AccessResolver = policy.resolver()
        #: (atom id, (tool, purpose, sink)) → Access, reset whenever atoms change
        self.access_cache: dict[tuple[str, tuple[str, str, str]], Access] = {}
        self.detector: Detector = make_detector(policy.atoms)
        if self._extra:
            self._rebuild()

    def _rebuild(self) -> None:
        policy = self._base.with_atoms(self._extra.values())
        detector = self._make_detector(policy.atoms)
        # Swap whole objects so a concurrent check sees either the old or the new state.
        self.policy, self.resolver, self.detector = policy, policy.resolver(), detector
        self.access_cache = {}

    def register(self, *atoms: PrivateAtom) -> None:
        with self._lock:
            self._extra.update({a.id: a for a in atoms})
            self._rebuild()

    def rebase(self, policy: PolicyKB) -> None:
        """The guard's policy changed (a tool was registered): keep this session's atoms."""
        with self._lock:
            self._base = policy
            self._rebuild()

    @property
    def atoms(self) -> tuple[PrivateAtom, ...]:
        return self.policy.atoms

    def atom_value(self, atom_id: str) -> str | None:
        """The canonical value of a registered atom (for keyed hashing in spans), else None."""
        values = self._values
        if values is None or values[0] is not self.policy:
            values = self._values = (self.policy, {a.id: a.value for a in self.policy.atoms})
        return values[1].get(atom_id)

    def placeholder(self, finding: Finding) -> str:
        with self._lock:
            label = self._placeholders.get(finding.atom_id)
            if label is None:
                n = self._counters.get(finding.atom_type, 0) + 1
                self._counters[finding.atom_type] = n
                label = PlaceholderOperator.label(finding.atom_type, n)
                self._placeholders[finding.atom_id] = label
            return label


_CURRENT: ContextVar[Session | None] = ContextVar("tpguard_session", default=None)


def current_session() -> Session | None:
    return _CURRENT.get()


def bind(session: Session | None):
    return _CURRENT.set(session)


def unbind(token) -> None:
    _CURRENT.reset(token)
