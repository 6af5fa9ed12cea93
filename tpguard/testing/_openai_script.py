"""Scripted turns for the loopback OpenAI-compatible server: what the "model" answers next.

A turn is written loosely (from Python or a JSON script file) and normalised here:

* ``"text"``                                   — a final answer (``finish_reason: "stop"``);
* ``[{"name": ..., "arguments": {...}}, ...]`` — tool calls (``finish_reason: "tool_calls"``);
* ``{"content": "...", "tool_calls": [...]}``  — both at once;
* a :class:`ScriptedTurn` / :class:`ScriptedToolCall`.

A script is a sequence of turns (the n-th chat request gets the n-th turn) or a callable
``(request_json) -> turn`` that decides from the conversation so far.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "Script",
    "ScriptExhausted",
    "ScriptedToolCall",
    "ScriptedTurn",
    "TurnLike",
    "as_turn",
    "load_script",
]


@dataclass(frozen=True, slots=True)
class ScriptedToolCall:
    """One tool call the scripted model makes; ``arguments`` become the JSON string on the wire."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def arguments_json(self) -> str:
        return json.dumps(dict(self.arguments), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One assistant message: optional text and zero or more tool calls."""

    content: str | None = None
    tool_calls: tuple[ScriptedToolCall, ...] = ()

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


# Loosely typed on purpose: turns come from JSON files and test literals; as_turn() checks them.
TurnLike: TypeAlias = "ScriptedTurn | ScriptedToolCall | str | Sequence[Any] | Mapping[str, Any]"
Script: TypeAlias = "Sequence[Any] | Callable[[dict[str, Any]], Any]"


class ScriptExhausted(LookupError):
    """The client asked for more turns than the script holds."""


def _as_call(obj: Mapping[str, Any] | ScriptedToolCall) -> ScriptedToolCall:
    if isinstance(obj, ScriptedToolCall):
        return obj
    if not isinstance(obj, Mapping) or not isinstance(obj.get("name"), str):
        raise TypeError(f"a scripted tool call is {{'name': str, 'arguments': dict}}, got {obj!r}")
    args = obj.get("arguments", {})
    if isinstance(args, str):  # already JSON text, as the wire carries it
        args = json.loads(args)
    if not isinstance(args, Mapping):
        raise TypeError(f"tool call {obj['name']!r}: 'arguments' must be an object")
    return ScriptedToolCall(name=obj["name"], arguments=dict(args))


def _as_calls(objs: Iterable[Mapping[str, Any] | ScriptedToolCall]) -> tuple[ScriptedToolCall, ...]:
    return tuple(_as_call(o) for o in objs)


def as_turn(obj: Any) -> ScriptedTurn:
    """Normalise one loosely written turn (see the module docstring)."""
    if isinstance(obj, ScriptedTurn):
        return obj
    if isinstance(obj, str):
        return ScriptedTurn(content=obj)
    if isinstance(obj, ScriptedToolCall):
        return ScriptedTurn(tool_calls=(obj,))
    if isinstance(obj, Mapping):
        if "name" in obj:  # a single tool call written without the list
            return ScriptedTurn(tool_calls=(_as_call(obj),))
        content = obj.get("content")
        if content is not None and not isinstance(content, str):
            raise TypeError("a scripted turn's 'content' must be a string")
        turn = ScriptedTurn(content=content, tool_calls=_as_calls(obj.get("tool_calls") or ()))
    elif isinstance(obj, Sequence):
        turn = ScriptedTurn(tool_calls=_as_calls(obj))
    else:
        raise TypeError(f"cannot read a scripted turn from {type(obj).__name__}")
    if turn.content is None and not turn.tool_calls:
        raise ValueError("a scripted turn needs text or at least one tool call")
    return turn


class TurnSource:
    """Hands out the next turn for each chat request (thread-safety is the caller's)."""

    def __init__(self, script: Script) -> None:
        if not callable(script):
            if isinstance(script, str | bytes) or not isinstance(script, Sequence):
                raise TypeError("script must be a sequence of turns or a callable(request) -> turn")
            script = [as_turn(t) for t in script]  # fail at construction, not mid-run
        self._script = script
        self._next = 0

    @property
    def served(self) -> int:
        return self._next

    def next_turn(self, request: dict[str, Any]) -> ScriptedTurn:
        if callable(self._script):
            turn = as_turn(self._script(request))
        else:
            if self._next >= len(self._script):
                raise ScriptExhausted(
                    f"the script has {len(self._script)} turn(s) and request "
                    f"{self._next + 1} asked for another"
                )
            turn = as_turn(self._script[self._next])
        self._next += 1
        return turn


def load_script(path: str) -> list[ScriptedTurn]:
    """A JSON file holding a list of turns (each in any form :func:`as_turn` reads)."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of turns, got {type(data).__name__}")
    turns = []
    for i, item in enumerate(data):
        try:
            turns.append(as_turn(item))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: turn [{i}]: {exc}") from None
    return turns
