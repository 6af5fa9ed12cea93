"""A LangChain or smolagents agent as the exposure suite's target agent (issue 31, item 1).

``ExpFrameworkAgent`` answers each request of the target-blind requester (seed ``002_*`` §3.2)
with one run of a framework agent — :class:`~..langchain_agent.LangChainAgent` (``create_agent``)
or :class:`~..smolagents_agent.SmolagentsAgent` (``ToolCallingAgent``, or ``CodeAgent``) — over the
session's tools (:class:`~...backends.exposure.ExpGateway`: every call passes the session wrap,
where the exposure guards act), then replies to the requester on the declared reply channel with
the agent's final answer (``gateway.reply``, a visible exit the wrap checks too). The model sees
the request text and, as a real assistant session would, the earlier requests of this session and
its own earlier replies; nothing of the case's answer key.

A run the harness stops (step cap, repeated calls) replies with what the agent answered, possibly
nothing; a model or framework failure ends the session with :class:`ExpAgentError` (its message
is the error's type name only: a model's error text may hold workspace values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._repeat import REPEATED

if TYPE_CHECKING:
    from ...backends.exposure import ExpGateway
    from ...cases.exposure import ExpCase
    from ..base import Agent
    from .requester import Request

__all__ = ["ExpAgentError", "ExpFrameworkAgent", "is_framework_spec", "make_framework_agent"]

#: agent outcomes that still reply (the run was stopped, not broken)
_STOPPED = (REPEATED, "GraphRecursionError", "AgentMaxStepsError")


class ExpAgentError(RuntimeError):
    """The framework agent failed on a request; ``str(e)`` is the error's type name."""


@dataclass(frozen=True)
class _Turn:
    """What a framework agent's ``run`` reads of its "case": the task text."""

    task: str


class ExpFrameworkAgent:
    """``ExpFrameworkAgent(make_agent("langchain:MODEL", guard_path="gateway"))``."""

    def __init__(self, inner: Agent) -> None:
        self._inner = inner
        self.name = inner.name
        self.model_calls = 0
        self._session: str | None = None
        self._history: list[tuple[str, str]] = []

    def handle(self, case: ExpCase, req: Request, gw: ExpGateway, *, seed: int = 0) -> None:
        if self._session != case.id:  # a new session: no memory of another one
            self._session, self._history, self.model_calls = case.id, [], 0
        result = self._inner.run(_Turn(self._prompt(req.text)), gw, seed=seed)  # type: ignore[arg-type]
        self.model_calls += result.model_calls
        if result.error is not None and result.error not in _STOPPED and result.final_answer is None:
            raise ExpAgentError(result.error)
        answer = result.final_answer or ""
        gw.reply(answer)
        self._history.append((req.text, answer))

    def _prompt(self, text: str) -> str:
        if not self._history:
            return text
        earlier = "\n".join(f"Request: {q}\nYour reply: {a}" for q, a in self._history)
        return f"Earlier in this conversation:\n{earlier}\n\nNew request: {text}"


def is_framework_spec(spec: str) -> bool:
    head = spec.strip().partition(":")[0].lower()
    return head.partition("+")[0] in ("langchain", "smolagents")


def make_framework_agent(spec: str, **options: Any) -> ExpFrameworkAgent:
    """``langchain:MODEL`` / ``smolagents:MODEL`` (``…:local:NAME`` included) for the exposure
    suite; ``options``: ``base_url``, ``api_key``, ``code_agent``. The exposure guards act at the
    session wrap, so a ``+PATH`` is refused."""
    from ..registry import make_agent

    if "+" in spec.partition(":")[0]:
        raise ValueError(f"{spec!r}: exposure guards act at the session wrap; drop the '+PATH'")
    return ExpFrameworkAgent(make_agent(spec, guard_path="gateway", **options))
