"""Put ``@purpose_bound`` on LangChain tools and run a ``create_agent`` loop in enforce mode.

The healthcare workflow of ``healthcare_policy.yaml``: register → pay → notify → hand off. The model
puts the phone number and the symptom into the handoff summary; tpguard withholds that call, the
model reads why and retries with less. Prints what each tool received and every decision.

    python examples/langchain_purpose_bound.py            # offline, scripted model
    OPENAI_API_KEY=... python examples/langchain_purpose_bound.py   # a real model
    (OPENAI_BASE_URL for any OpenAI-compatible endpoint, OPENAI_MODEL to pick the model)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import tool

from tpguard import Guard, purpose_bound
from tpguard.testing import capture_spans

POLICY = Path(__file__).with_name("healthcare_policy.yaml")
TASK = ("Maria Gonzalez (phone 415-555-0199, insurance Blue Shield PPO, card ending 4417) has "
        "chest tightness. Register her visit, charge the $25 copay, text her that prescription "
        "RX-88213 is ready for pickup, and hand the case to the pharmacy team.")
RECEIVED: list[tuple[str, dict[str, Any]]] = []


def build_tools(guard: Guard) -> list[Any]:
    @purpose_bound(purpose="verify the patient and open the visit record", sink="record",
                   free_text=["note"], guard=guard)
    @tool
    def register_patient(name: str, phone: str, note: str = "") -> str:
        """Register the patient's visit."""
        RECEIVED.append(("register_patient", {"name": name, "phone": phone, "note": note}))
        return "visit V-1 opened"

    @purpose_bound(purpose="process payment", sink="payment", free_text=["note"], guard=guard)
    @tool
    def process_payment(name: str, insurance: str, card: str, amount: float) -> str:
        """Charge the copay. `card` is the masked card number, e.g. '**** 1234'."""
        RECEIVED.append(("process_payment", {"name": name, "insurance": insurance, "card": card,
                                             "amount": amount}))
        return "payment accepted"

    @purpose_bound(purpose="tell the patient the next step", sink="notification",
                   free_text=["message"], guard=guard)
    @tool
    def notify_patient(phone: str, message: str) -> str:
        """Text the patient."""
        RECEIVED.append(("notify_patient", {"phone": phone, "message": message}))
        return "message sent"

    @purpose_bound(purpose="hand the case to the pharmacy team", sink="handoff",
                   free_text=["summary"], guard=guard)
    @tool
    def team_handoff(pickup_id: str, summary: str) -> str:
        """Hand the case to the pharmacy team (they need the pickup id and what to prepare)."""
        RECEIVED.append(("team_handoff", {"pickup_id": pickup_id, "summary": summary}))
        return "handed off"

    return [register_patient, process_payment, notify_patient, team_handoff]


def scripted_model() -> Any:
    from tpguard.testing.langchain import ScriptedChatModel

    plan = [
        ("register_patient", {"name": "Maria Gonzalez", "phone": "415-555-0199",
                              "note": "chest tightness"}),
        ("process_payment", {"name": "Maria Gonzalez", "insurance": "Blue Shield PPO",
                             "card": "**** 4417", "amount": 25.0}),
        ("notify_patient", {"phone": "415-555-0199",
                            "message": "Hi Maria Gonzalez, RX-88213 is ready for pickup."}),
        ("team_handoff", {"pickup_id": "RX-88213", "summary": "RX-88213 ready for pickup; patient "
                          "415-555-0199 reports chest tightness. Please prepare the order."}),
    ]

    def decide(messages: list[BaseMessage]) -> Any:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if results and results[-1].status == "error":  # a good model retries with less
            return [{"name": "team_handoff", "args": {"pickup_id": "RX-88213",
                     "summary": "RX-88213 ready for pickup. Please prepare the order."}}]
        if len(results) >= len(plan):
            return "The visit is registered, paid, notified and handed off."
        name, args = plan[len(results)]
        return [{"name": name, "args": args}]

    return ScriptedChatModel(decide)


def make_model() -> Any:
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"), temperature=0)
    return scripted_model()


def main() -> None:
    with capture_spans() as spans:
        guard = Guard(POLICY, mode="enforce", tracer_provider=spans.provider)
        agent = create_agent(make_model(), tools=build_tools(guard))
        result = agent.invoke({"messages": [("user", TASK)]})
        print("== what each tool received")
        for name, args in RECEIVED:
            print(f"{name}: {args}")
        print("== decisions")
        for span in spans.tool_spans():
            a: dict[str, Any] = dict(span.attributes or {})
            forbidden = ", ".join(a.get("tpguard.forbidden.atom_types", ())) or "-"
            print(f"{a['gen_ai.tool.name']}: {a['tpguard.decision']} (forbidden: {forbidden})")
        print("== final answer")
        print(result["messages"][-1].content)


if __name__ == "__main__":
    main()
