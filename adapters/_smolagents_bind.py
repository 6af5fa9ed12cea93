"""Binding a smolagents tool call to named arguments, and a tool's :class:`ToolSpec`.

Generated code in a ``CodeAgent`` may call ``team_handoff("RX-1", "summary …")``: positional
arguments are bound by the order of the tool's ``inputs`` (which smolagents checks against the
``forward`` signature), so the guard always sees ``{"pickup_id": …, "summary": …}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tpguard.policy import Sink, ToolSpec

__all__ = ["BoundCall", "bind_call", "input_schema", "spec_for_tool"]

#: Key under which positional arguments beyond the declared inputs are checked.
EXTRA_POSITIONAL = "_args"


@dataclass(frozen=True, slots=True)
class BoundCall:
    """Named arguments of one call, and how to call ``forward`` again with (rewritten) values."""

    arguments: dict[str, Any]
    positional: tuple[str, ...]  # names that were passed positionally, in order

    def call_args(self, arguments: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        rest = dict(arguments)
        args = [rest.pop(name) for name in self.positional]
        args.extend(rest.pop(EXTRA_POSITIONAL, ()))
        return tuple(args), rest


def bind_call(
    inputs: Mapping[str, Any], args: tuple[Any, ...], kwargs: Mapping[str, Any], *,
    unpack_dict: bool = False,
) -> BoundCall:
    """Name ``args`` by ``inputs`` order; raise ``TypeError`` as Python would on a duplicate.

    ``unpack_dict`` mirrors ``Tool.__call__``, which treats a single dict argument whose keys are
    all inputs as the keyword arguments (``forward`` never sees that form).
    """
    names = list(inputs)
    if unpack_dict and len(args) == 1 and not kwargs and isinstance(args[0], dict) and all(
        k in inputs for k in args[0]
    ):
        return BoundCall(dict(args[0]), ())
    positional = tuple(names[: len(args)])
    arguments: dict[str, Any] = dict(zip(positional, args, strict=False))
    if len(args) > len(names):
        arguments[EXTRA_POSITIONAL] = list(args[len(names):])
    for key, value in kwargs.items():
        if key in arguments:
            raise TypeError(f"got multiple values for argument {key!r}")
        arguments[key] = value
    return BoundCall(arguments, positional)


def input_schema(inputs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A JSON schema from smolagents ``inputs`` (types are already JSON-schema type names)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, spec in inputs.items():
        prop = {k: v for k, v in spec.items() if k in ("type", "description", "enum", "items")}
        if spec.get("nullable"):
            prop["nullable"] = True
        else:
            required.append(name)
        properties[name] = prop
    return {"type": "object", "properties": properties, "required": required}


def spec_for_tool(
    tool: Any, *, purpose: str = "", sink: Sink = "external", free_text: Iterable[str] = (),
    name: str | None = None,
) -> ToolSpec:
    """The :class:`ToolSpec` of a smolagents ``Tool`` (name, description, inputs as schema)."""
    inputs = getattr(tool, "inputs", None) or {}
    return ToolSpec(
        name=name or tool.name, purpose=purpose, sink=sink, free_text=tuple(free_text),
        input_schema=input_schema(inputs), description=str(getattr(tool, "description", "") or ""),
    )
