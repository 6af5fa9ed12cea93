"""Test-side gateways for the agent tests (no tests here): a direct :class:`ToolGateway` over a
case's :class:`Environment`, optionally behind a real ``tpguard.Guard`` (enforce / redact), and
helpers to run an agent on cases and score the audit log."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tpguard import Decision, Guard
from tpguard.benchmark.agents import Agent, AgentResult, Observation, ToolView
from tpguard.benchmark.backends import AuditLog, Environment, ToolError
from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.metrics import CaseScore, CaseScorer


@lru_cache(maxsize=1)
def suite_cases() -> tuple[Case, ...]:
    return generate(seed=0).cases


def sample(n: int) -> list[Case]:
    """``n`` cases spread over the 23 domains (every k-th case)."""
    cases = suite_cases()
    return list(cases[:: max(1, len(cases) // n)][:n])


@dataclass
class Seen:
    tool: str
    arguments: dict[str, Any]
    call_id: str | None
    decision: Decision | None
    observation: Observation


@dataclass
class EnvGateway:
    """``ToolGateway`` over ``env`` (``env.call`` raises ``ToolError`` → ``ok=False``); with a
    ``guard`` the call is checked first and withheld (``blocked``) or rewritten as it decides."""

    env: Environment
    guard: Guard | None = None
    seen: list[Seen] = field(default_factory=list)

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return tuple(ToolView(t.name, t.description or t.purpose, dict(t.input_schema or {}),
                              tuple(t.free_text)) for t in self.env.case.tools)

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        decision = self.guard.check(name, arguments) if self.guard is not None else None
        if decision is not None and decision.blocked:
            obs = Observation(False, decision.message or "withheld", blocked=True)
        else:
            args = decision.arguments if decision is not None else arguments
            try:
                obs = Observation(True, json.dumps(self.env.call(name, args), default=str),
                                  rewritten=bool(decision is not None and decision.redacted))
            except ToolError as e:
                obs = Observation(False, str(e))
        self.seen.append(Seen(name, dict(arguments), call_id, decision, obs))
        return obs


@dataclass
class Run:
    case: Case
    result: AgentResult
    score: CaseScore
    gateway: EnvGateway
    trajectory: Any


def run_agent(agent: Agent, cases: Sequence[Case], *, mode: str | None = None, seed: int = 0,
              audit: AuditLog | None = None, run_id: str = "t") -> list[Run]:
    """Run ``agent`` on ``cases`` (guard ``mode`` or none) and score each from the audit log."""
    log = audit or AuditLog(":memory:")
    out = []
    for case in cases:
        env = Environment(case, log, run_id, agent=agent.name, guard=mode or "off")
        guard = Guard(case.policy, mode=mode) if mode else None  # type: ignore[arg-type]
        gw = EnvGateway(env, guard)
        result = agent.run(case, gw, seed=seed)
        trajectory = log.trajectory(run_id, case.id)
        score = CaseScorer(case).score(trajectory, env.s_task, agent=agent.name, guard=mode or "off")
        out.append(Run(case, result, score, gw, trajectory))
    return out
