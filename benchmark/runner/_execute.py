"""Executing one (agent, guard, case): fresh backends, the gateway, the agent, then scoring.

A failure at any stage is caught and becomes the record's ``error`` (see :mod:`._errors`): one
case-run that cannot be measured never stops the others.
"""

from __future__ import annotations

import time
from typing import Any

from opentelemetry.trace import TracerProvider

from tpguard.telemetry import agent_run_span

from ..agents.base import Agent, AgentResult
from ..backends import AuditLog, Environment
from ..cases.schema import Case
from ..guards import GuardUnderTest
from ..metrics import CaseScorer, score_case
from ._errors import SCORED_OUTCOMES, case_error
from .gateway import Gateway, Recorders

__all__ = ["S_TASK_ATTR", "execute_case"]

S_TASK_ATTR = "tpguard.case.s_task"
GUARD_ATTR = "tpguard.benchmark.guard"


def _disclosures(case: Case, evidence: list[Any]) -> list[dict[str, Any]]:
    """Which atom reached which tool and field, authorized or not (ids and types only)."""
    sinks = {t.name: t.sink for t in case.tools}
    out = []
    for step, ev in enumerate(evidence, 1):
        for f in ev.findings:
            out.append({
                "step": step, "tool": ev.tool, "sink": sinks.get(ev.tool, "external"),
                "atom_id": f.atom_id, "atom_type": f.atom_type, "path": f.path, "method": f.method,
                "free_text": f.free_text,
                "authorized": case.policy.access(f.atom_id, ev.tool).permits(f.path, f.method),
            })
    return out


def execute_case(
    case: Case, agent: Agent, agent_name: str, guard: GuardUnderTest, *, audit: AuditLog,
    scorer: CaseScorer, seed: int, run_id: str, tracer_provider: TracerProvider | None,
    recorders: Recorders | None = None,
) -> dict[str, Any]:
    """Run one case and return its record (see :mod:`.records`); ``record["error"]`` is ``None``
    when the case-run was measured, else its error class (type, stage, value-free message).
    ``recorders``: the run's per-case span recorders (default: one built for this case-run)."""
    started = time.perf_counter()
    audit_run = f"{agent_name}/{guard.name}"
    base = {"agent": agent_name, "guard": guard.name, "suite": case.suite, "case_id": case.id,
            "domain": case.domain, "seed": seed}
    try:
        env = Environment(case, audit, audit_run, agent=agent_name, guard=guard.name)
        gateway = Gateway(env, guard.prepare(case), guard.name, tracer_provider,
                          recorders=recorders)
    except Exception as e:  # the case's backends (or the guard's preparation) failed
        return _failed(base, case_error(type(e).__qualname__, "backend"), started)
    error: dict[str, Any] | None = None
    with agent_run_span(tracer_provider, agent_name, run_id=run_id, case_id=case.id,
                        attributes={GUARD_ATTR: guard.name}) as root:
        try:
            result = agent.run(case, gateway, seed=seed)
        except Exception as e:  # an agent crash is a failed case-run, not a failed run
            result = AgentResult(error=type(e).__qualname__)
        if result.error and result.error not in SCORED_OUTCOMES:
            error = case_error(result.error, "agent")
        try:
            trajectory = audit.trajectory(audit_run, case.id)
            trajectory.final_answer = result.final_answer
            trajectory.blocked = gateway.blocked
            s_task = env.s_task
        except Exception as e:
            return _failed(base, case_error(type(e).__qualname__, "backend"), started)
        root.set_attribute(S_TASK_ATTR, s_task)
    record: dict[str, Any] = {
        **base,
        "trajectory": trajectory.model_dump(mode="json"),
        "attempts": [a.to_dict() for a in gateway.attempts],
        "guard_path": gateway.guard_path,
        "s_task": s_task,
        "result": {"final_answer": result.final_answer, "error": result.error,
                   "model_calls": result.model_calls},
    }
    try:
        evidence = scorer.evidence(trajectory)
        score = score_case(case, evidence, s_task, weights=scorer.weights, tables=scorer.tables,
                           agent=agent_name, guard=guard.name)
        record.update(disclosures=_disclosures(case, evidence), score=score.to_dict(),
                      values=score.values())
    except Exception as e:
        error = error or case_error(type(e).__qualname__, "scoring")
        record.update(disclosures=[], score=None, values=None)
    record["error"] = error
    record["elapsed_s"] = round(time.perf_counter() - started, 4)
    return record


def _failed(base: dict[str, Any], error: dict[str, Any], started: float) -> dict[str, Any]:
    return {**base, "trajectory": None, "attempts": [], "disclosures": [], "s_task": None,
            "score": None, "values": None, "result": {"final_answer": None, "error": None,
                                                      "model_calls": 0},
            "error": error, "elapsed_s": round(time.perf_counter() - started, 4)}
