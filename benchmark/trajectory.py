"""Trajectories ``τ = [(t_1, a_1), …, (t_K, a_K)]`` (ToolPrivacyBench, seed ``000_*`` §3.5, §6.5).

A :class:`ToolCall` is what a backend *received* (read back from the SQLite audit log), never what
the agent claims. Blocked calls never reach a backend, so they are not part of ``τ``; the runner
keeps them separately as ``attempts`` for diagnostics.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ToolCall", "Trajectory"]


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: int  # 1-based position k in τ
    tool: str
    arguments: dict[str, Any]
    outcome: Literal["ok", "error"] = "ok"
    result: Any = None


class Trajectory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    case_id: str
    calls: list[ToolCall] = Field(default_factory=list)
    final_answer: str | None = None
    blocked: int = 0  # calls the guard withheld (never reached a backend)
