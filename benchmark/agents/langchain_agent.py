"""``LangChainAgent``: ``langchain.agents.create_agent`` over the case's tools, with any chat model.

The tools are LangChain tools built from the gateway's :class:`~.base.ToolView` s (name,
description, the JSON schema as ``args_schema``); each one calls ``gateway.call`` with the model's
tool-call id. A failed observation (rejected or withheld by the guard) reaches the model as an
error ``ToolMessage`` (``status="error"``) carrying the observation text, so a model can retry.
The model: an ``init_chat_model`` spec (``openai:gpt-4.1-mini``), an OpenAI-compatible endpoint
(``base_url`` → ``ChatOpenAI(base_url=…, model=…)``), or a ready ``BaseChatModel`` (tests pass
``tpguard.testing.langchain.ScriptedChatModel``). The system prompt is neutral (:mod:`._prompt`).

``guard_path`` — where tpguard decides (issue 12, item 8, "as deployed"):

* ``langchain-decorator`` (default): each tool is wrapped with tpguard's ``guard_tool`` (what
  ``@purpose_bound`` does) — the guard sees the arguments LangChain passes to ``_run``;
* ``langchain-middleware``: ``PurposeBoundMiddleware`` in ``create_agent(middleware=[…])`` — the
  guard sees the model's raw tool-call arguments; a blocked call is rewritten in the conversation
  to its placeholder form (issue 31; not under ``enforce:message``). The decorator path cannot
  rewrite the conversation: there the model reads the refusal message alone;
* ``gateway``: the runner's gateway decides (``Guard.check`` there), the tools are plain;
* ``langchain-mcp``: the case's tools are served over MCP behind tpguard's MCP proxy, which decides
  (:mod:`._mcp_serve`); the agent loads them with ``langchain-mcp-adapters`` (``load_mcp_tools``,
  async tools: the agent runs with ``ainvoke`` in the MCP client's event loop).

On an adapter path the deployer's configuration — each tool's purpose, sink and free-text slots —
comes from the guard the gateway hands over (the case's deployment policy); the model still sees
only the tool views.

The harness caps a run at ``max_steps`` model turns (``GraphRecursionError``) and ends it when the
model repeats the same calls :data:`~._repeat.REPEAT_LIMIT` turns in a row
(:class:`RepeatedCallMiddleware`, ``RepeatedToolCall``); both are scored outcomes.
"""

from __future__ import annotations

import contextvars
import os
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException

from ._prompt import SYSTEM_PROMPT, error_type
from ._repeat import REPEAT_LIMIT, REPEATED, RepeatWatch
from .base import GATEWAY, AgentResult, ToolGateway, ToolView, adapter_guard

if TYPE_CHECKING:
    from tpguard import Guard

    from ..cases.schema import Case

__all__ = ["GUARD_PATHS", "MCP_GUARD_PATH", "GatewayTool", "LangChainAgent", "RepeatedCallMiddleware", "build_tools",
           "chat_model"]

#: The guard paths a LangChain agent can take; the first is the default.
GUARD_PATHS = ("langchain-decorator", "langchain-middleware", GATEWAY, "langchain-mcp")
#: the tools come over MCP through tpguard's proxy (``langchain-mcp-adapters``' ``load_mcp_tools``)
MCP_GUARD_PATH = "langchain-mcp"

_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("tpguard_lc_call_id", default=None)


class GatewayTool(BaseTool):
    """A LangChain tool whose execution is ``gateway.call(name, args, call_id=…)``."""

    gateway: Any
    handle_tool_error: bool = True

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        token = _CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return super().run(tool_input, *args, **kwargs)
        finally:
            _CALL_ID.reset(token)

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        token = _CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return await super().arun(tool_input, *args, **kwargs)
        finally:
            _CALL_ID.reset(token)

    def _run(self, *args: Any, run_manager: Any = None, **kwargs: Any) -> str:
        kwargs.pop("config", None)
        obs = self.gateway.call(self.name, dict(kwargs), call_id=_CALL_ID.get())
        if not obs.ok:
            raise ToolException(obs.content)
        return str(obs.content)


class RepeatedCallMiddleware(AgentMiddleware):
    """LangChain: after each model reply, end the run when its calls repeat ``limit`` times."""

    def __init__(self, limit: int = REPEAT_LIMIT) -> None:
        super().__init__()
        self.watch = RepeatWatch(limit)

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: AgentState, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1] if state["messages"] else None
        if not isinstance(last, AIMessage):
            return None
        if self.watch.turn((c["name"], c.get("args")) for c in last.tool_calls):
            return {"jump_to": "end"}
        return None


def build_tools(gateway: ToolGateway) -> list[GatewayTool]:
    return [GatewayTool(name=v.name, description=v.description or v.name,
                        args_schema=_schema(v), gateway=gateway) for v in gateway.tools]


