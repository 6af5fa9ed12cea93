"""tpguard for smolagents: ``@purpose_bound`` on tools, and an audit-only instrumentor.

Guard the tools you own (any mode)::

    from smolagents import tool
    from tpguard import Guard, purpose_bound

    guard = Guard("policy.yaml", mode="enforce")

    @purpose_bound(purpose="hand the case to the pharmacy team", sink="handoff",
                   free_text=["summary"], guard=guard)
    @tool
    def team_handoff(pickup_id: str, summary: str) -> str:
        ...

Works under ``ToolCallingAgent`` and ``CodeAgent`` (calls from generated code included). A
blocked call returns the guard's refusal message as the tool's result — the model reads it as the
observation of that call and can retry without the withheld details.

See what an existing agent sends where, tools untouched (audit only)::

    from tpguard.adapters.smolagents import SmolagentsInstrumentor

    SmolagentsInstrumentor(Guard("policy.yaml", mode="audit"),
                           tools={"team_handoff": {"sink": "handoff", "free_text": ["summary"]}},
                           ).instrument()

Guard what the requester sees — the final answer, and a ``CodeAgent``'s console (``print``
output, last value and error message of each step) — against the policy's recipients and
``Auth`` (exposure stage)::

    from tpguard.adapters.smolagents import guard_agent

    agent = guard_agent(CodeAgent(tools=[...], model=model), guard)   # recipient: the requester
    with guard.session(recipients=[{"id": "patient:P-1", "kind": "requester"}],
                       disclosures=Disclosure.allow_atoms("patient:P-1", own_atoms)):
        answer = agent.run("...")

Give a ``ToolCallingAgent`` feedback it can act on after a block (issue 31): the blocked call is
rewritten in the agent's memory to its placeholder form and the model is asked to send it again
as it now stands (``tpguard.call_rewritten`` span event)::

    from tpguard.adapters.smolagents import rewrite_blocked_calls

    agent = rewrite_blocked_calls(ToolCallingAgent(tools=[team_handoff], model=model))

Not covered: remote executors (``CodeAgent(executor_type="docker" | "e2b" | "modal" | "blaxel" |
…)``, the wasm/pyodide executor) rebuild tools from source in a sandbox, outside this process —
neither ``@purpose_bound`` nor the instrumentor sees those calls.
"""

from __future__ import annotations

from ._smolagents_context import current_call_id, propagate_context, restore_context
from ._smolagents_exit import guard_agent
from ._smolagents_feedback import rewrite_blocked_calls
from ._smolagents_instrumentor import (
    SUPPORTED_VERSIONS,
    SmolagentsInstrumentor,
    UnsupportedVersionError,
    check_version,
)
from ._smolagents_tool import guard_tool, guarded_spec

__all__ = [
    "SUPPORTED_VERSIONS",
    "SmolagentsInstrumentor",
    "UnsupportedVersionError",
    "check_version",
    "current_call_id",
    "guard_agent",
    "guard_tool",
    "guarded_spec",
    "propagate_context",
    "restore_context",
    "rewrite_blocked_calls",
]
