"""``AcqGateway``: the :class:`~tpguard.benchmark.agents.base.ToolGateway` of an acquisition case
with no guard in between — the agent's calls go straight to :class:`.AcqEnvironment` and the
observation text comes straight back. A guarded runner wraps :meth:`AcqGateway.call` (request
side) and the returned :class:`Observation` (result side) with its guard; the environment logs
what the backend actually received and returned either way."""

from __future__ import annotations

from typing import Any

from ...agents.base import Observation, ToolView
from ...cases.acquisition import TOOLS
from ..errors import ToolError
from .environment import AcqEnvironment, observation_text

__all__ = ["AcqGateway"]


class AcqGateway:
    def __init__(self, env: AcqEnvironment) -> None:
        self.env = env
        self._views = tuple(ToolView(name=n, description=TOOLS[n]["description"],
                                     input_schema=TOOLS[n]["input_schema"])
                            for n in env.case.tools)

    @property
    def tools(self) -> tuple[ToolView, ...]:
        return self._views

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        try:
            payload = self.env.call(name, arguments)
        except ToolError as e:
            return Observation(ok=False, content=str(e))
        return Observation(ok=True, content=observation_text(payload))
