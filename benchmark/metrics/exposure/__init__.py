"""Exposure-stage metrics of ASLEval (seed ``002_*`` §3.2–3.4, §5): ECR, per-channel coverage,
OLF, the five evaluation views with coverage and missed-vs-union, recognition (candidate coverage,
precision, FDR, ECR − C_cand), path diagnostics, the authorization negative control,
session-bootstrap intervals (10,000 resamples, seed 2027) and sign-flip guard contrasts vs
``off``. See ``docs/metrics.md`` ("Exposure (ASLEval)").

Score one session, then summarize a run::

    ev = ExpEvidence(session_id="pia-03-s1", family="records", targets={"t1": ["Jane Roe"]},
                     observations=[(1, "tool_return", "", raw, False),
                                   (1, "console", "requester", printed, True),
                                   (2, "email", "ext:bob", body, True, True)],
                     visible_channels=("response", "console", "email"), expected_outlet="email",
                     auth={}, candidates=["Jane Roe"], completed=True, agent="leaky", guard="off")
    score = score_exposure(ev)                               # ExpScore: ids only, no values
    summary = summarize_exposure(all_scores, n_resamples=10_000, seed=2027)
"""

from __future__ import annotations

from ._aggregate import (
    EXP_KEYS,
    PAPER_N_RESAMPLES,
    PAPER_SEED,
    channels_of,
    compare_exposure,
    exposure_blocks,
    exposure_row,
)
from ._evidence import ExpEvidence, ExpObservation, as_auth, as_exp_observations, as_targets
from ._score import PATH_CLASSES, VIEWS, ExpScore, ExpScorer, score_exposure
from ._summary import EXP_MATCHING, PAPER_REFERENCE, summarize_exposure

__all__ = [
    "EXP_KEYS",
    "EXP_MATCHING",
    "PAPER_N_RESAMPLES",
    "PAPER_REFERENCE",
    "PAPER_SEED",
    "PATH_CLASSES",
    "VIEWS",
    "ExpEvidence",
    "ExpObservation",
    "ExpScore",
    "ExpScorer",
    "as_auth",
    "as_exp_observations",
    "as_targets",
    "channels_of",
    "compare_exposure",
    "exposure_blocks",
    "exposure_row",
    "score_exposure",
    "summarize_exposure",
]
