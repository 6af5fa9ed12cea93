"""The runner's single interception point between any agent and a case's mock backends.

For each call: the guard under comparison decides (allow / block / redact / rewrite); the call and
the decision are recorded as one ``execute_tool {tool}`` span by an audit-mode tpguard *recorder*
that carries the evaluator's atoms (so spans hold the findings scoring from traces needs, and never
the values); then — unless blocked — the backend receives the (possibly rewritten) arguments and
the audit log records them. Scoring reads the audit log, never the agent's account
(ToolPrivacyBench, seed ``000_*`` §6.4–6.5).

Measured as deployed (issue 12, item 8): a framework agent may take tpguard's decision out of the
gateway with :meth:`Gateway.delegate` and guard its tools with tpguard's own adapter. The gateway
then hands it a guard of the same policy and mode that reports every decision back here (blocked
calls included: they never reach the gateway), records each as the call's attempt and span, and
passes the calls that do arrive straight to the backend — it does not decide a second time. Only
tpguard's modes can be delegated: ``off`` and the baselines are not tpguard adapters and stay here.
"""

from __future__ import annotations

import json
import threading
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.trace import Status, StatusCode, TracerProvider

from tpguard import Decision, Guard, ToolSpec

from ..agents.base import Observation, ToolView
from ..backends import Environment, ToolError
from ..cases.schema import Case
from ..guards import CaseGuard, GuardAction
from ..guards.tpguard_modes import action_of

__all__ = ["Attempt", "Gateway", "GuardName", "Recorders", "tool_views"]

GuardName = str
_GUARD_ATTR = "tpguard.benchmark.guard"
_DECISION_ATTR = "tpguard.decision"
_PATH_ATTR = "tpguard.benchmark.guard_path"
#: The adapter's decision on the call now running in this context, consumed once by
#: ``Gateway.call``: a one-item list, shared by the copies of the context the framework makes.
_DECIDED: ContextVar[list[tuple[Gateway, str, GuardAction]]] = ContextVar("tpguard_bench_decided")


def tool_views(case: Case) -> tuple[ToolView, ...]:
    """What an agent sees of the case's tools: names, purposes as descriptions, input schemas."""
    views = []
    for t in case.tools:
        description = t.description or t.purpose or t.name
        schema = t.input_schema or {"type": "object", "properties": {}}
        views.append(ToolView(t.name, description, schema, t.free_text))
    return tuple(views)


class Recorders:
    """The audit-mode recorders of a run: one per case, shared by that case's case-runs.

    A recorder compiles its case's evaluator atoms once (the detector is most of a ``Guard``'s
    construction); every case-run of the case — each agent × guard — then records through it,
    passing its own tracer provider per call. Cases are held by identity (the runner hands every
    case-run of a case the same object) and the most recent ``size`` are kept.
    """

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._by_case: dict[int, tuple[Case, Guard]] = {}
        self._lock = threading.Lock()

    def get(self, case: Case) -> Guard:
        with self._lock:
            hit = self._by_case.get(id(case))
            if hit is not None and hit[0] is case:
                return hit[1]
        # Audit mode, evaluator's atoms: the recorder only observes what crosses the gateway.
        # An event for every finding, uncapped: `tpguard audit --spans` rebuilds the metrics
        # from them. Arguments are recorded redacted, as run.json's
        # record_arguments says: a sandboxed run's spans show what each tool received.
        recorder = Guard(case.policy, mode="audit", max_finding_events=None, finding_events="all",
                         record_arguments="redacted")
        with self._lock:
            if len(self._by_case) >= self._size:
                self._by_case.pop(next(iter(self._by_case)))
            self._by_case[id(case)] = (case, recorder)
        return recorder


