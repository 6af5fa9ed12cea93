"""What of a LangChain tool call the guard may look at, and the tool's :class:`ToolSpec`.

LangChain hands tools more than the model wrote: injected arguments (``ToolRuntime``,
``InjectedState``, ``InjectedStore``, ``InjectedToolCallId``), the run manager, callbacks and the
``RunnableConfig``. Those are the framework's, not the model's: they are dropped before scanning
(so graph state is never mistaken for a disclosure) and before anything is recorded on a span.
"""

from __future__ import annotations

import functools
import logging
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackManager, BaseRunManager
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from tpguard.policy import Sink, ToolSpec

__all__ = ["as_spec", "config_params", "injected_keys", "model_arguments", "spec_for_tool",
           "tool_schema"]

_log = logging.getLogger("tpguard")
_ALWAYS_DROPPED = frozenset({"run_manager", "callbacks"})


def _runtime_types() -> tuple[type, ...]:
    types: list[type] = [BaseCallbackManager, BaseRunManager]
    try:
        from langgraph.prebuilt import ToolRuntime
        from langgraph.store.base import BaseStore

        types += [ToolRuntime, BaseStore]
    except ImportError:  # plain langchain-core: no graph runtime to inject
        pass
    return tuple(types)


_RUNTIME_TYPES = _runtime_types()


def injected_keys(tool: BaseTool | None) -> frozenset[str]:
    """Names LangChain fills in for ``tool`` (compute once per tool: it inspects signatures)."""
    if tool is None:
        return frozenset()
    try:
        # ``_filter_injected_args`` is how LangChain itself strips injected arguments from
        # callback inputs: FILTERED_ARGS + the signature's and args_schema's injected names.
        probe = dict.fromkeys(_candidate_names(tool))
        kept = tool._filter_injected_args(probe)
        return frozenset(probe) - frozenset(kept)
    except Exception as e:  # an exotic tool: fall back to the value-type filter only
        _log.debug("tpguard: could not list injected arguments (%s)", type(e).__qualname__)
        return frozenset()


def _candidate_names(tool: BaseTool) -> set[str]:
    names: set[str] = set(_ALWAYS_DROPPED)
    try:
        names |= set(tool._injected_args_keys)
    except Exception:
        pass
    schema = tool.args_schema
    if isinstance(schema, type) and hasattr(schema, "model_fields"):
        names |= set(schema.model_fields)
    elif isinstance(schema, Mapping):
        names |= set(schema.get("properties", {}))
    return names


def model_arguments(
    tool: BaseTool | None, arguments: Mapping[str, Any], drop: Iterable[str] | None = None
) -> dict[str, Any]:
    """The arguments the model controls: injected ones, run managers and configs removed.

    ``drop`` — precomputed names to remove (``injected_keys(tool)`` plus config parameters);
    without it they are computed from ``tool`` now.
    """
    dropped = _ALWAYS_DROPPED | (frozenset(drop) if drop is not None else injected_keys(tool))
    return {
        k: v for k, v in arguments.items()
        if k not in dropped and not isinstance(v, _RUNTIME_TYPES)
    }


@functools.lru_cache(maxsize=1024)
def config_params(fn: Callable[..., Any]) -> frozenset[str]:
    """Names of ``fn``'s parameters annotated ``RunnableConfig`` (LangChain fills them in)."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return frozenset()
    return frozenset(k for k, v in hints.items() if v is RunnableConfig)


def tool_schema(tool: BaseTool) -> dict[str, Any] | None:
    """The JSON schema of the arguments the model sees (injected arguments excluded)."""
    try:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        params = convert_to_openai_tool(tool)["function"].get("parameters")
        return dict(params) if isinstance(params, Mapping) else None
    except Exception as e:
        _log.debug("tpguard: no JSON schema for tool %s (%s)", tool.name, type(e).__qualname__)
        return None


def spec_for_tool(
    tool: BaseTool, *, purpose: str, sink: Sink, free_text: Iterable[str], name: str | None = None
) -> ToolSpec:
    """A :class:`ToolSpec` for a LangChain tool: its name, description and JSON schema."""
    return ToolSpec(
        name=name or tool.name, purpose=purpose, sink=sink, free_text=tuple(free_text),
        input_schema=tool_schema(tool), description=tool.description or "",
    )


def as_spec(name: str, value: ToolSpec | Mapping[str, Any]) -> ToolSpec:
    """``tools={name: ToolSpec | dict}`` entries as specs (a dict may omit ``name``)."""
    if isinstance(value, ToolSpec):
        return value
    if isinstance(value, Mapping):
        return ToolSpec.model_validate({"name": name, **value})
    raise TypeError(f"tools[{name!r}] must be a ToolSpec or a dict (got {type(value).__name__})")
