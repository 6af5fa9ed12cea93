"""``guard_tool``: a smolagents ``Tool`` whose every call goes through the guard.

The guard sits on the instance's ``forward``, not on ``__call__``: ``CodeAgent`` calls tools from
generated code as ``type(tool).__call__(tool, …)``, which bypasses an instance ``__call__`` but
still reaches ``self.forward``; ``ToolCallingAgent`` calls ``tool(**arguments,
sanitize_inputs_outputs=True)`` → ``Tool.__call__`` → ``self.forward``. Both paths are covered.

A blocked call *returns* the guard's message (no private values, names the atom types and fields)
instead of raising: generated code could swallow an exception, and smolagents would copy the raw
arguments into the error text it logs and shows. The model sees the message as the observation of
that call and can retry with less. On an agent with :func:`~._smolagents_feedback.rewrite_blocked_calls`
installed, a call blocked for a forbidden atom is instead answered with the placeholder form's
message and rewritten in the agent's memory (issue 31).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from tpguard.guard import Guard, Interception
from tpguard.policy import Sink, ToolSpec
from tpguard.stages.feedback import record_rewrite

from ._smolagents_bind import bind_call, spec_for_tool
from ._smolagents_context import current_call_id, propagate_context
from ._smolagents_feedback import FEEDBACK_ATTR, FeedbackSlot

__all__ = ["GUARDED_ATTR", "guard_tool", "guarded_spec"]

#: Instance attribute marking a guarded tool (its ToolSpec); the instrumentor skips such tools.
GUARDED_ATTR = "__tpguard_spec__"
_ORIGINAL_ATTR = "__tpguard_forward__"


def guarded_spec(tool: Any) -> ToolSpec | None:
    spec = getattr(tool, "__dict__", {}).get(GUARDED_ATTR)
    return spec if isinstance(spec, ToolSpec) else None


def _refusal(guard: Guard, spec: ToolSpec, arguments: dict[str, Any], call: Interception,
             slot: FeedbackSlot) -> Any:
    """The guard's message; with an agent that rewrites blocked calls, the placeholder call is
    handed to it and the model is told its call now stands rewritten."""
    ledger = slot.ledger
    if ledger is None or not call.decision.forbidden:
        return call.decision.message
    placeholder = guard.placeholder_call(spec, arguments)
    if placeholder is None or not isinstance(placeholder.arguments, dict):
        return call.decision.message
    ledger.add(spec.name, arguments, placeholder)
    record_rewrite(call.span, placeholder, "smolagents-memory")
    return placeholder.rewrite_message()


def _guarded_forward(
    original: Callable[..., Any], inputs: dict[str, Any], spec: ToolSpec, guard: Guard,
    slot: FeedbackSlot,
) -> Callable[..., Any]:
    def forward(*args: Any, **kwargs: Any) -> Any:
        bound = bind_call(inputs, args, kwargs)
        with guard.intercept(spec, bound.arguments, call_id=current_call_id()) as call:
            if call.decision.blocked:
                return _refusal(guard, spec, bound.arguments, call, slot)
            new_args, new_kwargs = bound.call_args(call.arguments)
            return call.check_result(original(*new_args, **new_kwargs))

    try:
        forward.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    except (TypeError, ValueError):  # builtins without a signature: keep the generic one
        pass
    forward.__doc__ = getattr(original, "__doc__", None)
    return forward


def guard_tool(
    tool: Any,
    *,
    purpose: str,
    sink: Sink = "external",
    free_text: Iterable[str] = (),
    guard: Guard,
    name: str | None = None,
) -> Any:
    """A copy of the smolagents ``tool`` that routes every call through ``guard``.

    Keeps ``name`` (unless ``name=`` renames it), ``description``, ``inputs`` and ``output_type``;
    registers a :class:`~tpguard.ToolSpec` (input schema from ``tool.inputs``) on the guard. The
    original tool is left untouched. Mode behaviour: ``audit`` passes everything, ``enforce``
    returns the guard's refusal message instead of calling the tool, ``redact`` calls the tool with
    the rewritten arguments. With an acquisition scope (``ToolSpec.scope`` or
    ``guard.session(scopes=...)``), ``enforce``/``redact`` narrow the request first, and the tool's
    output passes :meth:`~tpguard.Guard.check_result` — filtered in ``redact``, replaced by the
    guard's message when ``enforce`` withholds it — before the agent (either kind, generated code
    included) sees it. One ``execute_tool`` span per call (with ``gen_ai.tool.call.id`` when
    :class:`SmolagentsInstrumentor` is active and the agent provides an id).

    Also installs context propagation into ``CodeAgent``'s code-execution thread (see
    :func:`~tpguard.adapters._smolagents_context.propagate_context`), so ``guard.session(...)``
    around ``agent.run(...)`` reaches the tools. Not covered: remote executors (docker, e2b, modal,
    blaxel, wasm …), which rebuild tools from source inside a sandbox.
    """
    from smolagents import Tool

    if not isinstance(tool, Tool):
        raise TypeError(f"guard_tool takes a smolagents Tool (got {type(tool).__name__})")
    if not isinstance(guard, Guard):
        raise TypeError("guard_tool(guard=...) takes a tpguard.Guard")
    spec = guard.add_tool(spec_for_tool(tool, purpose=purpose, sink=sink, free_text=free_text,
                                        name=name))
    guarded = copy.copy(tool)
    original = tool.__dict__.get(_ORIGINAL_ATTR) or guarded.forward  # re-guarding wraps the tool
    if name is not None:
        guarded.name = name
    slot = FeedbackSlot()
    guarded.forward = _guarded_forward(original, dict(tool.inputs), spec, guard, slot)
    setattr(guarded, _ORIGINAL_ATTR, original)
    setattr(guarded, FEEDBACK_ATTR, slot)
    setattr(guarded, GUARDED_ATTR, spec)
    propagate_context(pin=True)
    return guarded
