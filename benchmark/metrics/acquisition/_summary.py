"""The acquisition part of ``summary.json`` (seed ``001_*`` §4–5): one row per (agent, guard,
suite), every guard against ``off`` on the same cases, and breakdowns by behaviour, domain and
confidentiality-marker subset."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ._aggregate import acquisition_breakdown, acquisition_row, compare_acquisition
from ._evidence import BEHAVIOURS
from ._score import JOINT_CLASSES, NAMED_OUTCOMES, AcqScore

__all__ = ["ACQ_BREAKDOWNS", "MATCHING", "summarize_acquisition"]

ACQ_BREAKDOWNS: tuple[str, ...] = ("behaviour", "domain", "marker")

#: How items are matched, for ``summary["acquisition"]["matching"]`` and the report.
MATCHING = ("tpguard Detector over the items as atoms: exact, alias and normalized matching "
            "(case, spacing, Unicode; digits-only for numbers of 4+ digits), whole tokens; fuzzy "
            "off. CER reads the observations the agent's context received (after any result-side "
            "guard); OLR the main response; PLR the probe answer.")


def summarize_acquisition(
    scores: Iterable[AcqScore], *, baseline: str = "off", n_resamples: int = 1000,
    n_permutations: int = 9999, confidence: float = 0.95, seed: int = 0,
    breakdowns: Sequence[str] = ACQ_BREAKDOWNS, fuzzy: bool = False,
) -> dict[str, Any]:
    """``{rows, comparisons, breakdowns, joint_classes, named_outcomes, behaviours, matching,
    settings}`` for a run's acquisition scores. ``fuzzy`` only records how they were scored."""
    groups: dict[tuple[str, str, str], list[AcqScore]] = {}
    for s in scores:
        groups.setdefault((s.agent, s.guard, s.suite), []).append(s)
    rows = [acquisition_row(g, agent=a, guard=gd, suite=su, confidence=confidence,
                            n_resamples=n_resamples, seed=seed)
            for (a, gd, su), g in sorted(groups.items())]
    every = [s for g in groups.values() for s in g]
    return {
        "rows": rows,
        "comparisons": compare_acquisition(every, baseline=baseline, n_resamples=n_permutations,
                                           seed=seed),
        "breakdowns": [
            {"agent": a, "guard": gd, "suite": su,
             **{by: acquisition_breakdown(g, by, confidence=confidence) for by in breakdowns}}
            for (a, gd, su), g in sorted(groups.items())
        ],
        "joint_classes": dict(JOINT_CLASSES),
        "named_outcomes": {k: list(v) for k, v in NAMED_OUTCOMES.items()},
        "behaviours": {str(k): v for k, v in BEHAVIOURS.items()},
        "matching": MATCHING + (" Fuzzy matching was on." if fuzzy else ""),
        "settings": {"bootstrap_resamples": n_resamples, "permutations": n_permutations,
                     "confidence": confidence, "seed": seed, "baseline": baseline,
                     "intervals": "Wilson score (proportions); case bootstrap (ΔC, ΔP)"},
    }
