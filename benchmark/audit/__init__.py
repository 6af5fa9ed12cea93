"""Audit-only scoring of any agent: from a recorded trajectory or from exported traces."""

from __future__ import annotations

from .spans import TraceRun, read_spans, trace_runs
from .trajectories import case_from_file, case_ids_in, read_trajectory

__all__ = ["TraceRun", "case_from_file", "case_ids_in", "read_spans", "read_trajectory", "trace_runs"]