@dataclass(frozen=True, slots=True)
class Attempt:
    """One call as the guard saw it (blocked calls included), for diagnostics and reports."""

    step: int
    tool: str
    action: str
    types: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    #: the guard's forbidden findings (atom id, type, path, method): what it flagged
    atoms: tuple[tuple[str, str, str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "tool": self.tool, "action": self.action,
                "types": list(self.types), "fields": list(self.fields),
                "atoms": [list(a) for a in self.atoms]}


@dataclass
class Gateway:
    """``Gateway(env, guard, guard_name, tracer_provider)`` — implements ``ToolGateway``."""

    env: Environment
    guard: CaseGuard
    guard_name: GuardName
    tracer_provider: TracerProvider | None = None
    attempts: list[Attempt] = field(default_factory=list)
    #: Where tpguard decided: ``"gateway"``, or the adapter path an agent delegated to.
    guard_path: str = "gateway"
    #: Calls that reached the backend without the adapter's decision (an adapter coverage gap).
    unguarded: int = 0
    #: Where the case's recorder comes from (a run shares one per case); ``None``: a fresh one.
    recorders: Recorders | None = None

    def __post_init__(self) -> None:
        case = self.env.case
        self._views = tool_views(case)
        self._specs = {t.name: t for t in case.tools}
        self._recorder = (self.recorders or Recorders(1)).get(case)
        self._lock = threading.Lock()
        #: the adapter's decisions on calls not yet arrived, by call id (see :meth:`_decided`)
        self._by_call_id: dict[str, tuple[str, GuardAction]] = {}

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return self._views

    @property
    def blocked(self) -> int:
        return sum(a.action == "block" for a in self.attempts)

    def _attempt(self, tool: str, action: str, types: tuple[str, ...], fields: tuple[str, ...],
                 atoms: tuple[tuple[str, str, str, str], ...] = ()) -> None:
        with self._lock:
            self.attempts.append(Attempt(len(self.attempts) + 1, tool, action, types, fields, atoms))

    # -- measured as deployed: the adapter decides ----------------------------------------------
    def delegate(self, path: str) -> Guard | None:
        """Hand tpguard's decision to the agent's adapter on ``path`` (e.g. ``langchain-middleware``).

        Returns the guard the adapter must use — this case's deployment policy and the mode under
        test — or ``None`` when the guard under test is not tpguard (``off``, baselines): those
        stay at the gateway and the agent builds plain tools. After a delegation this gateway no
        longer decides; it records the adapter's decisions and passes calls through.
        """
        make = getattr(self.guard, "adapter_guard", None)
        if make is None:
            return None
        guard: Guard = make(self._decided)
        self.guard_path = path
        return guard

    @property
    def delegated(self) -> bool:
        return self.guard_path != "gateway"

    def _decided(self, spec: ToolSpec, arguments: Any, decision: Decision, call_id: str | None) -> None:
        """The adapter's decision on one call: the attempt now; a blocked call's span now (it will
        not reach :meth:`call`); an allowed or redacted call's action for :meth:`call` — in this
        context, and by ``call_id`` for an adapter that decides in another task than the one the
        call arrives in (the MCP proxy: its call id is the JSON-RPC id the tool server sees)."""
        case_spec = self._specs.get(spec.name)
        if case_spec is None:  # not a case tool: the gateway path never decides those either
            return
        act = action_of(decision)
        self._attempt(spec.name, act.action, act.types, act.fields, act.atoms)
        if not act.blocked:
            _DECIDED.set([(self, spec.name, act)])
            if call_id is not None:
                with self._lock:
                    self._by_call_id[call_id] = (spec.name, act)
            return
        _DECIDED.set([])
        received = arguments if isinstance(arguments, dict) else {}
        with self._recorder.intercept(case_spec, received, call_id=call_id,
                                      tracer_provider=self.tracer_provider) as call:
            self._mark(call.span, act)

    def _adapter_action(self, name: str, arguments: dict[str, Any], call_id: str | None) -> GuardAction:
        slot = _DECIDED.get([])
        decided = slot.pop() if slot else None
        keyed = None
        if call_id is not None:
            with self._lock:
                keyed = self._by_call_id.pop(call_id, None)
        if decided is not None and decided[0] is self and decided[1] == name:
            return decided[2]
        if keyed is not None and keyed[0] == name:
            return keyed[1]
        with self._lock:
            self.unguarded += 1
        self._attempt(name, "unguarded", (), ())
        return GuardAction("allow", arguments)

    def _mark(self, span: Any, act: GuardAction) -> None:
        span.set_attribute(_GUARD_ATTR, self.guard_name)
        span.set_attribute(_DECISION_ATTR, act.action)
        span.set_attribute(_PATH_ATTR, self.guard_path)
        if act.blocked:
            span.set_status(Status(StatusCode.ERROR, "blocked by the guard"))
            span.set_attribute("error.type", "tpguard.blocked")

    # -- one call ---------------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        spec = self._specs.get(name)
        if spec is None:
            return Observation(False, f"unknown tool {name!r}; available: {', '.join(self._specs)}")
        if not isinstance(arguments, dict):
            return Observation(False, f"{name}: arguments must be a JSON object")
        if self.delegated:  # the adapter decided; what arrives here is what the tool received
            act = self._adapter_action(name, arguments, call_id)
            received = arguments
        else:
            try:
                act = self.guard.process(spec, arguments)
            except Exception as e:  # a guard must not crash the run; fail closed and say so
                self._attempt(name, "block", (), ())
                return Observation(False, f"the guard failed on this call ({type(e).__name__})",
                                   blocked=True)
            self._attempt(name, act.action, act.types, act.fields, act.atoms)
            received = act.arguments if not act.blocked else arguments
        with self._recorder.intercept(spec, received, call_id=call_id,
                                      tracer_provider=self.tracer_provider) as call:
            self._mark(call.span, act)
            if act.blocked:
                return Observation(False, act.message or "the guard withheld this call", blocked=True)
            try:
                result = self.env.call(name, received)
            except ToolError as e:  # the backend received and rejected it: an error span, by type
                call.span.set_status(Status(StatusCode.ERROR))
                call.span.set_attribute("error.type", "ToolError")
                return Observation(False, str(e), rewritten=act.action != "allow")
        content = json.dumps(result, ensure_ascii=False, default=str)
        return Observation(True, content, rewritten=act.action != "allow")
