"""The benchmark runner: gateway, per-case execution, records, summary."""

from __future__ import annotations

from .config import QUICK_AGENTS, QUICK_GUARDS, RunConfig, select_cases
from .gateway import Attempt, Gateway, tool_views
from .records import RecordWriter, iter_records, load_scores
from .run import RunResult, run_benchmark, write_summary

__all__ = [
    "QUICK_AGENTS",
    "QUICK_GUARDS",
    "Attempt",
    "Gateway",
    "RecordWriter",
    "RunConfig",
    "RunResult",
    "iter_records",
    "load_scores",
    "run_benchmark",
    "select_cases",
    "tool_views",
    "write_summary",
]
