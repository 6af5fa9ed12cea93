"""``OracleAgent``: replays the case's ground-truth calls — the feasible safe path (exactly the
authorized required facts and minimal free text; seed ``000_*`` §4.8, AgentDojo-style answer key).

Sanity control: under no guard it must score TaskSuccess 100 and MT-POI 0. If a call fails it
stops, and ``AgentResult.error`` says how (``ToolCallBlocked`` / ``ToolCallRejected``); the failing
tool and step are in ``extra`` (the observation text is not copied: it is the backend's or the
guard's business).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import AgentResult, ToolGateway

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["OracleAgent"]


class OracleAgent:
    name = "oracle"

    def run(self, case: Case, gateway: ToolGateway, *, seed: int = 0) -> AgentResult:
        for step, call in enumerate(case.ground_truth, start=1):
            obs = gateway.call(call.tool, dict(call.arguments), call_id=f"oracle-{step}")
            if not obs.ok:
                kind = "ToolCallBlocked" if obs.blocked else "ToolCallRejected"
                return AgentResult(error=kind, extra={"failed_step": step, "failed_tool": call.tool})
        return AgentResult(
            final_answer=f"Completed the workflow: {len(case.ground_truth)} steps.")
