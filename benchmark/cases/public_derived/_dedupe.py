"""De-duplication of scenarios that repeat across and within sources (seed ``000_*`` §6.1 counts
each public workflow once).

Each builder gives its drafts a ``scenario`` key — τ retail/airline: the customer and the ordered
state-changing calls; BFCL: the initial state and the flat gold call sequence; the others: the
gold calls and the record they touch. The first draft with a key is kept (sources are read in
``SOURCES`` order, so τ² comes before τ-bench and BFCL base before its variants); a later one is
a duplicate of it unless its key differs, i.e. unless the variant changes the workflow.
"""

from __future__ import annotations

from collections import Counter

from ._common import Draft

__all__ = ["Deduper"]


class Deduper:
    """Remembers the scenario keys seen so far across sources."""

    def __init__(self) -> None:
        self._owner: dict[str, str] = {}

    def distinct(self, drafts: list[Draft]) -> tuple[list[Draft], Counter[str]]:
        """The drafts whose scenario is new, and counts of duplicates by the source kept."""
        kept: list[Draft] = []
        duplicates: Counter[str] = Counter()
        for d in drafts:
            key = d.scenario or d.case_id
            if key in self._owner:
                duplicates[self._owner[key]] += 1
                continue
            self._owner[key] = d.source
            kept.append(d)
        return kept, duplicates
