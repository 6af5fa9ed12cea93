"""Suite statistics shaped like seed ``000_*`` Table 5 (cases, domains, tools, averages, private
atoms, field–tool pairs, authorized and forbidden pairs)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..cases.schema import Suite

__all__ = ["suite_stats"]


def suite_stats(suite: Suite) -> dict[str, Any]:
    """Table 5 row of ``suite``. Conditional pairs count as authorized (``A_{j,i} = 1``, §3.4)."""
    n = len(suite)
    tools: set[str] = set()
    atoms = pairs = authorized = forbidden = 0
    per_domain: Counter[str] = Counter()
    for case in suite:
        per_domain[case.domain] += 1
        tools.update(t.name for t in case.tools)
        atoms += len(case.atoms)
        counts = case.matrix().counts()
        pairs += len(case.atoms) * len(case.tools)
        authorized += counts["authorized"] + counts["conditional"]
        forbidden += counts["forbidden"]
    n_tools = sum(len(c.tools) for c in suite)
    return {
        "suite": suite.name,
        "cases": n,
        "domains": len(per_domain),
        "tools": len(tools),
        "avg_tools_per_case": round(n_tools / n, 2) if n else 0.0,
        "avg_atoms_per_case": round(atoms / n, 2) if n else 0.0,
        "private_atoms": atoms,
        "field_tool_pairs": pairs,
        "authorized": authorized,
        "forbidden": forbidden,
        "per_domain": dict(sorted(per_domain.items())),
    }
