"""Exceptions tpguard raises. Messages name types, fields and files — never private values."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .guard import Decision

__all__ = ["GuardViolation", "PolicyError", "TpguardError"]


class TpguardError(Exception):
    """Base class of tpguard's own errors."""


class PolicyError(TpguardError, ValueError):
    """A policy file or mapping is not in the canonical shape.

    ``str(error)`` reads ``FILE: PATH: expected WHAT``; ``problems`` lists every problem found.
    """

    def __init__(self, source: str, path: str, expected: str) -> None:
        self.source = source
        self.path = path
        self.expected = expected
        self.problems: list[tuple[str, str]] = [(path, expected)]
        super().__init__(f"{source}: {path}: expected {expected}")

    def __str__(self) -> str:
        head = f"{self.source}: {self.path}: expected {self.expected}"
        more = [f"\n  {p}: expected {m}" for p, m in self.problems[1:]]
        return head + "".join(more)


class GuardViolation(TpguardError, PermissionError):
    """A tool call was withheld by the guard. ``decision`` says what was found where."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        super().__init__(decision.message or f"tpguard withheld the call to {decision.tool}")
