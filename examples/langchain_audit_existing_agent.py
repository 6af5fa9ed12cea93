"""Audit-only on an agent you already run: add one middleware, leave the tools as they are.

The tools below are ordinary LangChain tools. ``PurposeBoundMiddleware`` in ``audit`` mode records
one span per tool call — which private atoms went to which tool, and which of those the tool's
purpose does not need — and changes nothing. The same audit is available for any Runnable or
LangGraph graph through ``TpguardCallbackHandler`` (shown second, on the same agent without the
middleware). Spans carry atom types and argument paths, never the values.

    python examples/langchain_audit_existing_agent.py                 # offline, scripted model
    OPENAI_API_KEY=... python examples/langchain_audit_existing_agent.py   # a real model
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool

from tpguard import Guard
from tpguard.adapters.langchain import PurposeBoundMiddleware, TpguardCallbackHandler
from tpguard.testing import SpanCapture, capture_spans

POLICY = Path(__file__).with_name("healthcare_policy.yaml")
TASK = ("Maria Gonzalez (phone 415-555-0199) has chest tightness; prescription RX-88213 is ready "
        "for pickup. Text her that it is ready and hand the case to the pharmacy team.")
RECEIVED: list[tuple[str, dict[str, Any]]] = []


# -- the existing agent's tools: untouched ----------------------------------------------------
@tool
def notify_patient(phone: str, message: str) -> str:
    """Text the patient."""
    RECEIVED.append(("notify_patient", {"phone": phone, "message": message}))
    return "message sent"


@tool
def team_handoff(pickup_id: str, summary: str) -> str:
    """Hand the case to the pharmacy team."""
    RECEIVED.append(("team_handoff", {"pickup_id": pickup_id, "summary": summary}))
    return "handed off"


TOOLS = [notify_patient, team_handoff]


def make_model() -> Any:
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"), temperature=0)
    from tpguard.testing.langchain import ScriptedChatModel

    return ScriptedChatModel([
        [{"name": "notify_patient", "args": {"phone": "415-555-0199",
                                             "message": "Hi Maria, RX-88213 is ready for pickup."}},
         {"name": "team_handoff", "args": {"pickup_id": "RX-88213", "summary": "Maria Gonzalez "
                                           "(415-555-0199), chest tightness; prepare RX-88213."}}],
        "Done: the patient was notified and the pharmacy has the case.",
    ])


def report(title: str, spans: SpanCapture) -> None:
    print(f"== {title}")
    for name, args in RECEIVED:
        print(f"received  {name}: {args}")
    for span in spans.tool_spans():
        a: dict[str, Any] = dict(span.attributes or {})
        forbidden = ", ".join(a.get("tpguard.forbidden.atom_types", ())) or "-"
        print(f"decision  {a['gen_ai.tool.name']}: {a['tpguard.decision']} "
              f"(not needed for its purpose: {forbidden}) args={a.get('tpguard.arguments')}")
    RECEIVED.clear()


def main() -> None:
    # 1. Middleware on create_agent, audit mode. The policy file names each tool's purpose/sink.
    with capture_spans() as spans:
        guard = Guard(POLICY, mode="audit", tracer_provider=spans.provider)
        agent = create_agent(make_model(), tools=TOOLS,
                             middleware=[PurposeBoundMiddleware(guard)])
        agent.invoke({"messages": [("user", TASK)]})
        report("middleware (audit)", spans)

    # 2. The same audit through callbacks, for graphs you cannot add middleware to.
    with capture_spans() as spans:
        guard = Guard(POLICY, mode="audit", tracer_provider=spans.provider)
        agent = create_agent(make_model(), tools=TOOLS)
        agent.invoke({"messages": [("user", TASK)]},
                     config={"callbacks": [TpguardCallbackHandler(guard)]})
        report("callback handler (observe-only)", spans)


if __name__ == "__main__":
    main()
