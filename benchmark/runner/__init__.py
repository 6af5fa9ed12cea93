"""The benchmark runner: gateway, per-case execution, records, summary, run directories."""

from __future__ import annotations

from ._errors import (
    EXIT_AGENT,
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    AgentUnavailable,
    RunError,
    UsageError,
    record_error,
)
from ._preflight import preflight
from ._rundir import RunLock, RunLocked, default_out, identity
from ._summary import error_label, summarize_records, summary_options
from .config import QUICK_AGENTS, QUICK_GUARDS, RunConfig, domain_slug, select_cases
from .gateway import Attempt, Gateway, tool_views
from .records import RecordWriter, iter_records, latest_records, load_scores
from .run import RunPlan, RunResult, plan_run, run_benchmark, write_summary

__all__ = [
    "EXIT_AGENT",
    "EXIT_ERRORS",
    "EXIT_OK",
    "EXIT_USAGE",
    "QUICK_AGENTS",
    "QUICK_GUARDS",
    "AgentUnavailable",
    "Attempt",
    "Gateway",
    "RecordWriter",
    "RunConfig",
    "RunError",
    "RunLock",
    "RunLocked",
    "RunPlan",
    "RunResult",
    "UsageError",
    "default_out",
    "domain_slug",
    "error_label",
    "identity",
    "iter_records",
    "latest_records",
    "load_scores",
    "plan_run",
    "preflight",
    "record_error",
    "run_benchmark",
    "select_cases",
    "summarize_records",
    "summary_options",
    "tool_views",
    "write_summary",
]
