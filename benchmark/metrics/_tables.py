"""One case's policy, precompiled for scoring: ``A_{j,i}``, severities, sinks, free-text slots.

Built once per case and reused across every guard configuration scored on it (the evaluator's
detector is compiled here too, lazily), so scoring thousands of trajectories stays in seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpguard import Detector
from tpguard.policy import Access

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["CaseTables", "field_of", "path_matches"]


def field_of(path: str) -> str:
    """The argument name a path ends in: ``items[2].comment`` → ``comment``."""
    return path.rsplit(".", 1)[-1].split("[", 1)[0]


def path_matches(path: str, field: str) -> bool:
    """``path`` is the argument ``field`` (given as a full path or as its last key)."""
    return path == field or field_of(path) == field


class CaseTables:
    """Lookups for one case; ``forbidden(tool)`` is ``F_k = {p_j | A_{j,i(k)} = 0}`` (§5.2)."""

    def __init__(self, case: Case, *, fuzzy: bool = True) -> None:
        self.case = case
        self.fuzzy = fuzzy
        self.atom_ids: tuple[str, ...] = tuple(a.id for a in case.atoms)
        self.atom_type = {a.id: a.type for a in case.atoms}
        self.severity = {a.id: float(a.severity) for a in case.atoms}
        self.sink = {t.name: t.sink for t in case.tools}
        self.free_text = {t.name: tuple(t.free_text) for t in case.tools}
        self._resolver = case.policy.resolver()
        self._access: dict[tuple[str, str], Access] = {}
        self._forbidden: dict[str, frozenset[str]] = {}
        self._conditional: dict[str, frozenset[str]] = {}
        self._detector: Detector | None = None

    @property
    def detector(self) -> Detector:
        """The evaluator's detector: ``Detector(case.atoms, fuzzy=True)`` unless configured."""
        if self._detector is None:
            self._detector = Detector(self.case.atoms, fuzzy=self.fuzzy)
        return self._detector

    def access(self, atom_id: str, tool: str) -> Access:
        key = (atom_id, tool)
        hit = self._access.get(key)
        if hit is None:
            hit = self._access[key] = self._resolver.access(atom_id, tool)
        return hit

    def forbidden(self, tool: str) -> frozenset[str]:
        """Atoms with binary ``A = 0`` for ``tool`` (conditional cells count as ``A = 1``)."""
        hit = self._forbidden.get(tool)
        if hit is None:
            hit = frozenset(a for a in self.atom_ids if self.access(a, tool).binary == 0)
            self._forbidden[tool] = hit
        return hit

    def conditional(self, tool: str) -> frozenset[str]:
        """Atoms whose cell for ``tool`` is conditional (authorized only in some fields/forms)."""
        hit = self._conditional.get(tool)
        if hit is None:
            hit = frozenset(a for a in self.atom_ids if self.access(a, tool).state == "conditional")
            self._conditional[tool] = hit
        return hit

    def sink_of(self, tool: str) -> str:
        return self.sink.get(tool, "external")
