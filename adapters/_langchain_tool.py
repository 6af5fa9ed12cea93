"""``guard_tool``: a LangChain tool whose every call passes the guard with *validated* arguments.

The guarded tool is a copy of the original whose class is a thin subclass of the original class
(so ``isinstance`` checks, name, description, args schema, ``return_direct`` and response format
are unchanged). The subclass overrides two call paths and nothing else:

* ``run`` / ``arun`` remember the tool-call id LangChain passes (``gen_ai.tool.call.id`` on the span);
* ``_run`` / ``_arun`` receive the arguments *after* LangChain validated them against the args
  schema, drop injected arguments, and call :meth:`Guard.intercept` around the real ``_run``.

What ``_run`` returns passes :meth:`Guard.check_result` on the same span (the acquisition stage):
filtered in ``redact``, a withheld result is raised as :class:`ToolCallWithheld` like a withheld call; with ``response_format=
"content_and_artifact"`` both the content and the artifact are checked. A request narrowed to the
tool's acquisition scope reaches ``_run`` with the narrowed arguments (added ones included).

A withheld call raises :class:`ToolCallWithheld` (a ``ToolException``); the copy's
``handle_tool_error`` turns exactly that exception into the tool's result, so in an agent the model
gets a ``ToolMessage(status="error")`` carrying the guard's message and the run continues. The
tool's own ``ToolException`` s are handled as the original tool's setting says.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import typing
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from langchain_core.tools import BaseTool, ToolException

from tpguard.guard import Decision, Guard, Interception
from tpguard.policy import Sink, ToolSpec

from ._langchain_args import config_params, injected_keys, model_arguments, spec_for_tool

__all__ = ["ToolCallWithheld", "guard_tool"]

_CALL_ID: ContextVar[str | None] = ContextVar("tpguard_langchain_call_id", default=None)
_ACTIVE: ContextVar[frozenset[int]] = ContextVar("tpguard_langchain_active", default=frozenset())
_bindings = itertools.count(1)


class ToolCallWithheld(ToolException):
    """The guard withheld a LangChain tool call; ``str(e)`` is the guard's (value-free) message."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        super().__init__(decision.message or f"tpguard withheld the call to {decision.tool}")


def guard_tool(
    tool: BaseTool,
    *,
    purpose: str,
    sink: Sink = "external",
    free_text: Iterable[str] = (),
    guard: Guard,
    name: str | None = None,
) -> BaseTool:
    """Return a guarded copy of ``tool`` (the original is left untouched).

    Registers the tool's :class:`ToolSpec` (purpose, sink, free-text slots, the JSON schema the
    model sees) on ``guard``. ``name`` renames the tool (for the model and the policy alike).
    """
    if not isinstance(tool, BaseTool):
        raise TypeError(f"guard_tool takes a LangChain BaseTool (got {type(tool).__name__})")
    if not isinstance(guard, Guard):
        raise TypeError("guard_tool(guard=...) takes a tpguard.Guard")
    spec = guard.add_tool(spec_for_tool(tool, purpose=purpose, sink=sink, free_text=free_text,
                                        name=name))
    try:
        _ = tool._injected_args_keys  # computed from the original signature, carried by the copy
    except Exception:
        pass
    update: dict[str, Any] = {"handle_tool_error": _error_handler(tool.handle_tool_error)}
    if name and name != tool.name:
        update["name"] = name
    guarded = tool.model_copy(update=update)
    dropped = injected_keys(tool)  # the copy has the same schema and signature: compute once
    object.__setattr__(guarded, "__class__", _guarded_class(type(tool), guard, spec, dropped))
    return guarded


def _error_handler(original: Any) -> Callable[[ToolException], Any]:
    """``handle_tool_error`` for the copy: our withheld calls become results, the rest as before."""

    def handle(e: ToolException) -> Any:
        if isinstance(e, ToolCallWithheld):
            return str(e)
        if not original:
            raise e
        if original is True:
            return e.args[0] if e.args else "Tool execution error"
        if isinstance(original, str):
            return original
        return original(e)

    return handle


