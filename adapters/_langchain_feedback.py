"""The middleware's feedback after a block, on the conversation (issue 31; :mod:`tpguard.stages.feedback`).

:func:`feedback_update` is what ``PurposeBoundMiddleware.before_model`` returns:

* **rewrite** — the ``AIMessage`` whose calls were refused with a placeholder call, rewritten to
  that call (same id, so the state's ``add_messages`` replaces it): its ``tool_calls``, its text and
  the provider's raw calls;
* **compact** (``compact_after_resend=True``) — once the model resent that placeholder call and it
  went through, the blocked turn (its one-call ``AIMessage`` and the refusal) is removed
  (``RemoveMessage``), so the model reads on from the history ``redact`` would have left. A turn
  with other calls beside the blocked one is kept whole.

Only the last two model turns are read: older ones were handled before the model saw them.

:func:`continue_prompt` is what ``PurposeBoundMiddleware.wrap_model_call`` adds to the model's
request (not to the state) when the conversation ends on a turn whose calls the guard withheld:
one user turn (:func:`tpguard.stages.feedback.continue_message`) asking the model to resend them and go on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)

from tpguard.stages.feedback import continue_message

from ._rewrite import changed_leaves, rewrite_text

__all__ = ["REWRITE_ARTIFACT", "WITHHELD", "continue_prompt", "feedback_update"]

#: key of a refusal ``ToolMessage``'s artifact holding the blocked call's placeholder arguments
REWRITE_ARTIFACT = "tpguard_rewrite"
#: ``response_metadata`` key marking a ``ToolMessage`` that answers a call the guard withheld
WITHHELD = "tpguard_withheld"


def feedback_update(messages: Sequence[Any], *, compact: bool = False) -> dict[str, Any] | None:
    """The state update after a block (module docstring), or ``None`` when nothing changes."""
    last, turn, before = _turn(messages, len(messages))
    update: list[BaseMessage] = []
    if last is not None:
        rewritten = _rewrite_ai(last, _placeholders(turn)) if turn else None
        if rewritten is not None:
            update.append(rewritten)
        elif compact:
            update.extend(_compacted(last, turn, messages, before))
    return {"messages": update} if update else None


def continue_prompt(messages: Sequence[Any]) -> HumanMessage | None:
    """The user turn to add when ``messages`` end on the tool messages of a model turn and the
    guard withheld some of its calls; else ``None``. O(messages of the last turn)."""
    if not messages or not isinstance(messages[-1], ToolMessage):
        return None
    last, turn, _ = _turn(messages, len(messages))
    withheld = [m.name or "" for m in reversed(turn) if m.response_metadata.get(WITHHELD)]
    if last is None or not withheld:
        return None
    return HumanMessage(continue_message(withheld))


def _turn(messages: Sequence[Any], end: int) -> tuple[AIMessage | None, list[ToolMessage], int]:
    """The last ``AIMessage`` before ``end``, the tool messages after it, and its index."""
    tools: list[ToolMessage] = []
    for i in range(end - 1, -1, -1):
        m = messages[i]
        if isinstance(m, AIMessage):
            return m, tools, i
        if isinstance(m, ToolMessage):
            tools.append(m)
    return None, tools, -1


def _placeholders(tools: list[ToolMessage]) -> dict[str, dict[str, Any]]:
    """Placeholder arguments by tool call id, from the refusals among ``tools``."""
    found: dict[str, dict[str, Any]] = {}
    for m in tools:
        args = m.artifact.get(REWRITE_ARTIFACT) if isinstance(m.artifact, Mapping) else None
        if isinstance(args, Mapping) and m.tool_call_id:
            found[m.tool_call_id] = dict(args)
    return found


def _compacted(last: AIMessage, turn: list[ToolMessage], messages: Sequence[Any],
               before: int) -> list[BaseMessage]:
    """``RemoveMessage``s for the previous turn when it was one refused call that ``last``
    resent and that went through."""
    prev, refusals, _ = _turn(messages, before)
    if prev is None or len(prev.tool_calls) != 1 or len(refusals) != 1 or not prev.id:
        return []
    blocked, refusal = prev.tool_calls[0], refusals[0]
    placeholder = _placeholders(refusals).get(blocked.get("id") or "")
    if placeholder is None or not refusal.id:
        return []
    ok = {m.tool_call_id for m in turn if m.status != "error"}
    resent = any(tc.get("name") == blocked.get("name") and tc.get("args") == placeholder
                 and tc.get("id") in ok for tc in last.tool_calls)
    return [RemoveMessage(id=prev.id), RemoveMessage(id=refusal.id)] if resent else []


def _rewrite_ai(ai: AIMessage, rewrites: Mapping[str, dict[str, Any]]) -> AnyMessage | None:
    pairs: list[tuple[str, str]] = []
    calls = []
    for tc in ai.tool_calls:
        args = rewrites.get(tc.get("id") or "")
        if args is not None and args != tc.get("args"):
            pairs.extend(changed_leaves(tc.get("args"), args))
            tc = {**tc, "args": args}
        calls.append(tc)
    if not pairs:
        return None
    content: Any = ai.content
    if isinstance(content, str):
        content = rewrite_text(content, pairs)
    elif isinstance(content, list):
        content = [_rewrite_block(b, pairs, rewrites) for b in content]
    extra = dict(ai.additional_kwargs)
    if isinstance(extra.get("tool_calls"), list):  # the provider's raw calls (OpenAI wire form)
        extra["tool_calls"] = [_rewrite_raw(c, rewrites) for c in extra["tool_calls"]]
    extra.pop("function_call", None)
    return ai.model_copy(update={"tool_calls": calls, "content": content, "additional_kwargs": extra})


def _rewrite_block(block: Any, pairs: list[tuple[str, str]], rewrites: Mapping[str, Any]) -> Any:
    if isinstance(block, str):
        return rewrite_text(block, pairs)
    if not isinstance(block, Mapping):
        return block
    if block.get("id") in rewrites and "input" in block:  # a provider's tool_use block
        return {**block, "input": rewrites[block["id"]]}
    if isinstance(block.get("text"), str):
        return {**block, "text": rewrite_text(block["text"], pairs)}
    return block


def _rewrite_raw(raw: Any, rewrites: Mapping[str, Any]) -> Any:
    if not isinstance(raw, Mapping) or raw.get("id") not in rewrites:
        return raw
    function = dict(raw.get("function") or {})
    function["arguments"] = json.dumps(rewrites[raw["id"]])
    return {**raw, "function": function}
