"""``ScriptedChatModel``: a real LangChain chat model that plays a script, for offline tests.

    from tpguard.testing.langchain import ScriptedChatModel

    model = ScriptedChatModel(turns=[
        [{"name": "notify_patient", "args": {"phone": "415-555-0199", "message": "Ready"}}],
        "Done.",                                   # a final answer ends the run
    ])
    agent = create_agent(model, tools=[...])

Each turn is a list of tool calls (``{"name", "args", "id"?}``; several calls in one turn run as
parallel tool calls), a final-answer string, or an ``AIMessage``. Instead of a list, ``turns`` may be
a callable ``(messages) -> turn`` that decides the next turn from the conversation so far (e.g. to
retry after an error ``ToolMessage``). ``seen`` records the messages of every model call.
Unlike LangChain's fake chat models it implements ``bind_tools``, so ``create_agent`` accepts it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Union

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

__all__ = ["ScriptedChatModel", "Turn"]

#: One model turn: tool calls, a final answer, or a ready-made message.
Turn = Union[Sequence[dict[str, Any]], str, AIMessage]  # noqa: UP007  (runtime alias, py3.10)


class ScriptedChatModel(BaseChatModel):
    """A chat model whose replies come from ``turns`` (a list, or a callable deciding each turn)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    turns: list[Any] | Callable[[list[BaseMessage]], Any] = Field(default_factory=list)
    """The script: a list of turns, or ``(messages) -> turn``."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of every call, in call order (shared with the bound copies)."""

    bound_tools: list[str] = Field(default_factory=list)
    """Names of the tools passed to the last ``bind_tools`` call."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _position: int = PrivateAttr(default=0)

    def __init__(self, turns: Any = None, **kwargs: Any) -> None:
        if turns is not None:
            kwargs["turns"] = turns if callable(turns) else list(turns)
        super().__init__(**kwargs)

    @property
    def _llm_type(self) -> str:
        return "tpguard-scripted"

    @property
    def calls(self) -> int:
        """How many times the model was called."""
        return len(self.seen)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Accept any tools (the script already knows what to call); returns the model itself."""
        self.bound_tools = [_tool_name(t) for t in tools]
        return self

    def _next_turn(self, messages: list[BaseMessage]) -> AIMessage:
        with self._lock:
            self.seen.append(list(messages))
            position = self._position
            self._position += 1
        if callable(self.turns):
            turn = self.turns(list(messages))
        elif position < len(self.turns):
            turn = self.turns[position]
        else:
            raise ValueError(
                f"ScriptedChatModel ran out of turns: call {position + 1} but the script has "
                f"{len(self.turns)}; end the script with a final-answer string"
            )
        return _to_message(turn, position)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next_turn(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next_turn(messages))])


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        fn = tool.get("function", tool)
        return str(fn.get("name", "?"))
    return str(getattr(tool, "name", getattr(tool, "__name__", "?")))


def _to_message(turn: Any, position: int) -> AIMessage:
    if isinstance(turn, AIMessage):
        return turn
    if isinstance(turn, str):
        return AIMessage(content=turn)
    if isinstance(turn, Sequence):
        calls = [_to_call(c, position, i) for i, c in enumerate(turn)]
        return AIMessage(content="", tool_calls=calls)
    raise TypeError(
        f"a ScriptedChatModel turn is a list of tool calls, a string or an AIMessage "
        f"(got {type(turn).__name__})"
    )


def _to_call(call: Any, position: int, index: int) -> ToolCall:
    if not isinstance(call, dict) or "name" not in call:
        raise TypeError("a scripted tool call is a dict with 'name', 'args' and optionally 'id'")
    return ToolCall(
        name=call["name"],
        args=dict(call.get("args") or {}),
        id=call.get("id") or f"call_{position + 1}_{index + 1}",
        type="tool_call",
    )
