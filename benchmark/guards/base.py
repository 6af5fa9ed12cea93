"""Guards under comparison: tpguard's modes and the baselines people use today.

Each guard is prepared once per case and then decides every call the agent makes, at the runner's
single interception point (the gateway) — so a guard behaves the same under every agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from tpguard import ToolSpec

    from ..cases.schema import Case

__all__ = ["CaseGuard", "GuardAction", "GuardUnderTest"]

ActionName = Literal["allow", "block", "redact", "rewrite"]


@dataclass(frozen=True, slots=True)
class GuardAction:
    """What a guard did to one call. ``arguments`` are what the backend will receive.

    ``types``/``fields`` name what was withheld or rewritten (atom types or PII entity types, and
    argument paths) — never values.
    """

    action: ActionName
    arguments: dict[str, Any]
    message: str | None = None
    types: tuple[str, ...] = ()
    fields: tuple[str, ...] = field(default=())
    #: the forbidden findings behind it, ``(atom_id, atom_type, path, method)`` (tpguard's modes;
    #: what an ``audit`` row compares with the evaluator's, issue 34)
    atoms: tuple[tuple[str, str, str, str], ...] = ()

    @property
    def blocked(self) -> bool:
        return self.action == "block"


class CaseGuard(Protocol):
    def process(self, spec: ToolSpec, arguments: dict[str, Any]) -> GuardAction: ...


class GuardUnderTest(Protocol):
    """A named guard configuration; ``prepare(case)`` builds its per-case state."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def describe(self) -> dict[str, Any]:
        """What this configuration runs (``name``, ``description`` and guard-specific settings),
        JSON-serialisable, for ``run.json`` and the report."""
        ...

    def prepare(self, case: Case) -> CaseGuard: ...
