"""Reading recorded trajectories for :class:`~.replay.ReplayAgent`: JSONL tool calls, JSONL runs,
or exported spans (``spans.jsonl`` written by :class:`tpguard.telemetry.JsonlSpanExporter`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpguard.telemetry import _attributes as A

__all__ = ["RecordedCall", "RecordedRun", "load_recordings"]

_TOOL_SPAN = "execute_tool "


@dataclass(frozen=True, slots=True)
class RecordedCall:
    tool: str
    arguments: dict[str, Any]
    call_id: str | None = None
    blocked: bool = False  # the recording's own guard withheld it


@dataclass(slots=True)
class RecordedRun:
    case_id: str
    calls: list[RecordedCall] = field(default_factory=list)
    final_answer: str | None = None


def _arguments(raw: Any, where: str) -> dict[str, Any]:
    value = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(value, dict):
        raise ValueError(f"{where}: arguments must be a JSON object")
    return value


def _from_call(d: dict[str, Any], where: str) -> RecordedCall:
    name = d.get("tool", d.get("name"))
    if not isinstance(name, str):
        raise ValueError(f"{where}: a call needs a 'tool' name")
    return RecordedCall(name, _arguments(d.get("arguments", d.get("args", {})), where),
                        d.get("call_id") or d.get("id"))


def _span_case(span: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> str | None:
    """The case id on the span, else on the nearest ancestor, else on the resource."""
    node: dict[str, Any] | None = span
    seen = 0
    while node is not None and seen < 64:
        case = (node.get("attributes") or {}).get(A.TPGUARD_CASE_ID)
        if case:
            return str(case)
        parent = node.get("parent_span_id")
        node = by_id.get(parent) if parent else None
        seen += 1
    case = (span.get("resource") or {}).get(A.TPGUARD_CASE_ID)
    return str(case) if case else None


def _from_spans(spans: list[dict[str, Any]], path: Path) -> dict[str, RecordedRun]:
    by_id = {s["span_id"]: s for s in spans if s.get("span_id")}
    tools = sorted((s for s in spans if str(s.get("name", "")).startswith(_TOOL_SPAN)),
                   key=lambda s: s.get("start_time_unix_nano") or 0)
    runs: dict[str, RecordedRun] = {}
    for s in tools:
        attrs = s.get("attributes") or {}
        case = _span_case(s, by_id)
        raw = attrs.get(A.GEN_AI_TOOL_CALL_ARGUMENTS, attrs.get(A.TPGUARD_ARGUMENTS))
        if case is None or raw is None:
            continue  # a span without a case or without recorded arguments cannot be replayed
        tool = str(attrs.get(A.GEN_AI_TOOL_NAME) or s["name"][len(_TOOL_SPAN):])
        call = RecordedCall(tool, _arguments(raw, f"{path}: span {s.get('span_id')}"),
                            attrs.get(A.GEN_AI_TOOL_CALL_ID),
                            attrs.get(A.TPGUARD_DECISION) == "block")
        runs.setdefault(case, RecordedRun(case)).calls.append(call)
    return runs


def load_recordings(path: str | Path) -> dict[str, RecordedRun]:
    """Every recorded run in ``path``, keyed by case id; calls in recorded order.

    A bad line fails with the file, the line number and what was expected.
    """
    p = Path(path)
    rows: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}:{n}: not JSON ({e.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{p}:{n}: expected a JSON object per line")
        rows.append((n, row))
    if rows and all("span_id" in r and "name" in r for _, r in rows):
        return _from_spans([r for _, r in rows], p)
    runs: dict[str, RecordedRun] = {}
    for n, row in rows:
        where = f"{p}:{n}"
        case = row.get("case_id")
        if not isinstance(case, str):
            raise ValueError(f"{where}: expected a 'case_id' string")
        run = runs.setdefault(case, RecordedRun(case))
        if "calls" in row:
            if not isinstance(row["calls"], list):
                raise ValueError(f"{where}: 'calls' must be a list of tool calls")
            run.calls.extend(_from_call(c, where) for c in row["calls"])
            if row.get("final_answer") is not None:
                run.final_answer = str(row["final_answer"])
        else:
            run.calls.append(_from_call(row, where))
    return runs
