"""``guard_agent``: the exit stage for a smolagents agent (issue 11; ASLEval, seed ``002_*`` §3.2).

Two requester-visible exits of a smolagents run, each through :meth:`Guard.check_exit`:

* **the final answer** (channel ``final_response``) — at the agent's own ``final_answer`` tool:
  its instance ``forward`` is wrapped (as :func:`guard_tool` does), which both ``ToolCallingAgent``
  (a ``final_answer`` tool call) and ``CodeAgent`` (``final_answer(...)`` in generated code, which
  the local executor routes to that tool) go through. What ``agent.run`` returns is the guarded
  answer: unchanged (``audit``), rewritten (``redact``) or the refusal (``enforce``);
* **the console of a ``CodeAgent`` step** (channel ``console``) — the ``print`` output and the last
  value of each code action, which smolagents logs to the console and keeps as the step's
  observation: the agent's ``python_executor`` is wrapped in a thin proxy that checks the
  ``CodeOutput`` before the agent logs it (so the model reads the guarded observation too). A step
  that raises has its print output checked in place, and its error message — which the agent logs
  and keeps in memory for the model (``raise ValueError(r)``, ``assert False, r``, ``int(r)``) —
  checked too: a withheld or rewritten message is raised as a new error of the same type
  carrying the guarded text, outside the ``except`` block, so the original (and the traceback
  frames holding the value) is not chained to it.

Not covered: a ``ToolCallingAgent``'s tool observations are raw tool returns (internal evidence,
guarded by the result stage — ``@purpose_bound`` with an acquisition scope), and what a tool
itself prints. Idempotent: guarding an agent twice wraps once. For a ``CodeAgent`` it installs
:func:`propagate_context` (pinned), so the session bound around ``agent.run`` reaches the code
action's thread.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from tpguard.guard import Guard

from ._smolagents_context import propagate_context

__all__ = ["guard_agent"]

_log = logging.getLogger("tpguard")
_MARK = "__tpguard_exit__"


def guard_agent(agent: Any, guard: Guard, *, recipient: str | None = None, console: bool = True) -> Any:
    """Guard ``agent``'s final answer (and, for a ``CodeAgent``, its console) for ``recipient``
    (default: the session's requester, :meth:`Guard.requester`). Returns the agent."""
    if getattr(agent, "python_executor", None) is not None:
        propagate_context(pin=True)  # a CodeAgent's final_answer runs on the executor's thread
    final = getattr(agent, "tools", {}).get("final_answer")
    if final is not None and not final.__dict__.get(_MARK):
        final.forward = _final_answer(final.forward, guard, recipient)
        final.__dict__[_MARK] = True
    executor = getattr(agent, "python_executor", None)
    if console and executor is not None and not isinstance(executor, _GuardedExecutor):
        agent.python_executor = _GuardedExecutor(executor, guard, recipient)
    return agent


def _shown(decision: Any) -> Any:
    return decision.message if decision.blocked else decision.payload


def _final_answer(original: Any, guard: Guard, recipient: str | None) -> Any:
    def forward(*args: Any, **kwargs: Any) -> Any:
        return _shown(guard.check_exit("final_response", recipient, original(*args, **kwargs)))

    return forward


class _GuardedExecutor:
    """The agent's executor with its ``CodeOutput`` checked on channel ``console``; every other
    attribute is the wrapped executor's."""

    def __init__(self, inner: Any, guard: Guard, recipient: str | None) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_guard", guard)
        object.__setattr__(self, "_recipient", recipient)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._inner, name, value)

    def __call__(self, code_action: str) -> Any:
        try:
            out = self._inner(code_action)
        except Exception as e:
            self._guard_printed()
            replacement = self._guard_error(e)
            if replacement is None:
                raise
            del e  # raised below, outside this block: the original is not even its __context__
        else:
            return self._guard_output(out)
        raise replacement

    def _guard_error(self, error: Exception) -> Exception | None:
        """A failed step: the agent logs ``str(error)`` to the console and keeps it in memory, where
        the model reads it (``raise ValueError(r)``, ``assert False, r``, ``int(r)``). ``None``
        when it may be shown as it is; else the same error type (or ``RuntimeError``) carrying the
        guarded text — the rewrite, or the refusal."""
        try:
            text = str(error)
        except Exception:  # an error whose message cannot be read is not shown
            text = None
        if text is None:
            shown = f"tpguard withheld this step's error ({type(error).__qualname__}): it could not be read."
        else:
            decision = self._guard.check_exit("console", self._recipient, text)
            if decision.action == "allow":
                return None
            shown = str(_shown(decision))
        try:
            replacement = type(error)(shown)
            if shown in str(replacement):
                return replacement
        except Exception:  # an error type that needs other arguments
            pass
        return RuntimeError(shown)

    def _guard_output(self, out: Any) -> Any:
        logs = out.logs
        if logs:
            logs = _shown(self._guard.check_exit("console", self._recipient, logs))
        output = out.output
        if not out.is_final_answer and output is not None:  # "Out: ..." (the answer is guarded)
            output = _shown(self._guard.check_exit("console", self._recipient, output))
        if logs is out.logs and output is out.output:
            return out
        return dataclasses.replace(out, logs=logs, output=output)

    def _guard_printed(self) -> None:
        """A failed step: smolagents shows ``state["_print_outputs"]``; check it in place."""
        try:
            printed = getattr(self._inner, "state", {}).get("_print_outputs")
            if printed is not None and str(printed):
                printed.value = _shown(self._guard.check_exit("console", self._recipient, str(printed)))
        except Exception as e:  # never mask the step's own error
            _log.error("tpguard: could not check a failed step's print output (%s)", type(e).__qualname__)
