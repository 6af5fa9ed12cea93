"""``PurposeBoundMiddleware``: the guard as a ``create_agent`` middleware (``wrap_tool_call``).

Thin by design (STYLE §5): it resolves the tool's spec, drops injected arguments, asks
:meth:`Guard.intercept` and acts on the decision — ``audit`` calls the tool unchanged, a block
returns an error ``ToolMessage`` without calling the tool, ``redact`` calls the tool with the
rewritten (or, for a tool with an acquisition scope, narrowed) arguments. The tool's
``ToolMessage`` then passes :meth:`Guard.check_result` on the same span: its text content and
artifact are filtered in ``redact``, and a withheld result reaches the model as an error
``ToolMessage`` with the guard's message. The middleware sees the model's *raw* arguments (before
LangChain validates them); ``@purpose_bound`` on the tool itself sees the validated ones.

With ``exits=True`` it also guards what the model says to the requester (exposure stage, issue 11):
``wrap_model_call``/``awrap_model_call`` pass each ``AIMessage``'s text through
:meth:`Guard.check_exit` (channel ``final_response``; see :mod:`._langchain_exit`), and run the
model call tagged ``nostream`` so a ``messages`` stream relays the guarded message, not the
model's tokens.

After a block (``rewrite_blocked=True``, the default) the model is shown a call it can resend
(issue 31; :mod:`tpguard.stages.feedback`): the refusal ``ToolMessage`` says, in one sentence, which
argument parts tpguard replaced with placeholders, and ``before_model`` rewrites the blocked call
in the ``AIMessage`` that made it (same message id, so the state's ``add_messages`` replaces it)
to its placeholder form before the model is called again — the withheld value leaves the
conversation, and the model's own last call is one the guard allows. With
``continue_after_block=True`` (the default) the model's next request also ends on one user turn
asking it to resend the withheld calls and go on (:func:`._langchain_feedback.continue_prompt`;
added to the request in ``wrap_model_call``, not to the state): a small model otherwise reads the
refusal as the end of its turn. The placeholder arguments
ride on the refusal's ``artifact`` (never sent to a model; value-free); each rewrite is a
``tpguard.call_rewritten`` event on the blocked call's span.

Its hook runs in a LangSmith trace record no payload (``trace_policy``: the raw, pre-guard
arguments would otherwise be their inputs) unless the guard itself records raw arguments.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from tpguard.guard import Decision, Guard, Interception
from tpguard.policy import ToolSpec
from tpguard.stages.feedback import record_rewrite

from ._langchain_args import as_spec, injected_keys, model_arguments, tool_schema
from ._langchain_exit import guarded_response, unstreamed
from ._langchain_feedback import REWRITE_ARTIFACT, WITHHELD, continue_prompt, feedback_update
from ._rewrite import placed_arguments

__all__ = ["PurposeBoundMiddleware"]

try:  # LangChain >= 1.5 / LangGraph with TracePolicy: middleware hook runs can be shaped
    from langgraph.types import TracePolicy, omit_payload

    #: what the middleware's own hook runs record (LangSmith's ``wrap_tool_call`` and
    #: ``wrap_model_call`` runs): no inputs — the raw, pre-guard tool-call arguments and the
    #: conversation — and no outputs
    _NO_PAYLOAD: Any = TracePolicy(process_inputs=omit_payload, process_outputs=omit_payload)
except ImportError:  # older versions have no hook to shape; docs/langchain.md says so
    _NO_PAYLOAD = None

_log = logging.getLogger("tpguard")
_names = itertools.count(1)
Result = ToolMessage | Command[Any]


class PurposeBoundMiddleware(AgentMiddleware):
    """Check every tool call of a ``create_agent`` agent against ``guard``.

    ``tools`` maps tool names to their :class:`ToolSpec` (or a dict of its fields: ``purpose``,
    ``sink``, ``free_text``). A tool not listed there is looked up on the guard (its policy's
    tools and tools registered with ``@purpose_bound``); a tool the guard does not know either is
    checked as an **unknown tool: sink ``external``, no purpose** — so, under the default-forbidden
    policy, any registered atom sent to it is forbidden.

    Audit-only on an existing agent: ``create_agent(model, tools, middleware=[
    PurposeBoundMiddleware(Guard(policy, mode="audit"), tools=...)])`` — tools stay untouched.
    Several instances may be stacked (each gets a distinct ``name``; pass ``name=`` to choose it).

    ``exits=True`` guards the model's messages to the requester too (channel ``final_response``):
    ``recipient`` names who reads them (default: the session's requester, :meth:`Guard.requester`),
    and ``Auth(recipient, atom)`` of the policy/session decides each atom — audit records, redact
    rewrites the message text, enforce replaces it with a value-free refusal.

    ``rewrite_blocked=True`` (default): a call blocked for a forbidden atom is rewritten in the
    conversation to its placeholder form and the refusal asks the model to send it again as it
    now stands (see the module docstring); ``False`` keeps the call as the model wrote it and
    answers with the guard's refusal message alone. ``compact_after_resend=True`` (default): once
    the model's resend of that call went through, the blocked turn leaves the conversation
    (:mod:`._langchain_feedback`; ``False`` keeps it). ``continue_after_block=True`` (default): after a turn with a
    withheld call, the model's next request ends on a user turn asking it to resend that call as
    the refusal says and go on (the request only; the conversation state is unchanged).
    """

    def __init__(
        self,
        guard: Guard,
        tools: Mapping[str, ToolSpec | Mapping[str, Any]] | None = None,
        *,
        name: str | None = None,
        exits: bool = False,
        recipient: str | None = None,
        rewrite_blocked: bool = True,
        compact_after_resend: bool = True,
        continue_after_block: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(guard, Guard):
            raise TypeError("PurposeBoundMiddleware(guard=...) takes a tpguard.Guard")
        self.guard = guard
        self.specs: dict[str, ToolSpec] = {n: as_spec(n, s) for n, s in (tools or {}).items()}
        self._name = name or f"PurposeBoundMiddleware_{next(_names)}"
        self._lock = threading.Lock()
        self._schemas_filled: set[str] = set()
        self._injected: dict[str, tuple[int, frozenset[str]]] = {}
        self.exits = exits
        self.recipient = recipient
        self.rewrite_blocked = rewrite_blocked
        self.compact_after_resend = compact_after_resend
        self.continue_after_block = continue_after_block
        if guard.recording != "raw" and _NO_PAYLOAD is not None:  # as the guard's own spans
            self.trace_policy = _NO_PAYLOAD

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"PurposeBoundMiddleware(name={self._name!r}, guard={self.guard!r})"

    # -- the two hooks --------------------------------------------------------------------------
    # A call naming a tool the agent does not have (``request.tool is None``) runs nothing: LangGraph
    # answers it with "not a valid tool, try one of [...]", which the model needs to recover; the
    # guard lets that answer through instead of replacing it with a refusal.
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Result]
    ) -> Result:
        if request.tool is None:
            return handler(request)
        spec, arguments, call_id = self._prepare(request)
        with self.guard.intercept(spec, arguments, call_id=call_id) as call:
            if call.decision.blocked:
                return self._refusal(request, spec, arguments, call)
            return _filtered(request, call, handler(_apply(request, call.decision)))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Result]]
    ) -> Result:
        if request.tool is None:
            return await handler(request)
        spec, arguments, call_id = self._prepare(request)
        with self.guard.intercept(spec, arguments, call_id=call_id) as call:
            if call.decision.blocked:
                return self._refusal(request, spec, arguments, call)
            return _filtered(request, call, await handler(_apply(request, call.decision)))

    # -- feedback after a block (issue 31) ------------------------------------------------------
    def _refusal(self, request: ToolCallRequest, spec: ToolSpec, arguments: Any,
                 call: Interception) -> ToolMessage:
        """The refusal ``ToolMessage``; with ``rewrite_blocked``, it carries the placeholder call
        (artifact) that :meth:`before_model` puts in place of the blocked one."""
        decision = call.decision
        if not (self.rewrite_blocked and decision.forbidden and isinstance(arguments, Mapping)):
            return _blocked_message(request, decision, withheld=True)
        placeholder = self.guard.placeholder_call(spec, arguments)
        if placeholder is None or not isinstance(placeholder.arguments, Mapping):
            return _blocked_message(request, decision, withheld=True)
        record_rewrite(call.span, placeholder, "langchain-messages")
        args = placed_arguments(request.tool_call.get("args") or {}, arguments, placeholder.arguments)
        return ToolMessage(content=placeholder.rewrite_message(), name=request.tool_call.get("name"),
                           tool_call_id=request.tool_call.get("id") or "", status="error",
                           artifact={REWRITE_ARTIFACT: args}, response_metadata={WITHHELD: True})

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if not self.rewrite_blocked:
            return None
        return feedback_update(state.get("messages") or (), compact=self.compact_after_resend)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    # -- the exit hooks (exposure stage) ----------------------------------------------------------
    # ``wrap_model_call`` rather than ``after_model``: the guarded text replaces the model's reply
    # before it becomes state, so the unguarded answer is never checkpointed or streamed as state.
    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        request = self._continued(request)
        if not self.exits:
            return handler(request)
        with unstreamed():
            response = handler(request)
        return guarded_response(self.guard, self.recipient, response)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        request = self._continued(request)
        if not self.exits:
            return await handler(request)
        with unstreamed():
            response = await handler(request)
        return guarded_response(self.guard, self.recipient, response)

    def _continued(self, request: Any) -> Any:
        """``request`` with the continue turn appended after a turn with withheld calls."""
        if not self.continue_after_block:
            return request
        prompt = continue_prompt(request.messages)
        return request if prompt is None else request.override(messages=[*request.messages, prompt])

    # -- helpers ---------------------------------------------------------------------------------
    def spec_for(self, tool_name: str, tool: Any = None) -> ToolSpec:
        """The spec a call to ``tool_name`` is checked against (see the class docstring)."""
        spec = self.specs.get(tool_name) or self.guard.tool_spec(tool_name)
        if spec.input_schema is None and tool is not None and tool_name not in self._schemas_filled:
            schema = tool_schema(tool)
            with self._lock:
                self._schemas_filled.add(tool_name)
                if schema is not None and tool_name in self.specs:
                    spec = self.specs[tool_name] = spec.model_copy(update={"input_schema": schema})
        return spec

    def _injected_for(self, name: str, tool: Any) -> frozenset[str]:
        cached = self._injected.get(name)
        if cached is None or cached[0] != id(tool):
            cached = self._injected[name] = (id(tool), injected_keys(tool))
        return cached[1]

    def _prepare(self, request: ToolCallRequest) -> tuple[ToolSpec, dict[str, Any], str | None]:
        call = request.tool_call
        name = str(call.get("name", ""))
        raw = call.get("args") or {}
        try:
            spec = self.spec_for(name, request.tool)
            drop = self._injected_for(name, request.tool)
            arguments = model_arguments(request.tool, raw, drop) if isinstance(raw, Mapping) else raw
        except Exception as e:  # never let the adapter crash the agent: check what we have
            _log.error("tpguard: could not prepare a call to %s (%s)", name, type(e).__qualname__)
            spec, arguments = self.guard.tool_spec(name), raw
        return spec, arguments, call.get("id")


def _apply(request: ToolCallRequest, decision: Decision) -> ToolCallRequest:
    """The request the tool should run: rewritten arguments in ``redact``, else unchanged."""
    if not decision.redacted or not isinstance(decision.arguments, Mapping):
        return request
    args = {**request.tool_call.get("args", {}), **decision.arguments}
    return request.override(tool_call={**request.tool_call, "args": args})


def _filtered(request: ToolCallRequest, call: Interception, result: Result) -> Result:
    """The tool's ``ToolMessage`` through the result stage: its text content (a string, or each
    text block) and its artifact; a withheld result becomes an error ``ToolMessage`` with the
    guard's message. A ``Command`` passes as it is (its messages are the tool's own state update)."""
    if not isinstance(result, ToolMessage):
        return result
    content: Any = result.content
    if isinstance(content, str):
        content = call.check_result(content)
    elif isinstance(content, list):
        content = [_filtered_block(call, b) for b in content]
    withheld = next((d for d in call.results if d.blocked), None)
    artifact = result.artifact
    if withheld is None and artifact is not None:
        artifact = call.check_result(artifact)
        withheld = next((d for d in call.results if d.blocked), None)
    if withheld is not None:
        return _blocked_message(request, withheld)
    if not call.results or all(d.action == "allow" for d in call.results):
        return result
    return result.model_copy(update={"content": content, "artifact": artifact})


def _filtered_block(call: Interception, block: Any) -> Any:
    if isinstance(block, str):
        return call.check_result(block)
    if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return {**block, "text": call.check_result(block["text"])}
    return block


def _blocked_message(request: ToolCallRequest, decision: Decision, *, withheld: bool = False) -> ToolMessage:
    """The refusal ``ToolMessage``; ``withheld``: the call itself was withheld (not its result),
    so the model is asked to resend it (:func:`._langchain_feedback.continue_prompt`)."""
    call = request.tool_call
    return ToolMessage(
        content=decision.message or f"tpguard withheld the call to {decision.tool}",
        name=call.get("name"),
        tool_call_id=call.get("id") or "",
        status="error",
        response_metadata={WITHHELD: True} if withheld else {},
    )
