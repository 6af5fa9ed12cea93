"""Errors as results of their own: what a record says when a case-run did not produce a
measurement, and the exceptions that stop a run before it starts (with their exit codes).

A record's ``error`` is ``None`` or ``{"type", "stage", "message"}``: ``type`` is the exception's
type name, ``stage`` where it happened (``agent`` — the agent or its model failed, ``backend`` —
building the case's environment or reading its audit log failed, ``scoring`` — the evaluator
failed), and ``message`` a fixed, value-free sentence for the types we know, else ``None``: an
exception's own text may quote a tool's arguments, so it is never recorded.

Errored case-runs are reported (``errors``, ``error_rate`` per summary row) and excluded from every
metric's denominator; they are not scored as zero. An agent that stops at its step limit
(``GraphRecursionError``) is *not* an error: it ran, its calls reached the backends, and its
outcome is scored like any other (``result.error`` still names it).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "EXIT_AGENT",
    "EXIT_ERRORS",
    "EXIT_OK",
    "EXIT_USAGE",
    "AgentUnavailable",
    "RunError",
    "Stage",
    "UsageError",
    "case_error",
    "record_error",
]

Stage = Literal["agent", "backend", "scoring"]

EXIT_OK = 0  #: every case-run was scored
EXIT_ERRORS = 1  #: some case-runs errored (results written, errors counted per row)
EXIT_USAGE = 2  #: bad options or inputs, a configuration clash, a locked run directory
EXIT_AGENT = 3  #: an agent cannot start (missing key, missing file, unreachable endpoint)

#: Error types an agent returns that are outcomes, not failures of the measurement: a step limit,
#: a model stopped for repeating the same calls (``agents/_repeat.py``), and a reference agent stopping because a guard withheld or a backend rejected its call (what a
#: guard costs in task success is exactly what the benchmark measures).
SCORED_OUTCOMES = frozenset({"GraphRecursionError", "RepeatedToolCall", "ToolCallBlocked",
                             "ToolCallRejected"})

_MESSAGES = {
    "UnknownCase": "the replay file has no recording of this case",
    "OpenAIError": "the OpenAI client could not start (is OPENAI_API_KEY set?)",
    "AuthenticationError": "the model endpoint rejected the API key",
    "PermissionDeniedError": "the model endpoint refused the request",
    "APIConnectionError": "the model endpoint could not be reached",
    "APITimeoutError": "the model endpoint timed out",
    "RateLimitError": "the model endpoint rate-limited the request",
    "NotFoundError": "the model endpoint does not know this model",
    "InternalServerError": "the model endpoint failed",
    "ModuleNotFoundError": "a package the agent needs is not installed",
}


class RunError(Exception):
    """A run that cannot start; ``code`` is the exit code ``tpguard bench run`` ends with."""

    code = EXIT_USAGE


class UsageError(RunError, ValueError):
    """Bad options or inputs (exit 2)."""


class AgentUnavailable(RunError):
    """An agent cannot start (exit 3): the message names the agent and the cause in one line."""

    code = EXIT_AGENT


def case_error(type_name: str, stage: Stage) -> dict[str, Any]:
    """The record's ``error`` for an exception type name raised at ``stage``."""
    return {"type": type_name, "stage": stage, "message": _MESSAGES.get(type_name)}


def record_error(record: dict[str, Any]) -> dict[str, Any] | None:
    """The error of a record, also of records written before errors had a field of their own
    (then ``result.error`` names the agent's exception, and a record without a score errored)."""
    err = record.get("error")
    if isinstance(err, dict):
        return err
    if "error" in record:  # the current format: None means scored
        return None
    legacy = (record.get("result") or {}).get("error")
    if legacy and str(legacy) not in SCORED_OUTCOMES:
        return case_error(str(legacy), "agent")
    if not isinstance(record.get("score"), dict):
        return case_error("MissingScore", "scoring")
    return None
