"""Acquisition-stage metrics of PrivacyPeek (seed ``001_*`` §3–5): TCR, CER, HCER, ΔC, OLR, PLR,
HPLR, ΔP, the eight joint outcomes over (CER, OLR, PLR) with the paper's three named ones, Wilson
95 % intervals, breakdowns by behaviour / domain / marker subset and guard contrasts vs ``off``.
See ``docs/metrics.md`` ("Acquisition (PrivacyPeek)").

Score one case-run, then summarize a run::

    ev = AcqEvidence(case_id="c1", domain="healthcare", behaviour=2, completed=True,
                     observations=[("query_records", result_text)],
                     k_acq=(MatchItem("ssn", ("123-45-6789",)),),
                     k_disc=(MatchItem("ssn", ("123-45-6789",)),),
                     response=final_answer, probe_answer=probe_reply, agent="leaky", guard="off")
    score = score_acquisition(ev)                  # AcqScore: ids only, no values
    summary = summarize_acquisition(all_scores)    # rows, comparisons, breakdowns
"""

from __future__ import annotations

from ._aggregate import (
    ACQ_KEYS,
    ACQ_RATE_KEYS,
    acquisition_breakdown,
    acquisition_row,
    compare_acquisition,
    wilson_ci,
)
from ._evidence import BEHAVIOURS, AcqEvidence, MatchItem, Observation, as_items, as_observations
from ._score import (
    JOINT_CLASSES,
    NAMED_OUTCOMES,
    AcqScore,
    AcqScorer,
    joint_class,
    score_acquisition,
)
from ._summary import ACQ_BREAKDOWNS, MATCHING, summarize_acquisition

__all__ = [
    "ACQ_BREAKDOWNS",
    "ACQ_KEYS",
    "ACQ_RATE_KEYS",
    "BEHAVIOURS",
    "JOINT_CLASSES",
    "MATCHING",
    "NAMED_OUTCOMES",
    "AcqEvidence",
    "AcqScore",
    "AcqScorer",
    "MatchItem",
    "Observation",
    "acquisition_breakdown",
    "acquisition_row",
    "as_items",
    "as_observations",
    "compare_acquisition",
    "joint_class",
    "score_acquisition",
    "summarize_acquisition",
    "wilson_ci",
]
