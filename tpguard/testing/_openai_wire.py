"""The OpenAI chat-completions wire format: request checks, responses, stream chunks, errors.

Shapes follow the public OpenAI API reference for ``POST /v1/chat/completions`` (object
``chat.completion`` / ``chat.completion.chunk``) and its error envelope
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tpguard.testing._http import ApiError, error_body, sse

from ._openai_script import ScriptedTurn

__all__ = [
    "ROLES",
    "ApiError",
    "completion",
    "error_body",
    "message_text",
    "sse",
    "stream_chunks",
    "validate_chat_request",
]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


def message_text(message: dict[str, Any]) -> str:
    """The text of a message whose ``content`` is a string or a list of ``{"type": "text"}`` parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _check_message(i: int, msg: Any, open_calls: set[str]) -> set[str]:
    """Check one message; return the tool-call ids still awaiting a ``tool`` answer."""
    where = f"messages[{i}]"
    if not isinstance(msg, dict) or msg.get("role") not in ROLES:
        role = msg.get("role") if isinstance(msg, dict) else None
        raise ApiError(400, f"Invalid value for '{where}.role': {role!r}.", param=f"{where}.role",
                       code="invalid_value")
    role = msg["role"]
    if role == "tool":
        call_id = msg.get("tool_call_id")
        if call_id not in open_calls:
            raise ApiError(400, f"Invalid parameter: '{where}' with role 'tool' must be a response "
                           "to a preceding message with 'tool_calls'.", param=where)
        return open_calls - {call_id}
    if open_calls:
        raise ApiError(400, "An assistant message with 'tool_calls' must be followed by tool "
                       "messages responding to each 'tool_call_id'. The following tool_call_ids "
                       f"did not have response messages: {', '.join(sorted(open_calls))}",
                       param=where)
    if role == "assistant" and msg.get("tool_calls"):
        ids = set()
        for j, call in enumerate(msg["tool_calls"]):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not call.get("id"):
                raise ApiError(400, f"Invalid '{where}.tool_calls[{j}]'.", param=f"{where}.tool_calls")
            ids.add(str(call["id"]))
        return ids
    return set()


def validate_chat_request(body: Any) -> dict[str, Any]:
    """Reject what the real endpoint rejects: missing model/messages, unknown roles, unanswered or
    orphan tool calls, malformed tools. Returns the body unchanged."""
    if not isinstance(body, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise ApiError(400, "you must provide a model parameter", param="model", code="missing_required_parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "'messages' must be a non-empty array.", param="messages")
    open_calls: set[str] = set()
    for i, msg in enumerate(messages):
        open_calls = _check_message(i, msg, open_calls)
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise ApiError(400, "'tools' must be an array.", param="tools")
        for j, tool in enumerate(tools):
            fn = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(fn, dict) or tool.get("type") != "function" or not fn.get("name"):
                raise ApiError(400, f"Invalid 'tools[{j}]': expected a function tool with a name.",
                               param=f"tools[{j}]")
    return body


def _usage(request: dict[str, Any], turn: ScriptedTurn) -> dict[str, int]:
    """Deterministic token counts (≈ four characters a token) so clients that read usage work."""
    prompt = sum(len(message_text(m)) for m in request["messages"]) // 4 + 1
    out = len(turn.content or "") + sum(len(c.name) + len(c.arguments_json()) for c in turn.tool_calls)
    completion_tokens = out // 4 + 1
    return {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens}


def _wire_calls(turn: ScriptedTurn, ids: list[str]) -> list[dict[str, Any]]:
    return [{"id": cid, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}}
            for cid, c in zip(ids, turn.tool_calls, strict=True)]


def completion(request: dict[str, Any], turn: ScriptedTurn, ids: list[str], *, rid: str,
               created: int) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.content, "refusal": None}
    if turn.tool_calls:
        message["tool_calls"] = _wire_calls(turn, ids)
    return {
        "id": rid, "object": "chat.completion", "created": created, "model": request["model"],
        "system_fingerprint": None,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": turn.finish_reason}],
        "usage": _usage(request, turn),
    }


def _halves(text: str) -> list[str]:
    """Split text in two so clients must really accumulate deltas."""
    cut = len(text) // 2
    return [p for p in (text[:cut], text[cut:]) if p]


def stream_chunks(request: dict[str, Any], turn: ScriptedTurn, ids: list[str], *, rid: str,
                  created: int) -> Iterator[dict[str, Any]]:
    """``chat.completion.chunk`` objects for ``"stream": true``: role, content deltas, one tool
    call header then its arguments in pieces, the finish reason, and usage when
    ``stream_options.include_usage`` asks for it."""
    include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
    base = {"id": rid, "object": "chat.completion.chunk", "created": created,
            "model": request["model"], "system_fingerprint": None}
    extra = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                     "finish_reason": finish}], **extra}

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in _halves(turn.content or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(_wire_calls(turn, ids)):
        fn = call["function"]
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": fn["name"], "arguments": ""}}]})
        for piece in _halves(fn["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, turn.finish_reason)
    if include_usage:
        yield {**base, "choices": [], "usage": _usage(request, turn)}

