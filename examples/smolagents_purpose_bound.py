"""Purpose-bound smolagents tools: a handoff that may not carry the phone number or the symptom.

Runs the healthcare workflow of ``healthcare_policy.yaml`` (register → pay → notify → hand off)
under a ``ToolCallingAgent`` and a ``CodeAgent`` with the guard in ``enforce`` mode::

    python examples/smolagents_purpose_bound.py            # offline: a scripted model
    OPENAI_BASE_URL=... OPENAI_API_KEY=... [OPENAI_MODEL=gpt-4.1-mini] python examples/smolagents_purpose_bound.py

Offline, the scripted model first puts the phone number and the symptom into the handoff summary;
the guard withholds that call, the model reads why and retries with a clean summary.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from smolagents import CodeAgent, Model, OpenAIServerModel, Tool, ToolCallingAgent, tool
from smolagents.monitoring import LogLevel

from tpguard import Guard, purpose_bound
from tpguard.testing import capture_spans
from tpguard.testing.smolagents import ScriptedSmolModel

POLICY = Path(__file__).with_name("healthcare_policy.yaml")
TASK = ("Maria Gonzalez (phone 415-555-0199, complains of chest tightness, card ending 4417) "
        "came in. Register her, charge 45 USD to her card, text her that prescription RX-88213 is "
        "ready for pickup, then hand the case to the pharmacy team.")
received: list[tuple[str, dict[str, Any]]] = []


@tool
def register_patient(name: str, phone: str, note: str) -> str:
    """Verify the patient and open the visit record.

    Args:
        name: the patient's full name
        phone: the patient's phone number
        note: the reason for the visit
    """
    received.append(("register_patient", {"name": name, "phone": phone, "note": note}))
    return "visit V-1 opened"


@tool
def process_payment(name: str, card: str, amount: float) -> str:
    """Charge the visit.

    Args:
        name: the cardholder
        card: the card, masked like '**** 1234'
        amount: amount in USD
    """
    received.append(("process_payment", {"name": name, "card": card, "amount": amount}))
    return "payment accepted"


@tool
def notify_patient(phone: str, message: str) -> str:
    """Text the patient the next step.

    Args:
        phone: the patient's phone number
        message: the text message
    """
    received.append(("notify_patient", {"phone": phone, "message": message}))
    return "text sent"


@tool
def team_handoff(pickup_id: str, summary: str) -> str:
    """Hand the case to the pharmacy team.

    Args:
        pickup_id: the prescription pickup id
        summary: a short note for the pharmacy team
    """
    received.append(("team_handoff", {"pickup_id": pickup_id, "summary": summary}))
    return "handoff recorded"


def guarded_tools(guard: Guard) -> list[Tool]:
    return [
        purpose_bound(register_patient, purpose="verify the patient and open the visit record",
                      sink="record", free_text=["note"], guard=guard),
        purpose_bound(process_payment, purpose="process payment", sink="payment", guard=guard),
        purpose_bound(notify_patient, purpose="tell the patient the next step",
                      sink="notification", free_text=["message"], guard=guard),
        purpose_bound(team_handoff, purpose="hand the case to the pharmacy team", sink="handoff",
                      free_text=["summary"], guard=guard),
    ]


def scripted_model() -> ScriptedSmolModel:
    def after_handoff(messages: list[dict[str, str]]) -> Any:
        if "tpguard withheld" in messages[-1]["content"]:  # read the refusal, retry with less
            return [{"name": "team_handoff", "arguments": {
                "pickup_id": "RX-88213", "summary": "RX-88213 is ready for pickup; please prepare it."}}]
        return "Registered, paid, notified and handed off."

    script: list[Any] = [
        [{"name": "register_patient", "arguments": {
            "name": "Maria Gonzalez", "phone": "415-555-0199", "note": "chest tightness"}}],
        [{"name": "process_payment", "arguments": {
            "name": "Maria Gonzalez", "card": "**** 4417", "amount": 45.0}}],
        [{"name": "notify_patient", "arguments": {
            "phone": "415-555-0199", "message": "Your prescription RX-88213 is ready for pickup."}}],
        [{"name": "team_handoff", "arguments": {"pickup_id": "RX-88213", "summary":
            "RX-88213 ready. Patient at 415-555-0199 reports chest tightness."}}],
        after_handoff,
        "Registered, paid, notified and handed off.",
    ]
    return ScriptedSmolModel(script)


def make_model() -> tuple[Model, str]:
    if os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY"):
        model_id = os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")
        return OpenAIServerModel(model_id=model_id, api_base=os.environ.get("OPENAI_BASE_URL"),
                                 api_key=os.environ.get("OPENAI_API_KEY")), model_id
    return scripted_model(), "scripted model"


def main() -> None:
    for agent_cls in (ToolCallingAgent, CodeAgent):
        received.clear()
        with capture_spans() as spans:
            guard = Guard(POLICY, mode="enforce", tracer_provider=spans.provider)
            model, label = make_model()
            agent = agent_cls(tools=guarded_tools(guard), model=model,
                              verbosity_level=LogLevel.OFF, max_steps=10)
            answer = agent.run(TASK)
            print(f"== {agent_cls.__name__} ({label}) ==")
            for span in spans.tool_spans():
                attrs: dict[str, Any] = dict(span.attributes or {})
                decision = attrs["tpguard.decision"]
                line = f"  {span.name.removeprefix('execute_tool '):<17} {decision}"
                if decision == "block":
                    withheld = ", ".join(map(str, attrs.get("tpguard.forbidden.atom_types", ())))
                    fields = ", ".join(map(str, attrs.get("tpguard.forbidden.fields", ())))
                    line += f"  (withheld {withheld} in {fields})"
                print(line)
            for name, args in received:
                if name == "team_handoff":
                    print(f"  team_handoff received summary: {args['summary']!r}")
            print(f"  final answer: {answer}")


if __name__ == "__main__":
    main()
