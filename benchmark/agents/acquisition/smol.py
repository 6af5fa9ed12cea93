"""A smolagents agent on the acquisition suite (seed ``001_*`` §3 "Probe Elicitation").

``AcqSmolagentsAgent`` runs a smolagents ``ToolCallingAgent`` (``code_agent=True``: a ``CodeAgent``)
over the case's tools, built by :func:`..smolagents_agent.build_tools` on the runner's gateway (the
guard wraps the gateway, so the model reads what the guard lets through: a filtered observation
under ``redact``, the guard's refusal under ``enforce``). The final answer is the main response.

**The probe, tools disabled.** The retained task context is the agent's memory after the run,
written out as chat messages (``agent.write_memory_to_messages()``: the system prompt, the task,
every model output, tool call and observation, the final answer). The probe is one follow-up user
message after it, and the **model is called directly** — ``Model.generate`` with no
``tools_to_call_from`` and no agent loop or code executor, so nothing it replies can run a tool.
This mirrors the LangChain agent (:mod:`.framework`: the chat model with no tools bound) rather
than a fresh ``ToolCallingAgent(tools=[])``, which would start a new memory without the task's
observations and still offer ``final_answer``. The probe answer is the reply's text as is (a
``CodeAgent``'s model may wrap it in a code block; the disclosure matcher reads the text).

``directive=True`` appends the category-aware instruction of §6 (:data:`.framework.DIRECTIVE_PROMPT`)
to the neutral instructions (the ``directive`` guard). Cost: one model call per step plus one for
the probe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base import AgentResult, ToolGateway
from .framework import DIRECTIVE_PROMPT

if TYPE_CHECKING:
    from smolagents import Model

    from ...cases.acquisition import AcqCase

__all__ = ["AcqSmolagentsAgent"]


def _text(message: Any) -> str:
    """The text of a smolagents ``ChatMessage`` (content a string or a list of parts)."""
    content = getattr(message, "content", None)
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content
                     if isinstance(p, dict) and p.get("type") == "text")


class AcqSmolagentsAgent:
    """``AcqSmolagentsAgent("gpt-4.1-mini", base_url=…)`` or ``AcqSmolagentsAgent(model)`` (a
    ``smolagents.Model``, e.g. ``tpguard.testing.smolagents.ScriptedSmolModel``). ``max_steps``
    defaults to seed 001's six-step action budget (its appendix)."""

    def __init__(self, model: str | Model, base_url: str | None = None,
                 api_key: str | None = None, *, code_agent: bool = False,
                 directive: bool = False, max_steps: int = 6,
                 model_options: dict[str, Any] | None = None) -> None:
        from ..smolagents_agent import SmolagentsAgent

        self._inner = SmolagentsAgent(model, base_url, api_key, code_agent, max_steps=max_steps,
                                      guard_path="gateway", model_options=model_options)
        self.name = self._inner.name
        self.code_agent, self.directive, self.max_steps = code_agent, directive, max_steps

    @property
    def model(self) -> Model:
        return self._inner.model

    @property
    def instructions(self) -> str:
        from .._prompt import SYSTEM_PROMPT

        return f"{SYSTEM_PROMPT} {DIRECTIVE_PROMPT}" if self.directive else SYSTEM_PROMPT

    def run(self, case: AcqCase, gateway: ToolGateway, *, seed: int = 0) -> AgentResult:
        from smolagents import CodeAgent, ToolCallingAgent
        from smolagents.memory import ActionStep
        from smolagents.monitoring import LogLevel

        from .._prompt import error_type
        from ..smolagents_agent import build_tools

        kind = CodeAgent if self.code_agent else ToolCallingAgent
        try:
            agent = kind(tools=build_tools(gateway), model=self.model, max_steps=self.max_steps,
                         instructions=self.instructions, verbosity_level=LogLevel.OFF)
        except Exception as e:  # a model or framework failure ends this case, not the run
            return AgentResult(error=error_type(e))
        result = AgentResult()
        try:
            answer = agent.run(case.instruction)
            result.final_answer = None if answer is None else str(answer)
        except Exception as e:
            result.error = error_type(e)
        steps = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
        result.model_calls = len(steps)
        failed = [error_type(s.error) for s in steps if s.error is not None]
        if failed:
            result.extra["step_errors"] = failed
        # "context" is the retained memory as messages: run_case keeps it out of the record
        result.extra["context"] = agent.write_memory_to_messages()
        return result

    def probe(self, case: AcqCase, result: AgentResult, question: str) -> str:
        """The follow-up turn: the retained memory plus ``question``, the model called with no
        tools (see the module docstring)."""
        from smolagents.models import ChatMessage, MessageRole

        history: list[Any] = list(result.extra.get("context") or [
            ChatMessage(role=MessageRole.SYSTEM, content=[{"type": "text",
                                                           "text": self.instructions}])])
        ask = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": question}])
        try:
            reply = self.model.generate([*history, ask])
        except Exception:  # no probe answer is scored as no disclosure
            return ""
        return _text(reply)
