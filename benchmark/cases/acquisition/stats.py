"""Statistics of the acquisition suite (seed ``001_*`` §3: cases per behaviour and domain, Task 3's
files by type, the marker subset)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .schema import BEHAVIOURS, AcqCase, AcqSuite

__all__ = ["acq_suite_stats", "stratified"]


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


def stratified(suite: AcqSuite, per_cell: int = 1, domains: int = 3) -> list[AcqCase]:
    """A small, deterministic sample: ``per_cell`` cases for each (behaviour, domain) cell over the
    first ``domains`` domains met per behaviour, plus the first case of each Task 3 file type."""
    picked: dict[tuple[int, str], int] = {}
    seen_domains: dict[int, set[str]] = {}
    kinds: set[str] = set()
    out: list[AcqCase] = []
    for c in suite:
        if c.file_kind and c.file_kind not in kinds:
            kinds.add(c.file_kind)
            out.append(c)
            continue
        doms = seen_domains.setdefault(c.behaviour, set())
        if c.domain not in doms and len(doms) >= domains:
            continue
        if picked.get((c.behaviour, c.domain), 0) < per_cell:
            doms.add(c.domain)
            picked[(c.behaviour, c.domain)] = picked.get((c.behaviour, c.domain), 0) + 1
            out.append(c)
    return out
