"""``@purpose_bound``: one decorator for LangChain tools, smolagents tools and plain callables.

It dispatches on what it wraps and imports a framework only when that framework's object is passed
(so ``import tpguard`` needs no framework installed).
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar

from .errors import GuardViolation
from .guard import Guard
from .policy.kb import Sink, ToolSpec

__all__ = ["purpose_bound", "spec_for_callable"]

F = TypeVar("F", bound=Callable[..., Any])
OnBlock = Literal["raise", "return"]


def _is_instance(obj: Any, module: str, qualname: str) -> bool:
    mod = sys.modules.get(module)
    cls = getattr(mod, qualname, None) if mod is not None else None
    return isinstance(cls, type) and isinstance(obj, cls)


def purpose_bound(
    target: Any = None,
    *,
    purpose: str,
    sink: Sink = "external",
    free_text: Iterable[str] = (),
    guard: Guard,
    name: str | None = None,
    on_block: OnBlock = "raise",
) -> Any:
    """Bind a tool to its purpose and route every call through ``guard``.

    Use as ``@purpose_bound(purpose=..., sink=..., free_text=[...], guard=g)`` above a plain
    function (sync or async), a LangChain tool or a smolagents tool, or call it with the tool as
    first argument. The result keeps the tool's name, description and signature/args schema.

    For plain callables a blocked call raises :class:`GuardViolation` (``on_block="raise"``) or
    returns the guard's message as the result (``on_block="return"``). What the function returns
    passes :meth:`Guard.check_result` (the acquisition stage): filtered in ``redact``, replaced by
    the guard's message when withheld, unchanged otherwise.
    """
    options: dict[str, Any] = {"purpose": purpose, "sink": sink, "free_text": tuple(free_text), "guard": guard,
               "name": name}
    if not isinstance(guard, Guard):
        raise TypeError("purpose_bound(guard=...) takes a tpguard.Guard")

    def wrap(obj: Any) -> Any:
        if _is_instance(obj, "langchain_core.tools", "BaseTool"):
            from tpguard.adapters.langchain import guard_tool as lc_guard_tool

            return lc_guard_tool(obj, **options)
        if _is_instance(obj, "smolagents.tools", "Tool"):
            from tpguard.adapters.smolagents import guard_tool as smol_guard_tool

            return smol_guard_tool(obj, **options)
        if callable(obj):
            return _wrap_callable(obj, on_block=on_block, **options)
        raise TypeError(f"purpose_bound cannot wrap {type(obj).__name__}: expected a callable or a tool")

    return wrap if target is None else wrap(target)


def spec_for_callable(
    fn: Callable[..., Any], *, purpose: str, sink: Sink, free_text: tuple[str, ...], name: str | None
) -> ToolSpec:
    """A :class:`ToolSpec` whose input schema comes from ``fn``'s signature (via pydantic)."""
    schema: dict[str, Any] | None
    try:
        from pydantic import TypeAdapter

        schema = TypeAdapter(fn).json_schema()  # type: ignore[arg-type, unused-ignore]  # a callable's arguments (pydantic versions differ)
    except Exception:  # unannotated or exotic signatures: no schema rather than no tool
        schema = None
    return ToolSpec(name=name or fn.__name__, purpose=purpose, sink=sink, free_text=free_text,
                    input_schema=schema, description=inspect.getdoc(fn) or "")


def _wrap_callable(
    fn: F, *, purpose: str, sink: Sink, free_text: tuple[str, ...], guard: Guard,
    name: str | None, on_block: OnBlock,
) -> F:
    spec = guard.add_tool(
        spec_for_callable(fn, purpose=purpose, sink=sink, free_text=free_text, name=name)
    )
    sig = inspect.signature(fn)

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> inspect.BoundArguments:
        return sig.bind(*args, **kwargs)  # a TypeError here is the caller's, as without tpguard

    def rebound(bound: inspect.BoundArguments, arguments: dict[str, Any]) -> inspect.BoundArguments:
        for k, v in arguments.items():
            bound.arguments[k] = v
        return bound

    def blocked(decision: Any) -> Any:
        if on_block == "return":
            return decision.message
        raise GuardViolation(decision)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = bind(args, kwargs)
            with guard.intercept(spec, dict(bound.arguments)) as call:
                if call.decision.blocked:
                    return blocked(call.decision)
                b = rebound(bound, call.arguments)
                return call.check_result(await fn(*b.args, **b.kwargs))

        wrapper: Any = async_wrapper
    else:

        @functools.wraps(fn)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = bind(args, kwargs)
            with guard.intercept(spec, dict(bound.arguments)) as call:
                if call.decision.blocked:
                    return blocked(call.decision)
                b = rebound(bound, call.arguments)
                return call.check_result(fn(*b.args, **b.kwargs))

        wrapper = sync_wrapper
    wrapper.__signature__ = sig
    wrapper.__tpguard_spec__ = spec
    return wrapper  # type: ignore[no-any-return,unused-ignore]
