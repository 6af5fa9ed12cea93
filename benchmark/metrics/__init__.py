"""Every ToolPrivacyBench metric, its aggregation and its statistics (seed ``000_*`` §5, §7.5,
Appendix D.2). See ``docs/metrics.md`` for each formula and the choices made where the paper is
silent.

Score one case from a trajectory the backends recorded::

    score = score_trajectory(case, trajectory, s_task=1.0)        # runs the evaluator's detector
    score = score_case(case, [(tool, findings), ...], s_task=1.0)  # findings from exported spans
    row = summary_row(scores, agent="leaky", guard="off", suite="need-to-know")
    summary = summarize(all_scores)   # rows, paired tests vs off, App. D.2, breakdowns

Acquisition-stage metrics (PrivacyPeek, seed ``001_*``) live in :mod:`.acquisition`; exposure-stage
metrics (ASLEval, seed ``002_*``) in :mod:`.exposure`.
"""

from __future__ import annotations

from ._aggregate import (
    KEYS,
    breakdown,
    compare_guards,
    pooled,
    pooled_groups,
    summary_row,
    task_reading_of,
    weight_sensitivity,
)
from ._case import (
    FRACTIONS,
    TASK_READINGS,
    CaseScore,
    CaseScorer,
    mt_poi,
    read_task,
    score_case,
    score_trajectory,
)
from ._evidence import CallEvidence, as_evidence, evidence_from_calls
from ._paths import PathDiagnostics, aggregate_paths, diagnose_paths
from ._stats import bootstrap_ci, percentile_ci, sign_flip_test, spearman
from ._summary import BREAKDOWNS, SCORING, scoring_readings, summarize
from ._tables import CaseTables
from ._weights import ALTERNATIVE_WEIGHTS, COMPONENTS, DEFAULT_WEIGHTS, Weights
from .acquisition import (
    ACQ_KEYS,
    AcqEvidence,
    AcqScore,
    AcqScorer,
    MatchItem,
    score_acquisition,
    summarize_acquisition,
)
from .exposure import ExpEvidence, ExpScore, ExpScorer, score_exposure, summarize_exposure

__all__ = [
    "ACQ_KEYS",
    "ALTERNATIVE_WEIGHTS",
    "BREAKDOWNS",
    "COMPONENTS",
    "DEFAULT_WEIGHTS",
    "FRACTIONS",
    "KEYS",
    "SCORING",
    "TASK_READINGS",
    "AcqEvidence",
    "AcqScore",
    "AcqScorer",
    "CallEvidence",
    "CaseScore",
    "CaseScorer",
    "CaseTables",
    "ExpEvidence",
    "ExpScore",
    "ExpScorer",
    "MatchItem",
    "PathDiagnostics",
    "Weights",
    "aggregate_paths",
    "as_evidence",
    "bootstrap_ci",
    "breakdown",
    "compare_guards",
    "diagnose_paths",
    "evidence_from_calls",
    "mt_poi",
    "percentile_ci",
    "pooled",
    "pooled_groups",
    "read_task",
    "score_acquisition",
    "score_case",
    "score_exposure",
    "score_trajectory",
    "scoring_readings",
    "sign_flip_test",
    "spearman",
    "summarize",
    "summarize_acquisition",
    "summarize_exposure",
    "summary_row",
    "task_reading_of",
    "weight_sensitivity",
]
