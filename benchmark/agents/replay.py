"""``ReplayAgent(path)``: score trajectories recorded elsewhere by replaying their tool calls
through the gateway (so the guard under comparison decides anew and the backends log them).

Accepted files (JSONL, one object per line):

* tool calls: ``{"case_id": …, "tool": …, "arguments": {…}}`` in order;
* runs: ``{"case_id": …, "calls": [{"tool": …, "arguments": {…}}, …], "final_answer": …}``;
* exported spans (``spans.jsonl`` from :func:`tpguard.telemetry.span_to_dict`): spans named
  ``execute_tool {tool}`` with ``gen_ai.tool.call.arguments`` (raw) or ``tpguard.arguments``
  (redacted: placeholders replace every detected atom, so such a replay cannot show leaks or
  deliver facts), the case id in ``tpguard.case.id`` on the span or an ancestor (the
  ``invoke_agent`` root span), ordered by start time.

Every recorded attempt is replayed, also those the recording's own guard withheld
(``include_blocked=False`` skips them). A case with no recording runs nothing and returns
``error="UnknownCase"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ._replay_io import RecordedRun, load_recordings
from .base import AgentResult, ToolGateway

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["ReplayAgent"]


class ReplayAgent:
    def __init__(self, path: str | Path, *, include_blocked: bool = True) -> None:
        self.path = Path(path)
        self.include_blocked = include_blocked
        self.name = f"replay:{self.path.name}"
        self._runs: dict[str, RecordedRun] | None = None

    @property
    def runs(self) -> dict[str, RecordedRun]:
        if self._runs is None:
            self._runs = load_recordings(self.path)
        return self._runs

    def run(self, case: Case, gateway: ToolGateway, *, seed: int = 0) -> AgentResult:
        recorded = self.runs.get(case.id)
        if recorded is None:
            return AgentResult(error="UnknownCase", extra={"replayed": 0})
        replayed = failed = 0
        for i, call in enumerate(recorded.calls, start=1):
            if call.blocked and not self.include_blocked:
                continue
            obs = gateway.call(call.tool, dict(call.arguments), call_id=call.call_id or f"replay-{i}")
            replayed += 1
            failed += not obs.ok
        return AgentResult(final_answer=recorded.final_answer,
                           extra={"replayed": replayed, "failed": failed})
