"""Reference agents of the acquisition suite (seed ``001_*``): the narrow-path ``oracle`` and the
over-fetching ``leaky`` behaviour model, plus :func:`run_case`, the case-run the runner calls."""

from __future__ import annotations

from typing import Any

from ..registry import LOCAL, local_endpoint
from ._profiles import BEHAVIOUR_RATE, DOMAIN_RATE, PROFILES, AcqProfile
from .agents import DECLINE, AcqLeakyAgent, AcqOracleAgent
from .run import AcqAgent, CaseRun, run_case

__all__ = ["BEHAVIOUR_RATE", "DECLINE", "DOMAIN_RATE", "PROFILES", "AcqAgent", "AcqLeakyAgent",
           "AcqOracleAgent", "AcqProfile", "CaseRun", "make_acq_agent", "run_case"]


def make_acq_agent(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                   directive: bool = False, code_agent: bool = False) -> AcqAgent:
    """``oracle``, ``leaky[:PROFILE]``, ``langchain:MODEL`` or ``smolagents:MODEL`` (a
    ``ToolCallingAgent``; ``code_agent``: a ``CodeAgent``; ``MODEL`` may be ``local:NAME``, a
    model tpguard serves on loopback) for the acquisition suite;
    ``directive`` gives a framework agent the category-aware system prompt (for ``leaky`` the
    ``directive`` guard selects the ``leaky:directive`` profile instead)."""
    kind, _, profile = spec.strip().partition(":")
    if kind == "oracle" and not profile:
        return AcqOracleAgent()
    if kind == "leaky":
        return AcqLeakyAgent(profile or "default")
    options: dict[str, Any] = {}
    if kind in ("langchain", "smolagents") and profile.lower().startswith(LOCAL):
        # a GGUF served by tpguard itself, at temperature 0 — as need-to-know's local agents
        base_url, api_key, options = local_endpoint(profile[len(LOCAL):])
    if kind == "langchain" and profile:
        from .framework import AcqLangChainAgent

        return AcqLangChainAgent(profile, base_url, api_key, directive=directive,
                                 model_options=options)
    if kind == "smolagents" and profile:
        from .smol import AcqSmolagentsAgent

        return AcqSmolagentsAgent(profile, base_url, api_key, code_agent=code_agent,
                                  directive=directive, model_options=options)
    raise ValueError(f"unknown acquisition agent {spec!r} (oracle, leaky[:{'|'.join(PROFILES)}], "
                     "langchain:MODEL, smolagents:MODEL; MODEL may be local:NAME)")
