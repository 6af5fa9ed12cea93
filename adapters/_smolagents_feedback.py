"""``rewrite_blocked_calls``: feedback a smolagents ``ToolCallingAgent`` can act on after a block.

Issue 31 (:mod:`tpguard.stages.feedback`): a guarded tool's refusal is the observation of the blocked
call, and the agent's memory still holds that call — withheld value included — as the model's own
last turn, which a small model then copies. With this installed, a tool wrapped by
:func:`~._smolagents_tool.guard_tool` that blocks a call for a forbidden atom

1. notes the call's value-free placeholder form (:meth:`Guard.placeholder_call`) in the agent's
   :class:`BlockedCalls`, records a ``tpguard.call_rewritten`` event on the call's span, and
   answers with one sentence saying which parts were replaced and to send the call again as it
   now stands;
2. at the end of the step, a step callback rewrites that call in the step's memory — the
   ``ToolCall`` the next prompt shows as "Calling tools", the model's own tool-call message, and
   its text output — so the withheld value leaves the agent's memory and the model's own last
   call is one the guard allows.

With ``compact=True`` (the default) one step more: once the model has resent the placeholder call and it went
through, the blocked step (the rewritten call and its refusal) is dropped from memory, so the
model reads on from a history like the one ``redact`` would have left — one call, its result.
Only a step that made that one call is dropped; the span keeps the refusal
(``tpguard.call_rewritten``) and the agent's own log keeps the step. Why the default: with the
blocked step left in memory Qwen2.5-Coder-1.5B saw its call twice after the resend and sent it
again until the repeated-call stop, or stopped early; on the six cases of docs/real-models.md
compaction took ``enforce`` from 0 to 73 % of ``off``'s TaskSuccess. ``compact=False`` keeps it.

``ToolCallingAgent`` only: a ``CodeAgent``'s memory holds code, which is not rewritten. Guarded
tools shared by several agents report to the agent installed last.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._rewrite import changed_leaves, placed_arguments, rewrite_text

if TYPE_CHECKING:
    from tpguard.stages.feedback import PlaceholderCall

__all__ = ["FEEDBACK_ATTR", "BlockedCalls", "FeedbackSlot", "rewrite_blocked_calls"]

#: Instance attribute of a guarded tool holding its :class:`FeedbackSlot`.
FEEDBACK_ATTR = "__tpguard_feedback__"


def _key(tool: str, arguments: Any) -> str:
    return json.dumps([tool, arguments], sort_keys=True, default=str)


class BlockedCalls:
    """Blocked calls of one agent awaiting their rewrite in memory (bounded: the oldest go)."""

    def __init__(self, limit: int = 64) -> None:
        self._lock = threading.Lock()
        self._calls: OrderedDict[str, PlaceholderCall] = OrderedDict()
        self._limit = limit

    def add(self, tool: str, arguments: Any, placeholder: PlaceholderCall) -> None:
        with self._lock:
            self._calls[_key(tool, arguments)] = placeholder
            while len(self._calls) > self._limit:
                self._calls.popitem(last=False)

    def pop(self, tool: str, arguments: Any) -> PlaceholderCall | None:
        with self._lock:
            return self._calls.pop(_key(tool, arguments), None)

    def __len__(self) -> int:
        return len(self._calls)


@dataclass(slots=True)
class FeedbackSlot:
    """Where a guarded tool reports its blocked calls (``None``: no agent rewrites them)."""

    ledger: BlockedCalls | None = field(default=None)


def rewrite_blocked_calls(agent: Any, *, compact: bool = True) -> Any:
    """Install the rewrite on ``agent`` (a ``ToolCallingAgent``) for every tool of it wrapped by
    ``guard_tool`` / ``@purpose_bound``; ``compact``: also drop a blocked step from memory once its
    placeholder call has gone through (module docstring). Idempotent; returns the agent."""
    from smolagents import ToolCallingAgent
    from smolagents.memory import ActionStep

    if not isinstance(agent, ToolCallingAgent):
        raise TypeError(f"rewrite_blocked_calls takes a smolagents ToolCallingAgent (got "
                        f"{type(agent).__name__}): a CodeAgent's memory holds code, not calls")
    ledger = getattr(agent, FEEDBACK_ATTR, None)
    if ledger is None:
        ledger = BlockedCalls()
        setattr(agent, FEEDBACK_ATTR, ledger)
        agent.step_callbacks.register(ActionStep, _rewrite_step(ledger, compact))
    for tool in getattr(agent, "tools", {}).values():
        slot = getattr(tool, "__dict__", {}).get(FEEDBACK_ATTR)
        if isinstance(slot, FeedbackSlot):
            slot.ledger = ledger
    return agent


def _rewrite_step(ledger: BlockedCalls, compact: bool) -> Any:
    #: blocked one-call steps awaiting their resend, by the placeholder call (bounded, oldest go)
    awaiting: OrderedDict[str, Any] = OrderedDict()

    def rewrite(step: Any, agent: Any = None) -> None:
        if not step.tool_calls:
            return
        rewritten: dict[str, Any] = {}
        pairs: list[tuple[str, str]] = []
        for call in step.tool_calls:
            placeholder = ledger.pop(call.name, call.arguments) if len(ledger) else None
            if placeholder is None or not isinstance(call.arguments, dict):
                continue
            new = placed_arguments(call.arguments, call.arguments, placeholder.arguments)
            pairs.extend(changed_leaves(call.arguments, new))
            call.arguments = rewritten[call.id] = new
        if rewritten:
            _rewrite_message(step, rewritten, pairs)
        if compact and agent is not None:
            _compact(step, rewritten, awaiting, agent)

    return rewrite


def _compact(step: Any, rewritten: dict[str, Any], awaiting: OrderedDict[str, Any],
             agent: Any) -> None:
    """Drop the blocked step whose placeholder call this step resent and got through; note this
    step if it is a blocked one-call step. A step that failed (``step.error``) drops nothing."""
    if step.error is None:
        for call in step.tool_calls:
            if call.id in rewritten:
                continue
            blocked = awaiting.pop(_key(call.name, call.arguments), None)
            if blocked is not None:
                steps = agent.memory.steps
                keep = [s for s in steps if s is not blocked]
                if len(keep) < len(steps):
                    steps[:] = keep
    if len(step.tool_calls) == 1 and step.tool_calls[0].id in rewritten:
        call = step.tool_calls[0]
        awaiting[_key(call.name, call.arguments)] = step
        while len(awaiting) > 64:
            awaiting.popitem(last=False)


def _rewrite_message(step: Any, rewritten: dict[str, Any], pairs: list[tuple[str, str]]) -> None:
    """The model's own reply in the step: its tool calls and its text."""
    message = step.model_output_message
    for call in (getattr(message, "tool_calls", None) or ()):
        new = rewritten.get(call.id)
        if new is not None:
            call.function.arguments = new if not isinstance(call.function.arguments, str) else json.dumps(new)
    if isinstance(getattr(message, "content", None), str):
        message.content = rewrite_text(message.content, pairs)
    if isinstance(step.model_output, str):
        step.model_output = rewrite_text(step.model_output, pairs)
    elif isinstance(step.model_output, list):
        step.model_output = [{**b, "text": rewrite_text(b["text"], pairs)}
                             if isinstance(b, dict) and isinstance(b.get("text"), str) else b
                             for b in step.model_output]
