"""Agents under test: reference agents (oracle, leaky, replay) and framework agents (LangChain,
smolagents) — all reaching tools through the runner's :class:`~.base.ToolGateway`.

The framework agents live in ``tpguard.benchmark.agents.langchain_agent`` and
``…smolagents_agent`` and are imported only when used (``make_agent`` does that).
"""

from __future__ import annotations

from .base import Agent, AgentResult, Observation, ToolGateway, ToolView
from .leaky import PROFILES, LeakyAgent
from .oracle import OracleAgent
from .registry import AGENT_SPECS, make_agent
from .replay import ReplayAgent

__all__ = [
    "AGENT_SPECS",
    "PROFILES",
    "Agent",
    "AgentResult",
    "LeakyAgent",
    "Observation",
    "OracleAgent",
    "ReplayAgent",
    "ToolGateway",
    "ToolView",
    "make_agent",
]
