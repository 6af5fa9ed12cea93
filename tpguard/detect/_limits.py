"""How much of a tool call the guard reads, and what happens past that (issue 9, item 5).

The guard never skips part of a call silently. Past a limit, on a cycle, or on a value it cannot
read, the walk records a :class:`Problem`; ``enforce`` and ``redact`` then withhold the call with a
message naming the limit (never a value), ``audit`` lets it through and records the problem in
``Decision.error`` and on the span (``tpguard.error``).

Defaults are generous — a real tool call is far below every one of them:

=================  =========  ======================================================================
``max_depth``      64         nesting levels of dicts, lists, models and dataclasses
``max_leaves``     100,000    values visited: containers, dict keys and scalars together
``max_text``       2,000,000  characters of one text (a string, a decoded ``bytes``, a number)
``max_total``      8,000,000  characters of all texts of one call together
=================  =========  ======================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "Limits", "Problem"]


@dataclass(frozen=True, slots=True)
class Limits:
    """``Guard(..., limits=Limits(max_depth=16))`` — bounds of one call's walk (see module doc)."""

    max_depth: int = 64
    max_leaves: int = 100_000
    max_text: int = 2_000_000
    max_total: int = 8_000_000

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_leaves", "max_text", "max_total"):
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be at least 1")


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Problem:
    """Why part of a call could not be read. ``code`` is short and stable (``limit:max_depth``,
    ``cycle``, ``unreadable:deque``) and goes to ``Decision.error``; ``text`` is a value-free
    sentence for the agent's message."""

    code: str
    text: str

    @staticmethod
    def depth(limits: Limits) -> Problem:
        return Problem("limit:max_depth", f"argument nesting deeper than {limits.max_depth} levels")

    @staticmethod
    def leaves(limits: Limits) -> Problem:
        return Problem("limit:max_leaves", f"more than {limits.max_leaves:,} argument values")

    @staticmethod
    def text_size(limits: Limits) -> Problem:
        return Problem("limit:max_text", f"an argument text longer than {limits.max_text:,} characters")

    @staticmethod
    def total(limits: Limits) -> Problem:
        return Problem("limit:max_total",
                       f"argument texts longer than {limits.max_total:,} characters in all")

    @staticmethod
    def cycle() -> Problem:
        return Problem("cycle", "an argument that contains itself (a reference cycle)")

    @staticmethod
    def unreadable(kind: str) -> Problem:
        return Problem(f"unreadable:{kind}", f"an argument of a type tpguard cannot read ({kind})")
