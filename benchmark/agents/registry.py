"""``make_agent(spec)``: the agents ``--agent`` selects.

==========================  =====================================================
``oracle``                  :class:`~.oracle.OracleAgent`
``leaky[:PROFILE]``         :class:`~.leaky.LeakyAgent` (``careful``, ``default``, ``leaky``)
``replay:PATH``             :class:`~.replay.ReplayAgent`
``langchain[+PATH]:MODEL``  :class:`~.langchain_agent.LangChainAgent` (``openai:gpt-4.1-mini``,
                            or a model name served at ``base_url``)
``smolagents[+PATH]:MODEL`` :class:`~.smolagents_agent.SmolagentsAgent` (``code_agent=True`` for
                            ``CodeAgent``)
==========================  =====================================================

``MODEL`` = ``local:NAME|PATH.gguf`` runs a real local model offline: tpguard's own loopback
endpoint (:func:`tpguard.benchmark.local.shared_endpoint`, one per model per process, extra ``[local]``)
serves a fetched model (``tpguard models fetch NAME``) or any GGUF file, at temperature 0.

``PATH`` — where tpguard's modes decide for a framework agent (issue 12, item 8): ``decorator``
(tpguard's ``guard_tool`` / ``@purpose_bound`` on each tool), ``middleware`` (LangChain's
``PurposeBoundMiddleware``), ``instrumentor`` (smolagents' ``SmolagentsInstrumentor``, audit only)
``gateway`` (the runner's gateway calls ``Guard.check``) or ``mcp`` (the tools served over MCP
behind tpguard's MCP proxy, loaded with ``langchain-mcp-adapters`` / ``mcpadapt``). Without ``+PATH`` the ``guard_path``
argument decides (``--guard-path``: ``adapter`` = the framework's default adapter, ``decorator``;
or any ``PATH``); its default is ``adapter``: the product as deployed. Baselines and ``off``
always act at the gateway. Reference agents go through the gateway, except with ``--guard-path
mcp``: their tools are then served over MCP behind tpguard's MCP proxy
(:class:`~.mcp_path.McpPathAgent`; baselines and ``off`` without the proxy).

Framework modules are imported only when such an agent is made.
"""

from __future__ import annotations

from typing import Any

from .base import Agent

__all__ = ["ADAPTER", "AGENT_SPECS", "GUARD_PATH_CHOICES", "LOCAL", "check_guard_path",
           "local_endpoint", "make_agent"]

AGENT_SPECS: tuple[str, ...] = ("oracle", "leaky[:PROFILE]", "replay:PATH",
                                "langchain[+decorator|middleware|gateway|mcp]:MODEL",
                                "smolagents[+decorator|instrumentor|gateway|mcp]:MODEL")
#: ``guard_path=`` / ``--guard-path`` values: ``adapter`` is each framework's default adapter.
ADAPTER = "adapter"
GUARD_PATH_CHOICES: tuple[str, ...] = (ADAPTER, "decorator", "middleware", "instrumentor",
                                       "gateway", "mcp")
#: ``MODEL`` prefix of a local GGUF model served by tpguard itself.
LOCAL = "local:"
_PATHS = {"langchain": ("decorator", "middleware", "gateway", "mcp"),
          "smolagents": ("decorator", "instrumentor", "gateway", "mcp")}


def _unknown(spec: str, why: str) -> ValueError:
    return ValueError(f"unknown agent {spec!r}: {why}; valid agents: {', '.join(AGENT_SPECS)}")


def _guard_path(spec: str, kind: str, suffix: str | None, option: str | None) -> str:
    """The agent's ``guard_path`` (``langchain-middleware``, …, ``gateway``)."""
    choice = (suffix if suffix is not None else option or ADAPTER).strip().lower()
    if choice == ADAPTER:
        choice = "decorator"
    if choice not in _PATHS[kind]:
        raise _unknown(spec, f"{kind} has no guard path {choice!r} "
                             f"(paths: {', '.join(_PATHS[kind])})")
    return "gateway" if choice == "gateway" else f"{kind}-{choice}"


def check_guard_path(agent: Agent, guard: str) -> None:
    """Raise ``ValueError`` (one line) when ``guard`` cannot act on ``agent``'s guard path — the
    runner calls it before any case runs. Only the audit-only instrumentor has such a limit."""
    path = getattr(agent, "guard_path", "gateway")
    if path == "smolagents-instrumentor" and (guard.startswith("enforce") or guard == "redact"):
        raise ValueError(f"guard {guard!r} cannot act through smolagents-instrumentor (tpguard's "
                         "SmolagentsInstrumentor only audits); use smolagents+decorator")


def local_endpoint(model: str) -> tuple[str, str, dict[str, Any]]:
    """The loopback endpoint serving ``model`` (started on first use) and the request options of
    a repeatable run: temperature 0. :class:`tpguard.benchmark.local.ModelError` → ``ImportError`` here, so
    the runner reports it as an agent that cannot start (exit 3)."""
    from tpguard.benchmark.local import ModelError, shared_endpoint

    if not model:
        raise ValueError("'local:' needs a model name or a .gguf path")
    try:
        endpoint = shared_endpoint(model)
    except ModelError as e:
        raise ImportError(str(e)) from None
    return endpoint.url, "local", {"temperature": 0.0}


def _reference(spec: str, kind: str, rest: str, profile: str | None) -> Agent | None:
    """The reference agent ``spec`` names, or ``None`` for a framework agent."""
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
    return None


def make_agent(spec: str, *, base_url: str | None = None, api_key: str | None = None,
               code_agent: bool = False, profile: str | None = None,
               guard_path: str | None = None) -> Agent:
    """Build the agent a ``--agent`` spec names (``profile`` overrides ``leaky``'s default;
    ``guard_path`` is the framework agents' path when the spec has no ``+PATH``; reference agents
    ignore it)."""
    head, _, rest = spec.strip().partition(":")
    kind, plus, suffix = head.lower().partition("+")
    if plus and kind not in _PATHS:
        raise _unknown(spec, f"'+{suffix}': only langchain and smolagents take a guard path")
    reference = _reference(spec, kind, rest, profile)
    if reference is not None:
        if (guard_path or "").strip().lower() == "mcp":
            from .mcp_path import McpPathAgent

            return McpPathAgent(reference)
        return reference
    if kind not in _PATHS:
        raise _unknown(spec, "not a known agent kind")
    path = _guard_path(spec, kind, suffix if plus else None, guard_path)
    options: dict[str, Any] = {}
    if rest.lower().startswith(LOCAL):
        base_url, api_key, options = local_endpoint(rest[len(LOCAL):])
    if kind == "langchain":
        from .langchain_agent import LangChainAgent

        return LangChainAgent(rest, base_url=base_url, api_key=api_key, guard_path=path,
                              model_options=options)
    from .smolagents_agent import SmolagentsAgent

    return SmolagentsAgent(rest, base_url=base_url, api_key=api_key, code_agent=code_agent,
                           guard_path=path, model_options=options)
