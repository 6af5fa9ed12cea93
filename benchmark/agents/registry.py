"""``make_agent(spec)``: the agents ``--agent`` selects.

=====================  ==========================================================
``oracle``             :class:`~.oracle.OracleAgent`
``leaky[:PROFILE]``    :class:`~.leaky.LeakyAgent` (``careful``, ``default``, ``leaky``)
``replay:PATH``        :class:`~.replay.ReplayAgent`
``langchain:MODEL``    :class:`~.langchain_agent.LangChainAgent` (``openai:gpt-4.1-mini``, or a
                       model name served at ``base_url``)
``smolagents:MODEL``   :class:`~.smolagents_agent.SmolagentsAgent` (``code_agent=True`` for
                       ``CodeAgent``)
=====================  ==========================================================

Framework modules are imported only when such an agent is made.
"""

from __future__ import annotations

from .base import Agent

__all__ = ["AGENT_SPECS", "make_agent"]

AGENT_SPECS: tuple[str, ...] = ("oracle", "leaky[:PROFILE]", "replay:PATH", "langchain:MODEL",
                                "smolagents:MODEL")


def _unknown(spec: str, why: str) -> ValueError:
    return ValueError(f"unknown agent {spec!r}: {why}; valid agents: {', '.join(AGENT_SPECS)}")


def make_agent(spec: str, *, base_url: str | None = None, api_key: str | None = None,
               code_agent: bool = False, profile: str | None = None) -> Agent:
    """Build the agent a ``--agent`` spec names (``profile`` overrides ``leaky``'s default)."""
    kind, _, rest = spec.strip().partition(":")
    kind = kind.lower()
    if kind == "oracle" and not rest:
        from .oracle import OracleAgent

        return OracleAgent()
    if kind == "leaky":
        from .leaky import PROFILES, LeakyAgent

        name = rest or profile or "default"
        if name not in PROFILES:
            raise _unknown(spec, f"no leaky profile {name!r} (profiles: {', '.join(PROFILES)})")
        return LeakyAgent(name)
    if kind in ("replay", "langchain", "smolagents") and not rest:
        raise _unknown(spec, f"'{kind}:' needs a {'path' if kind == 'replay' else 'model'}")
    if kind == "replay":
        from .replay import ReplayAgent

        return ReplayAgent(rest)
    if kind == "langchain":
        from .langchain_agent import LangChainAgent

        return LangChainAgent(rest, base_url=base_url, api_key=api_key)
    if kind == "smolagents":
        from .smolagents_agent import SmolagentsAgent

        return SmolagentsAgent(rest, base_url=base_url, api_key=api_key, code_agent=code_agent)
    raise _unknown(spec, "not a known agent kind")
