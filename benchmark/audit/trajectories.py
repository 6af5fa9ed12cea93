"""Reading what ``tpguard audit`` scores: a case (or a bare policy file) and a trajectory file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tpguard import PolicyKB

from ..cases.schema import Case, WorkflowStage
from ..trajectory import ToolCall, Trajectory

__all__ = ["case_from_file", "case_ids_in", "read_trajectory"]


def case_from_file(path: str | Path, case_id: str | None = None) -> tuple[Case, bool]:
    """A case from a case JSON/JSONL (a suite file: pick ``case_id``), or a case wrapped around a
    policy file. The flag says whether utility can be scored (a bare policy has no answer key)."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix == ".jsonl":
        ids = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    data = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{p}:{n}: not JSON ({e.msg} at column {e.colno})") from None
                if case_id is None or data.get("id") == case_id:
                    return Case.model_validate(data), True
                ids.append(str(data.get("id")))
        raise ValueError(f"{p}: no case {case_id!r}; case ids present: {', '.join(ids) or 'none'}")
    if p.suffix == ".json":
        data = json.loads(text)
        if isinstance(data, dict) and "policy" in data and "workflow" in data:
            return Case.model_validate(data), True
    policy = PolicyKB.from_file(p)
    case = Case(id=case_id or p.stem, suite="audit", domain="audit", task="", policy=policy,
                workflow=tuple(WorkflowStage(tool=t.name, optional=True) for t in policy.tools))
    return case, False


def _call(i: int, d: Any, where: str) -> ToolCall:
    if not isinstance(d, dict) or "tool" not in d or not isinstance(d.get("arguments", {}), dict):
        raise ValueError(f"{where}: expected {{'tool': NAME, 'arguments': {{...}}}}")
    return ToolCall(step=i, tool=d["tool"], arguments=d.get("arguments", {}),
                    outcome=d.get("outcome", "ok"))


def _items(p: Path) -> list[tuple[str, Any]]:
    """``(where, item)`` of a JSON file (one item) or a JSONL file (one per line); ``where`` is
    ``file`` or ``file:line`` so every error can point at its line."""
    text = p.read_text(encoding="utf-8")
    try:
        return [(str(p), json.loads(text))]
    except json.JSONDecodeError:
        pass
    items = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append((f"{p}:{n}", json.loads(line)))
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}:{n}: not JSON ({e.msg} at column {e.colno})") from None
    return items


def case_ids_in(path: str | Path) -> list[str]:
    """The case ids a trajectory file names (sorted; empty when it names none)."""
    items = [x for _, x in _items(Path(path))]
    if len(items) == 1 and isinstance(items[0], list):
        items = items[0]
    return sorted({str(x["case_id"]) for x in items if isinstance(x, dict) and x.get("case_id")})


def read_trajectory(path: str | Path, case_id: str | None = None) -> Trajectory:
    """A trajectory: JSON ``{"calls": [...]}``, a JSON list of calls, or JSONL with one call per
    line (``{"tool", "arguments"}``) or one trajectory per line (``{"case_id", "calls"}``).
    A bad line fails with ``file:line`` and what was expected."""
    p = Path(path)
    items = _items(p)
    if len(items) == 1 and isinstance(items[0][1], list):
        items = [(f"{p}: item {i}", x) for i, x in enumerate(items[0][1], 1)]
    if items and all(isinstance(x, dict) and "calls" in x for _, x in items):
        chosen = [(w, x) for w, x in items if case_id is None or x.get("case_id") == case_id]
        if not chosen:
            raise ValueError(f"{p}: no trajectory for case {case_id!r}")
        where, t = chosen[0]
        calls = [_call(i, c, f"{where}: call {i}") for i, c in enumerate(t["calls"], 1)]
        return Trajectory(case_id=t.get("case_id", case_id or ""), calls=calls,
                          final_answer=t.get("final_answer"))
    picked = [(w, x) for w, x in items
              if case_id is None or not isinstance(x, dict) or x.get("case_id", case_id) == case_id]
    calls = [_call(i, x, w) for i, (w, x) in enumerate(picked, 1)]
    return Trajectory(case_id=case_id or "", calls=calls)
