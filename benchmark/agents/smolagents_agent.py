"""``SmolagentsAgent``: a smolagents ``ToolCallingAgent`` (or ``CodeAgent``) over the case's tools.

Each tool is a smolagents ``Tool`` built from a :class:`~.base.ToolView` (inputs from the JSON
schema; optional inputs nullable) whose ``forward`` calls the gateway; a rejected call comes
back as ``"Error: …"`` text the model reads, a withheld one as the guard's message itself — the
observation tpguard's ``guard_tool`` returns, so both guard paths show the model the same text. The model: an ``OpenAIServerModel`` for ``model``
(with ``base_url`` for an OpenAI-compatible endpoint), or a ready ``smolagents.Model`` (tests pass
``tpguard.testing.smolagents.ScriptedSmolModel``). ``max_steps`` bounds the run, and a model that repeats the same calls
:data:`~._repeat.REPEAT_LIMIT` steps in a row is interrupted (``RepeatedToolCall``, a scored
outcome); the instruction is neutral (:mod:`._prompt`), no policy is shown.

``guard_path`` — where tpguard decides (issue 12, item 8, "as deployed"):

* ``smolagents-decorator`` (default): each tool is wrapped with tpguard's ``guard_tool`` (what
  ``@purpose_bound`` does); a withheld call *returns* the guard's message as the observation —
  on a ``ToolCallingAgent``, with ``rewrite_blocked_calls`` (issue 31), the one-sentence fix, and
  the blocked call is rewritten in the agent's memory to its placeholder form (not under
  ``enforce:message``);
* ``smolagents-instrumentor``: ``SmolagentsInstrumentor`` patches smolagents for the run — audit
  only, as the product is (``enforce`` / ``redact`` end the case with ``GuardPathError``). The
  instrumentor patches classes process-wide, so instrumented runs take turns (a lock);
* ``gateway``: the runner's gateway decides;
* ``smolagents-mcp``: the case's tools are served over MCP behind tpguard's MCP proxy, which decides
  (:mod:`._mcp_serve`); the tools are built by ``mcpadapt``'s smolagents adapter, as
  ``ToolCollection.from_mcp`` builds them (a refusal comes back as the tool's text output).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from smolagents import CodeAgent, Model, Tool, ToolCallingAgent
from smolagents.memory import ActionStep
from smolagents.monitoring import LogLevel

from ._prompt import SYSTEM_PROMPT, error_type
from ._repeat import REPEATED, RepeatWatch
from ._smol_schema import smol_inputs
from .base import GATEWAY, AgentResult, ToolGateway, ToolView, adapter_guard

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal
    from mcp import ClientSession

    from tpguard import Guard

    from ..cases.schema import Case

__all__ = ["GUARD_PATHS", "MCP_GUARD_PATH", "GuardPathError", "SmolagentsAgent", "build_tools", "mcp_tools",
           "smol_model"]

#: The guard paths a smolagents agent can take; the first is the default.
GUARD_PATHS = ("smolagents-decorator", "smolagents-instrumentor", GATEWAY, "smolagents-mcp")
#: the tools come over MCP through tpguard's proxy (built by ``mcpadapt``'s smolagents adapter)
MCP_GUARD_PATH = "smolagents-mcp"
_INSTRUMENTED = threading.Lock()  # one SmolagentsInstrumentor may be active per process


class GuardPathError(RuntimeError):
    """The guard under test cannot act on the selected adapter path."""


def _tool(view: ToolView, gateway: ToolGateway) -> Tool:
    inputs = smol_inputs(view.input_schema)
    order = list(inputs)

    def forward(self: Tool, *args: Any, **kwargs: Any) -> str:
        arguments = dict(zip(order, args, strict=False))
        arguments.update(kwargs)
        arguments = {k: v for k, v in arguments.items() if v is not None}
        obs = gateway.call(view.name, arguments)
        if obs.blocked:  # as tpguard's guard_tool does: the guard's message is the observation
            return str(obs.content)
        return str(obs.content) if obs.ok else f"Error: {obs.content}"

    cls = type(f"GatewayTool_{view.name}", (Tool,), {
        "name": view.name, "description": view.description or view.name, "inputs": inputs,
        "output_type": "string", "skip_forward_signature_validation": True, "forward": forward,
    })
    tool: Tool = cls()
    return tool


def build_tools(gateway: ToolGateway) -> list[Tool]:
    return [_tool(v, gateway) for v in gateway.tools]


def _decorated(tools: list[Tool], guard: Guard) -> list[Tool]:
    from tpguard.adapters.smolagents import guard_tool

    out = []
    for t in tools:
        spec = guard.tool_spec(t.name)
        out.append(guard_tool(t, purpose=spec.purpose, sink=spec.sink, free_text=spec.free_text,
                              guard=guard))
    return out


@contextmanager
def _instrumented(guard: Guard, tools: list[Tool]) -> Iterator[None]:
    from tpguard.adapters.smolagents import SmolagentsInstrumentor

    from ..guards._observed import ObservedGuard

    if guard.mode != "audit":
        raise GuardPathError("smolagents-instrumentor is audit-only; use smolagents-decorator")
    with _INSTRUMENTED:
        instrumentor = SmolagentsInstrumentor(guard, tools={t.name: guard.tool_spec(t.name)
                                                            for t in tools})
        instrumentor.instrument()
        try:
            if isinstance(guard, ObservedGuard):  # report only this run's calls
                guard.scoped = True
                with guard.running():
                    yield
            else:
                yield
        finally:
            instrumentor.uninstrument()


def smol_model(model: str | Model, base_url: str | None = None, api_key: str | None = None,
               **options: Any) -> Model:
    """A smolagents model from a spec or as given (``options``, e.g. ``temperature``, are sent
    with every completion)."""
    if isinstance(model, Model):
        return model
    from smolagents import OpenAIServerModel

    name = model.split(":", 1)[1] if model.startswith("openai:") else model
    return OpenAIServerModel(model_id=name, api_base=base_url, api_key=api_key, **options)


def _rewrites(guard: Guard, code_agent: bool) -> bool:
    """Whether the run rewrites blocked calls in memory: a ``ToolCallingAgent`` under a guard
    that asks for it (every enforce variant but ``enforce:message``)."""
    return not code_agent and guard.mode == "enforce" and getattr(guard, "rewrite_blocked", True)


def _watch_repeats(watch: RepeatWatch) -> Any:
    """A step callback that interrupts the agent when its calls repeat (see :mod:`._repeat`)."""

    def on_step(step: ActionStep, agent: Any) -> None:
        calls = [(c.name, c.arguments) for c in step.tool_calls or []]
        if watch.turn(calls):
            agent.interrupt()

    return on_step


def mcp_tools(portal: BlockingPortal, client: ClientSession) -> list[Tool]:
    """The session's tools as smolagents tools, built as ``mcpadapt`` builds them (its
    ``SmolAgentsAdapter`` over a synchronous call into the session's event loop)."""
    from mcpadapt.smolagents_adapter import SmolAgentsAdapter

    def call(name: str, arguments: dict[str, Any] | None) -> Any:
        return portal.call(partial(client.call_tool, name, arguments))

    adapter = SmolAgentsAdapter()
    tools = []
    for listed in portal.call(client.list_tools).tools:
        tool = adapter.adapt(partial(call, listed.name), listed)
        # mcpadapt 0.1.19 ignores the schema's ``required``: smolagents would then reject every
        # call that leaves an optional argument out. Mark those nullable, as build_tools does.
        required = set(listed.inputSchema.get("required") or ())
        for name, spec in tool.inputs.items():
            if name not in required:
                spec["nullable"] = True
        tools.append(tool)
    return tools


