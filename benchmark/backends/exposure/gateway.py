"""``ExpGateway``: the :class:`~tpguard.benchmark.agents.base.ToolGateway` of an exposure session.
Calls go to :class:`.ExpEnvironment`, whose hooks hold the guard; ``reply`` is the agent's
per-turn answer to the requester (a visible exit too)."""

from __future__ import annotations

from typing import Any

from ...agents.base import Observation, ToolView
from ...cases.exposure import TOOLS
from .environment import ExpEnvironment

__all__ = ["ExpGateway"]


class ExpGateway:
    def __init__(self, env: ExpEnvironment) -> None:
        self.env = env
        self._views = tuple(ToolView(name=n, description=TOOLS[n]["description"],
                                     input_schema=TOOLS[n]["input_schema"])
                            for n in env.case.tools)

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return self._views

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        return self.env.call(name, arguments)

    def reply(self, text: str) -> str:
        """Answer the requester on the reply channel; returns the delivery status."""
        return self.env.reply(text)
