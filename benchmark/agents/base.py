"""The contract between agents under test and the runner.

Every agent reaches its tools through one interception point, the :class:`ToolGateway`: the
runner's gateway applies the guard under comparison (tpguard or a baseline) and then calls the
case's mock backend, so a guard behaves the same under every agent. An agent sees only the task text
and :class:`ToolView` s (name, description, input schema) — never the policy knowledge base
(ToolPrivacyBench, seed ``000_*`` §3.7). Reference agents (``oracle``, ``leaky``) may read the
case's answer key; that is what makes them reference agents.

Framework agents can instead be measured *as deployed* (issue 12, item 8): with an adapter
``guard_path`` they ask the gateway for tpguard's guard (:func:`adapter_guard`) and wrap their
tools with tpguard's own adapter; the gateway then only records and passes calls through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tpguard import Guard

    from ..cases.schema import Case

__all__ = ["GATEWAY", "Agent", "AgentResult", "Observation", "ToolGateway", "ToolView",
           "adapter_guard", "guard_path_of"]

#: The guard path of agents whose calls the gateway decides (every reference agent).
GATEWAY = "gateway"


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


def guard_path_of(agent: Any) -> str:
    """Where tpguard decides for ``agent``: its ``guard_path`` (framework agents), else the gateway."""
    return str(getattr(agent, "guard_path", GATEWAY))


def adapter_guard(gateway: ToolGateway, path: str) -> Guard | None:
    """The guard an agent on adapter ``path`` wraps its tools with, or ``None``: the path is the
    gateway, the gateway cannot delegate (a test gateway), or the guard under test is not tpguard
    (``off``, a baseline — those always act at the gateway)."""
    delegate = getattr(gateway, "delegate", None)
    if path == GATEWAY or delegate is None:
        return None
    guard: Guard | None = delegate(path)
    return guard
