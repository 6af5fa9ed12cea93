"""References to the ToolPrivacyBench paper (seed ``000_*``), each with the phrase a reader who
has not read the paper needs. Titles and notes write ``ref("Table 9")``, never the bare label."""

from __future__ import annotations

__all__ = ["REFS", "ref"]

REFS: dict[str, str] = {
    "Tables 7/8": "overall utility and leakage per model",
    "Table 9": "which workflow transitions carry the first leak, and how far leaks spread",
    "Table 10a": "leakage per application domain",
    "Table 10b": "leakage per kind of private data",
    "Table B.12": "the per-domain table in full",
    "Tables B.13–B.14": "the per-data-type tables in full",
    "Figure 6": "privacy against utility, one point per model",
    "Figure 7a": "leakage per information sink: where the data went",
    "Figure 7b": "leakage per free-text field: note, summary, message …",
    "§7.5": "how leaks start and spread along a workflow",
    "Table D.15": "MT-POI weight sensitivity: do rankings change under other weightings?",
}


def ref(key: str) -> str:
    """``"Table 9 (which workflow transitions …)"`` — a paper reference with its meaning."""
    return f"{key} ({REFS[key]})"