class SmolagentsAgent:
    """``SmolagentsAgent("gpt-4.1-mini", base_url=…)`` or ``SmolagentsAgent(model_instance)``."""

    def __init__(self, model: str | Model, base_url: str | None = None, api_key: str | None = None,
                 code_agent: bool = False, *, max_steps: int = 12,
                 guard_path: str = GUARD_PATHS[0], model_options: dict[str, Any] | None = None,
                 label: str | None = None) -> None:
        if guard_path not in GUARD_PATHS:
            raise ValueError(f"smolagents guard path {guard_path!r}: choose from {', '.join(GUARD_PATHS)}")
        self.guard_path = guard_path
        self._spec, self._base_url, self._api_key = model, base_url, api_key
        self._options = dict(model_options or {})
        self._model: Model | None = model if isinstance(model, Model) else None
        self.code_agent, self.max_steps = code_agent, max_steps
        label = label or (model if isinstance(model, str) else type(model).__name__)
        self.name = f"smolagents:{label}" + (":code" if code_agent else "")

    @property
    def model(self) -> Model:
        if self._model is None:
            self._model = smol_model(self._spec, self._base_url, self._api_key, **self._options)
        return self._model

    def run(self, case: Case, gateway: ToolGateway, *, seed: int = 0) -> AgentResult:
        if self.guard_path != MCP_GUARD_PATH:
            return self._run(case, gateway, None)
        from ._mcp_serve import mcp_portal

        try:
            with mcp_portal(gateway, MCP_GUARD_PATH) as (portal, client):
                return self._run(case, gateway, mcp_tools(portal, client))
        except Exception as e:  # the MCP session could not start or end: this case fails
            return AgentResult(error=error_type(e))

    def _run(self, case: Case, gateway: ToolGateway, served: list[Tool] | None) -> AgentResult:
        """Run on ``served`` (MCP tools: the proxy guards them) or on tools built from ``gateway``."""
        result = AgentResult()
        watch = RepeatWatch()
        try:
            tools = build_tools(gateway) if served is None else served
            guard = adapter_guard(gateway, self.guard_path) if served is None else None
            scope: Any = contextlib.nullcontext()
            tools_guarded = guard is not None and self.guard_path == "smolagents-decorator"
            if guard is not None and tools_guarded:
                tools = _decorated(tools, guard)
            elif guard is not None:
                scope = _instrumented(guard, tools)
            kind = CodeAgent if self.code_agent else ToolCallingAgent
            agent = kind(tools=tools, model=self.model, max_steps=self.max_steps,
                         instructions=SYSTEM_PROMPT, verbosity_level=LogLevel.OFF,
                         step_callbacks={ActionStep: _watch_repeats(watch)})
            if guard is not None and tools_guarded and _rewrites(guard, self.code_agent):
                from tpguard.adapters.smolagents import rewrite_blocked_calls

                # after the repeat watch: it sees what the model sent
                rewrite_blocked_calls(agent, compact=getattr(guard, "compact_after_resend", True))
            with scope:
                answer = agent.run(case.task)
        except Exception as e:  # a model or framework failure ends this case, not the benchmark
            if not watch.tripped:
                result.error = error_type(e)
                return result
            result.error, answer = REPEATED, None  # interrupted by the repeat watch: scored
        steps = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
        result.model_calls = len(steps)
        failed = [s for s in steps if s.error is not None]
        if failed:
            result.extra["step_errors"] = [error_type(s.error) for s in failed if s.error]
        result.final_answer = None if answer is None else str(answer)
        return result
