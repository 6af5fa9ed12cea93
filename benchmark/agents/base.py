"""The contract between agents under test and the runner.

Every agent reaches its tools through one interception point, the :class:`ToolGateway`: the
runner's gateway applies the guard under comparison (tpguard or a baseline) and then calls the
case's mock backend, so a guard behaves the same under every agent. An agent sees only the task text
and :class:`ToolView` s (name, description, input schema) — never the policy knowledge base
(ToolPrivacyBench, seed ``000_*`` §3.7). Reference agents (``oracle``, ``leaky``) may read the
case's answer key; that is what makes them reference agents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["Agent", "AgentResult", "Observation", "ToolGateway", "ToolView"]


@dataclass(frozen=True, slots=True)
class ToolView:
    """What an agent may know about a tool: no sink authorization, no policy."""

    name: str
    description: str
    input_schema: dict[str, Any]
    free_text: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Observation:
    """What a tool call returns to the agent.

    ``ok`` is False for a rejected call (bad arguments, unknown tool) and for a call the guard
    withheld (``blocked``); ``content`` is then the error text or the guard's message (which names
    atom types and fields, never values), else the backend's JSON result.
    """

    ok: bool
    content: str
    blocked: bool = False
    rewritten: bool = False  # the guard redacted the arguments before the backend saw them


@runtime_checkable
class ToolGateway(Protocol):
    """The single interception point between an agent and the case's tools."""

    @property
    def tools(self) -> tuple[ToolView, ...]: ...

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        """Run one tool call through the guard and the backend. Thread-safe; never raises for a
        bad call (the agent gets an ``ok=False`` observation)."""
        ...


@dataclass(slots=True)
class AgentResult:
    final_answer: str | None = None
    error: str | None = None  # an exception type name when the agent itself failed
    model_calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    """``agent.run(case, gateway, seed=...)`` executes one case and returns when the agent stops."""

    name: str

    def run(self, case: Case, gateway: ToolGateway, *, seed: int = 0) -> AgentResult: ...
