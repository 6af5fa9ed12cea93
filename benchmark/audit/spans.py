"""Scoring from exported traces: the same metrics, from spans instead of the audit log.

A span file (``spans.jsonl`` of a run, or any JSONL of spans in the shape of
:func:`tpguard.telemetry.span_to_dict`, which is also what the OTLP test receivers decode to)
holds per case one ``invoke_agent`` root span (``tpguard.case.id``, ``tpguard.case.s_task``,
``gen_ai.agent.name``, ``tpguard.benchmark.guard``) and one ``execute_tool {tool}`` child per call
with its findings (``tpguard.findings.table``, recorded by default; or, from older spans, one
``tpguard.finding`` event per finding) and ``tpguard.free_text.slots``; a span without them is
refused (:class:`~._facts.UnscorableSpan`), never scored as leak-free. Spans carry findings, not values, so scoring needs no raw
arguments. Calls whose ``tpguard.decision`` is ``block`` never reached a backend and are not part
of the trajectory (ToolPrivacyBench, seed ``000_*`` §3.5).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..metrics import CallEvidence
from ._facts import CallFacts, call_facts, is_tool_span
from .sources import read_source

__all__ = ["TraceRun", "read_spans", "trace_runs"]

def read_spans(path: str | Path) -> list[dict[str, Any]]:
    """Spans from a file or folder in any format :func:`~.sources.read_source` detects."""
    return read_source(path).spans


@dataclass
class TraceRun:
    """One agent run over one case, rebuilt from its trace."""

    trace_id: str
    case_id: str | None
    agent: str
    guard: str
    s_task: float | None
    calls: list[CallEvidence] = field(default_factory=list)
    blocked: int = 0


def _evidence(facts: CallFacts) -> CallEvidence:
    return CallEvidence(facts.tool, facts.findings, facts.ok, facts.free_text_slots)


def _run_key(span: dict[str, Any]) -> str:
    """A tool span that is its own trace's root (a guard with no agent span around it) joins its
    session's run; every other span its trace's."""
    session = (span.get("attributes") or {}).get("tpguard.session.id")
    if session and not span.get("parent_span_id") and is_tool_span(span):
        return f"session {session}"
    return str(span.get("trace_id"))


def trace_runs(spans: Iterable[dict[str, Any]]) -> Iterator[TraceRun]:
    """Group spans by trace (root tool spans by session); each group with tool spans is one run
    (ordered by start time)."""
    by_trace: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in spans:
        by_trace[_run_key(s)].append(s)
    for trace_id, group in by_trace.items():
        tools = sorted((s for s in group if is_tool_span(s)),
                       key=lambda s: (s.get("start_time_unix_nano") or 0))
        if not tools:
            continue
        root = next((s for s in group if not s.get("parent_span_id") and not is_tool_span(s)), None)
        ra = (root or {}).get("attributes") or {}
        run = TraceRun(trace_id, ra.get("tpguard.case.id"), str(ra.get("gen_ai.agent.name", "")),
                       str(ra.get("tpguard.benchmark.guard", "")),
                       float(ra["tpguard.case.s_task"]) if "tpguard.case.s_task" in ra else None)
        for s in tools:
            if (s.get("attributes") or {}).get("tpguard.decision") == "block":
                run.blocked += 1
                continue
            facts = call_facts(s)
            if facts is not None:
                run.calls.append(_evidence(facts))
        yield run
