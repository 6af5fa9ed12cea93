"""The exit stage for LangChain (issue 11): what the model says to the requester, through
:meth:`Guard.check_exit` on channel ``final_response``.

:class:`~tpguard.adapters.langchain.PurposeBoundMiddleware` (``exits=True``) calls
:func:`guarded_response` from its ``wrap_model_call`` hook — *inside* the model node, so the
unguarded text never enters the agent's state, its checkpoints or a stream of state updates. Every
``AIMessage`` the model returns has its text content checked (the final answer, and the text a
UI shows next to tool calls); its tool calls are not (they are the request stage's). ``audit``
records; ``redact`` rewrites the content (a string, or each text block) with placeholders;
``enforce`` replaces the content with the guard's value-free refusal. The message keeps its id,
tool calls and metadata.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from langchain.agents.middleware import ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM

from tpguard.guard import Decision, Guard

__all__ = ["CHANNEL", "guarded_response", "unstreamed"]

CHANNEL = "final_response"


@contextmanager
def unstreamed() -> Iterator[None]:
    """The model call inside runs tagged ``nostream``: LangGraph's ``messages`` stream does not
    relay its tokens (nor, for a model that does not stream, its message at ``on_llm_end``) — it
    relays the model node's output instead, which is the guarded message."""
    config = var_child_runnable_config.get() or {}
    tags = [*(config.get("tags") or ()), TAG_NOSTREAM]
    token = var_child_runnable_config.set({**config, "tags": tags})
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def guarded_response(guard: Guard, recipient: str | None, response: Any) -> Any:
    """The model's response with each ``AIMessage``'s text content through the exit stage."""
    if isinstance(response, AIMessage):
        return _guarded(guard, recipient, response)
    if isinstance(response, ExtendedModelResponse):
        inner = guarded_response(guard, recipient, response.model_response)
        return ExtendedModelResponse(model_response=inner, command=response.command)
    if isinstance(response, ModelResponse):
        messages = [_guarded(guard, recipient, m) for m in response.result]
        if all(a is b for a, b in zip(messages, response.result, strict=True)):
            return response
        return ModelResponse(result=messages, structured_response=response.structured_response)
    return response


def _guarded(guard: Guard, recipient: str | None, message: BaseMessage) -> BaseMessage:
    if not isinstance(message, AIMessage):
        return message
    content = message.content
    if isinstance(content, str):
        if not content:
            return message
        decision = guard.check_exit(CHANNEL, recipient, content)
        new: Any = _shown(decision)
    else:  # a list of blocks: the text blocks are one payload (one decision, one span)
        texts = [b if isinstance(b, str) else b["text"] for b in content if _is_text(b)]
        if not texts:
            return message
        decision = guard.check_exit(CHANNEL, recipient, texts)
        if decision.blocked:
            new = decision.message or ""
        elif decision.redacted:
            rewritten = iter(decision.payload)
            new = [_retext(b, next(rewritten)) if _is_text(b) else b for b in content]
        else:
            return message
    if decision.action == "allow":
        return message
    return message.model_copy(update={"content": new})


def _shown(decision: Decision) -> Any:
    """What the requester sees: the payload, or the refusal when it was withheld."""
    return decision.message if decision.blocked else decision.payload


def _is_text(block: Any) -> bool:
    return isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text"
                                      and isinstance(block.get("text"), str))


def _retext(block: Any, text: str) -> Any:
    return text if isinstance(block, str) else {**block, "text": text}
