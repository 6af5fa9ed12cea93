"""The wrappers the instrumentor installs on smolagents classes (small factories, no state of their own).

* ``Tool.__call__`` — every tool call of every agent (``ToolCallingAgent`` calls the instance,
  ``CodeAgent``'s local executor calls ``type(tool).__call__``; both resolve to ``Tool.__call__``
  unless a subclass overrides it). Audit only: the tool always runs with its own arguments, and
  its output is recorded (``tpguard.result.*``, atom provenance) and returned unchanged.
* ``ToolCallingAgent.process_tool_calls`` — notes the model's tool-call ids (and the caller's
  context) before the calls run, possibly on a thread pool;
* ``ToolCallingAgent.execute_tool_call`` — claims the id of the call it executes and exposes it
  through :data:`~._smolagents_context.CALL_ID` for the span's ``gen_ai.tool.call.id``.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Generator
from contextvars import Context, copy_context
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._smolagents_bind import EXTRA_POSITIONAL, bind_call
from ._smolagents_context import call_id_scope, current_call_id
from ._smolagents_tool import guarded_spec

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from tpguard.guard import Guard
    from tpguard.policy import ToolSpec

__all__ = ["wrap_execute_tool_call", "wrap_process_tool_calls", "wrap_tool_call"]


@dataclass
class _Pending:
    calls: list[tuple[str, Any, str | None]]
    context: Context
    thread: int = field(default_factory=threading.get_ident)


_lock = threading.Lock()
_PENDING: weakref.WeakKeyDictionary[Any, _Pending] = weakref.WeakKeyDictionary()


def _claim(agent: Any, name: str, arguments: Any) -> tuple[str | None, _Pending] | None:
    """Take the pending call matching ``(name, arguments)``: same object first, then equal."""
    with _lock:
        pending = _PENDING.get(agent)
        if pending is None:
            return None
        calls = pending.calls
        for match in (
            lambda c: c[0] == name and c[1] is arguments,
            lambda c: c[0] == name and c[1] == arguments,
            lambda c: c[0] == name and not c[1] and not arguments,
        ):
            for i, call in enumerate(calls):
                if match(call):
                    return calls.pop(i)[2], pending
        return None


def wrap_process_tool_calls(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def process_tool_calls(self: Any, chat_message: Any, memory_step: Any) -> Generator[Any, Any, Any]:
        calls = [(tc.function.name, tc.function.arguments, tc.id)
                 for tc in (getattr(chat_message, "tool_calls", None) or ())]
        with _lock:
            _PENDING[self] = _Pending(calls, copy_context())
        try:
            return (yield from original(self, chat_message, memory_step))
        finally:
            with _lock:
                _PENDING.pop(self, None)

    return process_tool_calls


def wrap_execute_tool_call(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def execute_tool_call(self: Any, tool_name: str, arguments: Any) -> Any:
        claimed = _claim(self, tool_name, arguments)
        if claimed is None:
            return original(self, tool_name, arguments)
        call_id, pending = claimed

        def run() -> Any:
            with call_id_scope(call_id):
                return original(self, tool_name, arguments)

        if threading.get_ident() != pending.thread:
            # A worker thread: run in the context of the agent's caller (guard.session, the
            # current span), whether or not this smolagents version copies it.
            return pending.context.copy().run(run)
        return run()

    return execute_tool_call


def wrap_tool_call(
    original: Callable[..., Any], guard: Guard, spec_for: Callable[[Any], ToolSpec],
    tracer_provider: TracerProvider | None,
) -> Callable[..., Any]:
    """``Tool.__call__`` that audits the call in an ``execute_tool`` span and runs it unchanged."""

    @functools.wraps(original)
    def __call__(self: Any, *args: Any, sanitize_inputs_outputs: bool = False, **kwargs: Any) -> Any:
        if guarded_spec(self) is not None:  # guard_tool opens its own span
            return original(self, *args, sanitize_inputs_outputs=sanitize_inputs_outputs, **kwargs)
        spec = spec_for(self)
        try:
            arguments = bind_call(getattr(self, "inputs", None) or {}, args, kwargs,
                                  unpack_dict=True).arguments
        except Exception:  # a bad call fails in the tool as before; audit what was passed
            arguments = {EXTRA_POSITIONAL: list(args), **kwargs}
        with guard.intercept(spec, arguments, call_id=current_call_id(),
                             tracer_provider=tracer_provider) as call:
            out = original(self, *args, sanitize_inputs_outputs=sanitize_inputs_outputs, **kwargs)
            call.check_result(out)  # audit: recorded on the span (and provenance), never changed
            return out

    return __call__
