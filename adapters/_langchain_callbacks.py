"""``TpguardCallbackHandler``: audit-only over any Runnable or LangGraph graph that takes callbacks.

Observe-only: a callback cannot stop or rewrite a call, so the handler never blocks. Span
lifetime: ``on_tool_start`` enters :meth:`Guard.intercept` (the ``execute_tool`` span starts and
the decision is recorded), ``on_tool_end`` / ``on_tool_error`` of the same ``run_id`` exit it (the
span ends, an error is recorded by type only). The handler runs inline (``run_inline``), so start
and end happen in the tool run's own context even under asyncio.

The inputs are LangChain's callback ``inputs``: the model's arguments *before* validation, with
injected arguments already removed by LangChain (and removed again here, defensively).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from tpguard.guard import Decision, Guard, Interception
from tpguard.policy import ToolSpec

from ._langchain_args import as_spec, model_arguments

__all__ = ["TpguardCallbackHandler"]

_log = logging.getLogger("tpguard")


class TpguardCallbackHandler(BaseCallbackHandler):
    """Record a decision span for every tool run; never blocks or changes anything.

    ``tools`` maps tool names to :class:`ToolSpec` s (or dicts); unlisted tools fall back to the
    guard's specs, then to an unknown ``external`` tool. Decisions are always taken in ``audit``
    mode — a callback cannot stop a call, so its spans never claim one was blocked; the forbidden
    findings are recorded all the same. ``decisions`` keeps the last 10,000 decisions (value-free).
    """

    run_inline = True
    raise_error = False

    def __init__(
        self, guard: Guard, tools: Mapping[str, ToolSpec | Mapping[str, Any]] | None = None
    ) -> None:
        if not isinstance(guard, Guard):
            raise TypeError("TpguardCallbackHandler(guard=...) takes a tpguard.Guard")
        self.guard = guard
        self.specs: dict[str, ToolSpec] = {n: as_spec(n, s) for n, s in (tools or {}).items()}
        self.decisions: deque[Decision] = deque(maxlen=10_000)
        self._open: dict[UUID, AbstractContextManager[Interception]] = {}
        self._lock = threading.Lock()

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            name = str((serialized or {}).get("name") or kwargs.get("name") or "unknown_tool")
            spec = self.specs.get(name) or self.guard.tool_spec(name)
            arguments = model_arguments(None, inputs) if inputs is not None else {"input": input_str}
            cm = self.guard.intercept(spec, arguments, call_id=kwargs.get("tool_call_id"),
                                      mode="audit")
            interception = cm.__enter__()
            with self._lock:
                self._open[run_id] = cm
                self.decisions.append(interception.decision)
        except Exception as e:  # observing must never break the run
            _log.error("tpguard: callback could not record a tool start (%s)", type(e).__qualname__)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, None)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error)

    def close(self) -> None:
        """End spans of runs that never reported an end (e.g. an interrupted graph)."""
        with self._lock:
            open_ids = list(self._open)
        for run_id in open_ids:
            self._close(run_id, None)

    def _close(self, run_id: UUID, error: BaseException | None) -> None:
        with self._lock:
            cm = self._open.pop(run_id, None)
        if cm is None:
            return
        try:
            if error is None:
                cm.__exit__(None, None, None)
            else:
                cm.__exit__(type(error), error, error.__traceback__)
        except Exception as e:
            if e is not error:
                _log.error("tpguard: callback could not end a span (%s)", type(e).__qualname__)