def _guarded_class(
    base: type[BaseTool], guard: Guard, spec: ToolSpec, dropped: frozenset[str]
) -> type[BaseTool]:
    key = next(_bindings)
    orig_run = base._run
    run_drop = dropped | config_params(orig_run)
    run_names = _parameter_names(orig_run)
    ns: dict[str, Any] = {"__module__": base.__module__, "__qualname__": base.__qualname__,
                          "__doc__": base.__doc__}

    def run(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
        token = _CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return base.run(self, *args, **kwargs)
        finally:
            _CALL_ID.reset(token)

    async def arun(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
        token = _CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return await base.arun(self, *args, **kwargs)
        finally:
            _CALL_ID.reset(token)

    def _run(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
        if key in _ACTIVE.get():  # e.g. an async path that falls back to _run in a thread
            return orig_run(self, *args, **kwargs)
        names, arguments = _scanned(run_names, run_drop, args, kwargs)
        token = _ACTIVE.set(_ACTIVE.get() | {key})
        try:
            with guard.intercept(spec, arguments, call_id=_CALL_ID.get()) as call:
                if not call.decision.blocked:
                    a, kw = _rewritten(call.decision, names, args, kwargs)
                    out = _returned(self, call, orig_run(self, *a, **kw))
                    if not _result_withheld(call):
                        return out
        finally:
            _ACTIVE.reset(token)
        raise ToolCallWithheld(call.result_decision or call.decision)

    ns.update(run=functools.update_wrapper(run, base.run),
              arun=functools.update_wrapper(arun, base.arun),
              _run=_wrapped(_run, orig_run))

    if base._arun is not BaseTool._arun:  # the class has its own async path: guard it too
        orig_arun = base._arun
        arun_drop = dropped | config_params(orig_arun)
        arun_names = _parameter_names(orig_arun)

        async def _arun(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
            if key in _ACTIVE.get():
                return await orig_arun(self, *args, **kwargs)
            names, arguments = _scanned(arun_names, arun_drop, args, kwargs)
            token = _ACTIVE.set(_ACTIVE.get() | {key})
            try:
                with guard.intercept(spec, arguments, call_id=_CALL_ID.get()) as call:
                    if not call.decision.blocked:
                        a, kw = _rewritten(call.decision, names, args, kwargs)
                        out = _returned(self, call, await orig_arun(self, *a, **kw))
                        if not _result_withheld(call):
                            return out
            finally:
                _ACTIVE.reset(token)
            raise ToolCallWithheld(call.result_decision or call.decision)

        ns["_arun"] = _wrapped(_arun, orig_arun)
    meta: Any = type(base)  # pydantic's model metaclass
    guarded: type[BaseTool] = meta(base.__name__, (base,), ns)
    return guarded


def _wrapped(wrapper: Callable[..., Any], wrapped: Callable[..., Any]) -> Callable[..., Any]:
    """``functools.update_wrapper`` with the annotations *evaluated once, here*.

    LangChain looks for a ``RunnableConfig`` parameter with ``typing.get_type_hints(self._run)``
    on every call. Copied as they are, the original's annotations are strings (``from __future__
    import annotations``) that ``get_type_hints`` compiles and evaluates each time (~5 µs each);
    evaluated ones cost a dictionary copy. If they cannot be evaluated, the strings are kept and
    LangChain behaves as it would on the original."""
    functools.update_wrapper(wrapper, wrapped)
    try:
        wrapper.__annotations__ = typing.get_type_hints(wrapped, include_extras=True)
    except Exception:  # an unresolvable annotation: LangChain resolves (or skips) it as before
        pass
    return wrapper


def _parameter_names(fn: Callable[..., Any]) -> list[str]:
    """Names of ``fn``'s positional parameters after ``self`` (``run("text")`` passes one)."""
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _scanned(
    params: list[str], drop: frozenset[str], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[str], dict[str, Any]]:
    names = params[:len(args)] + [f"args[{i}]" for i in range(len(params), len(args))]
    arguments = model_arguments(None, kwargs, drop=drop)
    return names, {**dict(zip(names, args, strict=True)), **arguments}


def _rewritten(
    decision: Decision, names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if not decision.redacted or not isinstance(decision.arguments, dict):
        return args, kwargs
    new = decision.arguments
    positional = tuple(new.get(n, a) for n, a in zip(names, args, strict=True))
    keywords = {k: (new[k] if k in new else v) for k, v in kwargs.items()}
    keywords.update({k: v for k, v in new.items() if k not in keywords and k not in names})  # narrowed
    return positional, keywords


def _result_withheld(call: Interception) -> bool:
    return any(d.blocked for d in call.results)


def _returned(tool: BaseTool, call: Interception, result: Any) -> Any:
    """The tool's output through the result stage; ``content_and_artifact`` checks both parts
    (either withheld withholds the result: the model gets an error ``ToolMessage``)."""
    if tool.response_format == "content_and_artifact" and isinstance(result, tuple) and len(result) == 2:
        content = call.check_result(result[0])
        artifact = call.check_result(result[1]) if result[1] is not None and not _result_withheld(call) else None
        return content, artifact
    return call.check_result(result)
