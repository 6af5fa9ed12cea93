"""The runner's single interception point between any agent and a case's mock backends.

For each call: the guard under comparison decides (allow / block / redact / rewrite); the call and
the decision are recorded as one ``execute_tool {tool}`` span by an audit-mode tpguard *recorder*
that carries the evaluator's atoms (so spans hold the findings scoring from traces needs, and never
the values); then — unless blocked — the backend receives the (possibly rewritten) arguments and
the audit log records them. Scoring reads the audit log, never the agent's account
(ToolPrivacyBench, seed ``000_*`` §6.4–6.5).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.trace import Status, StatusCode, TracerProvider

from tpguard import Guard

from ..agents.base import Observation, ToolView
from ..backends import Environment, ToolError
from ..cases.schema import Case
from ..guards import CaseGuard

__all__ = ["Attempt", "Gateway", "GuardName", "tool_views"]

GuardName = str
_GUARD_ATTR = "tpguard.benchmark.guard"
_DECISION_ATTR = "tpguard.decision"


def tool_views(case: Case) -> tuple[ToolView, ...]:
    """What an agent sees of the case's tools: names, purposes as descriptions, input schemas."""
    views = []
    for t in case.tools:
        description = t.description or t.purpose or t.name
        schema = t.input_schema or {"type": "object", "properties": {}}
        views.append(ToolView(t.name, description, schema, t.free_text))
    return tuple(views)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One call as the guard saw it (blocked calls included), for diagnostics and reports."""

    step: int
    tool: str
    action: str
    types: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "tool": self.tool, "action": self.action,
                "types": list(self.types), "fields": list(self.fields)}


@dataclass
class Gateway:
    """``Gateway(env, guard, guard_name, tracer_provider)`` — implements ``ToolGateway``."""

    env: Environment
    guard: CaseGuard
    guard_name: GuardName
    tracer_provider: TracerProvider | None = None
    attempts: list[Attempt] = field(default_factory=list)

    def __post_init__(self) -> None:
        case = self.env.case
        self._views = tool_views(case)
        self._specs = {t.name: t for t in case.tools}
        # Audit mode, evaluator's atoms: the recorder only observes what crosses the gateway.
        # Uncapped finding events: `tpguard audit --spans` rebuilds the metrics from them.
        self._recorder = Guard(case.policy, mode="audit", tracer_provider=self.tracer_provider,
                               max_finding_events=None)
        self._lock = threading.Lock()

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return self._views

    @property
    def blocked(self) -> int:
        return sum(a.action == "block" for a in self.attempts)

    def _attempt(self, tool: str, action: str, types: tuple[str, ...], fields: tuple[str, ...]) -> None:
        with self._lock:
            self.attempts.append(Attempt(len(self.attempts) + 1, tool, action, types, fields))

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        spec = self._specs.get(name)
        if spec is None:
            return Observation(False, f"unknown tool {name!r}; available: {', '.join(self._specs)}")
        if not isinstance(arguments, dict):
            return Observation(False, f"{name}: arguments must be a JSON object")
        try:
            act = self.guard.process(spec, arguments)
        except Exception as e:  # a guard must not crash the run; fail closed and say so
            self._attempt(name, "block", (), ())
            return Observation(False, f"the guard failed on this call ({type(e).__name__})", blocked=True)
        self._attempt(name, act.action, act.types, act.fields)
        received = act.arguments if not act.blocked else arguments
        with self._recorder.intercept(spec, received, call_id=call_id) as call:
            call.span.set_attribute(_GUARD_ATTR, self.guard_name)
            call.span.set_attribute(_DECISION_ATTR, act.action)
            if act.blocked:
                call.span.set_status(Status(StatusCode.ERROR, "blocked by the guard"))
                call.span.set_attribute("error.type", "tpguard.blocked")
                return Observation(False, act.message or "the guard withheld this call", blocked=True)
            try:
                result = self.env.call(name, received)
            except ToolError as e:  # the backend received and rejected it: an error span, by type
                call.span.set_status(Status(StatusCode.ERROR))
                call.span.set_attribute("error.type", "ToolError")
                return Observation(False, str(e), rewritten=act.action != "allow")
        content = json.dumps(result, ensure_ascii=False, default=str)
        return Observation(True, content, rewritten=act.action != "allow")
