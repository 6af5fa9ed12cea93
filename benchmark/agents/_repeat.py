"""Repeated-call detection for the framework agents: a real model that sends the same tool calls
turn after turn (small local models do, ``../shared/notes/local-models.md``) is stopped instead of
running to its step cap.

A *turn* is the set of calls one model reply makes (name and arguments, order ignored). The run
stops when the same turn comes :data:`REPEAT_LIMIT` times in a row; the agent then reports
``RepeatedToolCall``, a scored outcome (its calls reached the backends, like a step limit), not a
failed case-run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REPEATED", "REPEAT_LIMIT", "RepeatWatch"]

REPEAT_LIMIT = 3
#: ``AgentResult.error`` of a run the watch stopped (in ``SCORED_OUTCOMES``).
REPEATED = "RepeatedToolCall"


class RepeatWatch:
    """Counts identical consecutive turns; ``tripped`` once the limit is reached."""

    def __init__(self, limit: int = REPEAT_LIMIT) -> None:
        self.limit, self.tripped = limit, False
        self._last: str | None = None
        self._count = 0

    def turn(self, calls: Iterable[tuple[str, Mapping[str, Any] | str | None]]) -> bool:
        """Record one model turn's calls; True when this turn makes ``limit`` in a row."""
        key = json.dumps(sorted([name, args if args is not None else {}] for name, args in calls),
                         sort_keys=True, default=str)
        if key == "[]":
            self._last, self._count = None, 0
            return False
        self._count = self._count + 1 if key == self._last else 1
        self._last = key
        self.tripped = self.tripped or self._count >= self.limit
        return self._count >= self.limit
