"""Reading what ``tpguard audit`` scores: a case (or a bare policy file) and a trajectory file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tpguard import PolicyKB

from ..cases.schema import Case, WorkflowStage
from ..trajectory import ToolCall, Trajectory

__all__ = ["case_from_file", "read_trajectory"]


def case_from_file(path: str | Path, case_id: str | None = None) -> tuple[Case, bool]:
    """A case from a case JSON/JSONL (a suite file: pick ``case_id``), or a case wrapped around a
    policy file. The flag says whether utility can be scored (a bare policy has no answer key)."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix == ".jsonl":
        for line in text.splitlines():
            if line.strip():
                data = json.loads(line)
                if case_id is None or data.get("id") == case_id:
                    return Case.model_validate(data), True
        raise ValueError(f"{p}: no case {case_id!r}")
    if p.suffix == ".json":
        data = json.loads(text)
        if isinstance(data, dict) and "policy" in data and "workflow" in data:
            return Case.model_validate(data), True
    policy = PolicyKB.from_file(p)
    case = Case(id=case_id or p.stem, suite="audit", domain="audit", task="", policy=policy,
                workflow=tuple(WorkflowStage(tool=t.name, optional=True) for t in policy.tools))
    return case, False


def _call(i: int, d: dict[str, Any]) -> ToolCall:
    if "tool" not in d or not isinstance(d.get("arguments", {}), dict):
        raise ValueError(f"call {i}: expected {{'tool': NAME, 'arguments': {{...}}}}")
    return ToolCall(step=i, tool=d["tool"], arguments=d.get("arguments", {}),
                    outcome=d.get("outcome", "ok"))


def read_trajectory(path: str | Path, case_id: str | None = None) -> Trajectory:
    """A trajectory: JSON ``{"calls": [...]}``, a JSON list of calls, or JSONL with one call per
    line (``{"tool", "arguments"}``) or one trajectory per line (``{"case_id", "calls"}``)."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    items: list[Any]
    try:
        items = [json.loads(text)]
    except json.JSONDecodeError:
        items = [json.loads(line) for line in text.splitlines() if line.strip()]
    if len(items) == 1 and isinstance(items[0], list):
        items = items[0]
    if len(items) == 1 and isinstance(items[0], dict) and "calls" in items[0]:
        items = [items[0]]
    if items and all(isinstance(x, dict) and "calls" in x for x in items):
        chosen = [x for x in items if case_id is None or x.get("case_id") == case_id]
        if not chosen:
            raise ValueError(f"{p}: no trajectory for case {case_id!r}")
        t = chosen[0]
        calls = [_call(i, c) for i, c in enumerate(t["calls"], 1)]
        return Trajectory(case_id=t.get("case_id", case_id or ""), calls=calls,
                          final_answer=t.get("final_answer"))
    calls = [_call(i, c) for i, c in enumerate(
        (x for x in items if case_id is None or x.get("case_id", case_id) == case_id), 1)]
    return Trajectory(case_id=case_id or "", calls=calls)
