"""Guards under comparison on the ``acquisition`` suite (issue 10 item 7, seed ``001_*`` §6).

A guard here does not decide tool-call *arguments* against atoms; it decides what enters the
agent's context. :meth:`AcqGuardUnderTest.wrap` turns a case's unguarded
:class:`~..backends.acquisition.AcqGateway` into the :class:`~..agents.base.ToolGateway` the agent
uses (``run_case(..., wrap=...)``):

* ``off`` — nothing changes;
* ``audit`` / ``enforce`` / ``redact`` — a tpguard :class:`~tpguard.Guard` in that mode, its session
  bound to the case's minimum scope ``E`` (:func:`._acq_scope.case_scopes`). Per call:
  ``Guard.intercept`` checks (and in enforce/redact narrows) the request — a refusal becomes the
  agent's observation — the backend runs on the narrowed arguments, then
  ``Interception.check_result`` passes, filters (redact) or withholds (enforce) what came back;
* ``presidio-redact`` — Presidio's analyzer (:mod:`.baselines`) replaces every PII span it detects
  in the observation text, purpose-blind;
* ``directive`` — no gateway change: the category-aware system prompt of seed ``001_*`` §6. For the
  ``leaky`` reference agent it selects the documented ``leaky:directive`` profile
  (:meth:`AcqGuardUnderTest.agent_spec`); the ``oracle`` is unchanged.

Every guard except ``off``'s agent-facing behaviour runs through an audit-mode recorder when it is
not itself a tpguard mode, so every case-run gets the same value-free ``execute_tool`` spans
(request scope findings, ``tpguard.result.*``) under every guard — the recorder changes nothing.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tpguard import Guard, ToolSpec

from ..agents.base import Observation, ToolView
from ..backends.errors import ToolError
from ._acq_scope import case_scopes

if TYPE_CHECKING:
    from collections.abc import Callable

    from opentelemetry.trace import TracerProvider

    from ..backends.acquisition import AcqGateway
    from ..cases.acquisition import AcqCase

__all__ = ["ACQ_GUARD_NAMES", "ACQ_ONLY_GUARDS", "AcqGuardUnderTest", "make_acq_guard"]

ACQ_GUARD_NAMES = ("off", "audit", "enforce", "redact", "presidio-redact", "directive")
#: Guard names only the acquisition suite accepts.
ACQ_ONLY_GUARDS = ("directive",)
_SINKS = {"send_message": "email", "write_record": "record"}  # reads: "external"
_DESCRIPTIONS = {
    "off": "no guard: every observation reaches the agent as the backend returned it",
    "audit": "tpguard acquisition scope, audit mode: records out-of-scope requests and results",
    "enforce": "tpguard acquisition scope, enforce mode: narrows requests to E, withholds results "
               "holding out-of-scope items",
    "redact": "tpguard acquisition scope, redact mode: narrows requests to E, filters "
              "out-of-scope records, fields, parts and passages from results",
    "presidio-redact": "Presidio redacts all detected PII in every tool result, purpose-blind",
    "directive": "category-aware system prompt (seed 001 §6); for leaky: the leaky:directive "
                 "profile",
}


@functools.cache
def _spec(tool: str) -> ToolSpec:
    from ..cases.acquisition import TOOLS

    return ToolSpec(name=tool, sink=_SINKS.get(tool, "external"),
                    input_schema=TOOLS[tool]["input_schema"])


class _ScopedGateway:
    """The agent's gateway for one case-run: request check, backend, result check (per call)."""

    def __init__(self, base: AcqGateway, guard: Guard, case: AcqCase,
                 transform: Callable[[str], str] | None = None) -> None:
        self.base, self.guard, self.case, self.transform = base, guard, case, transform
        self._scopes = case_scopes(case)

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return self.base.tools

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        if name not in self.case.tools:
            return self.base.call(name, arguments, call_id=call_id)
        with self.guard.session(scopes=self._scopes), \
                self.guard.intercept(_spec(name), arguments, call_id=call_id) as call:
            if call.decision.blocked:
                return Observation(False, call.decision.message or "the guard refused this call",
                                   blocked=True)
            rewritten = call.decision.action != "allow"
            try:
                payload = self.base.env.call(name, call.decision.arguments)
            except ToolError as e:
                return Observation(False, str(e), rewritten=rewritten)
            shown = call.check_result(payload)
            decided = call.result_decision
        if decided is not None and decided.blocked:
            return Observation(False, str(shown), blocked=True, rewritten=rewritten)
        text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False, default=str)
        if self.transform is not None:
            text = self.transform(text)
        return Observation(True, text, rewritten=rewritten or (decided is not None and decided.redacted))


@dataclass(frozen=True)
class AcqGuardUnderTest:
    """One named guard of :data:`ACQ_GUARD_NAMES`; ``presidio_model`` for ``presidio-redact``."""

    name: str
    presidio_model: str | None = None

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self.name]

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "description": self.description,
                               "suite": "acquisition"}
        if self.name == "presidio-redact":
            from .baselines import PresidioRedact

            out.update({k: v for k, v in PresidioRedact(model=self.presidio_model).describe().items()
                        if k not in ("name", "description")})
        return out

    def agent_spec(self, spec: str) -> str:
        """The agent this guard runs: ``directive`` turns ``leaky[:…]`` into ``leaky:directive``."""
        if self.name == "directive" and spec.split(":", 1)[0] == "leaky":
            return "leaky:directive"
        return spec

    def wrap(self, case: AcqCase, tracer_provider: TracerProvider | None = None
             ) -> Callable[[AcqGateway], _ScopedGateway]:
        """The ``run_case(wrap=...)`` hook for one case-run (a fresh tpguard guard per case-run)."""
        mode = self.name if self.name in ("audit", "enforce", "redact") else "audit"
        transform = None
        if self.name == "presidio-redact":
            from .baselines import _PresidioCase

            presidio = _PresidioCase(0.4, self.presidio_model)
            transform = lambda text: presidio._apply(text)[0]  # noqa: E731

        def wrap(base: AcqGateway) -> _ScopedGateway:
            guard = Guard(mode=mode, tracer_provider=tracer_provider)  # type: ignore[arg-type]
            return _ScopedGateway(base, guard, case, transform)

        return wrap


def make_acq_guard(name: str, *, presidio_model: str | None = None) -> AcqGuardUnderTest:
    """The acquisition guard called ``name``; ``ValueError`` (one line) for any other name."""
    if name not in ACQ_GUARD_NAMES:
        raise ValueError(f"--guard {name!r} does not apply to the acquisition suite; choose from "
                         f"{', '.join(ACQ_GUARD_NAMES)}")
    if name == "presidio-redact":
        from .baselines import _analyzer, resolve_presidio_model

        presidio_model = resolve_presidio_model(presidio_model)
        _analyzer(presidio_model)  # fail at planning, not per case
    return AcqGuardUnderTest(name, presidio_model)