def _guarded(tools: list[GatewayTool], guard: Guard, path: str) -> tuple[list[Any], list[Any]]:
    """Tools and middleware for ``create_agent`` with tpguard's own adapter on ``path``."""
    if path == "langchain-middleware":
        from tpguard.adapters.langchain import PurposeBoundMiddleware

        rewrite = getattr(guard, "rewrite_blocked", True)  # ``enforce:message``: the message alone
        compact = getattr(guard, "compact_after_resend", True)  # ``enforce:no-compact``: False
        return list(tools), [PurposeBoundMiddleware(guard, rewrite_blocked=rewrite,
                                                    compact_after_resend=compact)]
    from tpguard.adapters.langchain import guard_tool

    wrapped = []
    for t in tools:
        spec = guard.tool_spec(t.name)
        wrapped.append(guard_tool(t, purpose=spec.purpose, sink=spec.sink,
                                  free_text=spec.free_text, guard=guard))
    return wrapped, []


def _schema(view: ToolView) -> dict[str, Any]:
    schema = dict(view.input_schema) or {"type": "object", "properties": {}}
    schema.setdefault("title", view.name)
    schema.setdefault("description", view.description or view.name)
    return schema


def chat_model(model: str | BaseChatModel, base_url: str | None = None,
               api_key: str | None = None, **options: Any) -> BaseChatModel:
    """A chat model from a spec, an OpenAI-compatible endpoint, or as given (``options``, e.g.
    ``temperature``, go to the model's constructor)."""
    if isinstance(model, BaseChatModel):
        return model
    if base_url:
        from langchain_openai import ChatOpenAI

        name = model.split(":", 1)[1] if model.startswith("openai:") else model
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        return ChatOpenAI(model=name, base_url=base_url, api_key=key, **options)
    from langchain.chat_models import init_chat_model

    if api_key:
        options["api_key"] = api_key
    return init_chat_model(model, **options)


class LangChainAgent:
    """``LangChainAgent("openai:gpt-4.1-mini")`` or ``LangChainAgent(model_instance)``."""

    def __init__(self, model: str | BaseChatModel, base_url: str | None = None,
                 api_key: str | None = None, *, max_steps: int = 25,
                 guard_path: str = GUARD_PATHS[0], model_options: dict[str, Any] | None = None,
                 label: str | None = None) -> None:
        if guard_path not in GUARD_PATHS:
            raise ValueError(f"LangChain guard path {guard_path!r}: choose from {', '.join(GUARD_PATHS)}")
        self.guard_path = guard_path
        self._spec, self._base_url, self._api_key = model, base_url, api_key
        self._options = dict(model_options or {})
        self._model: BaseChatModel | None = model if isinstance(model, BaseChatModel) else None
        self.max_steps = max_steps
        label = label or (model if isinstance(model, str) else type(model).__name__)
        self.name = f"langchain:{label}"

    @property
    def model(self) -> BaseChatModel:
        if self._model is None:
            self._model = chat_model(self._spec, self._base_url, self._api_key, **self._options)
        return self._model

    def run(self, case: Case, gateway: ToolGateway, *, seed: int = 0) -> AgentResult:
        from langchain.agents import create_agent

        result = AgentResult()
        repeat = RepeatedCallMiddleware()
        task: Any = {"messages": [HumanMessage(case.task)]}
        config: RunnableConfig = {"recursion_limit": 2 * self.max_steps + 1}
        try:
            if self.guard_path == MCP_GUARD_PATH:
                out = self._run_mcp(gateway, repeat, task, config)
            else:
                tools: list[Any] = list(build_tools(gateway))
                middleware: list[Any] = []
                guard = adapter_guard(gateway, self.guard_path)
                if guard is not None:
                    tools, middleware = _guarded(tools, guard, self.guard_path)
                agent = create_agent(self.model, tools, system_prompt=SYSTEM_PROMPT,
                                     middleware=[*middleware, repeat])
                out = agent.invoke(task, config=config)
        except Exception as e:  # a model or framework failure ends this case, not the benchmark
            result.error = error_type(e)
            return result
        ai = [m for m in out.get("messages", []) if isinstance(m, AIMessage)]
        result.model_calls = len(ai)
        if repeat.watch.tripped:
            result.error = REPEATED
        if ai and not ai[-1].tool_calls:
            result.final_answer = ai[-1].text
        return result

    def _run_mcp(self, gateway: ToolGateway, repeat: RepeatedCallMiddleware, task: Any,
                 config: RunnableConfig) -> Any:
        """The agent over the case's tools served by MCP behind tpguard's proxy (async tools:
        ``ainvoke`` in the MCP client's event loop)."""
        from langchain.agents import create_agent
        from langchain_mcp_adapters.tools import load_mcp_tools

        from ._mcp_serve import mcp_portal

        with mcp_portal(gateway, MCP_GUARD_PATH) as (portal, client):
            tools = portal.call(load_mcp_tools, client)
            agent = create_agent(self.model, tools, system_prompt=SYSTEM_PROMPT, middleware=[repeat])
            return portal.call(partial(agent.ainvoke, task, config=config))
