"""Per-call context for the smolagents adapter: the tool-call id and context propagation.

* ``ToolCallingAgent`` knows each tool call's id but never passes it to ``Tool.__call__``; the
  instrumentor sets :data:`CALL_ID` around ``execute_tool_call`` so the span can carry
  ``gen_ai.tool.call.id``.
* ``CodeAgent``'s :class:`~smolagents.local_python_executor.LocalPythonExecutor` runs each code
  action on a fresh ``ThreadPoolExecutor`` worker (its time-out) **without** copying
  ``contextvars``, so a ``guard.session(...)`` bound around ``agent.run(...)`` — and the current
  OpenTelemetry span — would be invisible to the tools that code calls. :func:`propagate_context`
  swaps the module's ``timeout`` decorator for one that runs the code action in a copy of the
  caller's context. It is idempotent and reversible (:func:`restore_context`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from typing import Any

__all__ = [
    "CALL_ID",
    "call_id_scope",
    "context_propagation_installed",
    "current_call_id",
    "propagate_context",
    "restore_context",
]

CALL_ID: ContextVar[str | None] = ContextVar("tpguard_smolagents_call_id", default=None)

_lock = threading.Lock()
_original_timeout: Callable[..., Any] | None = None
_pinned = False


def current_call_id() -> str | None:
    """The id of the tool call being executed, when the agent provided one."""
    return CALL_ID.get()


@contextmanager
def call_id_scope(call_id: str | None) -> Iterator[None]:
    token = CALL_ID.set(call_id)
    try:
        yield
    finally:
        CALL_ID.reset(token)


def _context_timeout(original: Callable[..., Any]) -> Callable[..., Any]:
    """``timeout(seconds)`` whose worker thread runs in a copy of the caller's context."""

    @functools.wraps(original)
    def timeout(timeout_seconds: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        limit = original(timeout_seconds)

        def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                ctx = copy_context()  # taken on the caller's thread, at call time
                return limit(functools.partial(ctx.run, func))(*args, **kwargs)

            return wrapper

        return decorator

    timeout.__tpguard_original__ = original  # type: ignore[attr-defined]
    return timeout


def propagate_context(*, pin: bool = False) -> bool:
    """Make CodeAgent's code-execution thread inherit the caller's contextvars.

    Returns True when this call installed the patch. ``pin=True`` (used by ``guard_tool``) keeps it
    installed for the rest of the process: guarded tools rely on it.
    """
    global _original_timeout, _pinned
    from smolagents import local_python_executor as lpe

    with _lock:
        _pinned = _pinned or pin
        if _original_timeout is not None:
            return False
        current = lpe.timeout
        _original_timeout = current
        lpe.timeout = _context_timeout(current)
        return True


def restore_context() -> bool:
    """Undo :func:`propagate_context` (unless pinned); True when the original was put back."""
    global _original_timeout
    from smolagents import local_python_executor as lpe

    with _lock:
        if _original_timeout is None or _pinned:
            return False
        lpe.timeout = _original_timeout
        _original_timeout = None
        return True


def context_propagation_installed() -> bool:
    return _original_timeout is not None
