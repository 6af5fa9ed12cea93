"""Agents under test: reference agents (oracle, leaky, replay) and framework agents (LangChain,
smolagents) — all reaching tools through the runner's :class:`~.base.ToolGateway`."""

from __future__ import annotations

from .base import Agent, AgentResult, Observation, ToolGateway, ToolView

__all__ = ["Agent", "AgentResult", "Observation", "ToolGateway", "ToolView"]
