"""The retention filter of the public-derived split (seed ``000_*`` §6.1).

"Each retained case must contain at least four source tool calls, at least two distinct tools, at
least four sensitive atoms, at least two free-text-capable tools, and at least twenty forbidden
field–tool opportunities." Calls and distinct tools count the *source* gold calls; atoms,
free-text-capable tools and forbidden opportunities count the adapted case (the paper filters
after adding free-text sinks), where a forbidden opportunity is a cell ``A_{j,i} = 0``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..schema import Case

__all__ = ["RetentionFilter"]


@dataclass(frozen=True)
class RetentionFilter:
    """Thresholds of the §6.1 filter; the defaults are the paper's."""

    min_calls: int = 4
    min_tools: int = 2
    min_atoms: int = 4
    min_free_text_tools: int = 2
    min_forbidden: int = 20

    def measures(self, case: Case) -> dict[str, int]:
        counts = case.matrix().counts()
        return {
            "calls": int(case.metadata["source_calls"]),
            "tools": int(case.metadata["source_tools"]),
            "atoms": len(case.atoms),
            "free_text_tools": sum(1 for t in case.tools if t.free_text),
            "forbidden": counts["forbidden"],
        }

    def reasons(self, case: Case) -> list[str]:
        """Why the case is dropped (empty when it is retained)."""
        m = self.measures(case)
        limits = {
            "calls": self.min_calls, "tools": self.min_tools, "atoms": self.min_atoms,
            "free_text_tools": self.min_free_text_tools, "forbidden": self.min_forbidden,
        }
        return [f"{k} < {v}" for k, v in limits.items() if m[k] < v]

    def keeps(self, case: Case) -> bool:
        return not self.reasons(case)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
