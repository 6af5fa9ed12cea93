"""Statistics of the acquisition suite (seed ``001_*`` §3: cases per behaviour and domain, Task 3's
files by type, the marker subset)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .schema import BEHAVIOURS, AcqSuite

__all__ = ["acq_suite_stats"]


def acq_suite_stats(suite: AcqSuite) -> dict[str, Any]:
    per_b = Counter(c.behaviour for c in suite)
    per_d = Counter(c.domain for c in suite)
    files = Counter(c.file_kind for c in suite if c.file_kind)
    tools = sorted({t for c in suite for t in c.tools})
    return {
        "suite": suite.name,
        "seed": suite.seed,
        "cases": len(suite),
        "behaviours": len(per_b),
        "domains": len(per_d),
        "tools": len(tools),
        "tool_universe": tools,
        "marker_subset": sum(c.marker for c in suite),
        "k_acq_items": sum(len(c.k_acq) for c in suite),
        "k_disc_targets": sum(len(c.k_disc) for c in suite),
        "required_writes": sum(c.completion.write is not None for c in suite),
        "per_behaviour": {f"{b} {BEHAVIOURS[b]}": per_b[b] for b in sorted(per_b)},
        "per_domain": dict(sorted(per_d.items())),
        "files": dict(sorted(files.items())),
    }
