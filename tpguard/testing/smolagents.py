"""``ScriptedSmolModel``: a real ``smolagents.models.Model`` that plays a script, for offline tests.

::

    from tpguard.testing.smolagents import Code, ScriptedSmolModel

    model = ScriptedSmolModel([
        [{"name": "notify_patient", "arguments": {"message": "Your order is ready."}}],
        "Done.",                                     # final answer
    ])
    ToolCallingAgent(tools=[...], model=model).run("...")   # or CodeAgent(tools=[...], model=model)

A turn is one of:

* a list of tool calls ``{"name": ..., "arguments": {...}, "id": optional}`` — native tool calls
  for ``ToolCallingAgent``; for ``CodeAgent`` the same calls written as code
  (``r0 = notify_patient(message='...')`` then ``print(r0)``), so one script drives both agents;
* a string — the final answer (a ``final_answer`` tool call, or ``final_answer(...)`` in code);
* :class:`Code` (or a string starting with ``"code:"``) — a CodeAgent code action, verbatim;
* a ``ChatMessage`` — returned as is;
* a callable ``(messages) -> turn`` deciding from the conversation so far. ``messages`` is a list
  of ``{"role": str, "content": str}`` (text only).

The whole script may also be one callable. ``seen`` records every conversation the model was given
(same plain form), ``tools_offered`` the tool names of each call (empty for ``CodeAgent``).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)

__all__ = ["Code", "Message", "ScriptedSmolModel", "Turn", "message_text"]

Message = dict[str, str]


@dataclass(frozen=True)
class Code:
    """A CodeAgent action: ``source`` is the Python code, ``thought`` the text before it."""

    source: str
    thought: str = "Thought: I will run this code."


Turn: TypeAlias = "str | Code | ChatMessage | Sequence[Mapping[str, Any]]"
TurnFn: TypeAlias = "Callable[[list[Message]], Turn]"
_CODE_PREFIX = "code:"


def message_text(message: Any) -> str:
    """The text of a smolagents message (``ChatMessage`` or dict; content str or parts list)."""
    content = message.get("content") if isinstance(message, Mapping) else getattr(message, "content", None)
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "text":
            parts.append(str(part.get("text", "")))
    return "\n".join(parts)


def _role(message: Any) -> str:
    role = message.get("role") if isinstance(message, Mapping) else getattr(message, "role", "")
    return str(getattr(role, "value", role))


def _code_for_calls(calls: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for i, call in enumerate(calls):
        args = ", ".join(f"{k}={v!r}" for k, v in dict(call.get("arguments") or {}).items())
        if call["name"] == "final_answer":
            lines.append(f"final_answer({args})")
            continue
        lines += [f"r{i} = {call['name']}({args})", f"print(r{i})"]
    return "\n".join(lines)


class ScriptedSmolModel(Model):
    """A scripted model: ``ScriptedSmolModel(turns)`` or ``ScriptedSmolModel(callable)``."""

    def __init__(
        self,
        script: Sequence[Turn | TurnFn] | TurnFn,
        *,
        model_id: str = "tpguard-scripted",
        code_block_tags: tuple[str, str] = ("<code>", "</code>"),
    ) -> None:
        super().__init__(model_id=model_id)
        self._script = script
        self._code_tags = code_block_tags
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.turn = 0
        self.seen: list[list[Message]] = []
        self.tools_offered: list[tuple[str, ...]] = []

    def generate(
        self,
        messages: list[Any],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        plain = [{"role": _role(m), "content": message_text(m)} for m in messages]
        with self._lock:
            self.seen.append(plain)
            self.tools_offered.append(tuple(t.name for t in tools_to_call_from or ()))
            step = self._next_step()
        turn = step(plain) if callable(step) else step
        return self._render(turn, code_mode=tools_to_call_from is None)

    def _next_step(self) -> Turn | TurnFn:
        if callable(self._script):
            self.turn += 1
            return self._script
        if self.turn >= len(self._script):
            raise RuntimeError(f"ScriptedSmolModel: the script has no turn {self.turn + 1} "
                               f"(it has {len(self._script)})")
        step = self._script[self.turn]
        self.turn += 1
        return step

    def _render(self, turn: Turn, *, code_mode: bool) -> ChatMessage:
        if isinstance(turn, ChatMessage):
            return turn
        if isinstance(turn, str) and turn.startswith(_CODE_PREFIX):
            turn = Code(turn[len(_CODE_PREFIX):].strip())
        if isinstance(turn, Code):
            if not code_mode:
                raise ValueError("ScriptedSmolModel: a Code turn needs a CodeAgent")
            return self._code_message(turn)
        if isinstance(turn, str):
            if code_mode:
                return self._code_message(Code(f"final_answer({turn!r})", "Thought: I am done."))
            turn = [{"name": "final_answer", "arguments": {"answer": turn}}]
        calls = list(turn)
        if code_mode:
            return self._code_message(Code(_code_for_calls(calls)))
        tool_calls = [
            ChatMessageToolCall(
                function=ChatMessageToolCallFunction(name=c["name"], arguments=dict(c.get("arguments") or {})),
                id=str(c.get("id") or f"call_{next(self._ids)}"),
                type="function",
            )
            for c in calls
        ]
        content = json.dumps([{"name": c["name"], "arguments": c.get("arguments") or {}} for c in calls])
        return ChatMessage(role=MessageRole.ASSISTANT, content=content, tool_calls=tool_calls)

    def _code_message(self, code: Code) -> ChatMessage:
        opening, closing = self._code_tags
        text = f"{code.thought}\n{opening}\n{code.source}\n{closing}"
        return ChatMessage(role=MessageRole.ASSISTANT, content=text)
