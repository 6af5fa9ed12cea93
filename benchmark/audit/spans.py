"""Scoring from exported traces: the same metrics, from spans instead of the audit log.

A span file (``spans.jsonl`` of a run, or any JSONL of spans in the shape of
:func:`tpguard.telemetry.span_to_dict`, which is also what the OTLP test receivers decode to)
holds per case one ``invoke_agent`` root span (``tpguard.case.id``, ``tpguard.case.s_task``,
``gen_ai.agent.name``, ``tpguard.benchmark.guard``) and one ``execute_tool {tool}`` child per call
with one ``tpguard.finding`` event per finding (atom id, type, path, method, free text, severity)
and ``tpguard.free_text.slots``. Spans carry findings, not values, so scoring needs no raw
arguments. Calls whose ``tpguard.decision`` is ``block`` never reached a backend and are not part
of the trajectory (ToolPrivacyBench, seed ``000_*`` §3.5).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpguard import Finding

from ..metrics import CallEvidence

__all__ = ["TraceRun", "read_spans", "trace_runs"]

_TOOL_PREFIX = "execute_tool "


def read_spans(path: str | Path) -> list[dict[str, Any]]:
    """Spans from a JSONL file, or from every ``*.jsonl`` in a directory."""
    p = Path(path)
    files = sorted(p.glob("*.jsonl")) if p.is_dir() else [p]
    if not files or not all(f.is_file() for f in files):
        raise FileNotFoundError(f"{p}: no span file (expected a .jsonl file or a folder of them)")
    spans = []
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                spans.append(json.loads(line))
            except json.JSONDecodeError:
                raise ValueError(f"{f}:{n}: expected one JSON span per line") from None
    return spans


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


def _finding(event: dict[str, Any]) -> Finding | None:
    a = event.get("attributes") or {}
    if event.get("name") != "tpguard.finding" or "tpguard.atom.id" not in a:
        return None
    return Finding(
        a["tpguard.atom.id"], a.get("tpguard.atom.type", ""), a.get("tpguard.path", ""),
        a.get("tpguard.method", "exact"), int(a.get("tpguard.start", 0)), int(a.get("tpguard.end", 0)),
        1.0, bool(a.get("tpguard.free_text", False)), float(a.get("tpguard.severity", 1.0)),
    )


def _evidence(span: dict[str, Any]) -> CallEvidence:
    a = span.get("attributes") or {}
    findings = tuple(f for f in map(_finding, span.get("events") or ()) if f is not None)
    slots = a.get("tpguard.free_text.slots")
    ok = (span.get("status") or {}).get("code") != "ERROR"
    return CallEvidence(span["name"][len(_TOOL_PREFIX):], findings, ok,
                        tuple(slots) if slots is not None else None)


def trace_runs(spans: Iterable[dict[str, Any]]) -> Iterator[TraceRun]:
    """Group spans by trace; each trace with tool spans is one run (ordered by start time)."""
    by_trace: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in spans:
        by_trace[str(s.get("trace_id"))].append(s)
    for trace_id, group in by_trace.items():
        tools = sorted((s for s in group if str(s.get("name", "")).startswith(_TOOL_PREFIX)),
                       key=lambda s: (s.get("start_time_unix_nano") or 0))
        if not tools:
            continue
        root = next((s for s in group if not s.get("parent_span_id")), None)
        ra = (root or {}).get("attributes") or {}
        run = TraceRun(trace_id, ra.get("tpguard.case.id"), str(ra.get("gen_ai.agent.name", "")),
                       str(ra.get("tpguard.benchmark.guard", "")),
                       float(ra["tpguard.case.s_task"]) if "tpguard.case.s_task" in ra else None)
        for s in tools:
            if (s.get("attributes") or {}).get("tpguard.decision") == "block":
                run.blocked += 1
                continue
            run.calls.append(_evidence(s))
        yield run
