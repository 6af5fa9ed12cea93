"""Audit-only scoring of any agent: from a recorded trajectory or from exported traces, against a
benchmark case (``tpguard audit --case``) or a deployment's policy (``tpguard audit --policy``)."""

from __future__ import annotations

from ._facts import CallFacts, UnscorableSpan, call_facts, call_facts_of
from .production import Intervention, ProductionAudit, audit_calls
from .sources import FORMATS, Source, SourceError, read_source
from .spans import TraceRun, read_spans, trace_runs
from .trajectories import case_from_file, case_ids_in, read_trajectory

__all__ = ["FORMATS", "CallFacts", "Intervention", "ProductionAudit", "Source", "SourceError",
           "TraceRun", "UnscorableSpan", "audit_calls", "call_facts", "call_facts_of",
           "case_from_file", "case_ids_in", "read_source", "read_spans", "read_trajectory",
           "trace_runs"]
