"""A case's tools bound to fresh mock backends (AgentDojo-style injection: the backend is never
part of the tool schema the agent sees), with every received call written to the audit log.

``S_task`` is read from backend state through the case's end-state checks (ToolPrivacyBench §5.1).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from tpguard import Detector

from ..cases.schema import Case, EndStateCheck
from ._arguments import check_schema, require
from ._store import BusinessObject, Store
from .audit import AuditLog
from .errors import ToolError
from .primitives import PRIMITIVE_CLASSES, Primitive

__all__ = ["Environment"]


class Environment:
    """One (run, case): ``env.call(tool, arguments) -> dict`` and ``env.end_state()``.

    A call that fails validation or is rejected by its backend is logged with outcome ``error`` and
    then raised as :class:`ToolError` (its message is the observation to hand back to the agent).
    A call to a tool the case does not have raises without being logged: no backend received it.
    Constructing an environment clears earlier calls of the same (run, case) from the log, so a
    re-run starts from step 1 against fresh backends.
    """

    def __init__(self, case: Case, audit: AuditLog, run_id: str, agent: str = "", guard: str = "",
                 *, reset: bool = True) -> None:
        self.case, self.audit, self.run_id, self.agent, self.guard = case, audit, run_id, agent, guard
        self.store = Store()
        self.backends: dict[str, Primitive] = {n: cls(self.store) for n, cls in PRIMITIVE_CLASSES.items()}
        self._tools = {t.name: t for t in case.tools}
        self._lock = threading.Lock()
        self._steps = 0
        if reset:
            audit.clear_case(run_id, case.id)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def call(self, tool_name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        spec = self._tools.get(tool_name)
        if spec is None:
            raise ToolError(f"unknown tool {tool_name!r} (available: {', '.join(self._tools)})")
        binding = self.case.bindings.get(tool_name)
        received: dict[str, Any] = dict(arguments) if isinstance(arguments, Mapping) else {}
        with self._lock:
            self._steps += 1
            step = self._steps
            try:
                if not isinstance(arguments, Mapping):
                    raise ToolError("arguments: expected a JSON object of named arguments")
                if binding is None:
                    raise ToolError(f"tool {tool_name!r} is not connected to a backend")
                check_schema(received, spec.input_schema)
                require(received, binding.required)
                result = self.backends[binding.primitive].execute(
                    binding.operation, tool_name, received, step)
                if binding.returns != "id" and "id" in result:
                    result = {binding.returns: result.pop("id"), **result}
            except ToolError as e:
                self.audit.record(run_id=self.run_id, case_id=self.case.id, tool=tool_name,
                                  sink=spec.sink, arguments=received, outcome="error",
                                  result={"error": str(e)}, agent=self.agent, guard=self.guard)
                raise
            self.audit.record(run_id=self.run_id, case_id=self.case.id, tool=tool_name,
                              sink=spec.sink, arguments=received, outcome="ok", result=result,
                              agent=self.agent, guard=self.guard)
        return result

    # -- end state ----------------------------------------------------------------------------
    def end_state(self) -> list[tuple[str, bool]]:
        """Each end-state check of the case with whether the backends' state satisfies it."""
        return [(c.id, self._passes(c)) for c in self.case.checks]

    @property
    def s_task(self) -> float:
        """``S_task ∈ [0, 1]``: the fraction of end-state checks passed (1.0 without checks)."""
        results = self.end_state()
        return 1.0 if not results else sum(ok for _, ok in results) / len(results)

    def objects(self, primitive: str | None = None) -> list[BusinessObject]:
        return self.store.all(primitive)

    def _passes(self, check: EndStateCheck) -> bool:
        candidates = [o for o in self.store.all(check.primitive) if check.tool in o.touched_by]
        return any(all(self._field_ok(o.data, k, v) for k, v in check.expect.items())
                   for o in candidates)

    def _field_ok(self, data: Mapping[str, Any], field: str, expect: str) -> bool:
        value = data.get(field)
        if expect == "$nonempty":
            return value not in (None, "", [], {})
        if expect.startswith("$atom:"):
            atom_id = expect[len("$atom:"):]
            try:
                atom = self.case.policy.atom(atom_id)
            except KeyError:
                return False
            return value is not None and bool(Detector([atom], fuzzy=False).scan({field: value}))
        return value is not None and str(value) == expect
