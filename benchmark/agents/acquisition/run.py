"""One acquisition case-run, end to end: the interface the runner calls (seed ``001_*`` §3
"Evaluation": the agent runs; then tools are disabled and the probe is asked against the retained
context; the probe cannot change CER, which is read from the task observations before probing).

::

    run = run_case(agent, case, files_dir=dir, seed=0, audit=log, run_id="r1", guard="off",
                   wrap=None)   # wrap(gateway) -> ToolGateway puts a guard in between
    run.observations        # what the agent saw, per call: tool, arguments, ok, content
    run.backend_observations  # what the backend returned (before any result-side guard)
    run.final_answer, run.probe_answer, run.completed

``agent`` is any object with ``name``, ``run(case, gateway, *, seed)`` and
``probe(case, result, question) -> str`` (:class:`~.agents.AcqOracleAgent`,
:class:`~.agents.AcqLeakyAgent`; a framework agent asks the probe as a follow-up turn).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...backends.acquisition import AcqEnvironment, AcqGateway, ObservationRecord
from ...cases.acquisition.match import completed
from ..base import AgentResult, Observation, ToolGateway, ToolView

if TYPE_CHECKING:
    from ...backends.audit import AuditLog
    from ...cases.acquisition import AcqCase

__all__ = ["AcqAgent", "CaseRun", "run_case"]


class AcqAgent(Protocol):
    name: str

    def run(self, case: AcqCase, gateway: ToolGateway, *, seed: int = 0) -> AgentResult: ...

    def probe(self, case: AcqCase, result: AgentResult, question: str) -> str: ...


@dataclass
class CaseRun:
    case_id: str
    agent: str
    guard: str
    observations: list[ObservationRecord] = field(default_factory=list)
    backend_observations: list[ObservationRecord] = field(default_factory=list)
    final_answer: str | None = None
    probe_answer: str | None = None
    completed: bool = False
    error: str | None = None
    model_calls: int = 0  # the agent loop's model calls (the probe turn is one more)
    extra: dict[str, Any] = field(default_factory=dict)


class _Recorder:
    """Records each call and the observation exactly as the agent receives it."""

    def __init__(self, inner: ToolGateway) -> None:
        self.inner = inner
        self.seen: list[ObservationRecord] = []

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return self.inner.tools

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        obs = self.inner.call(name, dict(arguments), call_id=call_id)
        self.seen.append(ObservationRecord(len(self.seen) + 1, name, dict(arguments), obs.ok,
                                           obs.content, refused=obs.blocked))
        return obs


def run_case(agent: AcqAgent, case: AcqCase, *, files_dir: Path, seed: int = 0,
             audit: AuditLog | None = None, run_id: str = "acq", guard: str = "off",
             wrap: Callable[[AcqGateway], ToolGateway] | None = None) -> CaseRun:
    env = AcqEnvironment(case, files_dir=files_dir, audit=audit, run_id=run_id, agent=agent.name,
                         guard=guard)
    base = AcqGateway(env)
    gateway = _Recorder(wrap(base) if wrap is not None else base)
    out = CaseRun(case_id=case.id, agent=agent.name, guard=guard)
    try:
        result = agent.run(case, gateway, seed=seed)
    except Exception as e:  # an agent failure is a recorded outcome, not a crashed run
        out.error = type(e).__qualname__
        result = AgentResult(error=out.error)
    out.error = out.error or result.error  # a framework agent reports its failure in the result
    out.observations, out.backend_observations = gateway.seen, list(env.observations)
    out.final_answer, out.model_calls = result.final_answer, result.model_calls
    out.probe_answer = agent.probe(case, result, case.probe)  # tools disabled: no gateway
    out.completed = completed(case, result.final_answer,
                              {"send_message": env.messages, "write_record": env.writes})
    out.extra = {k: v for k, v in result.extra.items() if k != "context"}
    return out
